import { describe, expect, it } from "vitest"
import { compose, type Score } from "../../src/compose.ts"
import { lineSyllables, parseLyrics, syllabify } from "../../src/lyrics.ts"
import { Rng } from "../../src/rng.ts"
import { parseStyle } from "../../src/style.ts"
import { scaleOf } from "../../src/theory.ts"
import type { ModelName } from "../../src/types.ts"

const LYRICS = `[Intro]
[Verse]
Neon lights are calling me tonight
Running through the city burning bright
[Chorus]
Hold on, hold on to the night
We are young and we are alive
[Verse]
Static on the radio again
Driving to the edge of where we end
[Chorus]
[Bridge]
If the morning never comes
[Chorus]
[Outro]`

function song(
  style: string,
  opts: {
    lyrics?: string | null
    model?: ModelName
    voice?: "m" | "f"
    weird?: number
    seed?: string
    sw?: number
    aw?: number
  } = {}
): Score {
  const rng = new Rng(opts.seed ?? "seed")
  const spec = parseStyle(style, undefined, rng, opts.sw ?? 0.5)
  const lyrics = opts.lyrics === undefined ? LYRICS : opts.lyrics
  return compose(
    {
      spec,
      lyrics,
      instrumental: lyrics === null,
      model: opts.model ?? "aether",
      voice: opts.voice ?? "f",
      styleWeight: opts.sw ?? 0.5,
      weirdness: opts.weird ?? 0.25,
      audioWeight: opts.aw ?? 0.5
    },
    rng
  )
}

describe("lyrics", () => {
  it("reads section tags and repeats an empty [Chorus]", () => {
    const p = parseLyrics(LYRICS)
    expect(p.tagged).toBe(true)
    expect(p.sections.map((s) => s.kind)).toEqual([
      "intro",
      "verse",
      "chorus",
      "verse",
      "chorus",
      "bridge",
      "chorus",
      "outro"
    ])
    expect(p.sections[4]?.lines).toEqual(p.sections[2]?.lines)
  })

  it("splits untagged paragraphs into verses", () => {
    const p = parseLyrics("one line here\nanother line\n\nsecond verse line\n")
    expect(p.tagged).toBe(false)
    expect(p.sections.length).toBe(2)
  })

  it("syllabifies English words", () => {
    expect(syllabify("tonight").length).toBe(2)
    expect(syllabify("calling").length).toBe(2)
    expect(syllabify("time").length).toBe(1)
    expect(syllabify("beautiful").length).toBe(3)
    expect(syllabify("fire").length).toBe(1)
    expect(syllabify("walked").length).toBe(1)
    expect(syllabify("times").length).toBe(1)
    expect(syllabify("wanted").length).toBe(2)
    expect(syllabify("dances").length).toBe(2)
    expect(lineSyllables("Running through the city").length).toBe(6)
  })
})

describe("composer", () => {
  it("sings one note per syllable, phrased by lines", () => {
    const s = song("pop, 100 bpm")
    const p = parseLyrics(LYRICS)
    const syllables = p.sections.flatMap((sec) => sec.lines).reduce((n, l) => n + lineSyllables(l).length, 0)
    expect(s.vocal.length).toBe(syllables)
    for (let i = 1; i < s.vocal.length; i++) expect((s.vocal[i]?.start ?? 0) >= (s.vocal[i - 1]?.start ?? 0)).toBe(true)
  })

  it("repeats the chorus tune when the chorus returns", () => {
    const s = song("pop, 100 bpm")
    const choruses = s.sections.filter((x) => x.kind === "chorus")
    expect(choruses.length).toBe(3)
    const tune = (c: { start: number; end: number }) =>
      s.vocal
        .filter((v) => v.start >= c.start - 0.2 && v.start < c.end - 0.2)
        .map((v) => [v.pitch, Math.round((v.start - c.start) * 100)])
    const [a, b] = [choruses[0], choruses[1]]
    if (a === undefined || b === undefined) throw new Error("missing chorus")
    expect(tune(a).length).toBeGreaterThan(0)
    expect(tune(b)).toEqual(tune(a))
  })

  it("keeps songs between 60 and 180 seconds", () => {
    const long = Array.from(
      { length: 20 },
      (_, i) => `[Verse]\n${"la la la la la la la la\n".repeat(6)}[Chorus]\nsing it loud number ${i}`
    ).join("\n")
    for (const [style, lyrics] of [
      ["pop", LYRICS],
      ["ambient", null],
      ["metal, 180 bpm", null],
      ["ballad, 60 bpm", LYRICS],
      ["rock", long],
      ["house", "[Verse]\nhey"]
    ] as const) {
      const s = song(style, { lyrics })
      expect(s.duration, style).toBeGreaterThanOrEqual(60)
      expect(s.duration, style).toBeLessThanOrEqual(183)
    }
  })

  it("sets the voice register from vocal_gender", () => {
    const mean = (s: Score) => s.vocal.reduce((a, v) => a + v.pitch, 0) / s.vocal.length
    const f = song("pop", { voice: "f" })
    const m = song("pop", { voice: "m" })
    expect(mean(f) - mean(m)).toBeGreaterThanOrEqual(9)
    expect(mean(m)).toBeLessThan(62)
  })

  it("instrumental songs have no voice", () => {
    expect(song("pop", { lyrics: null }).vocal.length).toBe(0)
  })

  it("models differ in richness: aether fullest, nocturne sparsest", () => {
    const count = (s: Score) => s.parts.reduce((n, p) => n + p.notes.length, 0) + s.drums.length
    const a = song("synthwave, piano, strings", { model: "aether", lyrics: null })
    const e = song("synthwave, piano, strings", { model: "echo", lyrics: null })
    const n = song("synthwave, piano, strings", { model: "nocturne", lyrics: null })
    expect(a.parts.length).toBeGreaterThan(n.parts.length)
    expect(count(a)).toBeGreaterThan(count(e))
    expect(count(e)).toBeGreaterThan(count(n))
  })

  it("weirdness brings chromatic notes, stays diatonic when 0", () => {
    const outside = (s: Score, tonic: number, minor: boolean) => {
      const pcs = scaleOf(minor).map((x) => (x + tonic) % 12)
      const notes = s.parts.filter((p) => p.role !== "bass").flatMap((p) => p.notes)
      return (
        notes.filter(
          (n) => !pcs.includes(((n.pitch % 12) + 12) % 12) && !(minor && (n.pitch - tonic + 120) % 12 === 11)
        ).length / notes.length
      )
    }
    const tame = song("pop, in C major", { weird: 0, lyrics: null })
    const wild = song("pop, in C major", { weird: 1, lyrics: null })
    expect(outside(tame, 0, false)).toBe(0)
    expect(outside(wild, 0, false)).toBeGreaterThan(0.03)
  })

  it("takes differ; the same seed gives the same score", () => {
    const a = song("house", { seed: "x" })
    const b = song("house", { seed: "x" })
    const c = song("house", { seed: "y" })
    expect(JSON.stringify(a.parts)).toBe(JSON.stringify(b.parts))
    expect(JSON.stringify(a.parts)).not.toBe(JSON.stringify(c.parts))
  })

  it("audio_weight raises the backing relative to the voice", () => {
    expect(song("pop", { aw: 1 }).backing).toBeGreaterThan(song("pop", { aw: 0 }).backing)
  })
})
