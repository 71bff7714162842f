// Lines written to a phrase: as many sung syllables as the phrase has notes, the stressed ones
// on its strong beats where the words allow, the last word rhyming with an earlier line's when
// the scheme asks. Lines are templates of plain English with slots for the draft's words.

import type { Rng } from "../rng.ts"
import { FUNCTION_WORDS, lineRhyme, soundOf } from "./sounds.ts"
import type { Slot, Vocabulary } from "./words.ts"

/** One phrase of the melody: its notes, and which of them fall on a beat. */
export interface LineTarget {
  readonly notes: number
  readonly strong: ReadonlyArray<boolean>
}

export type Flavour = "verse" | "chorus"

const VERSE = [
  "I {V} the {N}",
  "we {V} the {N}",
  "you {V} the {N}",
  "{A} {N} in the {N}",
  "the {N} is {A}",
  "we were {G} through the {N}",
  "I {V} your {N}",
  "under the {A} {N}",
  "{G} on the {N}",
  "there's a {N} in the {N}",
  "all the {N} we {V}",
  "I can {V} the {N}",
  "where the {N} will {V}",
  "till the {N} is {A}",
  "and the {N} will {V}",
  "we {V} and we {V}",
  "nothing but the {N}",
  "I remember the {N}",
  "out on the {A} {N}",
  "a {N} of {N}",
  "we were {A} and {A}",
  "I was {G} for the {N}",
  "every {N} is {A}",
  "the {N} and the {N}",
  "you and I and the {N}",
  "in the {N} of the {N}",
  "I {V} when the {N} is {A}",
  "{A} {N}"
]
const CHORUS = [
  "take me to the {N}",
  "hold me through the {N}",
  "we are the {N}",
  "tonight we {V}",
  "you're my {N}",
  "never let me {V}",
  "oh, {A} {N}",
  "we {V}, we {V}",
  "{V} with me to the {N}",
  "let the {N} {V}",
  "all night we {V}",
  "{A} {N}, {A} {N}",
  "I will {V} for the {N}",
  "{V} the {N}",
  "we can {V} like the {N}",
  "{A} {N}"
]
const FILLERS = ["oh", "and", "so", "now", "yeah"]

interface Template {
  readonly tokens: ReadonlyArray<string>
  readonly slots: ReadonlyArray<Slot>
  /** Sung syllables of the literal words. */
  readonly fixed: number
}

function template(text: string): Template {
  const tokens = text.split(" ")
  const slots: Slot[] = []
  let fixed = 0
  for (const t of tokens) {
    const slot = /^\{([NAVG])\}[,]?$/.exec(t)
    if (slot !== null) slots.push(slot[1] as Slot)
    else fixed += soundOf(t)?.syllables ?? 1
  }
  return { tokens, slots, fixed }
}
const TEMPLATES: Readonly<Record<Flavour, ReadonlyArray<Template>>> = {
  verse: VERSE.map(template),
  chorus: CHORUS.map(template)
}

/** Per sung syllable of a line: 2 stressed, 1 secondary, 0 unstressed; and whether its word has more than one. */
function stresses(line: string): { readonly stress: number[]; readonly poly: boolean[] } {
  const stress: number[] = []
  const poly: boolean[] = []
  for (const w of line.split(/\s+/)) {
    const s = soundOf(w)
    if (s === null) continue
    for (const x of s.stress) {
      stress.push(x)
      poly.push(s.syllables > 1)
    }
  }
  return { stress, poly }
}

/** How well a line's stresses sit on the phrase's beats: a stressed syllable on a beat scores, off it costs (most in a longer word). */
export function stressScore(line: string, strong: ReadonlyArray<boolean>): number {
  const { stress, poly } = stresses(line)
  let score = 0
  stress.forEach((s, i) => {
    const beat = strong[i] ?? false
    if (beat && s === 2) score += 1
    else if (beat && s === 0) score -= 0.5
    else if (!beat && s === 2 && (poly[i] ?? false)) score -= 1.5
  })
  return score
}

/** Words joined as sung and written: "a" before a vowel is "an"; the first letter is a capital. */
function join(words: ReadonlyArray<string>): string {
  const out = words.map((w, i) => {
    const next = words[i + 1]
    return w === "a" && next !== undefined && (soundOf(next.replace(/,$/, ""))?.vowelStart ?? false) ? "an" : w
  })
  const text = out.join(" ")
  return text.charAt(0).toUpperCase() + text.slice(1)
}

export interface LineAsk {
  readonly target: LineTarget
  /** The rhyme the last word must have, or null. */
  readonly rhyme: string | null
  /** Words the line must not end on (those it would rhyme with). */
  readonly notEnding: ReadonlySet<string>
  /** Content words already used nearby: avoided. */
  readonly used: ReadonlySet<string>
  readonly flavour: Flavour
  /** The end word must have at least this many rhymes in the vocabulary (a later line will need one). */
  readonly partners: number
}

/** Words of the vocabulary, per rhyme. */
export function rhymeIndex(vocab: Vocabulary): Map<string, string[]> {
  const index = new Map<string, string[]>()
  for (const slot of ["N", "A", "V", "G"] as const)
    for (const w of vocab.words[slot]) {
      const r = soundOf(w)?.rhyme ?? ""
      const list = index.get(r) ?? []
      if (!list.includes(w)) list.push(w)
      index.set(r, list)
    }
  return index
}

/**
 * A line for the phrase, or null when no template and words give its count exactly. Tries the
 * templates in a seeded order, fills each by a depth-first search over the words in the
 * vocabulary's order, and keeps the candidate whose stresses sit best on the beats.
 */
export function writeLine(ask: LineAsk, vocab: Vocabulary, rhymesOf: Map<string, string[]>, rng: Rng): string | null {
  const target = ask.target.notes
  const own = TEMPLATES[ask.flavour]
  const other = TEMPLATES[ask.flavour === "verse" ? "chorus" : "verse"]
  const order = [...shuffle(own, rng), ...shuffle(other, rng)]
  // Long phrases take two clauses: a free one, then one that ends the line.
  const pairs: Template[][] = []
  if (target >= 8) for (let i = 0; i < 24; i++) pairs.push([rng.pick(own), rng.pick([...own, ...other])] as Template[])
  const singles = order.map((t) => [t])
  const candidates: { line: string; score: number }[] = []
  const tryShape = (parts: ReadonlyArray<Template>): void => {
    const slots = parts.flatMap((p) => p.slots)
    const fixed = parts.reduce((a, p) => a + p.fixed, 0)
    for (let fillers = 0; fillers <= 2; fillers++) {
      const need = target - fixed - fillers
      if (need < slots.length || need > slots.length * 3) continue
      const chosen = fill(slots, need, ask, vocab, rhymesOf, rng)
      if (chosen === null) continue
      const lead = fillers === 0 ? [] : fillers === 1 ? [rng.pick(FILLERS)] : ["oh", "oh"]
      let k = 0
      const tokens = parts.flatMap((p, pi) => {
        const out = p.tokens.map((t) => {
          const slot = /^\{([NAVG])\}(,?)$/.exec(t)
          if (slot === null) return t
          return `${chosen[k++] ?? ""}${slot[2] ?? ""}`
        })
        if (pi < parts.length - 1) out[out.length - 1] = `${out[out.length - 1] ?? ""},`
        return out
      })
      const line = join([...lead.map((w, i) => (i === lead.length - 1 ? `${w},` : w)), ...tokens])
      const own = chosen.some((w) => vocab.favoured.has(w)) ? 2 : 0
      candidates.push({ line, score: stressScore(line, ask.target.strong) + own - 0.75 * fillers })
      return
    }
  }
  for (const shape of [...singles, ...pairs]) {
    tryShape(shape)
    if (candidates.length >= 8) break
  }
  if (candidates.length === 0) return null
  let best = candidates[0] as { line: string; score: number }
  for (const c of candidates) if (c.score > best.score) best = c
  return best.line
}

function shuffle<T>(list: ReadonlyArray<T>, rng: Rng): T[] {
  return list
    .map((x) => ({ x, k: rng.next() }))
    .sort((a, b) => a.k - b.k)
    .map((e) => e.x)
}

/** Words for the slots whose syllables add up to `need` (the last slot carries the rhyme), or null. */
function fill(
  slots: ReadonlyArray<Slot>,
  need: number,
  ask: LineAsk,
  vocab: Vocabulary,
  rhymesOf: Map<string, string[]>,
  rng: Rng
): string[] | null {
  const last = slots.length - 1
  const options = slots.map((slot, i) => {
    let list = vocab.words[slot].filter((w) => !ask.used.has(w))
    if (i === last) {
      list = list.filter((w) => !ask.notEnding.has(w))
      if (ask.rhyme !== null) {
        const r = ask.rhyme
        list = list.filter((w) => soundOf(w)?.rhyme === r)
      } else if (ask.partners > 0)
        list = list.filter((w) => (rhymesOf.get(soundOf(w)?.rhyme ?? "")?.length ?? 0) > ask.partners)
    }
    // The vocabulary's order (prompt, themes, general), lightly stirred so lines differ.
    const head = shuffle(list.slice(0, 12), rng)
    return [...head, ...list.slice(12, 60)]
  })
  // The syllable sums the slots from i on can make: the search never enters a dead end.
  const reach: Set<number>[] = Array.from({ length: slots.length + 1 }, () => new Set<number>())
  reach[slots.length]?.add(0)
  for (let i = slots.length - 1; i >= 0; i--) {
    const counts = new Set((options[i] ?? []).map((w) => soundOf(w)?.syllables ?? 0))
    for (const c of counts) for (const r of reach[i + 1] ?? []) if (c + r <= need) reach[i]?.add(c + r)
  }
  if (!(reach[0]?.has(need) ?? false)) return null
  const chosen: string[] = []
  const seen = new Set<string>()
  const search = (i: number, left: number): boolean => {
    if (i === slots.length) return left === 0
    for (const w of options[i] ?? []) {
      if (seen.has(w)) continue
      const n = soundOf(w)?.syllables ?? 99
      if (!(reach[i + 1]?.has(left - n) ?? false)) continue
      chosen.push(w)
      seen.add(w)
      if (search(i + 1, left - n)) return true
      chosen.pop()
      seen.delete(w)
    }
    return false
  }
  return search(0, need) ? chosen : null
}

/** The rhyme scheme of a section of `n` lines: couplets in a chorus, alternate rhymes in a verse of four. */
export function scheme(n: number, flavour: Flavour, alternate: boolean): number[] {
  // Each line's partner: the index of the earlier line it rhymes with, or -1.
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const inFour = i % 4
    const base = i - inFour
    if (alternate && flavour === "verse" && n - base >= 4) out.push(inFour >= 2 ? base + inFour - 2 : -1)
    else out.push(i % 2 === 1 ? i - 1 : -1)
  }
  return out
}

/** Writes a section's lines to its phrases with the scheme; a phrase no words fit gets a line within one note. */
export function writeSection(
  targets: ReadonlyArray<LineTarget>,
  flavour: Flavour,
  alternate: boolean,
  vocab: Vocabulary,
  rhymesOf: Map<string, string[]>,
  used: Set<string>,
  rng: Rng
): string[] {
  const partnerOf = scheme(targets.length, flavour, alternate)
  const needed = new Set(partnerOf.filter((p) => p >= 0))
  const lines: string[] = []
  targets.forEach((target, i) => {
    const partner = partnerOf[i] ?? -1
    const rhyme = partner >= 0 ? lineRhyme(lines[partner] ?? "") || null : null
    const endOf = (l: string): string => (l.split(/\s+/).pop() ?? "").toLowerCase().replace(/[^a-z']/g, "")
    const notEnding = new Set(lines.map(endOf))
    const attempts: LineAsk[] = []
    const base = { used, flavour, notEnding, partners: needed.has(i) ? 1 : 0 }
    attempts.push({ ...base, target, rhyme })
    for (const d of [1, -1])
      if (rhyme !== null && target.notes + d >= 1)
        attempts.push({ ...base, target: { ...target, notes: target.notes + d }, rhyme })
    if (rhyme !== null) attempts.push({ ...base, target, rhyme: null })
    attempts.push({ ...base, target, rhyme: null, used: new Set(), partners: 0 })
    let line: string | null = null
    for (const ask of attempts) {
      line = writeLine(ask, vocab, rhymesOf, rng)
      if (line !== null) break
    }
    const written = line ?? "Oh".concat(", oh".repeat(Math.max(0, target.notes - 1)))
    lines.push(written)
    for (const w of written.toLowerCase().split(/[^a-z']+/)) if (w !== "" && !FUNCTION_WORDS.has(w)) used.add(w)
  })
  return lines
}
