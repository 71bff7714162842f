// The API benchmark's baseline (bench/bare-server.ts) answers each measured request in Lyre's
// shape: the same status, headers and fields (decision 0111). When Lyre's answer gains a header
// or a field, this fails until the baseline sends it too, so `pnpm bench` never compares Lyre
// against a smaller answer. Run on the store the suite runs on.

import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { startFakeUpstream } from "@lyre/fake-upstream"
import { answerShape, startBothSides } from "../../../../bench/service.ts"
import { query, sleep } from "../../../../bench/support.ts"
import { startWorkerService } from "../../../../bench/worker-service.ts"
import type { WorkerMode } from "../../../../bench/worker-service.ts"
import { mp3FramesOf } from "../support/files.ts"

const mode = process.env["DATABASE_URL"] === undefined ? "pglite" : "postgres"

describe("the benchmark's baseline", () => {
  it(`answers GET /v1/me, GET of a task and create as Lyre does (${mode})`, async () => {
    // startBothSides sends each endpoint's request to both sides and rejects, naming both shapes,
    // when they differ; on success the sides are only closed.
    await expect(startBothSides(mode, 2).then((sides) => sides.close())).resolves.toBeUndefined()
  }, 180_000)

  it("tells an answer with a header or a field less from Lyre's", () => {
    const headers: Array<[string, string]> = [
      ["content-type", "application/json"],
      ["x-request-id", "req_1"],
      ["date", "x"]
    ]
    const shape = answerShape(200, headers, JSON.stringify({ id: "a", credits: { total: 1 }, error: null }))
    expect(answerShape(200, headers, JSON.stringify({ id: "b", credits: { total: 7 }, error: null }))).toBe(shape)
    expect(
      answerShape(200, headers.slice(0, 1), JSON.stringify({ id: "a", credits: { total: 1 }, error: null }))
    ).not.toBe(shape)
    expect(answerShape(200, headers, JSON.stringify({ id: "a", credits: {}, error: null }))).not.toBe(shape)
    expect(answerShape(200, headers, JSON.stringify({ id: "a", credits: { total: 1 }, error: {} }))).not.toBe(shape)
    expect(answerShape(202, headers, JSON.stringify({ id: "a", credits: { total: 1 }, error: null }))).not.toBe(shape)
  })
})

/**
 * What a finished task left behind, with its own ids, addresses and times taken out: the task's
 * row, its track rows, the events it wrote (fanned out), the credential's slot and the stored
 * files with their sizes.
 */
const finishedTaskShape = async (mode: WorkerMode) => {
  const upstreamKey = "baseline-key"
  const upstream = await startFakeUpstream({ apiKey: upstreamKey })
  const service = await startWorkerService(upstream, { mode, pollSeconds: 5, upstreamKey, keyCount: 1 })
  try {
    const created = await fetch(`${service.url}/api/v1/music/generations`, {
      method: "POST",
      headers: { authorization: `Bearer ${service.keys[0] ?? ""}`, "content-type": "application/json" },
      body: JSON.stringify({ style: "synthwave, 110 bpm", title: "Baseline", lyrics: "[Verse]\nla la la" })
    })
    expect(created.status).toBe(202)
    const { id } = (await created.json()) as { id: string }
    const deadline = Date.now() + 60_000
    let events: ReadonlyArray<{ type: string; fanned_out: boolean }> = []
    for (;;) {
      events = await query(service.databaseUrl, "select type, fanned_out from outbox_events order by seq")
      if (events.some((event) => event.type === "job.completed") && events.every((event) => event.fanned_out)) break
      if (Date.now() > deadline) throw new Error(`${mode}: the task was not ready and fanned out within a minute`)
      await sleep(100)
    }
    const [task] = await query<Record<string, unknown>>(
      service.databaseUrl,
      `select status, tracks, lease_owner, lease_expires_at, next_poll_at, error_code, credits_refunded
       from generation_tasks where id = $1`,
      id
    )
    const tracks = await query<Record<string, unknown>>(
      service.databaseUrl,
      "select track_index, provider_track_id is not null as provider_id, duration is not null as duration from tracks where task_id = $1 order by track_index",
      id
    )
    const slots = await query(service.databaseUrl, "select pending from credential_inflight")
    const directory = join(service.dataDir, "files", id)
    // Lyre's worker signs each MP3's content credentials into ID3v2 tags before its audio (record
    // 0123); the bare worker writes the upstream's bytes. The audio after the tags is compared.
    const files = readdirSync(directory)
      .sort()
      .map((name) => {
        const bytes = readFileSync(join(directory, name))
        return [name, name.endsWith(".mp3") ? mp3FramesOf(bytes).length : bytes.length]
      })
    const text = JSON.stringify({ task, tracks, events, slots, files })
    return JSON.parse(
      text
        .replaceAll(service.url, "{site}")
        .replaceAll(id, "{task}")
        .replace(/"trk_[A-Za-z0-9]+"/g, '"{track}"')
    ) as unknown
  } finally {
    await service.stop()
    await service.remove()
    await upstream.close()
  }
}

describe("the worker benchmark's baseline", () => {
  // The bare worker listens for the API's NOTIFY, which PGlite's single connection cannot carry.
  it.skipIf(mode !== "postgres")(
    "finishes a task as Lyre's API and worker do: the rows, the events, the slot and the files",
    async () => {
      const lyre = await finishedTaskShape("split")
      expect(lyre).toMatchObject({ task: { status: "ready", lease_owner: null, next_poll_at: null } })
      expect(await finishedTaskShape("bare")).toEqual(lyre)
    },
    180_000
  )
})
