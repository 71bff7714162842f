/**
 * A2A 1.0 through `@a2a-js/sdk` 1.x's own client WITHOUT its 0.3 compatibility layer, as a
 * current agent connects: it reads the card, picks the 1.0 JSON-RPC interface and sends
 * `A2A-Version: 1.0`. Create, completion (the fake upstream over real HTTP with the worker
 * inline), streaming, domain errors in 1.0's shape, another account's task, and the same
 * `messageId` across versions. The 0.3 path is a2a-client.test.ts and a2a-rpc.test.ts.
 */
import { randomUUID } from "node:crypto"
import { Role, TaskState } from "@a2a-js/sdk"
import type { Message, Part, SendMessageRequest, StreamResponse, Task } from "@a2a-js/sdk"
import { ClientFactory, JsonRpcTransportFactory } from "@a2a-js/sdk/client"
import type { Client } from "@a2a-js/sdk/client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { asTask, call, dataMessage, detailOf, rejectionOf, rpc } from "../support/a2a.ts"
import { api, createAccount, startTestServer, validSong } from "../support/harness.ts"
import type { Json, TestAccount, TestServer } from "../support/harness.ts"
import { streamingSong } from "../support/previews.ts"

// The harness's own fake upstream (server.upstream) is the provider; the worker runs inline.
let server: TestServer
beforeAll(async () => {
  server = await startTestServer({ worker: "inline", providerPollSeconds: 0.2 })
})
afterAll(async () => {
  await server?.close()
})

/** The 1.x client from the card, with no compatibility layer, sending the key on every call. */
const v1Client = (key: string): Promise<Client> => {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers)
    headers.set("authorization", `Bearer ${key}`)
    return fetch(input, { ...init, headers })
  }
  return new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })] }).createFromUrl(server.url)
}

const part = (content: NonNullable<Part["content"]>): Part => ({
  content,
  metadata: undefined,
  filename: "",
  mediaType: ""
})

const message = (parts: Array<Part>, messageId: string = randomUUID()): Message => ({
  messageId,
  contextId: "",
  taskId: "",
  role: Role.ROLE_USER,
  parts,
  metadata: undefined,
  extensions: [],
  referenceTaskIds: []
})

const send = (
  data: Record<string, unknown>,
  options: { readonly wait?: boolean; readonly messageId?: string } = {}
): SendMessageRequest => ({
  tenant: "",
  message: message([part({ $case: "data", value: data })], options.messageId),
  configuration: {
    acceptedOutputModes: [],
    taskPushNotificationConfig: undefined,
    returnImmediately: options.wait !== true
  },
  metadata: undefined
})

const pollToEnd = async (client: Client, id: string): Promise<Task> => {
  const until = Date.now() + 20_000
  for (;;) {
    const task = await client.getTask({ tenant: "", id })
    if (task.status?.state !== TaskState.TASK_STATE_WORKING || Date.now() > until) return task
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

const balance = async (account: TestAccount) =>
  (await api(server, "GET", "/api/v1/me", { key: account.key })).body.credits?.total as unknown as number

describe("the 1.x client finds Lyre", () => {
  it("picks the 1.0 JSON-RPC interface from the card, and the card answers per A2A-Version", async () => {
    const account = await createAccount(server)
    const client = await v1Client(account.key)
    expect(client.protocolVersion).toBe("1.0")
    const card = await client.getAgentCard()
    expect(card.supportedInterfaces.map((i) => [i.protocolBinding, i.protocolVersion, i.url])).toEqual([
      ["JSONRPC", "1.0", `${server.url}/a2a`],
      ["JSONRPC", "0.3", `${server.url}/a2a`]
    ])
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

    const v1 = await fetch(`${server.url}/.well-known/agent-card.json`, { headers: { "a2a-version": "1.0" } })
    expect(v1.headers.get("vary")).toBe("A2A-Version")
    const v1Card = (await v1.json()) as Json
    expect(v1Card["url"]).toBeUndefined()
    expect(v1Card["securitySchemes"]).toMatchObject({ apiKey: { httpAuthSecurityScheme: { scheme: "bearer" } } })
    const legacy = (await (await fetch(`${server.url}/.well-known/agent-card.json`)).json()) as Json
    expect(legacy).toMatchObject({ protocolVersion: "0.3.0", url: `${server.url}/a2a`, preferredTransport: "JSONRPC" })
    expect(legacy["supportedInterfaces"]).toEqual(v1Card["supportedInterfaces"])
  })

  it("takes 0.3 named in the header as it takes 0.3 without one", async () => {
    const account = await createAccount(server)
    const response = await fetch(`${server.url}/a2a`, {
      method: "POST",
      headers: { authorization: `Bearer ${account.key}`, "content-type": "application/json", "a2a-version": "0.3" },
      body: JSON.stringify(call("message/send", dataMessage(validSong)))
    })
    const body = (await response.json()) as Json
    expect(body.result).toMatchObject({ kind: "task", status: { state: "working" } })
    const v1Method = await rpc(server, call("GetTask", { id: String(body.result?.["id"]) }), { key: account.key })
    expect(v1Method.body.error?.code).toBe(-32601)
  })

  it("refuses a version the card does not list with -32009", async () => {
    const account = await createAccount(server)
    const response = await fetch(`${server.url}/a2a`, {
      method: "POST",
      headers: { authorization: `Bearer ${account.key}`, "content-type": "application/json", "a2a-version": "2.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "GetTask", params: { id: "gen_x" } })
    })
    const body = (await response.json()) as Json
    expect(body).toMatchObject({ id: 7, error: { code: -32009 } })
  })
})

describe("SendMessage and GetTask on 1.0", () => {
  it("returnImmediately answers the working task at once, charged once; GetTask follows it to completed", async () => {
    const account = await createAccount(server)
    const client = await v1Client(account.key)
    const sent = asTask(await client.sendMessage(send(validSong)))
    expect(sent.id).toMatch(/^gen_/)
    expect(sent.status?.state).toBe(TaskState.TASK_STATE_WORKING)
    expect(sent.contextId).toBe(`ctx_${sent.id}`)
    expect(sent.metadata?.["generation"]).toMatchObject({ id: sent.id, status: "pending", credits_used: 50 })
    expect(await balance(account)).toBe(950)

    const done = await pollToEnd(client, sent.id)
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(done.artifacts).toHaveLength(2)
    const [file, data] = done.artifacts[0]?.parts ?? []
    expect(file?.content?.$case).toBe("url")
    expect(file?.mediaType).toBe("audio/mpeg")
    expect(data?.content).toMatchObject({ $case: "data", value: { index: 0 } })
    expect(await balance(account)).toBe(950)
  })

  it("without returnImmediately it waits for the end, as 1.0 says", async () => {
    const account = await createAccount(server)
    const client = await v1Client(account.key)
    const done = asTask(await client.sendMessage(send(validSong, { wait: true })))
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(done.artifacts).toHaveLength(2)
  })

  it("a failed generation is failed, with our code and the refund in its status message", async () => {
    const account = await createAccount(server)
    const client = await v1Client(account.key)
    server.upstream.control.onTitle("Doomed v1", { outcome: "GENERATE_AUDIO_FAILED" })
    const sent = asTask(await client.sendMessage(send({ ...validSong, title: "Doomed v1" })))
    const done = await pollToEnd(client, sent.id)
    expect(done.status?.state).toBe(TaskState.TASK_STATE_FAILED)
    const parts = done.status?.message?.parts ?? []
    expect(parts[1]?.content).toMatchObject({
      $case: "data",
      value: { error: { code: "provider_error" }, credits_refunded: 50 }
    })
    expect(await balance(account)).toBe(1_000)
  })

  it("the messageId is the idempotency key, whichever version carries it", async () => {
    const account = await createAccount(server)
    const client = await v1Client(account.key)
    const messageId = randomUUID()
    const first = asTask(await client.sendMessage(send({ ...validSong, model: "echo" }, { messageId })))
    const again = asTask(await client.sendMessage(send({ ...validSong, model: "echo" }, { messageId })))
    expect(again.id).toBe(first.id)
    const legacy = await rpc(
      server,
      call("message/send", {
        message: { ...dataMessage({ ...validSong, model: "echo" }).message, messageId }
      }),
      { key: account.key }
    )
    expect(legacy.body.result?.["id"]).toBe(first.id)
    expect(await balance(account)).toBe(1_000 - 100)
  })
})

describe("SendStreamingMessage and SubscribeToTask on 1.0", () => {
  it("streams the task, each artifact, then the completed status, and ends", async () => {
    const account = await createAccount(server)
    const client = await v1Client(account.key)
    const events: Array<StreamResponse> = []
    for await (const event of client.sendMessageStream(send(validSong))) events.push(event)
    expect(events.map((e) => e.payload?.$case)).toEqual(["task", "artifactUpdate", "artifactUpdate", "statusUpdate"])
    const last = events.at(-1)?.payload
    expect(last?.$case === "statusUpdate" ? last.value.status?.state : undefined).toBe(TaskState.TASK_STATE_COMPLETED)

    const first = events[0]?.payload
    const id = first?.$case === "task" ? first.value.id : ""
    const again: Array<StreamResponse> = []
    for await (const event of client.resubscribeTask({ tenant: "", id })) again.push(event)
    expect(again.map((e) => e.payload?.$case)).toEqual(["task", "statusUpdate"])
  })

  it("sends a working status update with each take's stream once the song can be heard (issue 54)", async () => {
    const account = await createAccount(server)
    const client = await v1Client(account.key)
    const song = streamingSong(server, "a2a 1.0")
    const events: Array<StreamResponse> = []
    for await (const event of client.sendMessageStream(send(song.request))) {
      events.push(event)
      if (event.payload?.$case === "statusUpdate" && event.payload.value.status?.message !== undefined) song.finish()
    }
    // Keep-alives (a working status without a message) may come at any time; the rest is fixed.
    const told = events.filter(
      (e) =>
        e.payload?.$case !== "statusUpdate" ||
        e.payload.value.status?.message !== undefined ||
        e.payload.value.status?.state !== TaskState.TASK_STATE_WORKING
    )
    expect(told.map((e) => e.payload?.$case)).toEqual([
      "task",
      "statusUpdate",
      "artifactUpdate",
      "artifactUpdate",
      "statusUpdate"
    ])
    const first = told[0]?.payload
    const id = first?.$case === "task" ? first.value.id : ""
    const streaming = told[1]?.payload
    if (streaming?.$case !== "statusUpdate") throw new Error("expected a status update")
    expect(streaming.value.status?.state).toBe(TaskState.TASK_STATE_WORKING)
    const parts = streaming.value.status?.message?.parts ?? []
    const streams = parts.flatMap((p) =>
      p.content?.$case === "url" ? [[p.content.value, p.mediaType, p.filename]] : []
    )
    expect(streams.map(([, mediaType, filename]) => [mediaType, filename])).toEqual([
      ["audio/mpeg", `${id}-0-stream.mp3`],
      ["audio/mpeg", `${id}-1-stream.mp3`]
    ])
    streams.forEach(([url], index) => {
      expect(url?.startsWith(`${server.url}/files/streams/${id}/${index}.mp3?`)).toBe(true)
    })
    expect(parts[0]?.content).toEqual({
      $case: "text",
      value: `Hear it while it is made: ${streams.map(([url]) => url).join(" ")}`
    })
    const last = told.at(-1)?.payload
    expect(last?.$case === "statusUpdate" ? last.value.status?.state : undefined).toBe(TaskState.TASK_STATE_COMPLETED)
  })
})

describe("errors on 1.0", () => {
  it("402 is -32012 with the envelope as Lyre's ErrorInfo, and nothing is charged", async () => {
    const account = await createAccount(server, { subscription: 49 })
    const client = await v1Client(account.key)
    const error = await rejectionOf(client.sendMessage(send(validSong)))
    expect(error.envelopeCode).toBe(-32012)
    expect(detailOf(error.data, "lyre")).toMatchObject({
      "@type": "type.googleapis.com/google.rpc.ErrorInfo",
      reason: "INSUFFICIENT_CREDITS",
      metadata: { type: "insufficient_credits", code: "insufficient_credits" }
    })
    expect(await balance(account)).toBe(49)
  })

  it("a request core refuses is -32602 with A2A's INVALID_PARAMS and Lyre's detail naming the parameter", async () => {
    const account = await createAccount(server)
    const client = await v1Client(account.key)
    const error = await rejectionOf(client.sendMessage(send({ style: "jazz", title: "No lyrics" })))
    expect(error.envelopeCode).toBe(-32602)
    expect(detailOf(error.data, "a2a-protocol.org")).toMatchObject({ reason: "INVALID_PARAMS" })
    expect(detailOf(error.data, "lyre")).toMatchObject({ reason: "MISSING_PARAMETER", metadata: { param: "lyrics" } })
    expect(await balance(account)).toBe(1_000)
  })

  it("another account's task is TaskNotFound (-32001); one's own cannot be canceled (-32002)", async () => {
    const owner = await createAccount(server)
    const stranger = await createAccount(server)
    const ownerClient = await v1Client(owner.key)
    const sent = asTask(await ownerClient.sendMessage(send(validSong)))
    const client = await v1Client(stranger.key)
    const notFound = await rejectionOf(client.getTask({ tenant: "", id: sent.id }))
    expect(notFound.envelopeCode).toBe(-32001)
    expect(detailOf(notFound.data, "a2a-protocol.org")).toMatchObject({ reason: "TASK_NOT_FOUND" })
    expect(detailOf(notFound.data, "lyre")).toMatchObject({ reason: "TASK_NOT_FOUND" })
    expect((await rejectionOf(client.cancelTask({ tenant: "", id: sent.id, metadata: undefined }))).envelopeCode).toBe(
      -32001
    )
    const stream = client.resubscribeTask({ tenant: "", id: sent.id })
    expect((await rejectionOf(stream.next())).envelopeCode).toBe(-32001)
    expect(
      (await rejectionOf(ownerClient.cancelTask({ tenant: "", id: sent.id, metadata: undefined }))).envelopeCode
    ).toBe(-32002)
  })

  it("the per-minute limit is -32013 with retry_after_seconds in Lyre's detail", async () => {
    const account = await createAccount(server, { requests_per_minute: 1 })
    const client = await v1Client(account.key)
    await client.getTask({ tenant: "", id: "gen_doesnotexist000000000000" }).catch(() => undefined)
    const error = await rejectionOf(client.getTask({ tenant: "", id: "gen_doesnotexist000000000000" }))
    expect(error.envelopeCode).toBe(-32013)
    expect(detailOf(error.data, "lyre")?.["metadata"]).toMatchObject({
      code: "rpm_exceeded",
      retry_after_seconds: expect.stringMatching(/^\d+$/)
    })
  })
})
