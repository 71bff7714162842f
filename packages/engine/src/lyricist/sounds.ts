// How a word sounds to the lyricist: its sung syllables, which of them is stressed, and its
// rhyme, all from the one pronouncing dictionary the singing voice uses (pronounce.ts), so the
// words are counted as the engine will sing them.

import { lineSyllables, syllabify } from "../lyrics.ts"
import { pronunciation } from "../pronounce.ts"

export interface WordSound {
  readonly word: string
  /** Sung syllables (one note each). */
  readonly syllables: number
  /** Per syllable: 2 stressed, 1 secondary, 0 unstressed (a one-syllable function word is 0). */
  readonly stress: ReadonlyArray<number>
  /** The dictionary's phones from the last stressed vowel to the end, stress marks dropped ("" for none). */
  readonly rhyme: string
  /** The first phone is a vowel (so "a" before it is "an"). */
  readonly vowelStart: boolean
}

/** Words sung lightly: never the stress of a line. */
export const FUNCTION_WORDS = new Set(
  (
    "a an the and or but so of to in on at by for from with as is am are was were be been it its " +
    "i me my we us our you your he him his she her they them their this that these those there " +
    "can will would could should shall may might must do does did not no nor if than then when " +
    "where while what who how all just now oh yeah till through into onto like up out"
  ).split(" ")
)

const cache = new Map<string, WordSound | null>()

const key = (word: string): string =>
  word
    .toLowerCase()
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[^a-z']/g, "")
    .replace(/^'+|'+$/g, "")

/**
 * A word as the dictionary says it, or null when the dictionary lacks it or the engine would
 * sing it with another number of syllables than the dictionary has vowels ("fire", "hour":
 * a diphthong and an unstressed ER are sung as one note), so a word's count is never in doubt.
 */
export function soundOf(wordIn: string): WordSound | null {
  const word = key(wordIn)
  const known = cache.get(word)
  if (known !== undefined) return known
  const phones = word === "" ? null : pronunciation(word)
  let sound: WordSound | null = null
  if (phones !== null) {
    const vowels = phones.filter((p) => /[0-2]$/.test(p))
    if (vowels.length > 0 && syllabify(word).length === vowels.length) {
      const marks = vowels.map((v) => Number(v.slice(-1)))
      const stress =
        vowels.length === 1 ? [FUNCTION_WORDS.has(word) ? 0 : 2] : marks.map((m) => (m === 1 ? 2 : m === 2 ? 1 : 0))
      let last = phones.length - 1
      while (last >= 0 && !/1$/.test(phones[last] ?? "")) last--
      if (last < 0) last = phones.findLastIndex((p) => /[0-2]$/.test(p))
      const rhyme = phones
        .slice(Math.max(0, last))
        .map((p) => p.replace(/[0-2]$/, ""))
        .join(" ")
      sound = { word, syllables: vowels.length, stress, rhyme, vowelStart: /[0-2]$/.test(phones[0] ?? "") }
    }
  }
  cache.set(word, sound)
  return sound
}

/** Sung syllables of a line, as the engine counts them. */
export const lineCount = (line: string): number => lineSyllables(line).length

/** The rhyme of a line's last word ("" when the dictionary does not know it). */
export function lineRhyme(line: string): string {
  const words = line.split(/[\s\-–—/]+/).filter((w) => /[a-z]/i.test(w))
  const last = words[words.length - 1]
  return last === undefined ? "" : (soundOf(last)?.rhyme ?? "")
}

/** Two line ends rhyme: the same sounds from their last stressed vowel on, and not the same word. */
export function rhymes(a: string, b: string): boolean {
  const end = (l: string): string =>
    key(
      l
        .split(/\s+/)
        .filter((w) => /[a-z]/i.test(w))
        .pop() ?? ""
    )
  const ra = lineRhyme(a)
  return ra !== "" && ra === lineRhyme(b) && end(a) !== end(b)
}
