/**
 * Audio before `ready` on the built-in engine (DESIGN.md section 14, decision 0126): a task's
 * takes are offered at their signed `/files/streams/...` addresses from their first encoded
 * frames; what a listener gets there, joined, is the final file byte for byte, whether it came
 * while the take grew or (the take done first) through the redirect to the final file.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, createAccount, settledAt, startTestServer } from "../support/harness.ts"
import type { TestServer } from "../support/harness.ts"
import { mp3FramesOf } from "../support/files.ts"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer({
    provider: "embedded",
    providerUrl: null,
    providerApiKey: null,
    worker: "inline",
    providerPollSeconds: 2,
    engineMaxSeconds: 8
  })
})
afterAll(() => server.close())

/** The task's stored previews, set once its first audio is out (they stay in the row after ready). */
const storedPreviews = async (id: string) => {
  const deadline = Date.now() + 240_000
  for (;;) {
    const [row] = await server.query<{ previews: Array<{ index: number; stream_url: string }> | null }>(
      "select previews from generation_tasks where id = $1",
      id
    )
    if (row?.previews != null || Date.now() > deadline) return row?.previews ?? []
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe("previews on the built-in engine", { timeout: 480_000 }, () => {
  it("streams each take as it is encoded, and the stream joined is the final file", async () => {
    const account = await createAccount(server)
    const created = await api(server, "POST", "/api/v1/music/generations", {
      key: account.key,
      body: { style: "house, 124 bpm, synth, drums", title: "Early Light", lyrics: "[Verse]\nEarly light" }
    })
    expect(created.status).toBe(202)
    expect(created.body.previews).toEqual([])
    const id = String(created.body.id)
    const previews = await storedPreviews(id)
    expect(previews.map((p) => p.index)).toEqual([0, 1])
    // Both takes heard at once, as a player started early would: each answer ends with its take.
    const heard = await Promise.all(
      previews.map(async (p) => {
        const res = await fetch(p.stream_url)
        expect(res.status).toBe(200)
        expect(res.headers.get("content-type")).toBe("audio/mpeg")
        return Buffer.from(await res.arrayBuffer())
      })
    )
    const task = await settledAt(server, account.key, `/api/v1/music/generations/${id}`)
    expect(task.status).toBe("ready")
    expect(task.previews).toEqual([])
    const tracks = task.tracks as unknown as Array<{ index: number; audio_url: string }>
    for (const p of previews) {
      const final = Buffer.from(
        await (await fetch(tracks.find((t) => t.index === p.index)?.audio_url ?? "")).arrayBuffer()
      )
      // The same MP3 frames, byte for byte: the same audio, to the sample.
      expect(heard[p.index]?.length).toBe(mp3FramesOf(final).length)
      expect(heard[p.index]?.equals(mp3FramesOf(final))).toBe(true)
    }
    const events = await server.query<{ type: string }>(
      "select type from outbox_events where payload ->> 'task_id' = $1 and type like 'job.%' order by seq",
      id
    )
    expect(events.map((e) => e.type)).toEqual(["job.streaming", "job.completed"])
  })
})
