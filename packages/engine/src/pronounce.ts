// How English words are said: the Carnegie Mellon Pronouncing Dictionary (CMUdict, 134,000
// words in ARPAbet with stress), as the registry's `cmu-pronouncing-dictionary` ships it (ISC;
// the data is CMU's BSD-style licence). Its module is one object literal of 4.7 MB, which costs
// a third of a second to compile in every render thread; the dictionary is read as text instead,
// once, on first need, and looked up by binary search over its sorted lines (a few
// microseconds a word). Nothing is fetched: the file is installed with the package.

import { readFileSync } from "node:fs"
import { createRequire } from "node:module"

let text: string | null = null

function dictionaryText(): string {
  if (text === null) {
    // The package's only file of data; resolved where the package manager put it.
    const path = createRequire(import.meta.url).resolve("cmu-pronouncing-dictionary")
    text = readFileSync(path, "latin1") // ASCII: the cheapest decoding
  }
  return text
}

/** The entry's key at the line starting at `at` (each line is `  "word": "PH ON EH1 S",`). */
function keyAt(t: string, at: number): string | null {
  if (!t.startsWith('  "', at)) return null
  const end = t.indexOf('"', at + 3)
  return end < 0 ? null : t.slice(at + 3, end)
}

const lineStart = (t: string, i: number): number => t.lastIndexOf("\n", i - 1) + 1
const nextLine = (t: string, i: number): number => {
  const n = t.indexOf("\n", i)
  return n < 0 ? t.length : n + 1
}

/**
 * The ARPAbet phones of a word (lower case, letters and apostrophes), stress digits kept
 * ("fire" -> F AY1 ER0), or null when the dictionary does not have it. The first listed
 * pronunciation is the common one.
 */
export function pronunciation(word: string): ReadonlyArray<string> | null {
  const t = dictionaryText()
  // The lines are sorted, except that a variant "word(2)" and a possessive "word's" may swap
  // places with their neighbours: search to the neighbourhood, then look around it.
  let lo = t.indexOf('\n  "') + 1
  let hi = t.lastIndexOf('\n  "') + 1
  while (hi - lo > 4096) {
    const mid = lineStart(t, (lo + hi) >> 1)
    const k = keyAt(t, mid)
    if (k === null || mid <= lo) break
    if (k < word) lo = mid
    else hi = mid
  }
  let at = lineStart(t, Math.max(0, lo - 2048))
  const stop = Math.min(t.length, hi + 4096)
  while (at < stop) {
    if (keyAt(t, at) === word) {
      const open = t.indexOf('": "', at) + 4
      const close = t.indexOf('"', open)
      const phones = t.slice(open, close).replace(/#.*$/, "").trim()
      return phones === "" ? null : phones.split(" ")
    }
    at = nextLine(t, at)
  }
  return null
}
