/**
 * The song tools over A2A (issue 20): the `extend_track` and `export_track` skills, asked for by
 * a data part's `operation`, through the SDK's 1.x client (1.0, no compatibility layer) and the
 * 0.3 client. Each reaches its end through the worker (inline, against the fake upstream over
 * real HTTP): an export completes with its files as file parts and the Export as a data part, an
 * extension as any generation. Domain errors, the `messageId` as the key, another account's track.
 */
import { randomUUID } from "node:crypto"
import { Role, TaskState } from "@a2a-js/sdk"
import type { Message, Part, SendMessageRequest, StreamResponse } from "@a2a-js/sdk"
import { ClientFactory, JsonRpcTransportFactory } from "@a2a-js/sdk/client"
import type { Client } from "@a2a-js/sdk/client"
import type { Task as LegacyTask, TaskArtifactUpdateEvent, TaskStatusUpdateEvent } from "@a2a-js/sdk-0.3"
import type { A2AClient } from "@a2a-js/sdk-0.3/client"
import { exportPriceOf, lyricsPrice, priceOf } from "@lyre/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { a2aClient, asTask, dataMessage, detailOf, rejectionOf } from "../support/a2a.ts"
import { api, balanceOf, createAccount, startTestServer, validSong } from "../support/harness.ts"
import type { Json, TestAccount, TestServer } from "../support/harness.ts"

// The harness's own fake upstream (server.upstream) is the provider; the worker runs inline.
let server: TestServer
beforeAll(async () => {
  server = await startTestServer({ worker: "inline", providerPollSeconds: 0.2 })
})
afterAll(async () => {
  await server?.close()
})

const v1Client = (key: string): Promise<Client> => {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers)
    headers.set("authorization", `Bearer ${key}`)
    return fetch(input, { ...init, headers })
  }
  return new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })] }).createFromUrl(server.url)
}

const dataPart = (value: Record<string, unknown>): Part => ({
  content: { $case: "data", value },
  metadata: undefined,
  filename: "",
  mediaType: ""
})

const send = (
  data: Record<string, unknown>,
  options: { readonly wait?: boolean; readonly messageId?: string } = {}
): SendMessageRequest => {
  const message: Message = {
    messageId: options.messageId ?? randomUUID(),
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts: [dataPart(data)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: []
  }
  return {
    tenant: "",
    message,
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      returnImmediately: options.wait !== true
    },
    metadata: undefined
  }
}

/** A ready song of the account (over REST: the song is not what is tested here); answers its first track's id. */
const song = async (account: TestAccount, extra: Record<string, unknown> = {}): Promise<string> => {
  const created = await api(server, "POST", "/api/v1/music/generations", {
    key: account.key,
    body: { ...validSong, ...extra }
  })
  const until = Date.now() + 20_000
  for (;;) {
    const { body } = await api(server, "GET", `/api/v1/music/generations/${String(created.body.id)}`, {
      key: account.key
    })
    if (String(body.status) !== "pending" || Date.now() > until) {
      expect(body.status).toBe("ready")
      return String(body.tracks?.[0]?.id)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const legacyTask = (response: Awaited<ReturnType<A2AClient["sendMessage"]>>): LegacyTask => {
  if ("error" in response) throw new Error(`unexpected error ${JSON.stringify(response.error)}`)
  if (response.result.kind !== "task") throw new Error("expected a task")
  return response.result
}

const legacyError = (response: { error?: unknown } | object) => {
  if (!("error" in response)) throw new Error(`expected an error, got ${JSON.stringify(response)}`)
  return response.error as { code: number; message: string; data?: { error: Record<string, unknown> } }
}

describe("the agent cards", () => {
  it("list extend_track and export_track beside generate_music, with the prices from core", async () => {
    const v1 = (await (
      await fetch(`${server.url}/.well-known/agent-card.json`, { headers: { "a2a-version": "1.0" } })
    ).json()) as Json
    const legacy = (await (await fetch(`${server.url}/.well-known/agent-card.json`)).json()) as Json
    for (const card of [v1, legacy]) {
      const skills = card.skills as unknown as Array<{ id: string; description: string; outputModes: Array<string> }>
      expect(skills.map((skill) => skill.id)).toEqual([
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
      expect(skills.at(-1)?.description).toContain(`lyrics:agent scope. ${lyricsPrice} credits`)
      const exportSkill = skills[2]
      for (const [format, price] of Object.entries(exportPriceOf))
        expect(exportSkill?.description).toContain(`${format} ${price}`)
      expect(exportSkill?.outputModes).toEqual(expect.arrayContaining(["audio/wav", "audio/midi", "text/vtt"]))
      expect(skills[1]?.description).toContain(`aether ${priceOf.aether}`)
    }
  })
})

describe("1.0: SendMessage with an operation", () => {
  it("export_track waits to a completed exp_ task: the file as a file part, the Export as data; GetTask and the same messageId answer it again", async () => {
    const account = await createAccount(server)
    const client = await v1Client(account.key)
    const trackId = await song(account)
    const before = await balanceOf(server, account)
    const messageId = randomUUID()
    const task = asTask(
      await client.sendMessage(
        send({ operation: "export_track", track_id: trackId, format: "wav" }, { wait: true, messageId })
      )
    )
    expect(task.id).toMatch(/^exp_/)
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(task.metadata).toMatchObject({ export: { id: task.id, format: "wav", status: "ready" } })
    const [artifact] = task.artifacts
    expect(task.artifacts).toHaveLength(1)
    const [file, data] = artifact?.parts ?? []
    expect(file).toMatchObject({ content: { $case: "url" }, mediaType: "audio/wav", filename: "track.wav" })
    const url = file?.content?.$case === "url" ? file.content.value : ""
    const wav = await fetch(url)
    expect([wav.status, wav.headers.get("content-type")]).toEqual([200, "audio/wav"])
    expect(data?.content).toMatchObject({
      $case: "data",
      value: { id: task.id, track_id: trackId, format: "wav", files: [{ url, name: "track.wav" }] }
    })

    expect(await client.getTask({ tenant: "", id: task.id, historyLength: undefined })).toMatchObject({
      id: task.id,
      status: { state: TaskState.TASK_STATE_COMPLETED }
    })
    const again = asTask(
      await client.sendMessage(send({ operation: "export_track", track_id: trackId, format: "wav" }, { messageId }))
    )
    expect(again.id).toBe(task.id)
    expect(await balanceOf(server, account)).toBe(before - exportPriceOf.wav)
  })

  it("extend_track streams a gen_ task to its two whole songs, charged as a generation", async () => {
    const account = await createAccount(server)
    const client = await v1Client(account.key)
    const trackId = await song(account)
    const before = await balanceOf(server, account)
    const events: Array<StreamResponse> = []
    for await (const event of client.sendMessageStream(
      send({ operation: "extend_track", track_id: trackId, continue_at: 30 })
    )) {
      events.push(event)
    }
    const cases = events.map((e) => e.payload?.$case)
    expect(cases.filter((c) => c !== "statusUpdate")).toEqual(["task", "artifactUpdate", "artifactUpdate"])
    const first = events[0]?.payload
    expect(first?.$case === "task" ? first.value.id : "").toMatch(/^gen_/)
    const last = events.at(-1)?.payload
    expect(last?.$case === "statusUpdate" ? last.value.status?.state : undefined).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(await balanceOf(server, account)).toBe(before - priceOf.aether)
  })
})

describe("0.3: message/send and message/stream with an operation", () => {
  it("export_track of stems streams one artifact: each stem a file part, then the Export", async () => {
    const account = await createAccount(server)
    const client = await a2aClient(server, account.key)
    const trackId = await song(account)
    const events: Array<LegacyTask | TaskStatusUpdateEvent | TaskArtifactUpdateEvent> = []
    for await (const event of client.sendMessageStream(
      dataMessage({ operation: "export_track", track_id: trackId, format: "stems" })
    )) {
      events.push(event as LegacyTask | TaskStatusUpdateEvent | TaskArtifactUpdateEvent)
    }
    const artifacts = events.filter((e): e is TaskArtifactUpdateEvent => e.kind === "artifact-update")
    expect(artifacts).toHaveLength(1)
    const parts = artifacts[0]?.artifact.parts ?? []
    expect(
      parts.map((p) => (p.kind === "file" && "uri" in p.file ? [p.file.name, p.file.mimeType] : [p.kind]))
    ).toEqual([["vocals.mp3", "audio/mpeg"], ["instrumental.mp3", "audio/mpeg"], ["data"]])
    expect(parts[2]).toMatchObject({
      kind: "data",
      data: { format: "stems", status: "ready", credits_used: exportPriceOf.stems }
    })
    expect(events.at(-1)).toMatchObject({ kind: "status-update", final: true, status: { state: "completed" } })
    expect(String(events[0]?.kind === "task" ? events[0].id : "")).toMatch(/^exp_/)
  })

  it("extend_track answers the working task at once, and tasks/get follows it to completed", async () => {
    const account = await createAccount(server)
    const client = await a2aClient(server, account.key)
    const trackId = await song(account)
    const sent = legacyTask(
      await client.sendMessage(dataMessage({ operation: "extend_track", track_id: trackId, continue_at: 30 }))
    )
    expect(sent.id).toMatch(/^gen_/)
    expect(sent.status.state).toBe("working")
    const until = Date.now() + 20_000
    let got = sent
    while (got.status.state === "working" && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      const answer = await client.getTask({ id: sent.id })
      if ("error" in answer) throw new Error(JSON.stringify(answer.error))
      got = answer.result
    }
    expect(got.status.state).toBe("completed")
    expect(got.artifacts).toHaveLength(2)
  })
})

describe("a failed export", () => {
  it("is a failed task on both versions, with the error code and the refund in its status message", async () => {
    const account = await createAccount(server)
    const title = `Doomed A2A export ${Math.random().toString(36).slice(2, 8)}`
    const trackId = await song(account, { title })
    server.upstream.control.onTrackOf(title, "wav", { outcome: "GENERATE_AUDIO_FAILED" })
    const before = await balanceOf(server, account)
    const client = await v1Client(account.key)
    const task = asTask(
      await client.sendMessage(send({ operation: "export_track", track_id: trackId, format: "wav" }, { wait: true }))
    )
    expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED)
    expect(task.artifacts).toEqual([])
    const [text, data] = task.status?.message?.parts ?? []
    expect(text?.content).toMatchObject({
      $case: "text",
      value: expect.stringMatching(/\(provider_error\)\. 5 credits were refunded\.$/)
    })
    expect(data?.content).toMatchObject({
      $case: "data",
      value: { error: { code: "provider_error" }, credits_refunded: exportPriceOf.wav }
    })
    const legacy = await a2aClient(server, account.key)
    const got = await legacy.getTask({ id: task.id })
    if ("error" in got) throw new Error(JSON.stringify(got.error))
    expect(got.result.status.state).toBe("failed")
    expect(await balanceOf(server, account)).toBe(before)
  })
})

describe("refusals on both versions", () => {
  it("timed_lyrics of an instrumental is track_has_no_lyrics (-32602); an extension the balance cannot pay is -32012; nothing charged", async () => {
    const account = await createAccount(server, { subscription: priceOf.aether + exportPriceOf.wav })
    const trackId = await song(account, { instrumental: true, lyrics: undefined })
    const legacy = await a2aClient(server, account.key)
    const noLyrics = legacyError(
      await legacy.sendMessage(dataMessage({ operation: "export_track", track_id: trackId, format: "timed_lyrics" }))
    )
    expect(noLyrics.code).toBe(-32602)
    expect(noLyrics.data?.error).toMatchObject({ code: "track_has_no_lyrics", param: "format" })
    const poor = legacyError(
      await legacy.sendMessage(dataMessage({ operation: "extend_track", track_id: trackId, continue_at: 30 }))
    )
    expect(poor.code).toBe(-32012)

    const client = await v1Client(account.key)
    const v1NoLyrics = await rejectionOf(
      client.sendMessage(send({ operation: "export_track", track_id: trackId, format: "timed_lyrics" }))
    )
    expect(v1NoLyrics.envelopeCode).toBe(-32602)
    expect(detailOf(v1NoLyrics.data, "lyre")).toMatchObject({
      reason: "TRACK_HAS_NO_LYRICS",
      metadata: { param: "format" }
    })
    const v1Poor = await rejectionOf(
      client.sendMessage(send({ operation: "extend_track", track_id: trackId, continue_at: 30 }))
    )
    expect(detailOf(v1Poor.data, "lyre")).toMatchObject({ reason: "INSUFFICIENT_CREDITS" })
    const unknown = await rejectionOf(client.sendMessage(send({ operation: "remix_track", track_id: trackId })))
    expect(unknown.envelopeCode).toBe(-32602)
    expect(detailOf(unknown.data, "lyre")).toMatchObject({ metadata: { param: "operation" } })
    expect(await balanceOf(server, account)).toBe(exportPriceOf.wav)
  })

  it("another account's track is not found for both skills, and its export for GetTask, on both versions", async () => {
    const owner = await createAccount(server)
    const trackId = await song(owner)
    const ownerClient = await v1Client(owner.key)
    const exported = asTask(
      await ownerClient.sendMessage(send({ operation: "export_track", track_id: trackId, format: "midi" }))
    )

    const stranger = await createAccount(server)
    const client = await v1Client(stranger.key)
    const legacy = await a2aClient(server, stranger.key)
    for (const data of [
      { operation: "extend_track", track_id: trackId, continue_at: 30 },
      { operation: "export_track", track_id: trackId, format: "wav" }
    ]) {
      const error = await rejectionOf(client.sendMessage(send(data)))
      expect(error.envelopeCode).toBe(-32001)
      expect(detailOf(error.data, "lyre")).toMatchObject({ reason: "TRACK_NOT_FOUND", metadata: { param: "track_id" } })
      const legacyRefusal = legacyError(await legacy.sendMessage(dataMessage(data)))
      expect(legacyRefusal.code).toBe(-32001)
      expect(legacyRefusal.data?.error).toMatchObject({ type: "not_found", code: "track_not_found" })
    }
    const notFound = await rejectionOf(client.getTask({ tenant: "", id: exported.id, historyLength: undefined }))
    expect(notFound.envelopeCode).toBe(-32001)
    expect(detailOf(notFound.data, "lyre")).toMatchObject({ reason: "EXPORT_NOT_FOUND" })
    expect(legacyError(await legacy.getTask({ id: exported.id })).data?.error).toMatchObject({
      code: "export_not_found"
    })
    expect(await balanceOf(server, stranger)).toBe(1_000)
  })
})

describe("the lyrics skill", () => {
  const scopes = ["profile", "music:generate", "lyrics:agent"]

  it("1.0: waits to a completed lyt_ task, one artifact per variation (its words as text, then as data)", async () => {
    const account = await createAccount(server, { scopes })
    const client = await v1Client(account.key)
    const task = asTask(await client.sendMessage(send({ operation: "lyrics", prompt: "tidal pools" }, { wait: true })))
    expect(task.id).toMatch(/^lyt_/)
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(task.artifacts).toHaveLength(2)
    const [text, data] = task.artifacts[0]?.parts ?? []
    expect(text?.content).toMatchObject({ $case: "text", value: expect.stringContaining("[Verse]") })
    expect(data?.content).toMatchObject({ $case: "data", value: { title: expect.any(String) } })
    expect(task.metadata).toMatchObject({ lyrics: { id: task.id, status: "ready", credits_used: lyricsPrice } })
    expect(await balanceOf(server, account)).toBe(1_000 - lyricsPrice)
  })

  it("0.3: answers the working task, and tasks/get follows it to completed; without the scope, refused", async () => {
    const account = await createAccount(server, { scopes })
    const client = await a2aClient(server, account.key)
    const sent = legacyTask(await client.sendMessage(dataMessage({ operation: "lyrics", prompt: "old radio" })))
    expect(sent.id).toMatch(/^lyt_/)
    const until = Date.now() + 20_000
    let got = sent
    while (got.status.state !== "completed" && got.status.state !== "failed" && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      const answer = await client.getTask({ id: sent.id })
      if ("error" in answer) throw new Error(JSON.stringify(answer.error))
      got = answer.result
    }
    expect(got.status.state).toBe("completed")
    expect(got.artifacts).toHaveLength(2)

    const musicOnly = await a2aClient(server, (await createAccount(server)).key)
    const refused = await musicOnly.sendMessage(dataMessage({ operation: "lyrics", prompt: "no scope" }))
    expect("error" in refused ? refused.error.data : undefined).toMatchObject({
      error: { code: "insufficient_scope" }
    })
  })
})
