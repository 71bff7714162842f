// Beats and tempo of an upload with music-tempo (MIT): spectral-flux onsets, inter-onset
// interval clustering for the tempo hypotheses, then Dixon's multiple-agent beat tracker
// (BeatRoot). It expects 44.1 kHz mono, as `listen` gives it.

import { createRequire } from "node:module"

interface MusicTempoParams {
  readonly minBeatInterval?: number
  readonly maxBeatInterval?: number
}

interface MusicTempoResult {
  readonly tempo: string | number
  readonly beats: ReadonlyArray<number>
  /** Onset strength every 10 ms, normalised. */
  readonly spectralFlux: ReadonlyArray<number>
}

type MusicTempoClass = new (audio: Float32Array, params?: MusicTempoParams) => MusicTempoResult

let loaded: MusicTempoClass | undefined
const musicTempo = (): MusicTempoClass => {
  loaded ??= createRequire(import.meta.url)("music-tempo") as MusicTempoClass
  return loaded
}

/** The tempo range listened for, as the engine composes. */
const slowestBpm = 40
const fastestBpm = 208

export type Meter = "3/4" | "4/4"

export interface Rhythm {
  readonly bpm: number
  /** Seconds, to the millisecond. */
  readonly beats: Array<number>
  readonly meter: Meter
}

/**
 * No agent kept: no grid. The tempo stays a positive number because the
 * tasks on the upload compose at it; 120 is the engine's own default.
 */
const noRhythm: Rhythm = { bpm: 120, beats: [], meter: "4/4" }

/** Onset strength at each beat: the strongest flux within 30 ms of it (the flux is every 10 ms). */
function beatStrengths(flux: ReadonlyArray<number>, beats: ReadonlyArray<number>): Array<number> {
  return beats.map((t) => {
    const at = Math.round(t * 100)
    let most = 0
    for (let i = Math.max(0, at - 3); i <= Math.min(flux.length - 1, at + 3); i++) most = Math.max(most, flux[i] ?? 0)
    return most
  })
}

const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)

/** A half under this is not what people count: a folk song's strummed 96 is not a 48 (it was heard so). */
const slowestCountedBpm = 60

/**
 * The tracker's agents often keep twice the felt tempo (a hi-hat's eighths: 180 for 90, 200 for
 * 100). Then every other beat is weak: the beats of the stronger half are the ones people count.
 * On the engine's renders the doubled tempos had their weaker half under 0.35 of the stronger,
 * the true ones over 0.4 (drum and bass, 0.40, is heard at half as Essentia heard it too); above
 * 175 bpm a swung hat keeps the halves close, and the half is taken unless they are equal.
 */
function countedBeats(beats: ReadonlyArray<number>, flux: ReadonlyArray<number>, bpm: number): ReadonlyArray<number> {
  if (bpm / 2 < slowestCountedBpm || beats.length < 8) return beats
  const strengths = beatStrengths(flux, beats)
  const even = mean(strengths.filter((_, i) => i % 2 === 0))
  const odd = mean(strengths.filter((_, i) => i % 2 === 1))
  const balance = Math.min(even, odd) / Math.max(even, odd, Number.EPSILON)
  if (balance >= (bpm > 175 ? 0.9 : 0.45)) return beats
  const phase = even >= odd ? 0 : 1
  return beats.filter((_, i) => i % 2 === phase)
}

/** How much the strongest of the `period` phases of the beats stands out from the rest, relative to their mean. */
function accent(strengths: ReadonlyArray<number>, period: number): number {
  const all = mean(strengths)
  if (all <= 0) return 0
  let best = 0
  for (let phase = 0; phase < period; phase++) {
    const on = mean(strengths.filter((_, i) => i % period === phase))
    const off = mean(strengths.filter((_, i) => i % period !== phase))
    best = Math.max(best, (on - off) / all)
  }
  return best
}

/**
 * Three beats a bar when a beat in every three stands out clearly, and more than any beat in
 * every four or every two does (a backbeat on two and four accents every four beats too, and
 * every three not at all); four otherwise, as most music is. Wanting a clear three keeps a
 * loose 4/4 from being heard as a waltz.
 */
function meterOf(beats: ReadonlyArray<number>, flux: ReadonlyArray<number>): Meter {
  if (beats.length < 12) return "4/4"
  const strengths = beatStrengths(flux, beats)
  const three = accent(strengths, 3)
  return three > 0.25 && three > 1.5 * Math.max(accent(strengths, 4), accent(strengths, 2)) ? "3/4" : "4/4"
}

/** The tempo the beats keep: the median interval between them, steadier than one agent's period. */
function tempoOf(beats: ReadonlyArray<number>): number {
  const intervals = beats
    .slice(1)
    .map((t, i) => t - (beats[i] ?? 0))
    .sort((a, b) => a - b)
  const median = intervals[Math.floor(intervals.length / 2)]
  return median === undefined || median <= 0 ? 0 : 60 / median
}

/**
 * A tune alone, as its beats are tracked: a click at each of its notes' onsets, as loud as the
 * note. On a voice's own sound the spectral flux hears its vibrato and glides as onsets (a hum
 * sung at 100 bpm with a half-semitone vibrato was tracked at 164); its transcription's notes,
 * a held note's pieces joined (heldNotes.ts), start where it was sung.
 */
export function onsetClicks(
  notes: ReadonlyArray<{ readonly start: number; readonly velocity: number }>,
  seconds: number,
  rate: number
): Float32Array {
  const out = new Float32Array(Math.ceil(seconds * rate))
  const length = Math.round(0.02 * rate)
  let seed = 1
  for (const n of notes) {
    const from = Math.round(n.start * rate)
    for (let i = 0; i < length && from + i < out.length; i++) {
      // A short burst of noise, decaying: broadband, as an attack is, so every band's flux rises.
      seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff
      const noise = seed / 0x3fffffff - 1
      out[from + i] = (out[from + i] ?? 0) + 0.5 * n.velocity * noise * (1 - i / length)
    }
  }
  return out
}

export function beatsAndTempo(mono: Float32Array): Rhythm {
  let tracked: MusicTempoResult
  try {
    tracked = new (musicTempo())(mono, { minBeatInterval: 60 / fastestBpm, maxBeatInterval: 60 / slowestBpm })
  } catch {
    // The library throws a string when no agent survives: an answer, not a failure.
    return noRhythm
  }
  const heard = tracked.beats.filter((t) => Number.isFinite(t) && t >= 0)
  const beats = countedBeats(heard, tracked.spectralFlux, tempoOf(heard))
  const bpm = tempoOf(beats)
  if (!Number.isFinite(bpm) || bpm <= 0) return noRhythm
  return {
    bpm: Math.round(bpm * 100) / 100,
    beats: beats.map((t) => Math.round(t * 1000) / 1000),
    meter: meterOf(beats, tracked.spectralFlux)
  }
}
