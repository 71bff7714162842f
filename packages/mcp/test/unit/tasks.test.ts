/** The MCP view of a Lyre task: the poll interval follows the wait tool's schedule by the task's age. */
import { describe, expect, it } from "vitest"
import type { Export, GenerationTask, Upload } from "@lyre/core"
import { mcpTaskOf, mergePage, pollIntervalFor } from "../../src/tasks.ts"

const pending: GenerationTask = {
  id: "gen_abc",
  status: "pending",
  model: "aether",
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
  credits_used: 50,
  credits_refunded: 0,
  error: null,
  tracks: [],
  previews: []
}

describe("pollIntervalFor", () => {
  it("asks for 1, 1, 2, 2, 3 s as the task ages, then 5 s", () => {
    expect([0, 0.9, 1.5, 2, 3.9, 4, 5.9, 6, 8.9, 9, 600].map(pollIntervalFor)).toEqual([
      1_000, 1_000, 1_000, 2_000, 2_000, 2_000, 2_000, 3_000, 3_000, 5_000, 5_000
    ])
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

  it("a pending task with audio to hear names its streams' addresses (issue 54)", () => {
    const now = Date.parse(pending.created_at) + 3_000
    const stream = (index: number) =>
      `https://lyre.example.com/files/streams/gen_abc/${index}.mp3?expires=1&signature=ab`
    const streaming: GenerationTask = {
      ...pending,
      previews: [
        { index: 0, stream_url: stream(0) },
        { index: 1, stream_url: stream(1) }
      ]
    }
    expect(mcpTaskOf(streaming, now).statusMessage).toBe(
      `Task gen_abc is pending after 3 s. Hear it while it is made: ${stream(0)} ${stream(1)}`
    )
  })
})

const exportAt = (id: string, createdAt: string, status: Export["status"] = "pending"): Export => ({
  id,
  track_id: "trk_abc",
  task_id: "gen_abc",
  format: "wav",
  status,
  credits_used: 5,
  credits_refunded: 0,
  error: null,
  files:
    status === "ready"
      ? [
          {
            name: "track.wav",
            url: "http://127.0.0.1/files/exp/0-track.wav",
            content_type: "audio/wav",
            bytes: 44,
            stem: null
          }
        ]
      : [],
  timed_lyrics: null,
  created_at: createdAt,
  updated_at: createdAt
})

const generationAt = (id: string, createdAt: string): GenerationTask => ({
  ...pending,
  id,
  created_at: createdAt,
  updated_at: createdAt
})

const uploadAt = (id: string, createdAt: string, status: Upload["status"] = "pending"): Upload => ({
  id,
  status,
  title: null,
  content_type: "audio/wav",
  bytes: 1_000,
  duration: 6,
  track_id: status === "ready" ? "trk_up" : null,
  analysis:
    status === "ready"
      ? { bpm: 120, key: "A minor", time_signature: "4/4", loudness_lufs: -14, beats: [], chords: [] }
      : null,
  error: status === "failed" ? { code: "invalid_audio", message: "Listening found no sound." } : null,
  created_at: createdAt,
  updated_at: createdAt
})

describe("mcpTaskOf for an upload", () => {
  it("speaks of the upload: pending, ready with its track and what was heard, failed without a refund", () => {
    const at = "2026-01-01T00:00:00.000Z"
    expect(mcpTaskOf(uploadAt("upl_abc", at), Date.parse(at) + 2_000)).toMatchObject({
      taskId: "upl_abc",
      status: "working",
      statusMessage: "Upload upl_abc is pending after 2 s."
    })
    expect(mcpTaskOf(uploadAt("upl_abc", at, "ready"), Date.parse(at))).toMatchObject({
      status: "completed",
      statusMessage: "Upload upl_abc is ready: track trk_up, 120 bpm, A minor."
    })
    const failed = mcpTaskOf(uploadAt("upl_abc", at, "failed"), Date.parse(at))
    expect(failed).toMatchObject({ status: "failed", statusMessage: "Listening found no sound. (invalid_audio)." })
    expect(failed.pollInterval).toBeUndefined()
  })
})

describe("mcpTaskOf for an export", () => {
  it("speaks of the export: pending, ready with its files, failed with the refund", () => {
    const exported = exportAt("exp_abc", "2026-01-01T00:00:00.000Z")
    expect(mcpTaskOf(exported, Date.parse(exported.created_at) + 3_000)).toMatchObject({
      taskId: "exp_abc",
      status: "working",
      statusMessage: "Export exp_abc is pending after 3 s."
    })
    expect(mcpTaskOf(exportAt("exp_abc", exported.created_at, "ready"), 0)).toMatchObject({
      status: "completed",
      statusMessage: "Export exp_abc is ready: 1 files."
    })
    const failed: Export = { ...exported, status: "failed", credits_refunded: 5, error: null }
    expect(mcpTaskOf(failed, 0).statusMessage).toBe("The export failed. (internal_error). 5 credits were refunded.")
  })
})

describe("mergePage", () => {
  const minute = (m: number) => `2026-01-01T00:${String(m).padStart(2, "0")}:00.000Z`

  it("merges both kinds newest first, and the cursor names the last of each kind shown", () => {
    const generations = {
      data: [generationAt("gen_5", minute(5)), generationAt("gen_3", minute(3)), generationAt("gen_1", minute(1))],
      has_more: false
    }
    const exports = { data: [exportAt("exp_4", minute(4)), exportAt("exp_2", minute(2))], has_more: false }
    const page = mergePage({ generation: generations, export: exports }, undefined, 3)
    expect(page.jobs.map((job) => job.id)).toEqual(["gen_5", "exp_4", "gen_3"])
    expect(page.nextCursor).toBe("gen_3,exp_4")
    expect(mergePage({ generation: generations, export: exports }, undefined, 5).nextCursor).toBeUndefined()
  })

  it("keeps a kind's position from the cursor when the page shows none of it", () => {
    const generations = { data: [generationAt("gen_9", minute(9)), generationAt("gen_8", minute(8))], has_more: true }
    const exports = { data: [exportAt("exp_1", minute(1))], has_more: false }
    expect(mergePage({ generation: generations, export: exports }, "gen_10,exp_2", 2).nextCursor).toBe("gen_8,exp_2")
    // One kind only, as before exports existed: the cursor is the last id.
    expect(mergePage({ generation: generations, export: { data: [], has_more: false } }, undefined, 2).nextCursor).toBe(
      "gen_8"
    )
  })

  it("merges uploads as a third kind, its last id shown in the cursor", () => {
    const generations = { data: [generationAt("gen_5", minute(5)), generationAt("gen_1", minute(1))], has_more: false }
    const exports = { data: [exportAt("exp_4", minute(4))], has_more: false }
    const uploads = {
      data: [uploadAt("upl_6", minute(6)), uploadAt("upl_3", minute(3)), uploadAt("upl_2", minute(2))],
      has_more: false
    }
    const page = mergePage({ generation: generations, export: exports, upload: uploads }, undefined, 4)
    expect(page.jobs.map((job) => job.id)).toEqual(["upl_6", "gen_5", "exp_4", "upl_3"])
    expect(page.nextCursor).toBe("gen_5,exp_4,upl_3")
    const rest = mergePage(
      {
        generation: { data: [generationAt("gen_1", minute(1))], has_more: false },
        export: { data: [], has_more: false },
        upload: { data: [uploadAt("upl_2", minute(2))], has_more: false }
      },
      page.nextCursor,
      4
    )
    expect(rest.jobs.map((job) => job.id)).toEqual(["upl_2", "gen_1"])
    expect(rest.nextCursor).toBeUndefined()
  })
})
