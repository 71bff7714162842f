// The form the lyricist writes to: sections, their lines, and each line's phrase (its notes
// and which fall on a beat). From the style, it is the song the engine composes for it (the
// tune its lead plays, take 0 of the brief's seed); from a track, the track's own phrases
// (its sung lines, or its lead's two-bar spans), re-planned from its TrackSource as the engine
// does, so the same track always gives the same form.

import { sheetOf } from "../arrange/sheet.ts"
import type { NoteEvent } from "../compose.ts"
import { planForm } from "../form.ts"
import type { Genre, SectionKind } from "../genres.ts"
import { parseLyrics, tagKind } from "../lyrics.ts"
import { composeTake } from "../render.ts"
import { Rng } from "../rng.ts"
import { segmentsOf, trackWav } from "../song.ts"
import type { TrackSource } from "../types.ts"
import type { LineTarget } from "./lines.ts"

export interface SectionTarget {
  /** The tag as written (`Verse`, `Pre-Chorus`...). */
  readonly name: string
  readonly kind: SectionKind
  readonly lines: ReadonlyArray<LineTarget>
  /** The earlier section whose words this one sings again (a chorus), or -1. */
  readonly repeats: number
}

export const NAME_OF: Readonly<Record<SectionKind, string>> = {
  intro: "Intro",
  verse: "Verse",
  prechorus: "Pre-Chorus",
  chorus: "Chorus",
  bridge: "Bridge",
  solo: "Break",
  outro: "Outro"
}

/** Lines the lyricist writes in a section of each kind when the form is the style's. */
const LINES: Readonly<Record<SectionKind, number>> = {
  intro: 0,
  verse: 4,
  prechorus: 2,
  chorus: 4,
  bridge: 2,
  solo: 0,
  outro: 0
}

/** A phrase of `notes` starting `phraseStart` seconds in, with a sixteenth of `step` seconds. */
function phrase(notes: ReadonlyArray<NoteEvent>, phraseStart: number, step: number): LineTarget {
  // Swing delays off-beats only: a note on a beat is on the grid.
  const strong = notes.map((n) => {
    const pos = (n.start - phraseStart) / step
    return Math.abs(pos - Math.round(pos)) < 0.05 && Math.round(pos) % 4 === 0
  })
  return { notes: notes.length, strong }
}

const within = (notes: ReadonlyArray<NoteEvent>, from: number, until: number): NoteEvent[] =>
  notes.filter((n) => n.start >= from - 1e-6 && n.start < until - 1e-6)

/** The form for a style: `sections` (or the genre's form), each line the tune the engine's lead plays there. */
export function styleShape(
  style: string,
  sections: ReadonlyArray<string> | null,
  seed: string
): {
  readonly sections: SectionTarget[]
  readonly genre: Genre
  readonly bpm: number
  readonly slowest: number
  readonly unit: number
} {
  const request = { style, title: "Lyrics", lyrics: null, instrumental: true, model: "aether" as const }
  const take = composeTake(request, seed, 0)
  const score = take.score
  const bar = (4 * 60) / score.bpm
  const step = bar / 16
  const lead = score.parts.filter((p) => p.role === "lead").flatMap((p) => p.notes)
  // The lead's tune per section kind and two-bar position (the composer reuses a hook there).
  const hooks = new Map<string, LineTarget>()
  let at = 0
  for (const s of score.plan ?? []) {
    for (let b = 0; b + 1 < s.bars; b += 2) {
      const start = (at + b) * bar
      const notes = within(lead, start, start + 2 * bar)
      const key = `${s.kind}:${(b / 2) % 4}`
      if (notes.length >= 3 && !hooks.has(key)) hooks.set(key, phrase(notes, start, step))
    }
    at += s.bars
  }
  const fallback = (i: number): LineTarget => {
    const notes = 6 + (i % 3)
    return { notes, strong: Array.from({ length: notes }, (_, k) => k % 2 === 0) }
  }
  const targetFor = (kind: SectionKind, i: number): LineTarget =>
    hooks.get(`${kind}:${i % 4}`) ??
    hooks.get(`${kind === "prechorus" ? "bridge" : "chorus"}:${i % 4}`) ??
    hooks.get(`chorus:${i % 4}`) ??
    hooks.get(`solo:${i % 4}`) ??
    fallback(i)
  const names = sections !== null && sections.length > 0 ? sections : take.spec.genre.form.map((k) => NAME_OF[k])
  const unit = take.spec.genre.progressions[0]?.length ?? 4
  const out: SectionTarget[] = []
  for (const name of names) {
    const kind = tagKind(name)
    // A long harmonic cycle (a 12-bar blues) is filled: two bars a line.
    const lines = LINES[kind] > 0 && unit > 8 ? Math.max(LINES[kind], Math.floor(unit / 2)) : LINES[kind]
    const count = name.toLowerCase() === "hook" ? 2 : lines
    const first = out.findIndex((s) => s.name === name)
    const repeats = (kind === "chorus" || kind === "prechorus") && first >= 0 ? first : -1
    out.push({ name, kind, lines: Array.from({ length: count }, (_, i) => targetFor(kind, i)), repeats })
  }
  // Only instrumental sections asked for: each sings two lines, so the words have somewhere to be.
  if (out.every((s) => s.lines.length === 0))
    out.forEach((s, i) => {
      out[i] = { ...s, lines: [targetFor("verse", 0), targetFor("verse", 1)] }
    })
  const genre = take.spec.genre
  return {
    sections: out,
    genre,
    unit,
    bpm: score.bpm,
    // The slowest tempo another task id could draw for the style: the genre's range, widened as
    // parseStyle widens it at style_weight 0 and pushes it down for slow words (at least 50).
    slowest: take.spec.bpmExplicit
      ? score.bpm
      : Math.min(score.bpm, Math.max(50, Math.round(genre.bpm[0] - 0.325 * (genre.bpm[1] - genre.bpm[0]))))
  }
}

/** Every line of `text` is sung when the engine plans a song of it at these tempi (none dropped to keep it under three minutes). */
export function keepsEveryLine(text: string, genre: Genre, tempi: ReadonlyArray<number>): boolean {
  const lyrics = parseLyrics(text)
  const lines = lyrics.sections.flatMap((s) => s.lines)
  return tempi.every((bpm) => {
    const plan = planForm(genre, lyrics, true, bpm, new Rng("lyricist|form"), genre.progressions[0]?.length ?? 4)
    const sung = plan.flatMap((s) => s.lines)
    return sung.length === lines.length && sung.every((l, i) => l === lines[i])
  })
}

/** The form as lyrics with a "la" for every note: what the engine plans is the same for the words written to it. */
export function placeholder(sections: ReadonlyArray<SectionTarget>): string {
  return sections
    .map((s) =>
      [`[${s.name}]`, ...s.lines.map((l) => Array.from({ length: l.notes }, () => "la").join(" "))].join("\n")
    )
    .join("\n\n")
}

/**
 * The form of a track: its sung lines, each with the notes sung to it, or for a track without
 * words the two-bar spans of its tune (the lead) in each section it plays in. Sections without
 * a tune are written as empty tags (instrumental).
 */
export function trackShape(source: TrackSource): SectionTarget[] {
  const sheet = sheetOf(source, {}, { segmentsOf, trackWav })
  const step = sheet.bar / 16
  const sung = sheet.vocal.length > 0 && sheet.plan.some((s) => s.lines.length > 0)
  const out: SectionTarget[] = []
  const signatureOf: string[] = []
  let at = 0
  for (const s of sheet.plan) {
    const start = sheet.start + at * sheet.bar
    const lines: LineTarget[] = []
    if (sung)
      s.lines.forEach((_, li) => {
        const from = start + li * s.barsPerLine * sheet.bar
        const notes = within(sheet.vocal, from, from + s.barsPerLine * sheet.bar)
        if (notes.length > 0) lines.push(phrase(notes, from, step))
      })
    else if (s.kind !== "intro" && s.kind !== "outro")
      for (let b = 0; b < s.bars; b += 2) {
        const from = start + b * sheet.bar
        const notes = within(sheet.lead, from, from + Math.min(2, s.bars - b) * sheet.bar)
        if (notes.length > 0) lines.push(phrase(notes, from, step))
      }
    const signature = `${s.kind}|${sung ? s.lines.join("\n") : lines.map((l) => l.notes).join(",")}`
    const first = out.findIndex((o, i) => o.kind === "chorus" && signatureOf[i] === signature)
    signatureOf.push(signature)
    out.push({
      name: NAME_OF[s.kind],
      kind: s.kind,
      lines,
      repeats: s.kind === "chorus" && lines.length > 0 && first >= 0 ? first : -1
    })
    at += s.bars
  }
  return out
}
