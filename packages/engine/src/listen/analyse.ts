// Listening to an upload: decoded once to a mono signal at 44.1 kHz (what Essentia's extractors
// expect), then tempo and beats (RhythmExtractor2013), key (KeyExtractor), chords on the beat
// grid (HPCP frames, ChordsDetectionBeats) and integrated loudness (LoudnessEBUR128, which needs
// the two channels). Each part's CPU time is kept for the benchmark.

import { cpuUsage } from "node:process"
import { decodeAudio } from "./decode.ts"
import type { AudioType } from "./decode.ts"
import { essentia, strings } from "./essentia.ts"
import type { Analysis, ChordSpan, Listening, Transcription } from "./types.ts"

const rate = 44_100

/** CPU milliseconds of this thread's process spent in `work`. */
function timed<T>(work: () => T): { readonly value: T; readonly ms: number } {
  const before = cpuUsage()
  const value = work()
  const used = cpuUsage(before)
  return { value, ms: (used.user + used.system) / 1000 }
}

/** Linear resampling to 44.1 kHz: the extractors are tuned for it; uploads are mostly at it already. */
function resample(signal: Float32Array, from: number): Float32Array {
  if (from === rate) return signal
  const out = new Float32Array(Math.floor(signal.length * rate / from))
  const step = from / rate
  for (let i = 0; i < out.length; i++) {
    const x = i * step
    const j = Math.floor(x)
    const frac = x - j
    out[i] = (signal[j] ?? 0) * (1 - frac) + (signal[j + 1] ?? signal[j] ?? 0) * frac
  }
  return out
}

export interface DecodedUpload {
  readonly left: Float32Array
  readonly right: Float32Array
  readonly sampleRate: number
}

/** The whole file decoded to two channels at its own rate (mono files: the same channel twice). */
export async function decodeWhole(bytes: Uint8Array, type: AudioType): Promise<DecodedUpload> {
  const lefts: Array<Float32Array> = []
  const rights: Array<Float32Array> = []
  let sampleRate = 0
  async function* once() {
    yield bytes
  }
  await decodeAudio(once(), type, (channels, sr) => {
    sampleRate = sr
    const left = channels[0] ?? new Float32Array(0)
    lefts.push(left.slice())
    rights.push((channels[1] ?? left).slice())
  })
  const join = (parts: Array<Float32Array>) => {
    const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0))
    let at = 0
    for (const p of parts) {
      out.set(p, at)
      at += p.length
    }
    return out
  }
  return { left: join(lefts), right: join(rights), sampleRate }
}

const names = ["C", "C#", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B"]
const pitchClassOf: Readonly<Record<string, number>> = { C: 0, "C#": 1, Db: 1, D: 2, "D#": 3, Eb: 3, E: 4, F: 5, "F#": 6, Gb: 6, G: 7, "G#": 8, Ab: 8, A: 9, "A#": 10, Bb: 10, B: 11 }

/** Essentia's `C#` / `Ab`, spelled as the engine spells keys (`Eb`, `F#`, `Bb`). */
const spell = (note: string): string => names[pitchClassOf[note] ?? 0] ?? note

/** Chord names from Essentia (`C`, `Am`, `F#m`) spelled the same way. */
const spellChord = (chord: string): string => {
  const root = /^[A-G][#b]?/.exec(chord)?.[0]
  return root === undefined ? chord : spell(root) + chord.slice(root.length)
}

function beatsAndTempo(mono: Float32Array): { readonly bpm: number; readonly beats: Array<number> } {
  const { api } = essentia()
  const v = api.arrayToVector(mono)
  const r = api.RhythmExtractor2013(v, 208, "degara", 40)
  const beats = Array.from(api.vectorToArray(r.ticks))
  v.delete()
  r.ticks.delete()
  r.estimates.delete()
  r.bpmIntervals.delete()
  // The tempo the beats keep: the median interval between them, steadier than the histogram peak.
  const intervals = beats.slice(1).map((t, i) => t - (beats[i] ?? 0)).sort((a, b) => a - b)
  const median = intervals[Math.floor(intervals.length / 2)]
  const bpm = median === undefined || median <= 0 ? r.bpm : 60 / median
  return { bpm: Math.round(bpm * 100) / 100, beats: beats.map((t) => Math.round(t * 1000) / 1000) }
}

function keyOf(mono: Float32Array): string {
  const { api } = essentia()
  const v = api.arrayToVector(mono)
  const r = api.KeyExtractor(v, true, 4096, 4096, 12, 3500, 60, 25, 0.2, "bgate")
  v.delete()
  return `${spell(r.key)} ${r.scale}`
}

const chordFrame = 4096
const chordHop = 4096

function chordsOn(mono: Float32Array, beats: ReadonlyArray<number>, duration: number): Array<ChordSpan> {
  if (beats.length < 2) return []
  const { api, newMatrix } = essentia()
  const pcp = newMatrix()
  for (let start = 0; start + chordFrame <= mono.length; start += chordHop) {
    const frame = api.arrayToVector(mono.subarray(start, start + chordFrame))
    const windowed = api.Windowing(frame, true, chordFrame, "blackmanharris62")
    const spectrum = api.Spectrum(windowed.frame, chordFrame)
    const peaks = api.SpectralPeaks(spectrum.spectrum, 0.00001, 5000, 100, 40, "magnitude", rate)
    const hpcp = api.HPCP(peaks.frequencies, peaks.magnitudes, true, 500, 8, 5000, false, 40, true, "unitMax", 440, rate, 12)
    pcp.push_back(hpcp.hpcp)
    for (const v of [frame, windowed.frame, spectrum.spectrum, peaks.frequencies, peaks.magnitudes, hpcp.hpcp]) v.delete()
  }
  const ticks = api.arrayToVector(Float32Array.from(beats))
  const detected = api.ChordsDetectionBeats(pcp, ticks, "interbeat_median", chordHop, rate)
  const names = strings(detected.chords)
  pcp.delete()
  ticks.delete()
  detected.chords.delete()
  detected.strength.delete()
  // One chord per interval between beats; neighbours of the same name become one span.
  const spans: Array<ChordSpan> = []
  names.forEach((name, i) => {
    const start = beats[i] ?? 0
    const end = beats[i + 1] ?? duration
    const chord = spellChord(name)
    const last = spans[spans.length - 1]
    if (last !== undefined && last.chord === chord) spans[spans.length - 1] = { ...last, end: Math.round(end * 1000) / 1000 }
    else spans.push({ start: Math.round(start * 1000) / 1000, end: Math.round(end * 1000) / 1000, chord })
  })
  return spans
}

function loudnessOf(audio: DecodedUpload): number {
  const { api } = essentia()
  const left = api.arrayToVector(resample(audio.left, audio.sampleRate))
  const right = api.arrayToVector(resample(audio.right, audio.sampleRate))
  const r = api.LoudnessEBUR128(left, right, 0.1, rate, false)
  left.delete()
  right.delete()
  r.momentaryLoudness.delete()
  r.shortTermLoudness.delete()
  return Math.round(r.integratedLoudness * 10) / 10
}

/**
 * Listens to an upload once. `transcribe` is the note transcription (Basic Pitch), given the
 * decoded audio; the analysis is all Essentia's.
 */
export async function listen(
  bytes: Uint8Array,
  type: AudioType,
  transcribe: (audio: DecodedUpload) => Promise<Transcription>
): Promise<Listening> {
  const before = cpuUsage()
  const audio = await decodeWhole(bytes, type)
  const decodedAt = cpuUsage(before)
  const monoRaw = new Float32Array(audio.left.length)
  for (let i = 0; i < monoRaw.length; i++) monoRaw[i] = 0.5 * ((audio.left[i] ?? 0) + (audio.right[i] ?? 0))
  const mono = resample(monoRaw, audio.sampleRate)
  const duration = audio.left.length / audio.sampleRate
  const decodeMs = (decodedAt.user + decodedAt.system) / 1000

  const rhythm = timed(() => beatsAndTempo(mono))
  const key = timed(() => keyOf(mono))
  const chords = timed(() => chordsOn(mono, rhythm.value.beats, duration))
  const loudness = timed(() => loudnessOf(audio))
  const transcriptionStart = cpuUsage()
  const transcription = await transcribe(audio)
  const transcriptionUsed = cpuUsage(transcriptionStart)

  const analysis: Analysis = {
    bpm: rhythm.value.bpm,
    key: key.value,
    time_signature: "4/4",
    loudness_lufs: loudness.value,
    beats: rhythm.value.beats,
    chords: chords.value
  }
  return {
    analysis,
    transcription,
    duration,
    timings: {
      decode: decodeMs,
      beats: rhythm.ms,
      key: key.ms,
      chords: chords.ms,
      loudness: loudness.ms,
      transcription: (transcriptionUsed.user + transcriptionUsed.system) / 1000
    }
  }
}
