/**
 * A2A through `@a2a-js/sdk`'s own client, as an agent would use it: the card, a data-part
 * message and a text-only one, polling `tasks/get` to `completed`, blocking sends, streams that
 * follow a task to its end, and every error it can meet. The provider is the fake upstream over
 * real HTTP with the worker inline, so tasks finish (or fail) within a second or two.
 */
import type { Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent } from "@a2a-js/sdk-0.3"
import type { A2AClient } from "@a2a-js/sdk-0.3/client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { a2aClient, dataMessage, textMessage } from "../support/a2a.ts"
import { api, balanceOf, createAccount, startTestServer, validSong } from "../support/harness.ts"
import type { TestServer } from "../support/harness.ts"
import { streamingSong } from "../support/previews.ts"

// The harness's own fake upstream (server.upstream) is the provider; the worker runs inline.
let server: TestServer
beforeAll(async () => {
  server = await startTestServer({ worker: "inline", providerPollSeconds: 0.2 })
})
afterAll(async () => {
  await server?.close()
})

const asTask = (response: Awaited<ReturnType<A2AClient["sendMessage"]>>): Task => {
  if ("error" in response) throw new Error(`unexpected error ${JSON.stringify(response.error)}`)
  const result = response.result
  if (result.kind !== "task") throw new Error("expected a task")
  return result
}

const errorOf = (response: { error?: unknown } | object) => {
  if (!("error" in response)) throw new Error(`expected an error, got ${JSON.stringify(response)}`)
  return response.error as { code: number; message: string; data?: { error: Record<string, unknown> } }
}

const pollToEnd = async (client: A2AClient, id: string): Promise<Task> => {
  const until = Date.now() + 20_000
  for (;;) {
    const got = await client.getTask({ id })
    if ("error" in got) throw new Error(JSON.stringify(got.error))
    if (got.result.status.state !== "working" || Date.now() > until) return got.result
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

describe("the SDK client finds the agent", () => {
  it("resolves the card and its JSON-RPC endpoint", async () => {
    const account = await createAccount(server)
    const client = await a2aClient(server, account.key)
    const card = await client.getAgentCard()
    expect(card.url).toBe(`${server.url}/a2a`)
    expect(card.skills.map((s) => s.id)).toEqual([
      "generate_music",
      "extend_track",
      "export_track",
      "upload_audio",
      "cover_track",
      "add_vocals",
      "add_instrumental",
      "edit_track",
      "create_persona",
      "lyrics"
    ])
  })
})

describe("message/send and tasks/get", () => {
  it("a data part is a generation request: working at once, completed with one artifact per track", async () => {
    const account = await createAccount(server)
    const client = await a2aClient(server, account.key)
    const sent = asTask(
      await client.sendMessage({
        ...dataMessage(validSong),
        message: { ...dataMessage(validSong).message, contextId: "ctx-mine" }
      })
    )
    expect(sent).toMatchObject({ kind: "task", contextId: "ctx-mine", status: { state: "working" } })
    expect(sent.id).toMatch(/^gen_/)
    expect(sent.metadata?.["generation"]).toMatchObject({ id: sent.id, status: "pending", credits_used: 50 })
    expect(await balanceOf(server, account)).toBe(950)

    const done = await pollToEnd(client, sent.id)
    expect(done.status.state).toBe("completed")
    expect(done.artifacts).toHaveLength(2)
    const rest = (await api(server, "GET", `/api/v1/music/generations/${sent.id}`, { key: account.key })).body
    for (const [i, artifact] of (done.artifacts ?? []).entries()) {
      const track = rest.tracks?.[i]
      expect(artifact.artifactId).toBe(track?.id)
      expect(artifact.parts[0]).toEqual({
        kind: "file",
        file: { uri: track?.audio_url, mimeType: "audio/mpeg", name: `${String(track?.id)}.mp3` }
      })
      expect(artifact.parts[1]).toEqual({ kind: "data", data: track })
      const audio = await fetch(String(track?.audio_url))
      expect(audio.status).toBe(200)
      await audio.arrayBuffer()
    }
  })

  it("text alone is a style: an instrumental titled from it", async () => {
    const account = await createAccount(server)
    const client = await a2aClient(server, account.key)
    const sent = asTask(await client.sendMessage(textMessage("dreamy synthwave at night, 110 bpm")))
    expect(sent.contextId).toBe(`ctx_${sent.id}`)
    const submitted = server.upstream.control.submissionsFor("Dreamy Synthwave At Night 110")
    expect(submitted[0]?.body).toMatchObject({ style: "dreamy synthwave at night, 110 bpm", instrumental: true })
    const rest = (await api(server, "GET", `/api/v1/music/generations/${sent.id}`, { key: account.key })).body
    expect(rest.id).toBe(sent.id)
    const done = await pollToEnd(client, sent.id)
    expect(done.status.state).toBe("completed")
    expect(done.contextId).toBe(sent.contextId)
  })

  it("configuration.blocking waits for the end before answering", async () => {
    const account = await createAccount(server)
    const client = await a2aClient(server, account.key)
    const sent = asTask(await client.sendMessage(dataMessage({ ...validSong, title: "Blocking" }, { blocking: true })))
    expect(sent.status.state).toBe("completed")
    expect(sent.artifacts).toHaveLength(2)
  })

  it("a failed generation is failed, with our error code and the refund in its status message", async () => {
    const account = await createAccount(server)
    const client = await a2aClient(server, account.key)
    server.upstream.control.onTitle("Doomed", { outcome: "GENERATE_AUDIO_FAILED" })
    const sent = asTask(await client.sendMessage(dataMessage({ ...validSong, title: "Doomed" })))
    const done = await pollToEnd(client, sent.id)
    expect(done.status.state).toBe("failed")
    expect(done.artifacts).toBeUndefined()
    const data = done.status.message?.parts.find((p) => p.kind === "data")
    expect(data).toMatchObject({ kind: "data", data: { error: { code: "provider_error" }, credits_refunded: 50 } })
    const text = done.status.message?.parts.find((p) => p.kind === "text")
    expect(text?.kind === "text" ? text.text : "").toContain("50 credits were refunded")
    expect(await balanceOf(server, account)).toBe(1_000)
  })
})

describe("message/stream and tasks/resubscribe", () => {
  type Event = Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent

  const collect = async (events: AsyncGenerator<unknown>): Promise<Array<Event>> => {
    const seen: Array<Event> = []
    for await (const event of events) seen.push(event as Event)
    return seen
  }

  it("streams the task, then each artifact, then the final status, and ends", async () => {
    const account = await createAccount(server)
    const client = await a2aClient(server, account.key)
    const events = await collect(client.sendMessageStream(dataMessage({ ...validSong, title: "Streamed" })))
    expect(events.map((e) => e.kind)).toEqual(["task", "artifact-update", "artifact-update", "status-update"])
    const [task, first, , last] = events
    expect(task).toMatchObject({ kind: "task", status: { state: "working" } })
    expect(first).toMatchObject({
      kind: "artifact-update",
      taskId: task?.kind === "task" ? task.id : "",
      lastChunk: true
    })
    expect(last).toMatchObject({ kind: "status-update", final: true, status: { state: "completed" } })
  })

  it("resubscribe follows a pending task to its end, and a finished one answers at once", async () => {
    const account = await createAccount(server)
    const client = await a2aClient(server, account.key)
    // No stream offered: previews would add a status update while it is pending (tested below).
    server.upstream.control.onTitle("Slow", { pollsBeforeDone: 4, callbacks: "none", stream: "none" })
    const sent = asTask(await client.sendMessage(dataMessage({ ...validSong, title: "Slow" })))
    const followed = await collect(client.resubscribeTask({ id: sent.id }))
    expect(followed.map((e) => e.kind)).toEqual(["task", "artifact-update", "artifact-update", "status-update"])
    const again = await collect(client.resubscribeTask({ id: sent.id }))
    expect(again.map((e) => e.kind)).toEqual(["task", "status-update"])
    expect(again[0]).toMatchObject({ status: { state: "completed" } })
    expect(again[1]).toMatchObject({ final: true, status: { state: "completed" } })
  })

  it("a client that leaves a stream stops its polling", async () => {
    const account = await createAccount(server)
    const client = await a2aClient(server, account.key)
    server.upstream.control.onTitle("Endless", { pollsBeforeDone: Infinity, callbacks: "none" })
    const sent = asTask(await client.sendMessage(dataMessage({ ...validSong, title: "Endless" })))
    const leave = new AbortController()
    const response = await fetch(`${server.url}/a2a`, {
      method: "POST",
      signal: leave.signal,
      headers: {
        authorization: `Bearer ${account.key}`,
        "content-type": "application/json",
        accept: "text/event-stream"
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tasks/resubscribe", params: { id: sent.id } })
    })
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    leave.abort()
    const remaining = async () =>
      Number((await api(server, "GET", "/api/v1/me", { key: account.key })).headers.get("x-ratelimit-remaining"))
    const after = await remaining()
    await new Promise((resolve) => setTimeout(resolve, 4_500))
    // Only this check's own request was counted since: the stream polls no more.
    expect(await remaining()).toBe(after - 1)
  })

  it("a quiet stream sends a working status-update every 15 s, so proxies keep it open", async () => {
    const account = await createAccount(server)
    const client = await a2aClient(server, account.key)
    // Nothing to hear early either: previews are news, which a quiet stream has none of.
    server.upstream.control.onTitle("Quiet", { pollsBeforeDone: Infinity, callbacks: "none", stream: "none" })
    const sent = asTask(await client.sendMessage(dataMessage({ ...validSong, title: "Quiet" })))
    const started = Date.now()
    const events = client.resubscribeTask({ id: sent.id })
    expect((await events.next()).value).toMatchObject({ kind: "task", status: { state: "working" } })
    const kept = await events.next()
    expect(kept.value).toMatchObject({
      kind: "status-update",
      final: false,
      taskId: sent.id,
      status: { state: "working" }
    })
    expect(Date.now() - started).toBeGreaterThanOrEqual(14_000)
    await events.return(undefined)
  }, 40_000)

  it("says at once when the song can be heard while it is made: a working status update with each take's stream", async () => {
    const account = await createAccount(server)
    const client = await a2aClient(server, account.key)
    const song = streamingSong(server, "a2a 0.3")
    const events: Array<Event> = []
    for await (const event of client.sendMessageStream(dataMessage(song.request))) {
      events.push(event as Event)
      if (event.kind === "status-update" && event.status.message !== undefined) song.finish()
    }
    // Keep-alives (a working status without a message) may come at any time; the rest is fixed.
    const told = events.filter((e) => e.kind !== "status-update" || e.final || e.status.message !== undefined)
    expect(told.map((e) => e.kind)).toEqual([
      "task",
      "status-update",
      "artifact-update",
      "artifact-update",
      "status-update"
    ])
    const [task, streaming] = told
    if (task?.kind !== "task" || streaming?.kind !== "status-update") throw new Error("unexpected events")
    expect(streaming).toMatchObject({ final: false, taskId: task.id, status: { state: "working" } })
    const generation = streaming.metadata?.["generation"] as { previews: Array<{ index: number; stream_url: string }> }
    const previews = generation.previews
    expect(previews.map((p) => p.index)).toEqual([0, 1])
    for (const p of previews)
      expect(p.stream_url.startsWith(`${server.url}/files/streams/${task.id}/${p.index}.mp3?`)).toBe(true)
    expect(streaming.status.message?.parts).toEqual([
      { kind: "text", text: `Hear it while it is made: ${previews.map((p) => p.stream_url).join(" ")}` },
      ...previews.map((p) => ({
        kind: "file",
        file: { uri: p.stream_url, mimeType: "audio/mpeg", name: `${task.id}-${p.index}-stream.mp3` }
      })),
      { kind: "data", data: { previews } }
    ])
    expect(told.at(-1)).toMatchObject({ kind: "status-update", final: true, status: { state: "completed" } })
  })

  it("a stream that cannot start says why, with the envelope", async () => {
    const poor = await createAccount(server, { subscription: 10 })
    const client = await a2aClient(server, poor.key)
    await expect(collect(client.sendMessageStream(dataMessage(validSong)))).rejects.toThrow(
      /-32012.*insufficient_credits/
    )
  })
})

describe("errors an agent meets", () => {
  it("402 insufficient credits: -32012 with the envelope, nothing charged", async () => {
    const poor = await createAccount(server, { subscription: 10 })
    const client = await a2aClient(server, poor.key)
    const error = errorOf(await client.sendMessage(dataMessage(validSong)))
    expect(error.code).toBe(-32012)
    expect(error.data).toEqual({
      error: { type: "insufficient_credits", code: "insufficient_credits", message: expect.any(String) }
    })
    expect(await balanceOf(server, poor)).toBe(10)
  })

  it("429 concurrency: -32013 with retry_after_seconds", async () => {
    const account = await createAccount(server, { concurrency_limit: 1 })
    const client = await a2aClient(server, account.key)
    server.upstream.control.onTitle("Forever", { pollsBeforeDone: Infinity, callbacks: "none" })
    asTask(await client.sendMessage(dataMessage({ ...validSong, title: "Forever" })))
    const error = errorOf(await client.sendMessage(dataMessage(validSong)))
    expect(error.code).toBe(-32013)
    expect(error.data?.error).toMatchObject({ type: "rate_limit_error", code: "concurrent_limit_exceeded" })
    expect(Number(error.data?.error["retry_after_seconds"])).toBeGreaterThanOrEqual(0)
  })

  it("503 model unavailable: -32014 with the model and retry_after_seconds", async () => {
    const account = await createAccount(server)
    const client = await a2aClient(server, account.key)
    await server.admin("PUT", "/models/nocturne", { available: false, retry_after_seconds: 90 })
    try {
      const error = errorOf(await client.sendMessage(dataMessage({ ...validSong, model: "nocturne" })))
      expect(error.code).toBe(-32014)
      expect(error.data?.error).toMatchObject({
        type: "service_unavailable",
        code: "model_unavailable",
        model: "nocturne",
        retry_after_seconds: 90
      })
    } finally {
      await server.admin("PUT", "/models/nocturne", { available: true })
    }
  })

  it("403: -32011 for a key without music:generate, and for an account below Pro", async () => {
    const profileOnly = await createAccount(server, { scopes: ["profile"] })
    const scoped = errorOf(await (await a2aClient(server, profileOnly.key)).sendMessage(textMessage("jazz")))
    expect(scoped.code).toBe(-32011)
    expect(scoped.data?.error).toMatchObject({ type: "permission_error", code: "insufficient_scope" })
    const basic = await createAccount(server, { plan: "basic" })
    const tier = errorOf(await (await a2aClient(server, basic.key)).getTask({ id: "gen_x" }))
    expect(tier.code).toBe(-32011)
    expect(tier.data?.error).toMatchObject({ code: "tier_insufficient" })
  })

  it("-32602 invalid params with core's envelope; -32001 and -32002 for tasks", async () => {
    const account = await createAccount(server)
    const client = await a2aClient(server, account.key)
    const invalid = errorOf(await client.sendMessage(dataMessage({ ...validSong, model: "echo", vocal_gender: "f" })))
    expect(invalid.code).toBe(-32602)
    expect(invalid.data?.error).toMatchObject({ code: "parameter_not_supported_for_model", param: "vocal_gender" })
    expect(errorOf(await client.getTask({ id: "gen_unknown" })).code).toBe(-32001)
    const sent = asTask(await client.sendMessage(textMessage("ambient drones")))
    expect(errorOf(await client.cancelTask({ id: sent.id })).code).toBe(-32002)
  })

  it("a bad key is refused at the HTTP layer, before any JSON-RPC", async () => {
    const client = await a2aClient(server, "lyr_live_00000000000000000000000000000000")
    await expect(client.sendMessage(textMessage("jazz"))).rejects.toThrow(/401/)
  })
})
