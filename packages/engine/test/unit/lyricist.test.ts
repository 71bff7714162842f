// The built-in lyricist, judged from outside: syllables and rhymes are counted here with the
// CMU dictionary's own entries (the package's file read by this test, not the writer's
// helpers), and phrases are the notes the engine composes for the words.
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { beforeAll, describe, expect, it } from "vitest"
import { type LyricsBrief, type LyricsDraft, LYRICS_SECTIONS, writeLyrics } from "../../src/index.ts"
import { parseLyrics } from "../../src/lyrics.ts"
import { composeTake } from "../../src/render.ts"
import type { EngineRequest, TrackSource } from "../../src/types.ts"

let cmu: Map<string, string[]>

beforeAll(() => {
  const text = readFileSync(createRequire(import.meta.url).resolve("cmu-pronouncing-dictionary"), "latin1")
  cmu = new Map()
  for (const m of text.matchAll(/^ {2}"([^"(]+)": "([^"]+)",?$/gm)) cmu.set(m[1] ?? "", (m[2] ?? "").split(" "))
})

const wordsOf = (line: string): string[] =>
  line
    .toLowerCase()
    .split(/[\s\-–—/]+/)
    .map((w) => w.replace(/[^a-z']/g, "").replace(/^'+|'+$/g, ""))
    .filter((w) => w !== "")

/** Syllables of a line: the dictionary's vowels, word by word (null if it lacks a word). */
function syllables(line: string): number | null {
  let n = 0
  for (const w of wordsOf(line)) {
    const phones = cmu.get(w)
    if (phones === undefined) return null
    n += phones.filter((p) => /[0-2]$/.test(p)).length
  }
  return n
}

/** A line's rhyme: its last word's phones from the last primary-stressed vowel, stress marks dropped. */
function rhymeOf(line: string): string {
  const phones = cmu.get(wordsOf(line).pop() ?? "") ?? []
  let i = phones.findLastIndex((p) => p.endsWith("1"))
  if (i < 0) i = phones.findLastIndex((p) => /[0-2]$/.test(p))
  return phones
    .slice(Math.max(0, i))
    .map((p) => p.replace(/[0-2]$/, ""))
    .join(" ")
}
const rhyme = (a: string, b: string): boolean =>
  rhymeOf(a) !== "" && rhymeOf(a) === rhymeOf(b) && wordsOf(a).pop() !== wordsOf(b).pop()

const brief = (over: Partial<LyricsBrief> = {}): LyricsBrief => ({
  prompt: "a summer night drive by the sea, missing someone",
  style: "synthwave",
  title: null,
  language: null,
  sections: null,
  fit: null,
  revise: null,
  seed: "lyt_test",
  ...over
})

const request = (style: string, lyrics: string | null): EngineRequest => ({
  style,
  title: "Fit",
  lyrics,
  instrumental: lyrics === null,
  model: "aether"
})

/** Each sung line of a take with the notes the engine composed for it, in order. */
function phrases(style: string, lyrics: string | null, taskId: string): { line: string; notes: number }[] {
  const score = composeTake(request(style, lyrics), taskId, 0).score
  const bar = (4 * 60) / score.bpm
  const out: { line: string; notes: number }[] = []
  let at = 0
  for (const s of score.plan ?? []) {
    s.lines.forEach((line, li) => {
      const from = (at + li * s.barsPerLine) * bar - 1e-6
      const until = from + s.barsPerLine * bar
      out.push({ line, notes: score.vocal.filter((n) => n.start >= from && n.start < until).length })
    })
    at += s.bars
  }
  return out
}

const sungLines = (d: LyricsDraft): string[] => parseLyrics(d.text).sections.flatMap((s) => s.lines)
const tags = (d: LyricsDraft): string[] => [...d.text.matchAll(/^\[([^\]]+)\]$/gm)].map((m) => m[1] ?? "")

describe("the built-in lyricist", () => {
  it("writes two different drafts, the same again for the same brief, valid as the generate lyrics field", () => {
    const drafts = writeLyrics(brief())
    expect(drafts).toHaveLength(2)
    expect(writeLyrics(brief())).toEqual(drafts)
    expect(drafts[0]?.text).not.toBe(drafts[1]?.text)
    expect(writeLyrics(brief({ seed: "lyt_other" }))[0]?.text).not.toBe(drafts[0]?.text)
    for (const d of drafts) {
      expect(d.title.length).toBeGreaterThan(0)
      expect(d.title.length).toBeLessThanOrEqual(200)
      expect(d.text.length).toBeLessThanOrEqual(5000)
      expect(d.text.trim()).not.toBe("")
      for (const t of tags(d)) expect(LYRICS_SECTIONS).toContain(t)
      // Every word is in the dictionary: its syllables are not guessed.
      for (const l of sungLines(d)) expect(syllables(l), l).not.toBeNull()
    }
  })

  it("writes each line to the phrase the engine sings it on (within one note), and the words of every line are sung", () => {
    for (const [i, style] of [
      "synthwave",
      "lofi hip hop",
      "blues",
      "drum and bass, 174 bpm",
      "folk ballad"
    ].entries()) {
      for (const d of writeLyrics(brief({ style, seed: `lyt_${i}` }))) {
        const sung = phrases(style, d.text, `gen_${i}`)
        const lines = sungLines(d)
        // The song made of the words sings every line: none dropped to keep it under three minutes.
        expect(sung.map((p) => p.line)).toEqual(lines)
        for (const p of sung) expect(Math.abs((syllables(p.line) ?? -9) - p.notes), p.line).toBeLessThanOrEqual(1)
      }
    }
  })

  it("rhymes its couplets, as the dictionary hears them", () => {
    let pairs = 0
    let rhymed = 0
    for (const [i, prompt] of [
      "a lighthouse keeper on a stormy island",
      "first love in a small town",
      "rain on the city at midnight"
    ].entries())
      for (const d of writeLyrics(brief({ prompt, style: "pop", seed: `lyt_r${i}` })))
        for (const s of parseLyrics(d.text).sections.filter((x) => x.kind === "chorus"))
          for (let k = 0; k + 1 < s.lines.length; k += 2) {
            pairs++
            if (rhyme(s.lines[k] ?? "", s.lines[k + 1] ?? "")) rhymed++
          }
    expect(pairs).toBeGreaterThan(6)
    expect(rhymed / pairs).toBeGreaterThanOrEqual(0.9)
  })

  it("draws its words from the prompt's themes", () => {
    const d = writeLyrics(brief({ prompt: "a lighthouse keeper alone on a stormy island", style: "folk" }))
    const text = d.map((x) => x.text.toLowerCase()).join(" ")
    expect(text).toMatch(/lighthouse|keeper|island/)
    expect(text).toMatch(/\b(storm|thunder|rain|sea|wave|shore|tide)\b/)
  })

  it("writes the sections asked for, in order", () => {
    const sections = ["Intro", "Verse", "Pre-Chorus", "Chorus", "Verse", "Chorus", "Bridge", "Hook", "Outro"]
    for (const d of writeLyrics(brief({ sections, style: "pop, 110 bpm" }))) {
      expect(tags(d)).toEqual(sections)
      const parsed = parseLyrics(d.text).sections
      expect(parsed[0]?.lines).toEqual([])
      expect(parsed[3]?.lines).toEqual(parsed[5]?.lines)
    }
  })

  it("gives words somewhere to be when only instrumental sections are asked for", () => {
    for (const d of writeLyrics(brief({ sections: ["Intro", "Break", "Outro"] }))) {
      expect(tags(d)).toEqual(["Intro", "Break", "Outro"])
      expect(sungLines(d).length).toBeGreaterThan(0)
    }
  })

  it("fits a track's melody: as many lines as it sings, each within one note of its phrase", () => {
    const lyrics = [
      "[Verse]",
      "I walk the empty road tonight",
      "the city sleeps below",
      "[Chorus]",
      "take me home again",
      "where the river bends and turns"
    ].join("\n")
    const fit: TrackSource = { request: request("country", lyrics), taskId: "gen_fit", index: 0 }
    const track = phrases("country", lyrics, "gen_fit")
    for (const d of writeLyrics(brief({ fit, style: null }))) {
      const lines = sungLines(d)
      expect(lines).toHaveLength(track.length)
      lines.forEach((l, i) => {
        expect(Math.abs((syllables(l) ?? -9) - (track[i]?.notes ?? 0)), l).toBeLessThanOrEqual(1)
      })
    }
    // A track without words: a line for each two-bar span of its lead, in the sections it plays.
    const instrumental: TrackSource = { request: request("house", null), taskId: "gen_inst", index: 0 }
    for (const d of writeLyrics(brief({ fit: instrumental, style: null })))
      expect(sungLines(d).length).toBeGreaterThan(4)
  })

  describe("revision", () => {
    const lyrics = [
      "[Verse]",
      "I walk the empty road tonight",
      "The city sleeps below",
      "Your picture fading in the light",
      "I never let you go",
      "",
      "[Chorus]",
      "Take me home again",
      "Where the river bends",
      "",
      "[Verse]",
      "The radio is playing low",
      "A song we used to know",
      "I drive until the morning comes",
      "And still I miss you so",
      "",
      "[Chorus]",
      "Take me home again",
      "Where the river bends"
    ].join("\n")
    const revise = (instruction: string): ReadonlyArray<LyricsDraft> =>
      writeLyrics(brief({ revise: { lyrics, instruction }, prompt: "a drive home" }))
    const before = parseLyrics(lyrics).sections

    it("makes the chorus rhyme, and leaves the verses as they were", () => {
      for (const d of revise("make the chorus rhyme")) {
        const after = parseLyrics(d.text).sections
        expect(after.map((s) => s.kind)).toEqual(before.map((s) => s.kind))
        const chorus = after[1]?.lines ?? []
        expect(rhyme(chorus[0] ?? "", chorus[1] ?? "")).toBe(true)
        expect(after[3]?.lines).toEqual(chorus)
        expect(after[0]?.lines).toEqual(before[0]?.lines)
        expect(after[2]?.lines).toEqual(before[2]?.lines)
      }
    })

    it("shortens the second verse only; lengthens the chorus in lines of its own length", () => {
      for (const d of revise("a shorter second verse")) {
        const after = parseLyrics(d.text).sections
        expect(after[2]?.lines.length).toBe(2)
        expect(after[0]?.lines).toEqual(before[0]?.lines)
      }
      for (const d of revise("make the chorus longer")) {
        const after = parseLyrics(d.text).sections
        expect(after[1]?.lines.slice(0, 2)).toEqual(before[1]?.lines)
        expect(after[1]?.lines.length).toBe(4)
        expect(after[3]?.lines).toEqual(after[1]?.lines)
        for (const l of after[1]?.lines.slice(2) ?? [])
          expect(Math.abs((syllables(l) ?? -9) - 5)).toBeLessThanOrEqual(1)
      }
    })

    it("adds and removes sections", () => {
      for (const d of revise("add a bridge")) expect(tags(d)).toEqual(["Verse", "Chorus", "Verse", "Bridge", "Chorus"])
      for (const d of revise("remove the second verse")) expect(tags(d)).toEqual(["Verse", "Chorus", "Chorus"])
    })

    it("keeps the words as they were in one draft when it cannot read the instruction", () => {
      const [kept, fresh] = revise("make it sound like Leonard Cohen")
      expect(parseLyrics(kept?.text ?? "").sections).toEqual(before)
      expect(fresh?.text).not.toBe(kept?.text)
      const shape = (t: string): number[] => parseLyrics(t).sections.map((s) => s.lines.length)
      expect(shape(fresh?.text ?? "")).toEqual(shape(lyrics))
    })
  })
})
