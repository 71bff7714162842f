// Key and chords of an upload, from its note transcription (Basic Pitch): the model has already
// taken the overtones out, so a pitch-class histogram says what was played, which is what the
// key profiles were made from. (A chroma of the spectrum heard E minor as E major, its root's
// fifth harmonic being a major third; on the engine's renders and an outside song the notes got
// 13 keys of 14 right, the chroma 9.)
//
// The key is the Krumhansl-Kessler profile (1982) that best correlates with the notes'
// duration-and-velocity histogram; a chord is the major or minor triad that best matches the
// notes sounding between two beats, the lowest of them counted again as the bass.

import type { ChordSpan, TranscribedNote } from "./types.ts"

const names = ["C", "C#", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B"]

// Krumhansl and Kessler's probe-tone ratings, tonic first.
const majorProfile = [6.35, 2.23, 3.48, 2.33, 4.38, 4.09, 2.52, 5.19, 2.39, 3.66, 2.29, 2.88]
const minorProfile = [6.33, 2.68, 3.52, 5.38, 2.6, 3.53, 2.54, 4.75, 3.98, 2.69, 3.34, 3.17]

/** Pearson correlation of `weights` read from `tonic` with a profile read from its tonic. */
function correlation(weights: ArrayLike<number>, profile: ArrayLike<number>, tonic: number): number {
  let mw = 0
  let mp = 0
  for (let i = 0; i < 12; i++) {
    mw += weights[i] ?? 0
    mp += profile[i] ?? 0
  }
  mw /= 12
  mp /= 12
  let num = 0
  let dw = 0
  let dp = 0
  for (let i = 0; i < 12; i++) {
    const x = (weights[(i + tonic) % 12] ?? 0) - mw
    const y = (profile[i] ?? 0) - mp
    num += x * y
    dw += x * x
    dp += y * y
  }
  return dw === 0 || dp === 0 ? 0 : num / Math.sqrt(dw * dp)
}

/** `G major`, `F# minor`, spelled as the engine spells keys; `C major` when nothing was played. */
export function keyOf(notes: ReadonlyArray<TranscribedNote>): string {
  const weights = new Float64Array(12)
  for (const n of notes) weights[n.pitch % 12] = (weights[n.pitch % 12] ?? 0) + (n.end - n.start) * n.velocity
  let best = { score: -Infinity, tonic: 0, mode: "major" }
  for (let tonic = 0; tonic < 12; tonic++) {
    for (const [mode, profile] of [
      ["major", majorProfile],
      ["minor", minorProfile]
    ] as const) {
      const score = correlation(weights, profile, tonic)
      if (score > best.score) best = { score, tonic, mode }
    }
  }
  return `${names[best.tonic] ?? "C"} ${best.mode}`
}

// Each triad as the pitch classes it sounds: root, third, fifth.
const triads: ReadonlyArray<{
  readonly name: string
  readonly root: number
  readonly third: number
  readonly fifth: number
}> = names.flatMap((root, r) => [
  { name: root, root: r, third: (r + 4) % 12, fifth: (r + 7) % 12 },
  { name: `${root}m`, root: r, third: (r + 3) % 12, fifth: (r + 7) % 12 }
])

/** The triad the weights sound most: its three classes' mean against the other nine's. */
function chordOf(weights: Float64Array): string {
  let total = 0
  for (const v of weights) total += v
  let best = { score: -Infinity, name: "C" }
  for (const triad of triads) {
    const inside = (weights[triad.root] ?? 0) + (weights[triad.third] ?? 0) + (weights[triad.fifth] ?? 0)
    const score = inside / 3 - (total - inside) / 9
    if (score > best.score) best = { score, name: triad.name }
  }
  return best.name
}

const ms = (t: number) => Math.round(t * 1000) / 1000

/** One chord between each two beats; neighbours of the same name become one span. */
export function chordsOn(
  notes: ReadonlyArray<TranscribedNote>,
  beats: ReadonlyArray<number>,
  duration: number
): Array<ChordSpan> {
  if (beats.length < 2 || notes.length === 0) return []
  const byStart = [...notes].sort((a, b) => a.start - b.start)
  const spans: Array<ChordSpan> = []
  for (let b = 0; b < beats.length; b++) {
    const start = beats[b] ?? 0
    const end = beats[b + 1] ?? duration
    const weights = new Float64Array(12)
    let bass: TranscribedNote | undefined
    for (const n of byStart) {
      if (n.start >= end) break
      const overlap = Math.min(n.end, end) - Math.max(n.start, start)
      if (overlap <= 0) continue
      weights[n.pitch % 12] = (weights[n.pitch % 12] ?? 0) + overlap * n.velocity
      if (bass === undefined || n.pitch < bass.pitch) bass = n
    }
    if (bass === undefined) {
      // Nothing sounds between these beats: the chord before goes on (or none has begun).
      const last = spans[spans.length - 1]
      if (last !== undefined) spans[spans.length - 1] = { ...last, end: ms(end) }
      continue
    }
    // The bass names the root of most chords: of G and Em (two classes shared), it decides.
    weights[bass.pitch % 12] =
      (weights[bass.pitch % 12] ?? 0) + (Math.min(bass.end, end) - Math.max(bass.start, start)) * bass.velocity
    const chord = chordOf(weights)
    const last = spans[spans.length - 1]
    if (last !== undefined && last.chord === chord) spans[spans.length - 1] = { ...last, end: ms(end) }
    else spans.push({ start: ms(start), end: ms(end), chord })
  }
  return spans
}
