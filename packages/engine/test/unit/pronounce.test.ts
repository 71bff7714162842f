import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { describe, expect, it } from "vitest"
import { lineSyllables, phoneSyllables, spellingSyllables, syllabify, type Syllable } from "../../src/lyrics.ts"
import { pronunciation } from "../../src/pronounce.ts"

const shape = (s: ReadonlyArray<Syllable>): string =>
  s.map((x) => `${x.onset.join("")}-${x.vowel.join("")}-${x.coda.join("")}`).join(" ")

describe("pronouncing dictionary", () => {
  it("finds every entry the package holds, by binary search over its text (variants and possessives out of order included)", () => {
    const text = readFileSync(createRequire(import.meta.url).resolve("cmu-pronouncing-dictionary"), "utf8")
    const entries = [...text.matchAll(/^ {2}"([^"]+)": "([^"]+)",?$/gm)]
    expect(entries.length).toBeGreaterThan(130_000)
    const seen = new Set<string>()
    let checked = 0
    // Every 13th entry, plus every variant and possessive (where the sort order breaks).
    entries.forEach((m, i) => {
      const word = m[1] ?? ""
      if (seen.has(word)) return
      seen.add(word)
      if (i % 13 !== 0 && !/[('.]/.test(word)) return
      const want = (m[2] ?? "").replace(/#.*$/, "").trim().split(" ")
      expect(pronunciation(word), word).toEqual(want)
      checked++
    })
    expect(checked).toBeGreaterThan(10_000)
  })

  it("answers null for a word it does not have", () => {
    expect(pronunciation("zzyzzyxq")).toBeNull()
    expect(pronunciation("")).toBeNull()
  })
})

describe("sung syllables from pronunciations", () => {
  it("maps ARPAbet vowels and consonants to the voice's, schwa for unstressed AH, er for ER", () => {
    expect(shape(syllabify("the"))).toBe("dh-@-")
    expect(shape(syllabify("paper"))).toBe("p-ei- p-er-")
    expect(shape(syllabify("measure"))).toBe("m-e- zh-er-")
    expect(shape(syllabify("boats"))).toBe("b-oU-ts")
    expect(shape(syllabify("thunder"))).toBe("th-A-n d-er-")
  })

  it("puts consonants between vowels at the start of the next syllable as far as English allows", () => {
    expect(shape(phoneSyllables(["AH0", "S", "T", "R", "EY1"]))).toBe("-@- str-ei-")
    expect(shape(phoneSyllables(["W", "IH1", "N", "D", "OW0"]))).toBe("w-I-n d-oU-")
    // ng never starts a syllable.
    expect(shape(phoneSyllables(["S", "IH1", "NG", "ER0"]))).toBe("s-I-ng -er-")
  })

  it("sings a diphthong running into an unstressed ER as one syllable ending in r (fire, hour)", () => {
    expect(shape(syllabify("fire"))).toBe("f-ai-r")
    expect(shape(syllabify("hour"))).toBe("-aU-r")
    expect(syllabify("being").length).toBe(2)
  })

  it("marks the primary stress", () => {
    expect(syllabify("tonight").map((s) => s.stressed)).toEqual([false, true])
    expect(syllabify("river").map((s) => s.stressed)).toEqual([true, false])
  })

  it("reads contractions and curly apostrophes from the dictionary", () => {
    expect(shape(syllabify("don't"))).toBe("d-oU-nt")
    expect(shape(syllabify("Don\u2019t"))).toBe(shape(syllabify("don't")))
  })

  it("keeps the spelling rules for words the dictionary lacks, and for other scripts", () => {
    expect(syllabify("blorptastic")).toEqual(spellingSyllables("blorptastic"))
    expect(syllabify("ありがとう")).toEqual(spellingSyllables("ありがとう"))
  })

  it("keeps the letters of each syllable for the MIDI lyrics when the spelling split agrees", () => {
    expect(syllabify("river").map((s) => s.text)).toEqual(["ri", "ver"])
    // "every": the dictionary has three syllables where the spelling rules may split otherwise; the texts then stay empty or match.
    const every = syllabify("every")
    expect(every.every((s) => s.text === "") || every.map((s) => s.text).join("") === "every").toBe(true)
    expect(lineSyllables("Down the river").map((s) => s.word)).toEqual(["Down", "the", "river", "river"])
  })
})
