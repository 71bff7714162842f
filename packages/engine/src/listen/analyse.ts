// Listening to an upload: decoded once, then the note transcription (Basic Pitch), tempo and
// beats (music-tempo, on a mono signal at 44.1 kHz), key and chords on the beat grid from the
// transcription's notes, and integrated loudness (the engine's own BS.1770 meter, on the file's
// own channels as it decodes), and the voice along the transcription's top line (voiceProfile.ts, for personas).
// All of it under permissive licences (decision 0081). Each part's CPU time is kept
// for the benchmark.

import { cpuUsage } from "node:process"
import { decodeAudio } from "./decode.ts"
import type { AudioType } from "./decode.ts"
import { SR } from "../synth/dsp.ts"
import { channelWeights, LoudnessMeter } from "../synth/loudness.ts"
import { chordsOn, keyOf } from "./harmony.ts"
import { joinHeldNotes } from "./heldNotes.ts"
import { beatsAndTempo, onsetClicks } from "./rhythm.ts"
import { isTuneAlone } from "./tune.ts"
import { voiceProfile } from "./voiceProfile.ts"
import type { Analysis, Listening, Transcription } from "./types.ts"

/** CPU milliseconds of this thread's process spent in `work`. */
function timed<T>(work: () => T): { readonly value: T; readonly ms: number } {
  const before = cpuUsage()
  const value = work()
  const used = cpuUsage(before)
  return { value, ms: (used.user + used.system) / 1000 }
}

/**
 * Linear resampling to the engine's 44.1 kHz, which the beat tracker and the loudness meter are
 * tuned for and an upload's track is rendered at; a 44.1 kHz upload passes through untouched.
 */
export function toEngineRate(signal: Float32Array, from: number): Float32Array {
  if (from === SR) return signal
  const out = new Float32Array(Math.floor((signal.length * SR) / from))
  const step = from / SR
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
export async function decodeWhole(
  bytes: Uint8Array,
  type: AudioType
): Promise<DecodedUpload & { readonly lufs: number }> {
  const lefts: Array<Float32Array> = []
  const rights: Array<Float32Array> = []
  let sampleRate = 0
  let meter: LoudnessMeter | undefined
  async function* once() {
    yield bytes
  }
  await decodeAudio(once(), type, (channels, sr) => {
    sampleRate = sr
    meter ??= new LoudnessMeter(sr, channelWeights(channels.length, type === "audio/ogg" ? "vorbis" : "wav"))
    meter.push(channels)
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
  return { left: join(lefts), right: join(rights), sampleRate, lufs: meter?.integrated() ?? -Infinity }
}

/**
 * Integrated loudness in LUFS, to a tenth, as measured while decoding: a mono file's one channel
 * counted once (BS.1770), not as two; a silent file (refused before this) would be -70.
 */
function loudnessOf(audio: { readonly lufs: number }): number {
  return Number.isFinite(audio.lufs) ? Math.round(audio.lufs * 10) / 10 : -70
}

/**
 * The level of each of the upload's bars (four beats at the tempo heard, from its first beat, as
 * a cover lays its bars), dB of the mean square to a tenth: where the song is quiet (an intro, a
 * break, an outro) and where it is full, which a cover's sections follow (arrange/uploadSheet.ts).
 */
export function barLevels(mono: Float32Array, beats: ReadonlyArray<number>, bpm: number): Array<number> {
  const first = beats[0]
  if (first === undefined || !(bpm > 0)) return []
  const bar = ((4 * 60) / bpm) * SR
  const levels: Array<number> = []
  for (let start = first * SR; start + bar / 2 <= mono.length; start += bar) {
    const from = Math.round(start)
    const to = Math.min(mono.length, Math.round(start + bar))
    let sum = 0
    for (let i = from; i < to; i++) sum += (mono[i] ?? 0) ** 2
    levels.push(Math.round(10 * Math.max(-100, 10 * Math.log10(sum / Math.max(1, to - from) + 1e-12))) / 10)
  }
  return levels
}

/**
 * Listens to an upload once. `transcribe` is the note transcription (Basic Pitch), given the
 * decoded audio; the key and the chords are read from its notes.
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
  const mono = toEngineRate(monoRaw, audio.sampleRate)
  const duration = audio.left.length / audio.sampleRate
  const decodeMs = (decodedAt.user + decodedAt.system) / 1000

  const transcriptionStart = cpuUsage()
  const transcribed = await transcribe(audio)
  // A sung note's vibrato cuts it into pieces; joined, it is the one note that was sung.
  const transcription = { ...transcribed, notes: joinHeldNotes(transcribed.notes, mono, SR) }
  const transcriptionUsed = cpuUsage(transcriptionStart)
  // A tune alone (a hum, a voice) is tracked on its notes' onsets, not on its vibrato (rhythm.ts).
  const rhythm = timed(() =>
    beatsAndTempo(isTuneAlone(transcription.notes) ? onsetClicks(transcription.notes, mono.length / SR, SR) : mono)
  )
  const key = timed(() => keyOf(transcription.notes, rhythm.value.beats, duration))
  const chords = timed(() => chordsOn(transcription.notes, rhythm.value.beats, duration, key.value))
  const loudness = timed(() => loudnessOf(audio))
  const voice = timed(() => voiceProfile(mono, SR, transcription.notes))
  const levels = barLevels(mono, rhythm.value.beats, rhythm.value.bpm)

  const analysis: Analysis = {
    bpm: rhythm.value.bpm,
    key: key.value,
    time_signature: rhythm.value.meter,
    loudness_lufs: loudness.value,
    beats: rhythm.value.beats,
    chords: chords.value
  }
  return {
    analysis,
    transcription: { ...transcription, voice: voice.value, levels },
    duration,
    timings: {
      decode: decodeMs,
      beats: rhythm.ms,
      key: key.ms,
      chords: chords.ms,
      loudness: loudness.ms,
      transcription: (transcriptionUsed.user + transcriptionUsed.system) / 1000,
      voice: voice.ms
    }
  }
}
