/**
 * Your own audio over A2A (issue 27) through the SDK's 1.x client (1.0) and the 0.3 client: a
 * message's file part, bytes or URI, is an upload (the same rules as MCP's and REST's), followed
 * to completed; the data part's `operation` then covers it, adds vocals, edits it, makes a persona
 * (answered as a message). Two servers, as the webhook tests have: `live` (the built-in engine,
 * worker inline, WEBHOOK_ALLOW_PRIVATE so that it may fetch from the test's host on 127.0.0.1)
 * and `strict` (the production rule: private addresses refused).
 */
import { randomUUID } from "node:crypto"
import { Role, TaskState } from "@a2a-js/sdk"
import type { Message, Part, SendMessageRequest, StreamResponse, Task } from "@a2a-js/sdk"
import { ClientFactory, JsonRpcTransportFactory } from "@a2a-js/sdk/client"
import type { Client } from "@a2a-js/sdk/client"
import type { Message as LegacyMessage, Part as LegacyPart, Task as LegacyTask } from "@a2a-js/sdk-0.3"
import type { A2AClient } from "@a2a-js/sdk-0.3/client"
import { maxInlineUploadBytes, priceOf } from "@lyre/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { a2aClient, asTask, dataMessage, detailOf, rejectionOf, userMessage } from "../support/a2a.ts"
import { startUploadBeds, toneWav } from "../support/audioHost.ts"
import type { AudioHost, UploadBeds } from "../support/audioHost.ts"
import { balanceOf, createAccount } from "../support/harness.ts"
import type { Json, TestAccount, TestServer } from "../support/harness.ts"

let live: TestServer
let strict: TestServer
let host: AudioHost
const wav = toneWav(6)
let beds: UploadBeds | undefined
beforeAll(async () => {
  beds = await startUploadBeds(wav)
  ;({ host, live, strict } = beds)
}, 60_000)
afterAll(async () => {
  await beds?.close()
})

const v1Client = (server: TestServer, key: string): Promise<Client> => {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers)
    headers.set("authorization", `Bearer ${key}`)
    return fetch(input, { ...init, headers })
  }
  return new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })] }).createFromUrl(server.url)
}

const part = (content: NonNullable<Part["content"]>, mediaType = "", filename = ""): Part => ({
  content,
  metadata: undefined,
  filename,
  mediaType
})

const send = (parts: Array<Part>, options: { readonly wait?: boolean } = {}): SendMessageRequest => {
  const message: Message = {
    messageId: randomUUID(),
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts,
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

const legacyTask = (response: Awaited<ReturnType<A2AClient["sendMessage"]>>): LegacyTask => {
  if ("error" in response) throw new Error(`unexpected error ${JSON.stringify(response.error)}`)
  if (response.result.kind !== "task") throw new Error("expected a task")
  return response.result
}

const legacyError = (response: { error?: unknown } | object) => {
  if (!("error" in response)) throw new Error(`expected an error, got ${JSON.stringify(response)}`)
  return response.error as { code: number; message: string; data?: { error: Record<string, unknown> } }
}

/** 0.3's tasks/get until the task leaves working. */
const legacyToEnd = async (client: A2AClient, id: string): Promise<LegacyTask> => {
  const until = Date.now() + 120_000
  for (;;) {
    const answer = await client.getTask({ id })
    if ("error" in answer) throw new Error(JSON.stringify(answer.error))
    if (answer.result.status.state !== "working" || Date.now() > until) return answer.result
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

/** The Upload a completed upload task carries as its one artifact's data part (1.0). */
const uploadOf = (task: Task): Json => {
  expect(task.artifacts).toHaveLength(1)
  const content = task.artifacts[0]?.parts[0]?.content
  if (content?.$case !== "data") throw new Error("no data part")
  return content.value as Json
}

const uploadsKept = async (server: TestServer, account: TestAccount): Promise<number> => {
  const rows = await server.query<{ n: number }>(
    "select count(*)::int as n from uploads where account_id = $1",
    account.id
  )
  return rows[0]?.n ?? 0
}

const allSkills = [
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
]

describe("the agent cards", () => {
  it("list the upload, the track tasks and personas as skills on both documents, the inline size stated", async () => {
    const v1 = (await (
      await fetch(`${strict.url}/.well-known/agent-card.json`, { headers: { "a2a-version": "1.0" } })
    ).json()) as Json
    const legacy = (await (await fetch(`${strict.url}/.well-known/agent-card.json`)).json()) as Json
    for (const card of [v1, legacy]) {
      const skills = card.skills as unknown as Array<{ id: string; description: string; inputModes: Array<string> }>
      expect(skills.map((skill) => skill.id)).toEqual(allSkills)
      const upload = skills.find((skill) => skill.id === "upload_audio")
      expect(upload?.description).toContain(`${maxInlineUploadBytes / (1024 * 1024)} MB`)
      expect(upload?.description).toMatch(/no loopback, private or link-local address/)
      expect(upload?.inputModes).toEqual(expect.arrayContaining(["audio/mpeg", "audio/wav"]))
      expect(skills.find((skill) => skill.id === "cover_track")?.description).toContain(`aether ${priceOf.aether}`)
    }
  })
})

describe("1.0: a file part is an upload", () => {
  let account: TestAccount
  let client: Client
  let upload: Json
  beforeAll(async () => {
    account = await createAccount(live, { subscription: 2_000 })
    client = await v1Client(live, account.key)
  })

  it("takes the bytes (a data part naming it), waits to a completed upl_ task with the Upload as its artifact", async () => {
    const task = asTask(
      await client.sendMessage(
        send(
          [
            part({ $case: "raw", value: wav }, "audio/wav", "sines.wav"),
            part({ $case: "data", value: { title: "Sines" } })
          ],
          { wait: true }
        )
      )
    )
    expect(task.id).toMatch(/^upl_/)
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    upload = uploadOf(task)
    expect(upload).toMatchObject({
      id: task.id,
      status: "ready",
      title: "Sines",
      content_type: "audio/wav",
      bytes: wav.length
    })
    expect(String(upload.track_id)).toMatch(/^trk_/)
    expect(Number(upload.analysis?.bpm)).toBeGreaterThan(0)
    expect(task.metadata).toMatchObject({ upload: { id: task.id, status: "ready" } })
    expect(await client.getTask({ tenant: "", id: task.id, historyLength: undefined })).toMatchObject({
      id: task.id,
      status: { state: TaskState.TASK_STATE_COMPLETED }
    })
  }, 150_000)

  it("cover_track streams a gen_ task on the upload's track to its end, charged as a generation", async () => {
    const before = await balanceOf(live, account)
    const events: Array<StreamResponse> = []
    for await (const event of client.sendMessageStream(
      send([
        part({
          $case: "data",
          value: { operation: "cover_track", track_id: String(upload.track_id), style: "bossa nova" }
        })
      ])
    )) {
      events.push(event)
    }
    const first = events[0]?.payload
    expect(first?.$case === "task" ? first.value.id : "").toMatch(/^gen_/)
    expect(events.filter((e) => e.payload?.$case === "artifactUpdate").length).toBeGreaterThan(0)
    const last = events.at(-1)?.payload
    expect(last?.$case === "statusUpdate" ? last.value.status?.state : undefined).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(await balanceOf(live, account)).toBe(before - priceOf.aether)
  }, 180_000)

  it("add_vocals and edit_track answer their working tasks; create_persona answers a message with the Persona", async () => {
    const track_id = String(upload.track_id)
    const vocals = asTask(
      await client.sendMessage(
        send([part({ $case: "data", value: { operation: "add_vocals", track_id, lyrics: "[Verse]\nSing it back" } })])
      )
    )
    expect(vocals.id).toMatch(/^gen_/)
    expect(vocals.status?.state).toBe(TaskState.TASK_STATE_WORKING)
    const edit = asTask(
      await client.sendMessage(
        send([part({ $case: "data", value: { operation: "edit_track", track_id, start: 1, end: 4 } })])
      )
    )
    expect(edit.status?.state).toBe(TaskState.TASK_STATE_WORKING)
    const answer = await client.sendMessage(
      send([
        part({ $case: "data", value: { operation: "create_persona", track_id, name: "Sines", description: "A chord" } })
      ])
    )
    if (!("messageId" in answer)) throw new Error("expected a message")
    const persona = answer.parts.find((p) => p.content?.$case === "data")?.content
    expect(persona?.$case === "data" ? persona.value : undefined).toMatchObject({ name: "Sines", track_id })
    const personaId = persona?.$case === "data" ? String((persona.value as Json).id) : ""
    expect(personaId).toMatch(/^per_/)
    // Streamed, a persona is one message event and the end of the stream.
    const events: Array<StreamResponse> = []
    for await (const event of client.sendMessageStream(
      send([
        part({
          $case: "data",
          value: { operation: "create_persona", track_id, name: "Streamed", description: "Again" }
        })
      ])
    )) {
      events.push(event)
    }
    expect(events.map((event) => event.payload?.$case)).toEqual(["message"])
    const sung = asTask(
      await client.sendMessage(
        send([
          part({
            $case: "data",
            value: { style: "dream pop", title: "With a voice", lyrics: "[Verse]\nHello", persona_id: personaId }
          })
        ])
      )
    )
    expect(sung.id).toMatch(/^gen_/)
  })

  it("a message sent again (its messageId the Idempotency-Key) answers the first upload, kept and counted once", async () => {
    const owner = await createAccount(live)
    const again = await v1Client(live, owner.key)
    const request = send([part({ $case: "raw", value: wav }, "audio/wav", "again.wav")])
    const first = asTask(await again.sendMessage(request))
    expect(first.id).toMatch(/^upl_/)
    const second = asTask(await again.sendMessage(request))
    expect(second.id).toBe(first.id)
    expect(await uploadsKept(live, owner)).toBe(1)
  })

  it("refuses bytes past the stated size (invalid_parameter on data), keeping nothing", async () => {
    const before = await uploadsKept(live, account)
    const oversize = Buffer.alloc(maxInlineUploadBytes + 3, 1)
    const error = await rejectionOf(
      client.sendMessage(send([part({ $case: "raw", value: oversize }, "audio/wav", "big.wav")]))
    )
    expect(detailOf(error.data, "lyre")).toMatchObject({ metadata: { param: "data" } })
    expect(await uploadsKept(live, account)).toBe(before)
  })

  it("refuses bytes that are not audio with invalid_audio, keeping nothing", async () => {
    const before = await uploadsKept(live, account)
    const error = await rejectionOf(
      client.sendMessage(
        send([part({ $case: "raw", value: Buffer.from("not a wave at all") }, "audio/wav", "fake.wav")])
      )
    )
    expect(detailOf(error.data, "lyre")).toMatchObject({ reason: "INVALID_AUDIO", metadata: { param: "file" } })
    expect(await uploadsKept(live, account)).toBe(before)
  })

  it("refuses a file part given to another operation (-32005)", async () => {
    const error = await rejectionOf(
      client.sendMessage(
        send([
          part({ $case: "raw", value: wav }, "audio/wav"),
          part({ $case: "data", value: { operation: "cover_track", style: "jazz" } })
        ])
      )
    )
    expect(error.message).toMatch(/upload it first/)
  })
})

describe("0.3: a file part is an upload", () => {
  it("fetches a URI (through a redirect), answers the working upl_ task, and tasks/get follows it to completed", async () => {
    const account = await createAccount(live)
    const client = await a2aClient(live, account.key)
    const sent = legacyTask(
      await client.sendMessage(
        userMessage([
          { kind: "file", file: { uri: `${host.url}/redirect`, mimeType: "audio/wav", name: "Fetched" } } as LegacyPart
        ])
      )
    )
    expect(sent.id).toMatch(/^upl_/)
    expect(sent.status.state).toBe("working")
    const done = await legacyToEnd(client, sent.id)
    expect(done.status.state).toBe("completed")
    const [data] = done.artifacts?.[0]?.parts ?? []
    expect(data).toMatchObject({
      kind: "data",
      data: { id: sent.id, status: "ready", title: "Fetched", bytes: wav.length }
    })
    expect(host.hits).toEqual(expect.arrayContaining(["/redirect", "/song.wav"]))
  }, 150_000)

  it("takes base64 bytes too, and create_persona answers a message", async () => {
    const account = await createAccount(live)
    const client = await a2aClient(live, account.key)
    const sent = legacyTask(
      await client.sendMessage(
        userMessage([
          { kind: "file", file: { bytes: wav.toString("base64"), mimeType: "audio/wav", name: "Inline" } } as LegacyPart
        ])
      )
    )
    const done = await legacyToEnd(client, sent.id)
    expect(done.status.state).toBe("completed")
    const [data] = done.artifacts?.[0]?.parts ?? []
    const track_id = data?.kind === "data" ? String((data.data as Json).track_id) : ""
    const answer = await client.sendMessage(
      dataMessage({ operation: "create_persona", track_id, name: "Inline", description: "Sines" })
    )
    if ("error" in answer) throw new Error(JSON.stringify(answer.error))
    expect(answer.result.kind).toBe("message")
    const message = answer.result as LegacyMessage
    expect(message.parts.find((p) => p.kind === "data")).toMatchObject({
      kind: "data",
      data: { name: "Inline", track_id }
    })
  }, 150_000)
})

describe("what both versions refuse", () => {
  it("another account's upload: GetTask and every track task on its track are not found, nothing charged", async () => {
    const owner = await createAccount(live)
    const other = await createAccount(live)
    const ownerClient = await v1Client(live, owner.key)
    const task = asTask(
      await ownerClient.sendMessage(send([part({ $case: "raw", value: wav }, "audio/wav")], { wait: true }))
    )
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    const track_id = String(uploadOf(task).track_id)
    const client = await v1Client(live, other.key)
    const notFound = await rejectionOf(client.getTask({ tenant: "", id: task.id, historyLength: undefined }))
    expect(detailOf(notFound.data, "lyre")).toMatchObject({ reason: "UPLOAD_NOT_FOUND" })
    for (const value of [
      { operation: "cover_track", track_id, style: "punk" },
      { operation: "add_vocals", track_id, lyrics: "[Verse]\nNot mine" },
      { operation: "edit_track", track_id, start: 0, end: 3 },
      { operation: "create_persona", track_id, name: "Stolen", description: "Not mine" }
    ]) {
      const error = await rejectionOf(client.sendMessage(send([part({ $case: "data", value })])))
      expect(detailOf(error.data, "lyre"), value.operation).toMatchObject({
        reason: "TRACK_NOT_FOUND",
        metadata: { param: "track_id" }
      })
    }
    const legacy = await a2aClient(live, other.key)
    expect(legacyError(await legacy.getTask({ id: task.id })).data?.error).toMatchObject({ code: "upload_not_found" })
    expect(
      legacyError(await legacy.sendMessage(dataMessage({ operation: "cover_track", track_id, style: "punk" }))).data
        ?.error
    ).toMatchObject({ type: "not_found", param: "track_id" })
    expect(await balanceOf(live, other)).toBe(1_000)
  }, 150_000)

  it("a URI to a loopback, private or link-local address, or a name resolving to one: invalid_parameter on url, nothing fetched or kept", async () => {
    const account = await createAccount(strict)
    const legacy = await a2aClient(strict, account.key)
    const client = await v1Client(strict, account.key)
    const seen = host.hits.length
    const port = new URL(host.url).port
    for (const uri of [
      `${host.url}/song.wav`,
      `http://localhost:${port}/song.wav`,
      "http://10.1.2.3/a.wav",
      "http://169.254.169.254/a.wav"
    ]) {
      const refused = legacyError(
        await legacy.sendMessage(userMessage([{ kind: "file", file: { uri, mimeType: "audio/wav" } } as LegacyPart]))
      )
      expect(refused.data?.error, uri).toMatchObject({ code: "invalid_parameter", param: "url" })
      const error = await rejectionOf(client.sendMessage(send([part({ $case: "url", value: uri }, "audio/wav")])))
      expect(detailOf(error.data, "lyre"), uri).toMatchObject({ metadata: { param: "url" } })
    }
    expect(host.hits.length).toBe(seen)
    expect(await uploadsKept(strict, account)).toBe(0)
  })

  it("bad audio by URI or bytes on 0.3: invalid_audio, nothing kept", async () => {
    const account = await createAccount(live)
    const legacy = await a2aClient(live, account.key)
    const byUri = legacyError(
      await legacy.sendMessage(userMessage([{ kind: "file", file: { uri: `${host.url}/notes.wav` } } as LegacyPart]))
    )
    expect(byUri.data?.error).toMatchObject({ type: "invalid_request_error", code: "invalid_audio", param: "file" })
    const byBytes = legacyError(
      await legacy.sendMessage(
        userMessage([
          {
            kind: "file",
            file: { bytes: Buffer.from("words, not sound").toString("base64"), mimeType: "audio/mpeg" }
          } as LegacyPart
        ])
      )
    )
    expect(byBytes.data?.error).toMatchObject({ code: "invalid_audio" })
    expect(await uploadsKept(live, account)).toBe(0)
  })
})
