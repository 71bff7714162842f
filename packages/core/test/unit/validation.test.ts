import { describe, expect, it } from "vitest"
import { validateGenerateRequest as validate } from "../../src/index.ts"

const expectError = (input: unknown, tag: string, param?: string) => {
  const result = validate(input)
  expect(result.ok).toBe(false)
  if (!result.ok) {
    expect(result.error._tag).toBe(tag)
    expect(result.error.param).toBe(param)
  }
}

const base = { style: "lofi hip hop", title: "Rain", lyrics: "la" }

describe("GenerateRequest", () => {
  it("applies the defaults: instrumental false, model aether", () => {
    const result = validate(base)
    expect(result).toEqual({ ok: true, value: { ...base, instrumental: false, model: "aether" } })
  })

  it("accepts every aether-only parameter on aether, at the bounds", () => {
    const result = validate({
      ...base,
      model: "aether",
      vocal_gender: "f",
      negative_tags: "x".repeat(500),
      style_weight: 0,
      weirdness_constraint: 1,
      audio_weight: 0.5
    })
    expect(result.ok).toBe(true)
  })

  describe("style: 1 to 1000 characters", () => {
    it("missing", () => expectError({ title: "t", lyrics: "l" }, "MissingParameter", "style"))
    it("empty", () => expectError({ ...base, style: "" }, "InvalidParameter", "style"))
    it("1000 is fine, 1001 is not", () => {
      expect(validate({ ...base, style: "s".repeat(1000) }).ok).toBe(true)
      expectError({ ...base, style: "s".repeat(1001) }, "InvalidParameter", "style")
    })
    it("counts characters, not UTF-16 units", () => {
      expect(validate({ ...base, style: "🎵".repeat(1000) }).ok).toBe(true)
      expectError({ ...base, style: "🎵".repeat(1001) }, "InvalidParameter", "style")
    })
    it("counts a lone surrogate as one character, a pair as one, mixed at the bound", () => {
      // 999 pairs and one lone high surrogate at the end: 1000 characters in 1999 units.
      expect(validate({ ...base, style: `${"🎵".repeat(999)}\ud83c` }).ok).toBe(true)
      expectError({ ...base, style: `${"🎵".repeat(999)}\ud83ca` }, "InvalidParameter", "style")
      // Lone low surrogates are one each.
      expect(validate({ ...base, style: "\udfb5".repeat(1000) }).ok).toBe(true)
      expectError({ ...base, style: "\udfb5".repeat(1001) }, "InvalidParameter", "style")
    })
    it("not a string", () => expectError({ ...base, style: 5 }, "InvalidParameter", "style"))
  })

  describe("title: 1 to 200 characters", () => {
    it("missing", () => expectError({ style: "s", lyrics: "l" }, "MissingParameter", "title"))
    it("empty", () => expectError({ ...base, title: "" }, "InvalidParameter", "title"))
    it("200 is fine, 201 is not", () => {
      expect(validate({ ...base, title: "t".repeat(200) }).ok).toBe(true)
      expectError({ ...base, title: "t".repeat(201) }, "InvalidParameter", "title")
    })
  })

  describe("lyrics: at most 5000, required unless instrumental (rule 1)", () => {
    it("5000 is fine, 5001 is not", () => {
      expect(validate({ ...base, lyrics: "l".repeat(5000) }).ok).toBe(true)
      expectError({ ...base, lyrics: "l".repeat(5001) }, "InvalidParameter", "lyrics")
    })
    it("missing when instrumental is false by default", () =>
      expectError({ style: "s", title: "t" }, "MissingParameter", "lyrics"))
    it("missing when instrumental is explicitly false", () =>
      expectError({ style: "s", title: "t", instrumental: false }, "MissingParameter", "lyrics"))
    it("empty or whitespace only is invalid for a vocal song", () => {
      expectError({ ...base, lyrics: "" }, "InvalidParameter", "lyrics")
      expectError({ ...base, lyrics: " \n\t " }, "InvalidParameter", "lyrics")
    })
    it("may be omitted for an instrumental", () => {
      expect(validate({ style: "s", title: "t", instrumental: true }).ok).toBe(true)
    })
    it("null is not a string", () => expectError({ ...base, lyrics: null }, "InvalidParameter", "lyrics"))
  })

  describe("enums and ranges", () => {
    it("model must be aether, echo or nocturne", () => {
      for (const model of ["aether", "echo", "nocturne"]) expect(validate({ ...base, model }).ok).toBe(true)
      expectError({ ...base, model: "v5" }, "InvalidParameter", "model")
      expectError({ ...base, model: "AETHER" }, "InvalidParameter", "model")
    })
    it("vocal_gender must be m or f", () =>
      expectError({ ...base, vocal_gender: "x" }, "InvalidParameter", "vocal_gender"))
    it("instrumental must be a boolean", () =>
      expectError({ ...base, instrumental: "yes" }, "InvalidParameter", "instrumental"))
    it("negative_tags at most 500", () =>
      expectError({ ...base, negative_tags: "n".repeat(501) }, "InvalidParameter", "negative_tags"))
    for (const name of ["style_weight", "weirdness_constraint", "audio_weight"]) {
      it(`${name} within 0 to 1`, () => {
        expectError({ ...base, [name]: -0.01 }, "InvalidParameter", name)
        expectError({ ...base, [name]: 1.01 }, "InvalidParameter", name)
        expectError({ ...base, [name]: "0.5" }, "InvalidParameter", name)
      })
    }
  })

  describe("rule 2: aether-only parameters", () => {
    for (const model of ["echo", "nocturne"]) {
      for (const [name, value] of [
        ["vocal_gender", "m"],
        ["negative_tags", "drums"],
        ["style_weight", 0.5],
        ["weirdness_constraint", 0.5],
        ["audio_weight", 0.5]
      ] as const) {
        it(`${name} is refused on ${model}`, () =>
          expectError({ ...base, model, [name]: value }, "ParameterNotSupportedForModel", name))
      }
      it(`${model} without them is fine`, () => expect(validate({ ...base, model }).ok).toBe(true))
    }
  })

  describe("no other properties", () => {
    it("an unknown property is named", () => expectError({ ...base, tempo: 120 }, "UnknownParameter", "tempo"))
    it("an unknown property is reported before other problems", () =>
      expectError({ title: "t", prompt: "x" }, "UnknownParameter", "prompt"))
  })

  it("a body that is not an object", () => {
    for (const body of [[], "text", 42, null, undefined]) {
      const result = validate(body)
      expect(result.ok).toBe(false)
      if (!result.ok) expect(result.error._tag).toBe("InvalidParameter")
    }
  })
})
