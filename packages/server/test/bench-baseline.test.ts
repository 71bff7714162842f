// The API benchmark's baseline (bench/bare-server.ts) answers each measured request in Lyre's
// shape: the same status, headers and fields (decision 0111). When Lyre's answer gains a header
// or a field, this fails until the baseline sends it too, so `pnpm bench` never compares Lyre
// against a smaller answer. Run on the store the suite runs on.

import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { answerShape, requireSameAnswers, startBothSides } from "../../../bench/service.ts"
import type { BothSides } from "../../../bench/service.ts"

const mode = process.env["DATABASE_URL"] === undefined ? "pglite" : "postgres"

describe("the benchmark's baseline", () => {
  let sides: BothSides | undefined

  beforeAll(async () => {
    // startBothSides itself refuses sides whose answers differ in shape.
    sides = await startBothSides(mode, 2)
  }, 120_000)

  afterAll(async () => {
    await sides?.close()
  }, 60_000)

  it(`answers GET /v1/me, GET of a task and create as Lyre does (${mode})`, async () => {
    if (sides === undefined) throw new Error("the sides did not start")
    await expect(requireSameAnswers(sides.lyre.url, sides.bare.url, sides.requests)).resolves.toBeUndefined()
  })

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
