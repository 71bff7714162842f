// The built-in lyricist: words written offline to the form the engine would compose for a
// style (or to a track's own melody), deterministic for the same brief and seed. It drafts; a
// language model writes better (README, "The built-in lyricist").

import { Rng } from "../rng.ts"
import type { LyricsBrief, LyricsDraft } from "./brief.ts"
import { rhymeIndex, writeSection } from "./lines.ts"
import { reviseLyrics } from "./revise.ts"
import { keepsEveryLine, placeholder, type SectionTarget, styleShape, trackShape } from "./shape.ts"
import { titleOf } from "./title.ts"
import { vocabulary } from "./words.ts"

export { LYRICS_SECTIONS, type LyricsBrief, type LyricsDraft, type LyricsSection } from "./brief.ts"

/** The generate `lyrics` field's limit. */
export const LYRICS_MAX_CHARS = 5000

/** Two drafts for the brief: new words, or the brief's words revised by its instruction. */
export function writeLyrics(brief: LyricsBrief): ReadonlyArray<LyricsDraft> {
  const key = JSON.stringify([brief.prompt, brief.style, brief.title, brief.language, brief.sections, brief.fit])
  if (brief.revise !== null) return reviseLyrics(brief, brief.revise, key)
  const fitted = brief.fit === null ? null : trackShape(brief.fit)
  // A track with no tune to write to (nothing sung, no lead) is written to its own style's form.
  const style = brief.style ?? brief.fit?.request.style ?? "pop"
  let shape: SectionTarget[]
  let check: ((text: string) => boolean) | null = null
  let unit = 4
  if (fitted?.some((s) => s.lines.length > 0)) shape = fitted
  else {
    const planned = styleShape(style, brief.sections, brief.seed)
    shape = planned.sections
    unit = planned.unit
    const tempi = [...new Set([planned.bpm, planned.slowest])]
    check = (text) => keepsEveryLine(text, planned.genre, tempi)
  }
  // The form made short enough to be sung whole (judged on a "la" a note), then the words.
  for (let guard = 0; check !== null && !check(placeholder(shape)) && guard < 40; guard++) {
    const next = shorter(shape, unit, brief.sections === null)
    if (next === null) break
    shape = next
  }
  return [0, 1].map((k) => {
    let sections = shape
    for (let guard = 0; guard < 40; guard++) {
      const draft = draftOf(brief, sections, k, key)
      if (draft.text.length <= LYRICS_MAX_CHARS && (check === null || check(draft.text))) return draft
      const next = shorter(sections, unit, brief.sections === null)
      if (next === null) return draft
      sections = next
    }
    return draftOf(brief, sections, k, key)
  })
}

/**
 * A shorter form: an instrumental break of the style's own form dropped; else two lines fewer in
 * the longest section where that takes bars off it (its repeats alike); else the last sung
 * section but one dropped.
 */
function shorter(sections: ReadonlyArray<SectionTarget>, unit: number, own: boolean): SectionTarget[] | null {
  const drop = (at: number): SectionTarget[] =>
    sections
      .filter((_, i) => i !== at)
      .map((s) => ({ ...s, repeats: s.repeats > at ? s.repeats - 1 : s.repeats === at ? -1 : s.repeats }))
  const bars = (lines: number): number => Math.max(unit, Math.ceil((lines * 2) / unit) * unit)
  const brk = sections.findIndex((s, i) => own && s.kind === "solo" && i > 0 && i < sections.length - 1)
  if (brk >= 0) return drop(brk)
  let longest = -1
  sections.forEach((s, i) => {
    if (s.repeats < 0 && s.lines.length > 2 && bars(s.lines.length - 2) < bars(s.lines.length))
      if (longest < 0 || s.lines.length >= (sections[longest]?.lines.length ?? 0)) longest = i
  })
  if (longest >= 0)
    return sections.map((s, i) =>
      i === longest || s.repeats === longest ? { ...s, lines: s.lines.slice(0, s.lines.length - 2) } : s
    )
  const sung = sections.map((s, i) => (s.lines.length > 0 ? i : -1)).filter((i) => i >= 0)
  if (sung.length <= 2) return null
  return drop(sung[sung.length - 2] as number)
}

/** One draft of the form: each section's lines written to its phrases, a repeated chorus sung with the same words. */
function draftOf(brief: LyricsBrief, sections: ReadonlyArray<SectionTarget>, k: number, key: string): LyricsDraft {
  const vocab = vocabulary(brief.prompt, [], `${brief.seed}|${k}`)
  const rhymesOf = rhymeIndex(vocab)
  const rng = new Rng(`lyricist|${k}|${brief.seed}|${key}`)
  const written: string[][] = []
  for (const s of sections) {
    const again = written[s.repeats]
    if (s.repeats >= 0 && again !== undefined && again.length === s.lines.length) {
      written.push(again)
      continue
    }
    const flavour = s.kind === "chorus" || s.kind === "prechorus" ? "chorus" : "verse"
    written.push(writeSection(s.lines, flavour, k === 0, vocab, rhymesOf, new Set(), rng.fork(s.name)))
  }
  const text = sections.map((s, i) => [`[${s.name}]`, ...(written[i] ?? [])].join("\n")).join("\n\n")
  const hook = sections.findIndex((s) => s.kind === "chorus" && s.lines.length > 0)
  const firstSung = written.find((l) => l.length > 0)?.[0]
  return { title: titleOf(brief.title, (written[hook] ?? [])[0] ?? firstSung ?? vocab.theme[0] ?? "Untitled"), text }
}
