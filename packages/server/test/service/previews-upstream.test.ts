/**
 * Audio before `ready` on the upstream (DESIGN.md section 14, decision 0126): the `first` stage's
 * stream is offered as the task's `previews`, under Lyre's own signed `/files/streams/...`
 * address, proxied (the player never meets the upstream's host); another account's or an
 * unsigned address is 404; a stream that breaks midway ends the answer cleanly and the task goes
 * on; once ready the address redirects to the final file and `previews` is empty.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startFakeUpstream } from "@lyre/fake-upstream"
import type { Behaviour, FakeUpstream } from "@lyre/fake-upstream"
import { api, createAccount, startTestServer, validSong } from "../support/harness.ts"
import type { Json, TestAccount, TestServer } from "../support/harness.ts"

const apiKey = "previews-upstream-key"
let upstream: FakeUpstream
/** Slow polls (30 s): the task moves only when a callback makes the worker look. */
let server: TestServer

beforeAll(async () => {
  upstream = await startFakeUpstream({ apiKey })
  server = await startTestServer({
    provider: "http",
    providerUrl: upstream.url,
    providerApiKey: apiKey,
    worker: "inline",
    providerPollSeconds: 30
  })
})
afterAll(async () => {
  await server?.close()
  await upstream?.close()
})

let serial = 0
/**
 * A task that reaches the upstream's `first` stage (its callback makes the worker look) and
 * stays there until the test sends a `complete` hint (the next look finds it done).
 */
const createStreaming = async (account: TestAccount, behaviour: Behaviour = {}) => {
  const title = `Previews ${++serial} ${Math.random().toString(36).slice(2, 8)}`
  upstream.control.onTitle(title, { callbacks: ["first"], pollsBeforeDone: 1, ...behaviour })
  const created = await api(server, "POST", "/api/v1/music/generations", {
    key: account.key,
    body: { ...validSong, title }
  })
  expect(created.status).toBe(202)
  expect(created.body.previews).toEqual([])
  const id = String(created.body.id)
  const task = await until(account, id, (t) => (t.previews as unknown as Array<Json>).length > 0)
  const providerTaskId = upstream.control.submissionsFor(title)[0]?.taskId ?? ""
  return { id, task, providerTaskId }
}

/** Reads the task until `done` holds of it (each look a request; the worker moves it on callbacks). */
const until = async (account: TestAccount, id: string, done: (task: Json) => boolean): Promise<Json> => {
  const deadline = Date.now() + 20_000
  let task = (await api(server, "GET", `/api/v1/music/generations/${id}`, { key: account.key })).body
  while (!done(task) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    task = (await api(server, "GET", `/api/v1/music/generations/${id}`, { key: account.key })).body
  }
  return task
}

const streamsOf = (task: Json) => task.previews as unknown as Array<{ index: number; stream_url: string }>

describe("previews on the upstream", { timeout: 60_000 }, () => {
  it("offers the first stage's stream as Lyre's own address, proxied, then redirects to the final file", async () => {
    const account = await createAccount(server)
    const { id, task, providerTaskId } = await createStreaming(account)
    expect(task.status).toBe("pending")
    expect(task.tracks).toEqual([])
    const previews = streamsOf(task)
    expect(previews.map((p) => p.index)).toEqual([0, 1])
    for (const p of previews) {
      expect(p.stream_url.startsWith(`${server.url}/files/streams/${id}/${p.index}.mp3?`)).toBe(true)
      expect(p.stream_url).not.toContain(upstream.url)
    }
    const played = await fetch(previews[0]?.stream_url ?? "")
    expect(played.status).toBe(200)
    expect(played.headers.get("content-type")).toBe("audio/mpeg")
    expect(played.headers.get("content-length")).toBeNull()
    const heard = Buffer.from(await played.arrayBuffer())
    const trackId = upstream.control.task(providerTaskId)?.trackIds[0] ?? ""
    const original = Buffer.from(await (await fetch(`${upstream.url}/files/${trackId}.mp3`)).arrayBuffer())
    expect(heard.equals(original)).toBe(true)
    expect(upstream.control.downloads).toContain(`/stream/${trackId}.mp3`)

    // `job.streaming`, once, with the addresses the task shows.
    const events = await server.query<{ type: string; payload: Record<string, unknown> }>(
      "select type, payload from outbox_events where payload ->> 'task_id' = $1 and type = 'job.streaming'",
      id
    )
    expect(events).toHaveLength(1)
    expect(events[0]?.payload["previews"]).toEqual(previews)

    // Done: no previews, the final files in `tracks`, and the old stream address redirects to one.
    await upstream.control.sendCallback(providerTaskId, "complete")
    const ready = await until(account, id, (t) => String(t.status) !== "pending")
    expect(ready.status).toBe("ready")
    expect(ready.previews).toEqual([])
    const moved = await fetch(previews[1]?.stream_url ?? "", { redirect: "manual" })
    expect(moved.status).toBe(302)
    const tracks = ready.tracks as unknown as Array<{ index: number; audio_url: string }>
    expect(moved.headers.get("location")).toBe(tracks.find((t) => t.index === 1)?.audio_url)
  })

  it("answers 404 to another task's address, an unsigned one and a forged one", async () => {
    const owner = await createAccount(server)
    const other = await createAccount(server)
    const mine = await createStreaming(owner)
    const theirs = await createStreaming(other)
    const url = new URL(streamsOf(mine.task)[0]?.stream_url ?? "")
    const otherUrl = new URL(streamsOf(theirs.task)[0]?.stream_url ?? "")
    // The other account's own signature on this task's stream: not this task's address.
    const borrowed = `${url.origin}${url.pathname}${otherUrl.search}`
    const unsigned = `${url.origin}${url.pathname}`
    const forged = `${url.origin}${url.pathname}?expires=${url.searchParams.get("expires")}&signature=${"0".repeat(64)}`
    for (const address of [borrowed, unsigned, forged]) {
      const res = await fetch(address)
      expect(res.status).toBe(404)
      await res.arrayBuffer()
    }
    // The owner's own address still plays.
    const res = await fetch(url)
    expect(res.status).toBe(200)
    await res.arrayBuffer()
  })

  it("ends the answer cleanly when the upstream's stream breaks midway, and the task goes on", async () => {
    const account = await createAccount(server)
    const { id, task, providerTaskId } = await createStreaming(account, { stream: "break" })
    const res = await fetch(streamsOf(task)[0]?.stream_url ?? "")
    expect(res.status).toBe(200)
    // The body ends (no error): the player sees the end of what there was.
    const heard = Buffer.from(await res.arrayBuffer())
    const trackId = upstream.control.task(providerTaskId)?.trackIds[0] ?? ""
    const original = Buffer.from(await (await fetch(`${upstream.url}/files/${trackId}.mp3`)).arrayBuffer())
    expect(heard.length).toBeGreaterThan(0)
    expect(heard.length).toBeLessThan(original.length)
    expect(heard.equals(original.subarray(0, heard.length))).toBe(true)
    expect((await api(server, "GET", `/api/v1/music/generations/${id}`, { key: account.key })).body.status).toBe(
      "pending"
    )
    await upstream.control.sendCallback(providerTaskId, "complete")
    expect((await until(account, id, (t) => String(t.status) !== "pending")).status).toBe("ready")
  })
})
