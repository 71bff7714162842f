// Song form: which sections, in what order, how many bars each, and which lyric
// lines each one sings. Tagged lyrics give the order; otherwise the genre's form
// is filled with the lyric paragraphs. The length is steered into 60..180 seconds.

import type { Genre, SectionKind } from "./genres.ts"
import { lineSyllables, type ParsedLyrics } from "./lyrics.ts"
import type { Rng } from "./rng.ts"

export interface SectionPlan {
  readonly kind: SectionKind
  readonly bars: number
  readonly lines: ReadonlyArray<string>
  /** Bars given to each sung line (1, 2 or 4). */
  readonly barsPerLine: number
  /** 0..1 intensity of the arrangement in this section. */
  readonly energy: number
  /** Which occurrence of this kind it is (0 for the first chorus, 1 for the second...). */
  readonly occurrence: number
}

const SECTION_ENERGY: Readonly<Record<SectionKind, number>> = {
  intro: 0.35,
  verse: 0.6,
  prechorus: 0.75,
  chorus: 1,
  bridge: 0.55,
  solo: 0.85,
  outro: 0.35
}
const INSTRUMENTAL_BARS: Readonly<Record<SectionKind, number>> = {
  intro: 4,
  verse: 8,
  prechorus: 4,
  chorus: 8,
  bridge: 8,
  solo: 8,
  outro: 4
}

function roundUp(n: number, m: number): number {
  return Math.max(m, Math.ceil(n / m) * m)
}

export function barSeconds(bpm: number): number {
  return (4 * 60) / bpm
}

function linesBars(lines: ReadonlyArray<string>, bpm: number, tight: boolean): number {
  // Two bars per line is the natural pop phrase; fast tempi or long lines need more room,
  // and when the song would run too long short lines are packed one per bar.
  let most = 0
  for (const l of lines) most = Math.max(most, lineSyllables(l).length)
  if (most > 28 || (bpm >= 150 && most > 14)) return 4
  if (tight && most <= 7 && bpm < 110) return 1
  return 2
}

export function planForm(
  genre: Genre,
  lyrics: ParsedLyrics,
  vocal: boolean,
  bpm: number,
  rng: Rng,
  unit: number
): SectionPlan[] {
  const bar = barSeconds(bpm)
  const build = (
    tight: boolean
  ): { kind: SectionKind; bars: number; lines: ReadonlyArray<string>; barsPerLine: number }[] => {
    const out: { kind: SectionKind; bars: number; lines: ReadonlyArray<string>; barsPerLine: number }[] = []
    const sung = vocal && lyrics.sections.length > 0
    let order: { kind: SectionKind; lines: ReadonlyArray<string> }[]
    if (sung && lyrics.tagged) order = lyrics.sections.map((s) => ({ kind: s.kind, lines: s.lines }))
    else if (sung) {
      // Untagged paragraphs become verses of the genre form; choruses stay instrumental hooks.
      const paras = [...lyrics.sections]
      order = []
      for (const kind of genre.form) {
        if (kind === "verse" || (kind === "bridge" && paras.length > 2)) {
          const p = paras.shift()
          order.push({ kind, lines: p?.lines ?? [] })
        } else order.push({ kind, lines: [] })
      }
      while (paras.length > 0) {
        const p = paras.shift()
        order.splice(
          Math.max(1, order.length - 1),
          0,
          { kind: "verse", lines: p?.lines ?? [] },
          { kind: "chorus", lines: [] }
        )
      }
    } else order = genre.form.map((kind) => ({ kind, lines: [] }))
    if (sung && order[0]?.kind !== "intro") order.unshift({ kind: "intro", lines: [] })
    if (sung && order[order.length - 1]?.kind !== "outro") order.push({ kind: "outro", lines: [] })
    for (const s of order) {
      if (s.lines.length > 0) {
        const bpl = linesBars(s.lines, bpm, tight)
        out.push({ kind: s.kind, bars: roundUp(s.lines.length * bpl, unit), lines: s.lines, barsPerLine: bpl })
      } else {
        // Intros and outros need not run a whole long cycle (a 12-bar blues opens with 4 bars).
        const u = s.kind === "intro" || s.kind === "outro" ? Math.min(unit, 4) : unit
        out.push({ kind: s.kind, bars: roundUp(INSTRUMENTAL_BARS[s.kind], u), lines: [], barsPerLine: 2 })
      }
    }
    return out
  }
  let plan = build(false)
  const seconds = (p: ReadonlyArray<{ bars: number }>): number => p.reduce((a, s) => a + s.bars, 0) * bar
  if (seconds(plan) > 180) plan = build(true)
  // Too long: drop sections before the outro until it fits (the song still ends properly).
  while (seconds(plan) > 180 && plan.length > 3) plan.splice(plan.length - 2, 1)
  while (seconds(plan) > 180 && (plan[0]?.bars ?? 0) > unit) {
    const s = plan.find((p) => p.bars > unit && p.lines.length === 0) ?? plan[0]
    if (s === undefined) break
    s.bars -= unit
    if (s.lines.length > 0) s.lines = s.lines.slice(0, Math.floor(s.bars / s.barsPerLine))
  }
  // Too short: lengthen instrumental sections, then repeat the last chorus.
  const target = vocal ? 60 : 75 + rng.next() * 60
  let guard = 0
  while (seconds(plan) < target && guard++ < 40) {
    const candidates = plan.filter((p) => p.lines.length === 0 && p.kind !== "intro" && p.kind !== "outro")
    const intro = plan[0]
    const outro = plan[plan.length - 1]
    const lastChorus = [...plan].reverse().find((p) => p.kind === "chorus")
    const lastSolo = plan.map((p) => p.kind).lastIndexOf("solo")
    if (candidates.length === 0 && plan.length >= 2) {
      // Short lyrics: an instrumental break before the outro, like a solo...
      plan.splice(Math.max(1, plan.length - 1), 0, { kind: "solo", bars: roundUp(8, unit), lines: [], barsPerLine: 2 })
    } else if (lastChorus !== undefined && lastSolo >= 0 && plan.map((p) => p.kind).lastIndexOf("chorus") < lastSolo) {
      // ...and the chorus comes back after it.
      plan.splice(Math.max(1, plan.length - 1), 0, { ...lastChorus })
    } else if (candidates.length > 0 && guard % 3 !== 0) {
      const s = rng.pick(candidates)
      s.bars += unit
    } else if (intro !== undefined && intro.kind === "intro" && intro.lines.length === 0 && intro.bars < 8) {
      intro.bars += unit
    } else if (outro !== undefined && outro.kind === "outro" && outro.lines.length === 0 && outro.bars < 8) {
      outro.bars += unit
    } else {
      const chorus = [...plan].reverse().find((p) => p.kind === "chorus") ?? {
        kind: "chorus" as SectionKind,
        bars: 8,
        lines: [],
        barsPerLine: 2
      }
      plan.splice(Math.max(1, plan.length - 1), 0, { ...chorus })
    }
  }
  const seen = new Map<SectionKind, number>()
  return plan.map((s) => {
    const occurrence = seen.get(s.kind) ?? 0
    seen.set(s.kind, occurrence + 1)
    return {
      kind: s.kind,
      bars: s.bars,
      lines: s.lines,
      barsPerLine: s.barsPerLine,
      energy: SECTION_ENERGY[s.kind],
      occurrence
    }
  })
}

export interface ContinuationInput {
  readonly bpm: number
  /** Bars of the genre's harmonic cycle: sections are whole cycles. */
  readonly unit: number
  /** The kind of section the source was in where the continuation takes over. */
  readonly leadIn: SectionKind
  /** New lyrics to sing, or null to continue the song's own form. */
  readonly lyrics: ParsedLyrics | null
  /** Without new lyrics: the lines sung again (the source's last chorus), none for an instrumental. */
  readonly reprise: ReadonlyArray<string>
  /** The continuation must last at least this long (seconds), its lead-in bar included. */
  readonly minSeconds: number
}

/**
 * The form of a continuation: one lead-in bar (the splice falls inside it, so nothing sung is cut),
 * the new lyrics' sections in order (or, without them, an instrumental break and the chorus
 * again), the last repeated until long enough, and an outro that ends the song. Every section
 * counts as a later occurrence: the arrangement is already full.
 */
export function planContinuation(c: ContinuationInput): SectionPlan[] {
  const bar = barSeconds(c.bpm)
  const sectionFor = (kind: SectionKind, lines: ReadonlyArray<string>): SectionPlan => {
    const barsPerLine = lines.length > 0 ? linesBars(lines, c.bpm, false) : 2
    const bars =
      lines.length > 0 ? roundUp(lines.length * barsPerLine, c.unit) : roundUp(INSTRUMENTAL_BARS[kind], c.unit)
    return { kind, bars, lines, barsPerLine, energy: SECTION_ENERGY[kind], occurrence: 1 }
  }
  const leadInKind: SectionKind = c.leadIn === "intro" || c.leadIn === "outro" ? "verse" : c.leadIn
  // Without new words the song goes round once more as songs end: a break, then the chorus.
  const body: SectionPlan[] =
    c.lyrics !== null && c.lyrics.sections.length > 0
      ? c.lyrics.sections.map((s) => sectionFor(s.kind, s.lines))
      : [sectionFor("solo", []), sectionFor("chorus", c.reprise)]
  const outro: SectionPlan = { ...sectionFor("outro", []), bars: roundUp(INSTRUMENTAL_BARS.outro, Math.min(c.unit, 4)) }
  const seconds = (p: ReadonlyArray<SectionPlan>): number => p.reduce((a, s) => a + s.bars, 0) * bar
  const plan: SectionPlan[] = [
    { kind: leadInKind, bars: 1, lines: [], barsPerLine: 2, energy: SECTION_ENERGY[leadInKind], occurrence: 1 },
    ...body,
    outro
  ]
  const repeat = body[body.length - 1] as SectionPlan
  for (let guard = 0; seconds(plan) < c.minSeconds && guard < 16; guard++) plan.splice(plan.length - 1, 0, repeat)
  return plan
}
