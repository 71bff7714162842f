// What a cover or an instrumental keeps of an upload: its chords, one a bar on its own bar grid
// (from its first beat), and its lead line, the highest notes of its transcription. The rest of
// an upload's sheet (its form in bars, its tempo and key) is the stand-in take that song.ts
// composes in the upload's tempo and key; without these two the cover of an upload would be a
// new song in its key, not the same song in another style.

import type { NoteEvent } from "../compose.ts"
import type { Chord } from "../theory.ts"
import type { UploadRoot } from "../types.ts"
// The top line is read as listening reads the voice along it: one rule for what the tune is.
import { lowest, together } from "../listen/voiceProfile.ts"

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
 * The skyline of the transcription from the first beat on, in the sheet's time (bar 0 at 0, bars
 * `sheetBar` long: the stand-in's tempo is the heard one rounded): of notes starting together the
 * highest, each cut where the next begins.
 */
export function uploadLead(root: UploadRoot, sheetBar: number): Array<NoteEvent> {
  const grid = root.analysis.beats[0] ?? 0
  const scale = sheetBar / barOf(root)
  const notes = root.transcription.notes
    .filter((n) => n.pitch >= lowest && n.start >= grid - together && n.end > n.start)
    .sort((a, b) => a.start - b.start || b.pitch - a.pitch)
  const tops: Array<(typeof notes)[number]> = []
  for (const n of notes) {
    const last = tops[tops.length - 1]
    if (last !== undefined && n.start - last.start < together) continue
    tops.push(n)
  }
  return tops.map((n, i) => {
    const next = tops[i + 1]
    const end = next === undefined ? n.end : Math.min(n.end, next.start)
    return {
      start: Math.max(0, n.start - grid) * scale,
      dur: Math.max(0.05, (end - n.start) * scale),
      pitch: n.pitch,
      vel: Math.max(0.2, Math.min(1, n.velocity))
    }
  })
}
