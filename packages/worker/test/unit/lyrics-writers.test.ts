/**
 * The three lyrics writers' own readings, without a network: the built-in lyricist's step (the
 * engine's `writeLyrics`, deterministic per task id), and how a chat completion and the
 * upstream's answers become a step. Their HTTP exchanges are tested against real peers in
 * packages/server/test/service/lyrics.test.ts.
 */
import { tmpdir } from "node:os"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { LyricsWriter } from "@lyre/core"
import type { LyricsJob } from "@lyre/core"
import { builtInLyricsWriterLayer, readCompletion, readLyricsRecord, readLyricsSubmit } from "../../src/index.ts"
import { Storage } from "../../src/storage/Storage.ts"

const job = (id: string): LyricsJob => ({
  id,
  request: { prompt: "lanterns over the river", sections: ["Verse", "Chorus"] },
  fit: null,
  providerTaskId: null,
  callbackUrl: "http://127.0.0.1/internal/provider/callback/x?token=t"
})

describe("the built-in lyricist", () => {
  it.effect("writes two drafts, the same for the same request and task id", () =>
    Effect.gen(function* () {
      const writer = yield* LyricsWriter
      const first = yield* writer.step(job("lyt_aaaaaaaaaaaaaaaaaaaaaaaa"))
      const again = yield* writer.step(job("lyt_aaaaaaaaaaaaaaaaaaaaaaaa"))
      assert.strictEqual(first._tag, "Written")
      assert.strictEqual(first._tag === "Written" ? first.variations.length : 0, 2)
      assert.deepStrictEqual(again, first)
      assert.strictEqual(writer.name, "built-in")
    }).pipe(Effect.provide(builtInLyricsWriterLayer), Effect.provide(Storage.layerFiles(tmpdir())))
  )
})

const completion = (message: Record<string, unknown>, finish = "stop") =>
  JSON.stringify({ choices: [{ index: 0, finish_reason: finish, message: { role: "assistant", ...message } }] })
const drafts = JSON.stringify({
  variations: [
    { title: "A", text: "[Verse]\na" },
    { title: "B", text: "[Verse]\nb" }
  ]
})

describe("a chat completion's answer", () => {
  it.each([
    ["words of the schema", 200, completion({ content: drafts }), "Written"],
    ["an error status", 500, "{}", "Failed lyrics_failed"],
    ["not a completion", 200, "<html>", "Failed lyrics_failed"],
    ["content not JSON", 200, completion({ content: "sure! [Verse] la" }), "Failed lyrics_failed"],
    ["JSON of another shape", 200, completion({ content: '{"lyrics":"la"}' }), "Failed lyrics_failed"],
    ["a refusal", 200, completion({ content: null, refusal: "no" }), "Failed content_policy"],
    ["a content filter", 200, completion({ content: drafts }, "content_filter"), "Failed content_policy"],
    ["an answer cut short", 200, completion({ content: drafts.slice(0, 20) }, "length"), "Failed lyrics_failed"]
  ])("%s", (_name, status, text, expected) => {
    const step = readCompletion(status, text)
    assert.strictEqual(step._tag === "Failed" ? `Failed ${step.code}` : step._tag, expected)
  })
})

describe("the upstream's lyrics answers", () => {
  const record = (status: string, data: ReadonlyArray<unknown> = []) =>
    JSON.stringify({ code: 200, msg: "success", data: { taskId: "t", status, response: { data }, errorMessage: null } })
  it.each([
    ["accepted", readLyricsSubmit(200, JSON.stringify({ code: 200, data: { taskId: "u1" } })), "Taken"],
    ["refused", readLyricsSubmit(200, JSON.stringify({ code: 413, msg: "too long" })), "Failed lyrics_failed"],
    ["too frequent", readLyricsSubmit(200, JSON.stringify({ code: 430 })), "NotYet"],
    ["no body code", readLyricsSubmit(502, "<html>"), "NotYet"],
    ["pending", readLyricsRecord(200, record("PENDING")), "NotYet"],
    ["done", readLyricsRecord(200, record("SUCCESS", [{ text: "[Verse]\nx", title: "X" }])), "Written"],
    ["done without words", readLyricsRecord(200, record("SUCCESS")), "Failed lyrics_failed"],
    ["sensitive", readLyricsRecord(200, record("SENSITIVE_WORD_ERROR")), "Failed content_policy"],
    ["failed", readLyricsRecord(200, record("GENERATE_LYRICS_FAILED")), "Failed lyrics_failed"],
    ["record-info refused", readLyricsRecord(200, JSON.stringify({ code: 404, msg: "no" })), "NotYet"]
  ])("%s", (_name, step, expected) => {
    assert.strictEqual(step._tag === "Failed" ? `Failed ${step.code}` : step._tag, expected)
  })
})
