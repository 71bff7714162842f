// What a cover or an instrumental keeps of an upload: its chords, one a bar on its own bar grid
// (from its first beat), and its lead line, the tune of its transcription (listen/tune.ts). The rest of
// an upload's sheet (its form in bars, its tempo and key) is the stand-in take that song.ts
// composes in the upload's tempo and key; without these two the cover of an upload would be a
// new song in its key, not the same song in another style.

import { compose, type NoteEvent } from "../compose.ts"
import { barSeconds, type SectionPlan } from "../form.ts"
import { knobs, requestKey, songIdentity, type Take } from "../render.ts"
import { Rng } from "../rng.ts"
import type { Chord } from "../theory.ts"
import type { TrackSource, UploadRoot } from "../types.ts"
// The tune is read as listening reads the voice along it: one rule for what the tune is.
import { together, tuneOf } from "../listen/tune.ts"

const pitchClass: Readonly<Record<string, number>> = { C: 0, D: 2, E: 4, F: 5, G: 7, A: 9, B: 11 }

/** `F#m`, `Bb`, `C`: a triad rooted in octave 3, as theory.ts builds them; undefined for anything else. */
export function chordNamed(name: string): Chord | undefined {
  const m = /^([A-G])([#b]?)(m?)$/.exec(name)
  if (m === null) return undefined
  const pc = ((pitchClass[m[1] ?? "C"] ?? 0) + (m[2] === "#" ? 1 : m[2] === "b" ? -1 : 0) + 12) % 12
  return { root: 48 + pc, intervals: m[3] === "m" ? [0, 3, 7] : [0, 4, 7] }
}

/** Seconds of one of the upload's own bars (four beats at the tempo heard). */
const barOf = (root: UploadRoot): number => (4 * 60) / root.analysis.bpm

/** The chord heard in the middle of each of the upload's bars, `undefined` where none was heard. */
export function uploadChords(root: UploadRoot, bars: number): Array<Chord | undefined> {
  const grid = root.analysis.beats[0] ?? 0
  const bar = barOf(root)
  return Array.from({ length: bars }, (_, i) => {
    const middle = grid + (i + 0.5) * bar
    const span = root.analysis.chords.find((c) => c.start <= middle && middle < c.end)
    return span === undefined ? undefined : chordNamed(span.chord)
  })
}

/**
 * The tune of the transcription (listen/tune.ts: the skyline over a band, every sung note of a
 * tune alone) from the first beat on, in the sheet's time (bar 0 at 0, bars `sheetBar` long: the
 * stand-in's tempo is the heard one rounded), each note cut where the next begins. A note up to a sixteenth before the first beat is on
 * it: the beat tracker hears a soft attack (a voice, a bowed string) late, and a tune alone is
 * all attack (a hummed tune's first beat came 60 ms after its first note).
 */
export function uploadLead(root: UploadRoot, sheetBar: number): Array<NoteEvent> {
  const grid = root.analysis.beats[0] ?? 0
  const scale = sheetBar / barOf(root)
  const early = Math.max(together, barOf(root) / 16)
  const tune = tuneOf(root.transcription.notes.filter((n) => n.start >= grid - early))
  return tune.map((n) => ({
    start: Math.max(0, n.start - grid) * scale,
    dur: Math.max(0.05, (n.end - n.start) * scale),
    pitch: n.pitch,
    vel: Math.max(0.2, Math.min(1, n.velocity))
  }))
}

/** A bar this far under the song's full level is quiet: an intro, a break, an outro. */
const quietBelow = 6
/** The energy a heard break is planned at: under it a cover's drums stop (`breakBars` in takes.ts). */
export const breakEnergy = 0.15

/** Each bar's level: as listening measured it, else the notes' weight in it (uploads listened to before). */
function levelsOf(root: UploadRoot, bars: number, bar: number): Array<number> {
  const measured = root.transcription.levels
  if (measured !== undefined && measured.length > 0)
    return Array.from({ length: bars }, (_, i) => measured[Math.min(i, measured.length - 1)] ?? -100)
  const grid = root.analysis.beats[0] ?? 0
  const weight = new Float64Array(bars)
  for (const n of root.transcription.notes)
    for (let b = Math.max(0, Math.floor((n.start - grid) / bar)); b < bars && grid + b * bar < n.end; b++) {
      const overlap = Math.min(n.end, grid + (b + 1) * bar) - Math.max(n.start, grid + b * bar)
      if (overlap > 0) weight[b] = (weight[b] ?? 0) + overlap * n.velocity
    }
  return Array.from(weight, (w) => 10 * Math.log10(w + 1e-6))
}

/**
 * The upload's form, bar for bar from its first beat: quiet bars at the start are its intro, at the
 * end its outro, a quiet run of two bars or more inside it a break (a bridge at `breakEnergy`); the
 * full parts in sections of up to eight bars, the loudest its choruses, the rest verses.
 */
export function uploadPlan(root: UploadRoot, bars: number, bar: number): Array<SectionPlan> {
  const levels = levelsOf(root, bars, bar)
  const sorted = [...levels].sort((a, b) => a - b)
  const full = sorted[Math.floor(sorted.length * 0.75)] ?? 0
  const quiet = levels.map((l) => l < full - quietBelow)
  let intro = 0
  while (intro < bars && quiet[intro] === true) intro++
  let outro = 0
  while (outro < bars - intro && quiet[bars - 1 - outro] === true) outro++
  const runs: Array<{ kind: SectionPlan["kind"]; bars: number; energy: number }> = []
  if (intro > 0) runs.push({ kind: "intro", bars: intro, energy: 0.35 })
  let b = intro
  while (b < bars - outro) {
    let end = b
    if (quiet[b] === true) while (end < bars - outro && quiet[end] === true) end++
    if (end - b >= 2) {
      runs.push({ kind: "bridge", bars: end - b, energy: breakEnergy })
      b = end
      continue
    }
    // Full bars (a lone quiet one among them is a rest, not a break) up to the next break or eight bars.
    end = b
    while (
      end < bars - outro &&
      end - b < 8 &&
      !(quiet[end] === true && quiet[end + 1] === true && end + 1 < bars - outro)
    )
      end++
    end = Math.max(end, b + 1)
    const mean = levels.slice(b, end).reduce((s, l) => s + l, 0) / (end - b)
    const chorus = mean >= full - 1.5
    runs.push({ kind: chorus ? "chorus" : "verse", bars: end - b, energy: chorus ? 1 : 0.6 })
    b = end
  }
  if (outro > 0) runs.push({ kind: "outro", bars: outro, energy: 0.35 })
  const occurrences = new Map<SectionPlan["kind"], number>()
  return runs.map((r) => {
    const occurrence = occurrences.get(r.kind) ?? 0
    occurrences.set(r.kind, occurrence + 1)
    return { kind: r.kind, bars: r.bars, lines: [], barsPerLine: 2, energy: r.energy, occurrence }
  })
}

/**
 * An upload's stand-in take (never heard: it gives what is made from the upload its form): the
 * upload's own form (`uploadPlan`), as many bars from its first beat as its audio lasts, so that a
 * cover at its tempo, with the last chord's ring of three quarters of a bar, lasts as long as the
 * upload within a bar (a render's `maxSeconds` still cuts it, as it cuts every take).
 */
export function uploadStandIn(source: TrackSource): Take {
  const root = source.upload as UploadRoot
  const { spec, voice } = songIdentity(source.request, source.taskId)
  const k = knobs(source.request)
  const bar = barSeconds(spec.bpm)
  const grid = root.analysis.beats[0] ?? 0
  const bars = Math.max(1, Math.ceil((root.duration - grid) / bar - 0.75 - 1e-6))
  const takeRng = new Rng(`take|${source.index}|${source.taskId}|${requestKey(source.request)}`)
  const score = compose(
    {
      spec,
      lyrics: null,
      instrumental: true,
      model: source.request.model,
      voice,
      ...k,
      plan: uploadPlan(root, bars, bar)
    },
    takeRng
  )
  return { spec, score, weirdness: k.weirdness, rng: takeRng }
}
