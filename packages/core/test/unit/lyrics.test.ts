/**
 * The lyrics agent's rules (DESIGN.md section 12), without a database: the request's validation
 * and the field each 400 names, the price, the scope its procedures require (and that
 * `music:generate` alone is refused by the guard), and what is kept of a writer's drafts.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { expect } from "vitest"
import { ApiKeys } from "../../src/credentials/ApiKeys.ts"
import { Guard } from "../../src/credentials/Guard.ts"
import { lyricsPrice } from "../../src/domain/pricing.ts"
import { principalOf } from "../../src/domain/principal.ts"
import { validationErrorFrom } from "../../src/domain/validation.ts"
import { keptVariations, lyricsFailure } from "../../src/lyrics/rules.ts"
import { LyricsRequest, lyricsSectionNames } from "../../src/lyrics/model.ts"
import { RateLimiter } from "../../src/platform/RateLimiter.ts"
import { procedureTable } from "../../src/trpc/router.ts"

const judged = (input: unknown) => {
  const parsed = LyricsRequest.safeParse(input)
  return parsed.success
    ? "ok"
    : (({ _tag, param }) => `${_tag} ${param}`)(validationErrorFrom(parsed.error.issues, input))
}

describe("LyricsRequest", () => {
  it("a prompt alone, and every field at once, are valid", () => {
    assert.strictEqual(judged({ prompt: "p" }), "ok")
    assert.strictEqual(
      judged({
        prompt: "x".repeat(1000),
        style: "folk",
        title: "T",
        language: "pt-BR",
        sections: [...lyricsSectionNames],
        track_id: "trk_x",
        lyrics: "[Verse]\nla",
        instruction: "make the chorus rhyme"
      }),
      "ok"
    )
  })

  it.each([
    [{}, "MissingParameter prompt"],
    [{ prompt: "" }, "InvalidParameter prompt"],
    [{ prompt: "x".repeat(1001) }, "InvalidParameter prompt"],
    [{ prompt: "p", sections: ["Verse", "Solo"] }, "InvalidParameter sections.1"],
    [{ prompt: "p", sections: [] }, "InvalidParameter sections"],
    [{ prompt: "p", instruction: "shorter" }, "MissingParameter lyrics"],
    [{ prompt: "p", lyrics: "[Verse]\nla" }, "MissingParameter instruction"],
    [{ prompt: "p", language: "Klingon please" }, "InvalidParameter language"],
    [{ prompt: "p", title: "" }, "InvalidParameter title"],
    [{ prompt: "p", tempo: 120 }, "UnknownParameter tempo"]
  ])("%j is %s", (input, expected) => {
    assert.strictEqual(judged(input), expected)
  })
})

describe("price and scope", () => {
  it("a task costs 2 credits", () => assert.strictEqual(lyricsPrice, 2))

  it("every lyrics procedure requires lyrics:agent; create answers 202", () => {
    const { create, get, list } = procedureTable.lyrics
    assert.deepStrictEqual(
      [create, get, list].map((procedure) => procedure.parts.meta.scope),
      ["lyrics:agent", "lyrics:agent", "lyrics:agent"]
    )
    assert.strictEqual(create.parts.meta.successStatus, 202)
    assert.deepStrictEqual(
      [create, get, list].map(
        (procedure) => `${procedure.parts.meta.openapi?.method} ${procedure.parts.meta.openapi?.path}`
      ),
      ["POST /v1/lyrics", "GET /v1/lyrics/{id}", "GET /v1/lyrics"]
    )
  })

  const principal = (scopes: ReadonlyArray<string>, subject: string) =>
    principalOf(
      "acct_test",
      {
        plan: "pro",
        subscription_credits: 0,
        onetime_credits: 0,
        concurrency_limit: null,
        requests_per_minute: 60
      },
      { scopes, credential: { kind: "api_key", keyId: "key_test", name: "test", expiresAt: null }, subject },
      60
    )
  const guard = Guard.layer.pipe(
    Layer.provide(
      Layer.succeed(ApiKeys)(
        ApiKeys.of({
          create: () => Effect.die(new Error("unused")),
          revoke: () => Effect.die(new Error("unused")),
          authenticate: (authorization) =>
            Effect.succeed(
              authorization === "Bearer music"
                ? principal(["profile", "music:generate"], "key_music")
                : principal(["lyrics:agent"], "key_lyrics")
            )
        })
      )
    ),
    Layer.provide(RateLimiter.layerMemory)
  )

  it.effect("music:generate alone is refused insufficient_scope; lyrics:agent alone is enough", () =>
    Effect.gen(function* () {
      const admit = (authorization: string) =>
        Guard.use((g) => g.admit(authorization, "lyrics:agent", undefined)).pipe(
          Effect.map(() => "Admitted"),
          Effect.catch((error) => Effect.succeed(error._tag))
        )
      assert.strictEqual(yield* admit("Bearer music"), "InsufficientScope")
      assert.strictEqual(yield* admit("Bearer lyrics"), "Admitted")
    }).pipe(Effect.provide(guard))
  )
})

describe("keptVariations: two drafts, each valid as a generation's lyrics", () => {
  it("keeps the first two with words, gives a header to words without one, and a title to an untitled draft", () => {
    const kept = keptVariations(
      [
        { title: "", text: "  " },
        { title: "One", text: "[Chorus]\nla la\r\nla" },
        { title: null, text: "first line here\nsecond" },
        { title: "Three", text: "[Verse]\nmore" }
      ],
      undefined
    )
    expect(kept).toEqual({
      ok: true,
      variations: [
        { title: "One", text: "[Chorus]\nla la\nla" },
        { title: "first line here", text: "[Verse]\nfirst line here\nsecond" }
      ]
    })
    const titled = keptVariations([{ text: "[Verse]\na" }, { text: "[Verse]\nb" }], "Asked For")
    expect(titled.ok && titled.variations.map((variation) => variation.title)).toEqual(["Asked For", "Asked For"])
  })

  it("fewer than two drafts with words, or words past 5000 characters, keep nothing", () => {
    assert.isFalse(
      keptVariations(
        [
          { title: "a", text: "[Verse]\nx" },
          { title: "b", text: "" }
        ],
        undefined
      ).ok
    )
    assert.isFalse(keptVariations([{ text: "[Verse]\nx" }, { text: `[Verse]\n${"y".repeat(5000)}` }], undefined).ok)
  })

  it("a failure's message names no writer; content_policy and a time-out say so", () => {
    expect(lyricsFailure("lyrics_failed", "model: HTTP 503")).toEqual({
      code: "lyrics_failed",
      message: "The lyrics could not be written; the credits were refunded.",
      detail: "model: HTTP 503"
    })
    expect(lyricsFailure("content_policy", "x").message).toContain("content policy")
    expect(lyricsFailure("generation_timeout", "x").message).toContain("in time")
  })
})
