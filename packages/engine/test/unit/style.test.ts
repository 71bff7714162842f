import { describe, expect, it } from "vitest"
import { Rng } from "../../src/rng.ts"
import { parseKey, parseStyle } from "../../src/style.ts"

const parse = (style: string, negative?: string) => parseStyle(style, negative, new Rng("t"), 0.5)

describe("style parser", () => {
  it("recognises at least 12 genres", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["catchy pop song", "pop"],
      ["classic rock anthem", "rock"],
      ["lofi hip hop beats to study to", "lofi hip hop"],
      ["90s hip hop, boom bap", "hip hop"],
      ["deep house", "house"],
      ["dark techno", "techno"],
      ["ambient soundscape", "ambient"],
      ["smooth jazz", "jazz"],
      ["epic orchestral cinematic", "orchestral"],
      ["classical piano", "orchestral"],
      ["acoustic folk", "folk"],
      ["synthwave retro", "synthwave"],
      ["heavy metal", "metal"],
      ["trap, 808", "trap"],
      ["liquid drum and bass", "drum and bass"],
      ["country road trip", "country"],
      ["roots reggae", "reggae"],
      ["funk groove", "funk"],
      ["neo soul r&b", "r&b"],
      ["delta blues", "blues"],
      ["uplifting trance", "trance"]
    ]
    for (const [text, genre] of cases) expect(parse(text).genre.name, text).toBe(genre)
    expect(new Set(cases.map((c) => c[1])).size).toBeGreaterThanOrEqual(12)
  })

  it("honours an explicit bpm exactly and otherwise follows tempo words", () => {
    expect(parse("house, 97 bpm").bpm).toBe(97)
    expect(parse("rock at 152 BPM").bpmExplicit).toBe(true)
    const slow = parse("slow pop ballad").bpm
    const fast = parse("upbeat energetic pop").bpm
    expect(slow).toBeLessThan(fast)
    expect(parse("techno").bpm).toBeGreaterThanOrEqual(126)
  })

  it("honours an explicit key and mode, and mood words otherwise", () => {
    expect(parseKey("pop in d minor")).toEqual({ tonic: 2, minor: true })
    expect(parseKey("f# major ballad")).toEqual({ tonic: 6, minor: false })
    expect(parseKey("jazz in bb minor")).toEqual({ tonic: 10, minor: true })
    expect(parseKey("in eb major")).toEqual({ tonic: 3, minor: false })
    const s = parse("synthwave in D minor")
    expect([s.tonic, s.minor, s.keyExplicit]).toEqual([2, true, true])
    expect(parse("happy sunny pop").minor).toBe(false)
    expect(parse("sad dark pop").minor).toBe(true)
    // "in a hurry" and "i am" are not keys; "in Am" is
    expect(parseKey("pop in a hurry")).toBeNull()
    expect(parseKey("i am a jazz song")).toBeNull()
    expect(parseKey("jazz in am")).toEqual({ tonic: 9, minor: true })
  })

  it("adds named instruments and removes negated ones", () => {
    const s = parse("ambient with piano and brass")
    expect(s.instruments.has("piano")).toBe(true)
    expect(s.instruments.has("brass")).toBe(true)
    expect(parse("house, no drums").instruments.has("drums")).toBe(false)
    expect(parse("house", "drums").instruments.has("drums")).toBe(false)
    expect(parse("pop", "piano, synth").instruments.has("piano")).toBe(false)
    expect(parse("rock without guitar").instruments.has("eguitar")).toBe(false)
    expect(parse("house").instruments.has("drums")).toBe(true)
    const mixed = parse("rock without drums and with piano")
    expect(mixed.instruments.has("drums")).toBe(false)
    expect(mixed.instruments.has("piano")).toBe(true)
  })

  it("a genre named in negative_tags is not chosen", () => {
    expect(parse("rock pop", "rock").genre.name).toBe("pop")
  })

  it("produces normalized tags", () => {
    const s = parse("Synthwave, 120 BPM, in A minor, synth, drums")
    expect(s.tags.startsWith("synthwave, 120 bpm, A minor")).toBe(true)
    expect(s.tags).toContain("synth")
    expect(s.tags).toContain("drums")
    expect(s.tags).not.toContain("melancholic")
  })

  it("energy follows intensity words", () => {
    expect(parse("calm gentle pop").energy).toBeLessThan(parse("aggressive intense pop").energy)
  })
})
