// Revision: the brief's words changed as its instruction asks, where the lyricist can read
// it. It reads clauses ("make the chorus rhyme, and a shorter second verse"), each an action
// on a section ("the chorus", "the second verse", "verses", none: the whole song):
// shorter, longer, rhyme, rewrite, remove or add a section. An instruction it cannot read at
// all is not guessed at: the first draft keeps the words as they were, the second is new
// words to the same form (README, "The built-in lyricist").

import type { SectionKind } from "../genres.ts"
import { tagKind } from "../lyrics.ts"
import { Rng } from "../rng.ts"
import type { LyricsBrief, LyricsDraft } from "./brief.ts"
import { type LineTarget, rhymeIndex, writeLine, writeSection, type Flavour } from "./lines.ts"
import { NAME_OF } from "./shape.ts"
import { lineCount, lineRhyme, rhymes, soundOf } from "./sounds.ts"
import { titleOf } from "./title.ts"
import { vocabulary, type Vocabulary } from "./words.ts"

interface Section {
  readonly name: string
  readonly kind: SectionKind
  lines: string[]
}

/** Sections of lyrics as written (tags kept as their names; untagged words are a verse). */
export function sectionsOf(text: string): Section[] {
  const out: Section[] = []
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim()
    const tag = /^\[([^\]]{1,40})\]\s*(.*)$/.exec(line)
    if (tag !== null) {
      const name = (tag[1] ?? "Verse").trim()
      out.push({ name, kind: tagKind(name), lines: (tag[2] ?? "") === "" ? [] : [tag[2] ?? ""] })
      continue
    }
    if (line === "") continue
    if (out.length === 0) out.push({ name: "Verse", kind: "verse", lines: [] })
    out[out.length - 1]?.lines.push(line)
  }
  return out
}

const textOf = (sections: ReadonlyArray<Section>): string =>
  sections.map((s) => [`[${s.name}]`, ...s.lines].join("\n")).join("\n\n")

type Action = "shorter" | "longer" | "rhyme" | "rewrite" | "remove" | "add"

interface Clause {
  readonly action: Action
  /** The section kind named, or null for the whole song. */
  readonly kind: SectionKind | null
  /** Which one of that kind (0 the first, -1 the last), or null for all of them. */
  readonly nth: number | null
}

const ORDINALS: Readonly<Record<string, number>> = {
  first: 0,
  "1st": 0,
  second: 1,
  "2nd": 1,
  third: 2,
  "3rd": 2,
  fourth: 3,
  "4th": 3,
  last: -1,
  final: -1
}

/** The clauses of an instruction the lyricist can act on (none: it cannot read it). */
export function readInstruction(instruction: string): Clause[] {
  const out: Clause[] = []
  for (const part of instruction.toLowerCase().split(/[,;.]|\band\b|\bthen\b|\balso\b/)) {
    const target =
      /\b(?:(first|1st|second|2nd|third|3rd|fourth|4th|last|final)\s+)?(pre-?\s?chorus|chorus|verse|bridge|intro|outro|hook|break)(e?s)?\b/.exec(
        part
      )
    const kind = target === null ? null : tagKind(target[2] ?? "verse")
    const nth = target?.[1] !== undefined ? (ORDINALS[target[1]] ?? null) : null
    const aLine = /\blines?\b/.test(part)
    let action: Action | null = null
    if (/\brhym/.test(part)) action = "rhyme"
    else if (kind !== null && !aLine && /\b(remove|drop|delete|cut out|lose|without|get rid of)\b/.test(part))
      action = "remove"
    else if (kind !== null && !aLine && /\b(add|insert|include|put in|write)\s+(an?|another|one|new)\b/.test(part))
      action = "add"
    else if (/\b(shorter|shorten|trim|cut|fewer|less|tighten|condense|remove|drop)\b/.test(part)) action = "shorter"
    else if (/\b(longer|lengthen|extend|more|add|expand)\b/.test(part)) action = "longer"
    else if (/\b(rewrite|redo|different|new words|fresh|change|replace)\b/.test(part)) action = "rewrite"
    if (action !== null) out.push({ action, kind, nth })
  }
  return out
}

/** Indexes of the sections a clause names, with every section that sings the same words as one of them (a repeated chorus). */
function targets(sections: ReadonlyArray<Section>, clause: Clause, sung: boolean): number[] {
  const all = sections.map((_, i) => i).filter((i) => !sung || (sections[i]?.lines.length ?? 0) > 0)
  if (clause.kind === null) return all
  const ofKind = all.filter((i) => sections[i]?.kind === clause.kind)
  const picked =
    clause.nth === null
      ? ofKind
      : [ofKind[clause.nth < 0 ? ofKind.length - 1 : clause.nth]].filter((i) => i !== undefined)
  const words = new Set(picked.map((i) => sections[i]?.lines.join("\n")))
  return all.filter((i) => picked.includes(i) || (clause.kind === "chorus" && words.has(sections[i]?.lines.join("\n"))))
}

const flavourOf = (kind: SectionKind): Flavour => (kind === "chorus" || kind === "prechorus" ? "chorus" : "verse")
const targetOf = (notes: number): LineTarget => ({
  notes,
  strong: Array.from({ length: notes }, (_, k) => k % 2 === 0)
})
const meanCount = (lines: ReadonlyArray<string>): number =>
  lines.length === 0 ? 7 : Math.max(3, Math.round(lines.reduce((a, l) => a + lineCount(l), 0) / lines.length))

interface Pen {
  readonly vocab: Vocabulary
  readonly rhymesOf: Map<string, string[]>
  readonly rng: Rng
  readonly k: number
}

/** The same change to every section in `at` that sings the same words (each group of equal sections is written once). */
function changeEach(
  sections: Section[],
  at: ReadonlyArray<number>,
  change: (lines: string[], s: Section) => string[]
): void {
  const done = new Map<string, string[]>()
  for (const i of at) {
    const s = sections[i]
    if (s === undefined) continue
    const key = `${s.kind}|${s.lines.join("\n")}`
    const again = done.get(key)
    const next = again ?? change(s.lines, s)
    done.set(key, next)
    s.lines = next
  }
}

/** A pair of lines that rhyme with each other: the second rewritten to the first's rhyme (the first, to the second's, in draft two). */
function rhymePair(a: string, b: string, kind: SectionKind, pen: Pen): [string, string] {
  if (rhymes(a, b)) return [a, b]
  const [keep, change] = pen.k === 0 ? [a, b] : [b, a]
  const ask = {
    target: targetOf(lineCount(change)),
    rhyme: lineRhyme(keep) || null,
    notEnding: new Set([(keep.split(/\s+/).pop() ?? "").toLowerCase().replace(/[^a-z']/g, "")]),
    used: new Set<string>(),
    flavour: flavourOf(kind),
    partners: 0
  }
  const line = ask.rhyme === null ? null : writeLine(ask, pen.vocab, pen.rhymesOf, pen.rng)
  if (line !== null) return pen.k === 0 ? [keep, line] : [line, keep]
  // The kept line's end has no rhyme in the words the lyricist knows: a new couplet of the same lengths.
  const both = writeSection(
    [targetOf(lineCount(a)), targetOf(lineCount(b))],
    "chorus",
    false,
    pen.vocab,
    pen.rhymesOf,
    new Set(),
    pen.rng
  )
  return [both[0] ?? a, both[1] ?? b]
}

function apply(sections: Section[], clause: Clause, pen: Pen): Section[] {
  const write = (counts: ReadonlyArray<number>, kind: SectionKind): string[] =>
    writeSection(counts.map(targetOf), flavourOf(kind), pen.k === 0, pen.vocab, pen.rhymesOf, new Set(), pen.rng)
  switch (clause.action) {
    case "remove": {
      const gone = new Set(
        targets(sections, { ...clause, kind: clause.kind }, false).filter((i) => sections[i]?.kind === clause.kind)
      )
      const kept = sections.filter((_, i) => !gone.has(i))
      return kept.some((s) => s.lines.length > 0) ? kept : sections
    }
    case "add": {
      const kind = clause.kind ?? "bridge"
      const lines = write(
        Array.from({ length: kind === "prechorus" || kind === "bridge" ? 2 : 4 }, () =>
          meanCount(sections.flatMap((s) => s.lines))
        ),
        kind
      )
      const added: Section = { name: NAME_OF[kind], kind, lines }
      const choruses = sections.map((s, i) => (s.kind === "chorus" ? i : -1)).filter((i) => i >= 0)
      const at =
        kind === "intro"
          ? 0
          : kind === "outro"
            ? sections.length
            : kind === "prechorus"
              ? (choruses[0] ?? sections.length)
              : kind === "chorus"
                ? sections.length - (sections[sections.length - 1]?.kind === "outro" ? 1 : 0)
                : (choruses[choruses.length - 1] ?? sections.length)
      return [...sections.slice(0, at), added, ...sections.slice(at)]
    }
    case "shorter":
      changeEach(sections, targets(sections, clause, true), (lines) => {
        if (lines.length <= 1) return lines
        const keep = lines.length >= 4 ? Math.floor(lines.length / 2) : lines.length - 1
        return pen.k === 0 ? lines.slice(0, keep) : lines.slice(lines.length - keep)
      })
      return sections
    case "longer":
      changeEach(sections, targets(sections, clause, true), (lines, s) => {
        const more = write(lines.length >= 4 ? [meanCount(lines), meanCount(lines)] : lines.map(lineCount), s.kind)
        return [...lines, ...more]
      })
      return sections
    case "rhyme": {
      const at =
        clause.kind === null ? targets(sections, { ...clause, kind: "chorus" }, true) : targets(sections, clause, true)
      changeEach(sections, at.length > 0 ? at : targets(sections, { ...clause, kind: null }, true), (lines, s) => {
        const out = [...lines]
        for (let i = 0; i + 1 < out.length; i += 2) {
          const [a, b] = rhymePair(out[i] ?? "", out[i + 1] ?? "", s.kind, pen)
          out[i] = a
          out[i + 1] = b
        }
        return out
      })
      return sections
    }
    case "rewrite":
      changeEach(sections, targets(sections, clause, true), (lines, s) => write(lines.map(lineCount), s.kind))
      return sections
  }
}

/** Two drafts of the brief's words revised by its instruction. */
export function reviseLyrics(
  brief: LyricsBrief,
  revise: { readonly lyrics: string; readonly instruction: string },
  key: string
): ReadonlyArray<LyricsDraft> {
  const clauses = readInstruction(revise.instruction)
  const own = sectionsOf(revise.lyrics)
  const extra = own
    .flatMap((s) => s.lines.flatMap((l) => l.toLowerCase().split(/[^a-z']+/)))
    .filter((w) => soundOf(w) !== null)
  return [0, 1].map((k) => {
    const vocab = vocabulary(brief.prompt, extra, `${brief.seed}|${k}`)
    const pen: Pen = {
      vocab,
      rhymesOf: rhymeIndex(vocab),
      rng: new Rng(`lyricist|revise|${k}|${brief.seed}|${key}|${revise.instruction}`),
      k
    }
    let sections = sectionsOf(revise.lyrics)
    if (clauses.length === 0) {
      // Not understood: the words as they were, and new words to the same form.
      if (k === 1) sections = apply(sections, { action: "rewrite", kind: null, nth: null }, pen)
    } else for (const clause of clauses) sections = apply(sections, clause, pen)
    const hook =
      sections.find((s) => s.kind === "chorus" && s.lines.length > 0) ?? sections.find((s) => s.lines.length > 0)
    return { title: titleOf(brief.title, hook?.lines[0] ?? "Untitled"), text: textOf(sections).slice(0, 5000) }
  })
}
