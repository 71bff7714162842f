// Lyrics: section tags into sections, lines into syllables, syllables into the
// phonemes the singing voice can pronounce. English-centric spelling rules; other
// languages still get a vowel per syllable, which is what singing needs most.

import type { SectionKind } from "./genres.ts"
import { pronunciation } from "./pronounce.ts"

/** Vowel targets: i "beet", I "bit", e "bet", ae "bat", a "father", o "bought", U "book", u "boot", A "but", @ schwa, er "bird". */
export type Vowel = "i" | "I" | "e" | "ae" | "a" | "o" | "U" | "u" | "A" | "@" | "er"
/** Consonants: th as in "thin", dh as in "this", zh as in "measure", j as in "jam", y as in "yes". */
export type Consonant =
  | "s"
  | "sh"
  | "f"
  | "th"
  | "h"
  | "z"
  | "v"
  | "p"
  | "t"
  | "k"
  | "b"
  | "d"
  | "g"
  | "m"
  | "n"
  | "ng"
  | "l"
  | "r"
  | "w"
  | "y"
  | "ch"
  | "j"
  | "dh"
  | "zh"

export interface Syllable {
  readonly onset: ReadonlyArray<Consonant>
  /** One vowel, or two for a diphthong (the note glides from the first to the second). */
  readonly vowel: readonly [Vowel] | readonly [Vowel, Vowel]
  readonly coda: ReadonlyArray<Consonant>
  /** The word's stressed syllable (the dictionary's primary stress; the first syllable when the spelling rules guessed). */
  readonly stressed?: boolean
  /** Last syllable of its word (a small gap may follow). */
  readonly wordEnd: boolean
  /** The letters this syllable is spelt with, where the spelling rules could split them ("" otherwise). */
  readonly text: string
}

/** A syllable of a lyric line, knowing the word it belongs to (as written) and whether it starts it. */
export interface SungSyllable extends Syllable {
  readonly word: string
  readonly wordStart: boolean
}

export interface LyricSection {
  readonly kind: SectionKind
  readonly lines: ReadonlyArray<string>
}

export interface ParsedLyrics {
  readonly sections: ReadonlyArray<LyricSection>
  /** True when the caller used section tags, so their order is the song form. */
  readonly tagged: boolean
}

/** The kind of section a tag names (`[Pre-Chorus]` prechorus, `[Hook]` chorus, `[Break]` solo...). */
export function tagKind(tag: string): SectionKind {
  const t = tag.toLowerCase()
  if (/pre-? ?chorus|build/.test(t)) return "prechorus"
  if (/chorus|hook|refrain/.test(t)) return "chorus"
  if (/bridge|middle/.test(t)) return "bridge"
  if (/intro/.test(t)) return "intro"
  if (/outro|\bend|coda|fade/.test(t)) return "outro"
  if (/solo|instrumental|interlude|break|drop/.test(t)) return "solo"
  return "verse"
}

export function parseLyrics(text: string | null): ParsedLyrics {
  if (text === null || text.trim() === "") return { sections: [], tagged: false }
  const sections: { kind: SectionKind; lines: string[] }[] = []
  let tagged = false
  let current: { kind: SectionKind; lines: string[] } | null = null
  let blank = false
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.trim()
    const tag = /^\[([^\]]{1,40})\]\s*(.*)$/.exec(line)
    if (tag !== null) {
      tagged = true
      current = { kind: tagKind(tag[1] ?? ""), lines: [] }
      sections.push(current)
      if ((tag[2] ?? "") !== "") current.lines.push(tag[2] ?? "")
      blank = false
      continue
    }
    if (line === "") {
      blank = true
      continue
    }
    // Without tags, blank lines separate verses.
    if (current === null || (!tagged && blank)) {
      current = { kind: "verse", lines: [] }
      sections.push(current)
    }
    blank = false
    if (/[\p{L}\p{N}]/u.test(line)) current.lines.push(line)
  }
  // An empty [Chorus] means "the chorus again": reuse the previous chorus words.
  let lastChorus: string[] = []
  for (const s of sections) {
    if (s.kind === "chorus") {
      if (s.lines.length === 0) s.lines = [...lastChorus]
      else lastChorus = s.lines
    }
  }
  return { sections, tagged }
}

// ---------------------------------------------------------------- syllables

const EXCEPTIONS: Readonly<Record<string, ReadonlyArray<Syllable>>> = {}
function syl(onset: Consonant[], vowel: readonly [Vowel] | readonly [Vowel, Vowel], coda: Consonant[]): Syllable {
  return { onset, vowel, coda, wordEnd: true, text: "" }
}
const WORDS: ReadonlyArray<readonly [string, Syllable]> = [
  ["the", syl(["th"], ["@"], [])],
  ["a", syl([], ["@"], [])],
  ["i", syl([], ["a", "i"], [])],
  ["you", syl(["y"], ["u"], [])],
  ["to", syl(["t"], ["u"], [])],
  ["do", syl(["d"], ["u"], [])],
  ["love", syl(["l"], ["A"], ["v"])],
  ["one", syl(["w"], ["A"], ["n"])],
  ["are", syl([], ["a"], ["r"])],
  ["was", syl(["w"], ["A"], ["z"])],
  ["what", syl(["w"], ["A"], ["t"])],
  ["of", syl([], ["A"], ["v"])],
  ["come", syl(["k"], ["A"], ["m"])],
  ["some", syl(["s"], ["A"], ["m"])],
  ["have", syl(["h"], ["ae"], ["v"])],
  ["give", syl(["g"], ["I"], ["v"])],
  ["live", syl(["l"], ["I"], ["v"])],
  ["heart", syl(["h"], ["a"], ["r", "t"])],
  ["your", syl(["y"], ["o"], ["r"])],
  ["our", syl([], ["a", "U"], ["r"])],
  ["know", syl(["n"], ["o", "U"], [])],
  ["go", syl(["g"], ["o", "U"], [])],
  ["so", syl(["s"], ["o", "U"], [])],
  ["no", syl(["n"], ["o", "U"], [])],
  ["oh", syl([], ["o", "U"], [])],
  ["there", syl(["th"], ["e"], ["r"])],
  ["where", syl(["w"], ["e"], ["r"])],
  ["were", syl(["w"], ["@"], ["r"])],
  ["here", syl(["h"], ["i"], ["r"])],
  ["fire", syl(["f"], ["a", "i"], ["r"])],
  ["eyes", syl([], ["a", "i"], ["z"])],
  ["said", syl(["s"], ["e"], ["d"])],
  ["my", syl(["m"], ["a", "i"], [])],
  ["by", syl(["b"], ["a", "i"], [])],
  ["we", syl(["w"], ["i"], [])],
  ["me", syl(["m"], ["i"], [])],
  ["he", syl(["h"], ["i"], [])],
  ["she", syl(["sh"], ["i"], [])],
  ["be", syl(["b"], ["i"], [])],
  ["is", syl([], ["I"], ["z"])],
  ["and", syl([], ["ae"], ["n", "d"])],
  ["all", syl([], ["o"], ["l"])],
  ["night", syl(["n"], ["a", "i"], ["t"])],
  ["light", syl(["l"], ["a", "i"], ["t"])]
]
for (const [w, s] of WORDS) (EXCEPTIONS as Record<string, ReadonlyArray<Syllable>>)[w] = [s]

const VOWEL_LETTERS = "aeiouy"
const VOWEL_DIGRAPHS: ReadonlyArray<readonly [string, readonly [Vowel] | readonly [Vowel, Vowel]]> = [
  ["igh", ["a", "i"]],
  ["eau", ["o", "U"]],
  ["ee", ["i"]],
  ["ea", ["i"]],
  ["ie", ["i"]],
  ["ey", ["e", "i"]],
  ["oo", ["u"]],
  ["ou", ["a", "U"]],
  ["ow", ["o", "U"]],
  ["ai", ["e", "i"]],
  ["ay", ["e", "i"]],
  ["ei", ["e", "i"]],
  ["oi", ["o", "i"]],
  ["oy", ["o", "i"]],
  ["au", ["o"]],
  ["aw", ["o"]],
  ["oa", ["o", "U"]],
  ["ue", ["u"]],
  ["ew", ["u"]],
  ["ui", ["u"]]
]
const SHORT: Readonly<Record<string, Vowel>> = { a: "ae", e: "e", i: "I", o: "o", u: "A", y: "I" }
const LONG: Readonly<Record<string, readonly [Vowel] | readonly [Vowel, Vowel]>> = {
  a: ["e", "i"],
  e: ["i"],
  i: ["a", "i"],
  o: ["o", "U"],
  u: ["u"],
  y: ["a", "i"]
}

interface Grapheme {
  readonly text: string
  readonly vowel: boolean
}

function graphemes(word: string): Grapheme[] {
  const out: Grapheme[] = []
  let i = 0
  while (i < word.length) {
    const rest = word.slice(i)
    const vd = VOWEL_DIGRAPHS.find(([d]) => rest.startsWith(d))
    // "ow"/"ew"/"aw"/"ay"/"ey"/"oy" only act as vowels when not followed by a vowel.
    if (
      (vd !== undefined && !(vd[0].endsWith("w") || vd[0].endsWith("y"))) ||
      (vd !== undefined && !VOWEL_LETTERS.includes(word[i + vd[0].length] ?? "#"))
    ) {
      out.push({ text: vd[0], vowel: true })
      i += vd[0].length
      continue
    }
    const cd = ["sch", "tch", "sh", "ch", "th", "ph", "ng", "ck", "qu", "wh", "gh", "dg"].find((d) =>
      rest.startsWith(d)
    )
    if (cd !== undefined) {
      out.push({ text: cd, vowel: false })
      i += cd.length
      continue
    }
    const c = word[i] ?? ""
    // y is a consonant at the start of a word or before a vowel.
    const isVowel = VOWEL_LETTERS.includes(c) && !(c === "y" && (i === 0 || VOWEL_LETTERS.includes(word[i + 1] ?? "#")))
    out.push({ text: c, vowel: isVowel })
    i++
  }
  return out
}

function consonants(g: string, next: string): Consonant[] {
  switch (g) {
    case "sh":
    case "sch":
      return ["sh"]
    case "ch":
    case "tch":
      return ["ch"]
    case "th":
      return ["th"]
    case "ph":
      return ["f"]
    case "ng":
      return ["ng"]
    case "ck":
      return ["k"]
    case "qu":
      return ["k", "w"]
    case "wh":
      return ["w"]
    case "gh":
      return []
    case "dg":
      return ["j"]
    case "c":
      return "eiy".includes(next) ? ["s"] : ["k"]
    case "x":
      return ["k", "s"]
    case "q":
      return ["k"]
    case "j":
      return ["j"]
    case "y":
      return ["y"]
    case "g":
      return ["g"]
    default:
      return "bdfhklmnprstvwz".includes(g) && g.length === 1 ? [g as Consonant] : []
  }
}

function vowelOf(g: string, long: boolean, followedByR: boolean): readonly [Vowel] | readonly [Vowel, Vowel] {
  const d = VOWEL_DIGRAPHS.find(([t]) => t === g)
  if (d !== undefined) return d[1]
  if (followedByR) return g === "a" ? ["a"] : g === "o" ? ["o"] : ["@"]
  if (long) return LONG[g] ?? ["@"]
  return [SHORT[g] ?? "@"]
}

/** Splits one word into sung syllables: as the pronouncing dictionary says it, else by its spelling. */
export function syllabify(wordIn: string): Syllable[] {
  const spelt = spellingSyllables(wordIn)
  const key = wordIn
    .toLowerCase()
    .normalize("NFD")
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[^a-z']/g, "")
    .replace(/^'+|'+$/g, "")
  const phones = key === "" ? null : pronunciation(key)
  if (phones === null) return spelt
  const said = phoneSyllables(phones)
  if (said.length === 0) return spelt
  // The letters of each syllable come from the spelling rules' split when it has as many.
  return said.map((s, i) => ({ ...s, text: spelt.length === said.length ? (spelt[i]?.text ?? "") : "" }))
}

const ARPA_VOWELS: Readonly<Record<string, readonly [Vowel] | readonly [Vowel, Vowel]>> = {
  AA: ["a"],
  AE: ["ae"],
  AH: ["A"],
  AO: ["o"],
  AW: ["a", "U"],
  AY: ["a", "i"],
  EH: ["e"],
  ER: ["er"],
  EY: ["e", "i"],
  IH: ["I"],
  IY: ["i"],
  OW: ["o", "U"],
  OY: ["o", "i"],
  UH: ["U"],
  UW: ["u"]
}
const ARPA_CONSONANTS: Readonly<Record<string, Consonant>> = {
  B: "b",
  CH: "ch",
  D: "d",
  DH: "dh",
  F: "f",
  G: "g",
  HH: "h",
  JH: "j",
  K: "k",
  L: "l",
  M: "m",
  N: "n",
  NG: "ng",
  P: "p",
  R: "r",
  S: "s",
  SH: "sh",
  T: "t",
  TH: "th",
  V: "v",
  W: "w",
  Y: "y",
  Z: "z",
  ZH: "zh"
}
/** Two- and three-consonant clusters English starts a syllable with: the rest of a cluster between vowels closes the syllable before. */
const ONSET_CLUSTERS = new Set([
  "p l",
  "b l",
  "k l",
  "g l",
  "f l",
  "s l",
  "p r",
  "b r",
  "t r",
  "d r",
  "k r",
  "g r",
  "f r",
  "th r",
  "sh r",
  "t w",
  "d w",
  "k w",
  "s w",
  "g w",
  "th w",
  "s p",
  "s t",
  "s k",
  "s m",
  "s n",
  "s f",
  "p y",
  "b y",
  "f y",
  "v y",
  "m y",
  "k y",
  "h y",
  "s p l",
  "s p r",
  "s t r",
  "s k r",
  "s k w",
  "s k y",
  "s p y"
])

/** Syllables from ARPAbet phones: one per vowel, consonants between vowels start the next syllable as far as English allows. */
export function phoneSyllables(phones: ReadonlyArray<string>): Syllable[] {
  type Nucleus = { vowel: readonly [Vowel] | readonly [Vowel, Vowel]; stress: number; merged: boolean }
  const nuclei: Nucleus[] = []
  const clusters: Consonant[][] = [[]]
  for (const p of phones) {
    const base = p.replace(/[0-9]$/, "")
    const stress = Number(p.slice(base.length) || "0")
    const v = ARPA_VOWELS[base]
    if (v !== undefined) {
      const prev = nuclei[nuclei.length - 1]
      // "fire", "hour", "flower": a diphthong running straight into an unstressed ER is sung as one syllable ending in r.
      if (
        base === "ER" &&
        stress === 0 &&
        prev !== undefined &&
        !prev.merged &&
        prev.vowel.length === 2 &&
        clusters[clusters.length - 1]?.length === 0
      ) {
        prev.merged = true
        clusters[clusters.length - 1]?.push("r")
        continue
      }
      // Unstressed AH is the neutral schwa ("the", "a", "about").
      nuclei.push({ vowel: base === "AH" && stress === 0 ? ["@"] : v, stress, merged: false })
      clusters.push([])
      continue
    }
    const c = ARPA_CONSONANTS[base]
    if (c !== undefined) clusters[clusters.length - 1]?.push(c)
  }
  if (nuclei.length === 0) return []
  const primary = nuclei.findIndex((n) => n.stress === 1)
  const out: Syllable[] = []
  let onset: Consonant[] = clusters[0] ?? []
  nuclei.forEach((n, k) => {
    const after = clusters[k + 1] ?? []
    const last = k === nuclei.length - 1
    let split = after.length
    if (!last) {
      // The longest tail of the cluster that can start a syllable (a single consonant always can, but not "ng").
      split = after.length === 0 ? 0 : after[after.length - 1] === "ng" ? after.length : after.length - 1
      for (let i = 0; i < after.length - 1; i++) {
        if (ONSET_CLUSTERS.has(after.slice(i).join(" "))) {
          split = i
          break
        }
      }
    }
    out.push({
      onset,
      vowel: n.vowel,
      coda: after.slice(0, split),
      stressed: k === Math.max(0, primary),
      wordEnd: last,
      text: ""
    })
    onset = after.slice(split)
  })
  return out
}

/** Splits one word into syllables by its spelling (English-ish rules), for words the dictionary lacks. */
export function spellingSyllables(wordIn: string): Syllable[] {
  const word = wordIn
    .toLowerCase()
    .normalize("NFD")
    .replace(/[^a-z]/g, "")
  if (word === "") return otherScript(wordIn)
  const known = EXCEPTIONS[word]
  if (known !== undefined) return known.map((k) => ({ ...k, text: word }))
  const gs = graphemes(word)
  let vowelIdx = gs.map((g, i) => (g.vowel ? i : -1)).filter((i) => i >= 0)
  if (vowelIdx.length === 0) {
    // "hmm", "shh": hum it on a neutral vowel.
    return [{ onset: [], vowel: ["@"], coda: gs.flatMap((g) => consonants(g.text, "")), wordEnd: true, text: word }]
  }
  // Silent e in "-ed"/"-es" endings ("walked", "times"), unless it is sounded ("wanted", "boxes").
  let silentIdx = -1
  const lastV = vowelIdx[vowelIdx.length - 1] ?? 0
  if (vowelIdx.length > 1 && lastV === gs.length - 2 && gs[lastV]?.text === "e") {
    const end = gs[gs.length - 1]?.text ?? ""
    const before = gs[lastV - 1]?.text ?? ""
    if (
      (end === "d" && before !== "t" && before !== "d") ||
      (end === "s" && !["s", "x", "z", "ch", "sh", "g", "c", "j"].includes(before))
    )
      silentIdx = lastV
  }
  if (silentIdx >= 0 && !(gs[silentIdx - 1]?.vowel ?? true)) {
    const magicEs = (vowelIdx[vowelIdx.length - 2] ?? 0) === silentIdx - 2
    vowelIdx = vowelIdx.slice(0, -1)
    const out = syllabifyGraphemes(gs, vowelIdx, magicEs, silentIdx)
    return out
  }
  // Silent final e ("time", "love"): drop it and lengthen the vowel before it.
  let magic = false
  const last = vowelIdx[vowelIdx.length - 1] ?? 0
  if (
    vowelIdx.length > 1 &&
    last === gs.length - 1 &&
    gs[last]?.text === "e" &&
    !(gs[last - 1]?.vowel ?? true) &&
    !(word.endsWith("le") && vowelIdx.length === 2 && word.length > 4)
  ) {
    magic = (vowelIdx[vowelIdx.length - 2] ?? 0) === last - 2
    vowelIdx = vowelIdx.slice(0, -1)
  }
  return syllabifyGraphemes(gs, vowelIdx, magic, magic ? gs.length - 1 : -1)
}

/** Groups graphemes into syllables around the vowel graphemes at `vowelIdx`. */
function syllabifyGraphemes(
  gs: ReadonlyArray<Grapheme>,
  vowelIdx: ReadonlyArray<number>,
  magic: boolean,
  silentIdx: number
): Syllable[] {
  const out: Syllable[] = []
  let start = 0
  for (let k = 0; k < vowelIdx.length; k++) {
    const v = vowelIdx[k] ?? 0
    const nextV = vowelIdx[k + 1]
    let end: number
    if (nextV === undefined) end = gs.length
    else {
      const gap = nextV - v - 1
      end = gap <= 1 ? v + 1 : v + 2
    }
    const onset: Consonant[] = []
    for (let i = start; i < v; i++) onset.push(...consonants(gs[i]?.text ?? "", gs[i + 1]?.text[0] ?? ""))
    const coda: Consonant[] = []
    for (let i = v + 1; i < end; i++) {
      const g = gs[i]
      if (g === undefined || i === silentIdx) continue
      if (g.vowel) continue
      coda.push(...consonants(g.text, gs[i + 1]?.text[0] ?? ""))
    }
    const vg = gs[v]?.text ?? "a"
    const isLast = nextV === undefined
    const openEnd = isLast && end === v + 1 && vowelIdx.length === 1
    const long = (isLast && magic) || openEnd
    const rNext = gs[v + 1]?.text === "r" && !(gs[v + 2]?.vowel ?? false)
    // A word-final open "a" is the /a/ of "la", "ma", "spa", not the /ei/ of "make".
    let vowel = openEnd && vg === "a" ? (["a"] as const) : vowelOf(vg, long, rNext)
    if (vg === "y" && isLast && vowelIdx.length > 1) vowel = ["i"]
    out.push({
      onset,
      vowel,
      coda,
      wordEnd: isLast,
      text: gs
        .slice(start, end)
        .map((g) => g.text)
        .join("")
    })
    start = end
  }
  return out
}

/** A lyric line as syllables, each knowing its word as written. */
export function lineSyllables(line: string): SungSyllable[] {
  const words = line.replace(/\([^)]*\)/g, (m) => m.slice(1, -1)).split(/[\s\-–—/]+/)
  const out: SungSyllable[] = []
  for (const w of words) {
    syllabify(w).forEach((s, i) => {
      out.push({ ...s, word: w, wordStart: i === 0 })
    })
  }
  return out
}

const OPEN_VOWELS: ReadonlyArray<Vowel> = ["a", "e", "i", "o", "u"]
const SOFT_ONSETS: ReadonlyArray<Consonant> = ["k", "s", "t", "n", "h", "m", "y", "r", "w", "g", "d", "b", "p"]

/**
 * Scripts the spelling rules cannot read (kana, hangul, han, cyrillic...): one sung
 * syllable per letter, with an open consonant-vowel shape picked from the code point,
 * so every written syllable still gets its note.
 */
const ALPHABET_VOWELS: Readonly<Record<string, Vowel>> = {
  а: "a",
  е: "e",
  ё: "o",
  и: "i",
  о: "o",
  у: "u",
  ы: "I",
  э: "e",
  ю: "u",
  я: "a",
  і: "i",
  ї: "i",
  є: "e",
  α: "a",
  ε: "e",
  η: "i",
  ι: "i",
  ο: "o",
  υ: "i",
  ω: "o",
  ά: "a",
  έ: "e",
  ή: "i",
  ί: "i",
  ό: "o",
  ύ: "i",
  ώ: "o"
}

function otherScript(word: string): Syllable[] {
  const chars = [...word.toLowerCase()]
  // Alphabets with vowel letters (Cyrillic, Greek): one syllable per vowel.
  const vowels = chars.map((ch) => ALPHABET_VOWELS[ch]).filter((v): v is Vowel => v !== undefined)
  if (vowels.length > 0)
    return vowels.map((v, i) => ({
      onset: i === 0 && ALPHABET_VOWELS[chars[0] ?? ""] !== undefined ? [] : ["n" as Consonant],
      vowel: [v],
      coda: [],
      wordEnd: i === vowels.length - 1,
      text: ""
    }))
  const letters = chars.filter((ch) => /\p{L}/u.test(ch))
  return letters.map((ch, i) => {
    const cp = ch.codePointAt(0) ?? 0
    const onset = SOFT_ONSETS[cp % SOFT_ONSETS.length] ?? "n"
    return {
      onset: cp % 3 === 0 ? [] : [onset],
      vowel: [OPEN_VOWELS[(cp >> 2) % OPEN_VOWELS.length] ?? "a"],
      coda: [],
      wordEnd: i === letters.length - 1,
      text: ch
    }
  })
}
