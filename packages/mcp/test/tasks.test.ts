/** The MCP view of a Lyre task: the poll interval follows the wait tool's schedule by the task's age. */
import { describe, expect, it } from "vitest"
import type { GenerationTask } from "@lyre/core"
import { mcpTaskOf, pollIntervalFor } from "../src/tasks.ts"

const pending: GenerationTask = {
  id: "gen_abc",
  status: "pending",
  model: "aether",
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
  credits_used: 50,
  credits_refunded: 0,
  error: null,
  tracks: []
}

describe("pollIntervalFor", () => {
  it("asks for 1, 1, 2, 2, 3 s as the task ages, then 5 s", () => {
    expect([0, 0.9, 1.5, 2, 3.9, 4, 5.9, 6, 8.9, 9, 600].map(pollIntervalFor))
      .toEqual([1_000, 1_000, 1_000, 2_000, 2_000, 2_000, 2_000, 3_000, 3_000, 5_000, 5_000])
  })
})

describe("mcpTaskOf", () => {
  it("a pending task is working, with the wait tool's words and an interval; a finished one has none", () => {
    const now = Date.parse(pending.created_at) + 12_400
    expect(mcpTaskOf(pending, now)).toEqual({
      taskId: "gen_abc",
      status: "working",
      statusMessage: "Task gen_abc is pending after 12 s.",
      createdAt: pending.created_at,
      lastUpdatedAt: pending.updated_at,
      ttl: null,
      pollInterval: 5_000
    })
    const failed: GenerationTask = {
      ...pending,
      status: "failed",
      credits_refunded: 50,
      error: { code: "generation_timeout", message: "The generation took too long." }
    }
    expect(mcpTaskOf(failed, now)).toMatchObject({
      status: "failed",
      statusMessage: "The generation took too long. (generation_timeout). 50 credits were refunded."
    })
    expect(mcpTaskOf(failed, now).pollInterval).toBeUndefined()
  })
})
