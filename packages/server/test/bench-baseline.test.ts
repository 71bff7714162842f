// The API benchmark's baseline (bench/bare-server.ts) answers each measured request in Lyre's
// shape: the same status, headers and fields (decision 0111). When Lyre's answer gains a header
// or a field, this fails until the baseline sends it too, so `pnpm bench` never compares Lyre
// against a smaller answer. Run on the store the suite runs on.

import { describe, expect, it } from "vitest"
import { answerShape, startBothSides } from "../../../bench/service.ts"

const mode = process.env["DATABASE_URL"] === undefined ? "pglite" : "postgres"

describe("the benchmark's baseline", () => {
  it(`answers GET /v1/me, GET of a task and create as Lyre does (${mode})`, async () => {
    // startBothSides sends each endpoint's request to both sides and rejects, naming both shapes,
    // when they differ; on success the sides are only closed.
    await expect(startBothSides(mode, 2).then((sides) => sides.close())).resolves.toBeUndefined()
  }, 180_000)

  it("tells an answer with a header or a field less from Lyre's", () => {
    const headers: Array<[string, string]> = [["content-type", "application/json"], ["x-request-id", "req_1"], ["date", "x"]]
    const shape = answerShape(200, headers, JSON.stringify({ id: "a", credits: { total: 1 }, error: null }))
    expect(answerShape(200, headers, JSON.stringify({ id: "b", credits: { total: 7 }, error: null }))).toBe(shape)
    expect(answerShape(200, headers.slice(0, 1), JSON.stringify({ id: "a", credits: { total: 1 }, error: null })))
      .not.toBe(shape)
    expect(answerShape(200, headers, JSON.stringify({ id: "a", credits: {}, error: null }))).not.toBe(shape)
    expect(answerShape(200, headers, JSON.stringify({ id: "a", credits: { total: 1 }, error: {} }))).not.toBe(shape)
    expect(answerShape(202, headers, JSON.stringify({ id: "a", credits: { total: 1 }, error: null }))).not.toBe(shape)
  })
})
