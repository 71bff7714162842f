// Key and chords of an upload, from its note transcription (Basic Pitch): the model has already
// taken the overtones out, so a pitch-class histogram says what was played, which is what the
// key profiles were made from. (A chroma of the spectrum heard E minor as E major, its root's
// fifth harmonic being a major third; on the engine's renders and an outside song the notes got
// 13 keys of 14 right, the chroma 9.)
//
// The key is the Krumhansl-Kessler profile (1982) that best correlates with the notes' weight in
// each pitch class, heard beat by beat (decision 0133); the chords are read on the beat grid
// (below, and decision 0127).

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

/**
 * How much each pitch class is heard: on a beat grid, each beat's notes (duration × velocity),
 * scaled to the beat's strongest class and compressed (square root), summed over the beats; with
 * no grid, the notes' duration × velocity over the whole.
 *
 * On the grid every beat counts alike, as the beat-synchronous chroma of the field does (Mauch's
 * Chordino, madmom): a loud held chorus, a riff's pedal note or a growled voice's drone no longer
 * outweighs every other bar, and the compression lets a beat's third and fifth count beside its
 * root. On thirteen Debian recordings (decision 0133) the key so found was the same or relative
 * to Essentia's Krumhansl on 10, against 7 from the whole's histogram; the compression's power
 * from 0.2 to 0.7 gave the same 10.
 */
export function pitchClassWeights(
  notes: ReadonlyArray<TranscribedNote>,
  beats: ReadonlyArray<number> = [],
  duration = 0
): Float64Array {
  const weights = new Float64Array(12)
  if (beats.length < 2) {
    for (const n of notes) weights[n.pitch % 12] = (weights[n.pitch % 12] ?? 0) + (n.end - n.start) * n.velocity
    return weights
  }
  for (const { treble: heard } of beatChroma(notes, beats, duration)) {
    const most = Math.max(...heard)
    if (!(most > 0)) continue
    for (let pc = 0; pc < 12; pc++) weights[pc] = (weights[pc] ?? 0) + Math.sqrt((heard[pc] ?? 0) / most)
  }
  return weights
}

/**
 * `G major`, `F# minor`, spelled as the engine spells keys; `C major` when nothing was played.
 * Given the beats (and the duration the last one runs to), heard on the beat grid.
 */
export function keyOf(notes: ReadonlyArray<TranscribedNote>, beats: ReadonlyArray<number> = [], duration = 0): string {
  const weights = pitchClassWeights(notes, beats, duration)
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

// Chords as the field reads them (Chordino, madmom's CRF and HMM decoders): a chroma on the beat
// grid, treble and bass apart, matched against the 24 major and minor triads, and the sequence
// that best explains every beat at once found by Viterbi, where staying on a chord costs nothing,
// changing costs `changeCost` and a triad outside the key found costs `outsideCost` a beat.
// The chroma is the transcription's (Basic Pitch's notes, overtones already taken out, as
// Chordino's NNLS approximate transcription does): a spectrum's chroma hears a root's fifth
// harmonic as a major third. Then a chord lasts until the harmony changes, not a beat, and a
// chord outside the key stays only where the notes insist on it for more than a beat or two.

/** Notes below this (E3) are the bass line: what names the root (Chordino's bass chroma). */
const bassBelow = 52

/** A beat's cosine to the right triad is ~0.9, to one sharing two notes ~0.6: a change must be heard for about two beats. */
const changeCost = 0.45
/** A beat on a triad outside the key weighs this less (the key found from all the notes). */
const outsideCost = 0.12
/** The bass chroma's weight beside the treble's. */
const bassWeight = 0.35

/** `G major` (as keyOf spells it) → tonic pitch class and mode. */
function parseKey(key: string): { readonly tonic: number; readonly minor: boolean } | null {
  const m = /^([A-G][#b]?) (major|minor)$/.exec(key)
  const tonic = m === null ? -1 : names.indexOf(m[1] ?? "")
  return m === null || tonic < 0 ? null : { tonic, minor: m[2] === "minor" }
}

/** Triads diatonic to a key: its scale's six (and in minor the harmonic minor's major V). */
function diatonic(key: string): ReadonlySet<string> {
  const parsed = parseKey(key)
  if (parsed === null) return new Set(triads.map((t) => t.name))
  const { tonic, minor } = parsed
  const degrees: ReadonlyArray<readonly [number, "" | "m"]> = minor
    ? [
        [0, "m"],
        [3, ""],
        [5, "m"],
        [7, "m"],
        [7, ""],
        [8, ""],
        [10, ""]
      ]
    : [
        [0, ""],
        [2, "m"],
        [4, "m"],
        [5, ""],
        [7, ""],
        [9, "m"]
      ]
  return new Set(degrees.map(([step, quality]) => `${names[(tonic + step) % 12] ?? "C"}${quality}`))
}

/** Each beat's chroma (`treble`: every note) and bass chroma from the notes sounding in it (duration × velocity). */
export function beatChroma(
  notes: ReadonlyArray<TranscribedNote>,
  beats: ReadonlyArray<number>,
  duration: number
): Array<{ readonly treble: Float64Array; readonly bass: Float64Array; readonly strength: number }> {
  const byStart = [...notes].sort((a, b) => a.start - b.start)
  const longest = byStart.reduce((most, n) => Math.max(most, n.end - n.start), 0)
  let first = 0
  return beats.map((start, b) => {
    const end = beats[b + 1] ?? duration
    const treble = new Float64Array(12)
    const bass = new Float64Array(12)
    let lowest: TranscribedNote | undefined
    let lowestWeight = 0
    while (first < byStart.length && (byStart[first]?.start ?? 0) < start - longest) first++
    for (let i = first; i < byStart.length; i++) {
      const n = byStart[i] as TranscribedNote
      if (n.start >= end) break
      const overlap = Math.min(n.end, end) - Math.max(n.start, start)
      if (overlap <= 0) continue
      const w = overlap * n.velocity
      treble[n.pitch % 12] = (treble[n.pitch % 12] ?? 0) + w
      if (n.pitch < bassBelow) bass[n.pitch % 12] = (bass[n.pitch % 12] ?? 0) + w
      if (lowest === undefined || n.pitch < lowest.pitch) {
        lowest = n
        lowestWeight = w
      }
    }
    // No bass line in this beat: its lowest note stands for it (a piano's left hand, a guitar's low string).
    if (lowest !== undefined && bass.every((v) => v === 0)) bass[lowest.pitch % 12] = lowestWeight
    let strength = 0
    for (const v of treble) strength += v
    return { treble, bass, strength }
  })
}

const norm = (v: Float64Array): number => Math.sqrt(v.reduce((s, x) => s + x * x, 0))

/** How well each triad explains one beat: the treble's cosine to the triad, plus the bass on its root. */
function fit(treble: Float64Array, bass: Float64Array): Float64Array {
  const out = new Float64Array(triads.length)
  const t = norm(treble)
  let bassTotal = 0
  for (const v of bass) bassTotal += v
  for (const [i, triad] of triads.entries()) {
    const inside = (treble[triad.root] ?? 0) + (treble[triad.third] ?? 0) + (treble[triad.fifth] ?? 0)
    const cosine = t === 0 ? 0 : inside / (t * Math.sqrt(3))
    const root = bassTotal === 0 ? 0 : (bass[triad.root] ?? 0) / bassTotal
    const fifthOnly = bassTotal === 0 ? 0 : (bass[triad.fifth] ?? 0) / bassTotal
    out[i] = cosine + bassWeight * (root - 0.5 * fifthOnly)
  }
  return out
}

const ms = (t: number) => Math.round(t * 1000) / 1000

/**
 * The chords between the beats, spans of the same chord joined: Viterbi over the 24 triads on the
 * beat grid. Beats where nothing sounds carry the chord before them on; none is named before the
 * first note.
 */
export function chordsOn(
  notes: ReadonlyArray<TranscribedNote>,
  beats: ReadonlyArray<number>,
  duration: number,
  key: string = keyOf(notes)
): Array<ChordSpan> {
  if (beats.length < 2 || notes.length === 0) return []
  const chroma = beatChroma(notes, beats, duration)
  const firstHeard = chroma.findIndex((c) => c.strength > 0)
  if (firstHeard < 0) return []
  const inKey = diatonic(key)
  const prior = triads.map((t) => (inKey.has(t.name) ? 0 : -outsideCost))
  // A beat counts as much as it sounds, up to a typical beat: a faint one cannot turn the harmony alone.
  const typical = [...chroma.map((c) => c.strength).filter((s) => s > 0)].sort((a, b) => a - b)
  const median = typical[Math.floor(typical.length / 2)] ?? 1
  const count = triads.length
  let score = new Float64Array(count)
  const back: Array<Int16Array> = []
  for (let b = firstHeard; b < chroma.length; b++) {
    const beat = chroma[b] as (typeof chroma)[number]
    const weight = Math.min(1, beat.strength / median)
    const heard = fit(beat.treble, beat.bass)
    const next = new Float64Array(count)
    const from = new Int16Array(count)
    let best = 0
    for (let j = 1; j < count; j++) if ((score[j] ?? 0) > (score[best] ?? 0)) best = j
    for (let j = 0; j < count; j++) {
      const stay = score[j] ?? 0
      const change = (score[best] ?? 0) - changeCost
      const previous = b === firstHeard || stay >= change ? j : best
      from[j] = previous
      next[j] = (b === firstHeard ? 0 : Math.max(stay, change)) + weight * ((heard[j] ?? 0) + (prior[j] ?? 0))
    }
    back.push(from)
    score = next
  }
  let state = 0
  for (let j = 1; j < count; j++) if ((score[j] ?? 0) > (score[state] ?? 0)) state = j
  const path = new Array<number>(back.length)
  for (let i = back.length - 1; i >= 0; i--) {
    path[i] = state
    state = back[i]?.[state] ?? state
  }
  const spans: Array<ChordSpan> = []
  for (const [i, s] of path.entries()) {
    const b = firstHeard + i
    const chord = triads[s]?.name ?? "C"
    const start = beats[b] ?? 0
    const end = beats[b + 1] ?? duration
    const last = spans[spans.length - 1]
    if (last !== undefined && last.chord === chord) spans[spans.length - 1] = { ...last, end: ms(end) }
    else spans.push({ start: ms(start), end: ms(end), chord })
  }
  return spans
}
