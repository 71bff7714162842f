/**
 * Your own audio over MCP (issue 27) through the SDK's client: `upload_audio` from base64 and
 * from a URL Lyre fetches, followed to ready (a wait tool, and as an MCP task), then covered as
 * a task, and the other track tools and personas on it. Two servers, as the webhook tests have:
 * `live` (the built-in engine, worker inline, WEBHOOK_ALLOW_PRIVATE so that it may fetch from
 * the test's host on 127.0.0.1) and `strict` (the production rule: private addresses refused).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { CallToolResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { maxInlineUploadBase64Chars, maxInlineUploadBytes, priceOf } from "@lyre/core"
import { api, createAccount, validSong } from "../../../server/test/support/harness.ts"
import type { Json, TestAccount, TestServer } from "../../../server/test/support/harness.ts"
import { startUploadBeds, toneWav } from "../../../server/test/support/audioHost.ts"
import type { AudioHost, UploadBeds } from "../../../server/test/support/audioHost.ts"

let live: TestServer
let strict: TestServer
let host: AudioHost
const wav = toneWav(6)
const base64 = wav.toString("base64")
let beds: UploadBeds | undefined
beforeAll(async () => {
  beds = await startUploadBeds(wav)
  ;({ host, live, strict } = beds)
}, 60_000)
afterAll(async () => {
  await beds?.close()
})

const connect = async (server: TestServer, key: string): Promise<Client> => {
  const client = new Client({ name: "lyre-upload-agent", version: "1.0.0" }, { capabilities: { tasks: {} } })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } }
    })
  )
  await client.listTools()
  return client
}

const callTool = async (client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
  (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as CallToolResult

const structured = (result: CallToolResult): Json => {
  expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false)
  return result.structuredContent as Json
}

/** The envelope of an `isError` result. */
const envelopeOf = (result: CallToolResult): Json => {
  expect(result.isError).toBe(true)
  const [text] = result.content
  if (text?.type !== "text") throw new Error("no text content")
  return JSON.parse(text.text) as Json
}

const rejectionOf = async (promise: Promise<unknown>): Promise<McpError> => {
  const error = await promise.then(
    () => undefined,
    (cause: unknown) => cause
  )
  expect(error).toBeInstanceOf(McpError)
  return error as McpError
}

/** A task-augmented call to its end: the created task, the statuses seen, the final result. */
const runAsTask = async (client: Client, name: string, args: Record<string, unknown>) => {
  let created: { taskId: string; status: string } | undefined
  let result: CallToolResult | undefined
  for await (const message of client.experimental.tasks.callToolStream(
    { name, arguments: args },
    CallToolResultSchema,
    { timeout: 150_000 }
  )) {
    if (message.type === "taskCreated") created = message.task
    else if (message.type === "result") result = message.result
    else if (message.type === "error") throw message.error
  }
  return { created, result }
}

const uploadsKept = async (server: TestServer, account: TestAccount): Promise<number> => {
  const rows = await server.query<{ n: number }>(
    "select count(*)::int as n from uploads where account_id = $1",
    account.id
  )
  return rows[0]?.n ?? 0
}

describe("tools/list", () => {
  it("states the inline size in upload_audio's schema and offers the track tools as tasks", async () => {
    const account = await createAccount(strict)
    const client = await connect(strict, account.key)
    const { tools } = await client.listTools()
    const upload = tools.find((tool) => tool.name === "upload_audio")
    expect(upload?.inputSchema.properties?.["data"]).toMatchObject({
      type: "string",
      maxLength: maxInlineUploadBase64Chars
    })
    expect(upload?.description).toContain(`${maxInlineUploadBytes / (1024 * 1024)} MB`)
    expect(upload?.description).toMatch(/no loopback/)
    expect(upload?.execution?.taskSupport).toBe("optional")
    const generate = tools.find((tool) => tool.name === "generate_music")
    expect(Object.keys(generate?.inputSchema.properties ?? {})).toContain("persona_id")
    for (const name of ["cover_track", "add_vocals", "add_instrumental", "edit_track"]) {
      const tool = tools.find((t) => t.name === name)
      expect(tool?.execution?.taskSupport, name).toBe("optional")
      expect(tool?.inputSchema.required, name).toContain("track_id")
      expect(Object.keys(tool?.inputSchema.properties ?? {}), name).toContain("idempotency_key")
    }
    await client.close()
  })
})

describe("upload_audio, then the track tools", () => {
  let account: TestAccount
  let client: Client
  let upload: Json
  beforeAll(async () => {
    account = await createAccount(live, { subscription: 2_000 })
    client = await connect(live, account.key)
  })
  afterAll(() => client.close())

  it("uploads base64 data: pending at once, and wait_for_upload follows it to ready with its track and analysis", async () => {
    const pending = structured(
      await callTool(client, "upload_audio", { data: base64, content_type: "audio/wav", title: "Sines" })
    )
    expect(pending).toMatchObject({
      status: "pending",
      title: "Sines",
      content_type: "audio/wav",
      bytes: wav.length,
      track_id: null
    })
    expect(String(pending.id)).toMatch(/^upl_/)
    upload = structured(await callTool(client, "wait_for_upload", { id: String(pending.id), timeout_seconds: 120 }))
    expect(upload.status).toBe("ready")
    expect(String(upload.track_id)).toMatch(/^trk_/)
    expect(Number(upload.analysis?.bpm)).toBeGreaterThan(0)
    expect(upload.analysis?.time_signature).toBe("4/4")
    // The same upload over REST: one row, the same fields.
    const rest = await api(live, "GET", `/api/v1/music/uploads/${String(upload.id)}`, { key: account.key })
    expect(rest.body).toEqual(upload)
    expect(structured(await callTool(client, "get_upload", { id: String(upload.id) }))).toEqual(upload)
  }, 150_000)

  it("covers the upload's track as an MCP task: created at once, charged once, the cover from tasks/result", async () => {
    const { created, result } = await runAsTask(client, "cover_track", {
      track_id: String(upload.track_id),
      style: "bossa nova, nylon guitar"
    })
    expect(created?.taskId).toMatch(/^gen_/)
    expect(created?.status).toBe("working")
    const task = result?.structuredContent as Json
    expect(task).toMatchObject({ id: created?.taskId, status: "ready", credits_used: priceOf.aether })
    expect((task.tracks as unknown as Array<unknown>).length).toBeGreaterThan(0)
    const me = await api(live, "GET", "/api/v1/me", { key: account.key })
    expect(me.body.credits).toMatchObject({ total: 2_000 - priceOf.aether })
  }, 180_000)

  it("adds vocals, an edit and an accompaniment through their tools, each a pending generation", async () => {
    const track_id = String(upload.track_id)
    const vocals = structured(await callTool(client, "add_vocals", { track_id, lyrics: "[Verse]\nSing it back to me" }))
    expect(vocals).toMatchObject({ status: "pending", credits_used: priceOf.aether })
    const edit = structured(
      await callTool(client, "edit_track", { track_id, start: 1, end: 4, idempotency_key: "edit-1" })
    )
    expect(edit).toMatchObject({ status: "pending" })
    // The same key and arguments: the first task, charged once.
    expect(
      structured(await callTool(client, "edit_track", { track_id, start: 1, end: 4, idempotency_key: "edit-1" })).id
    ).toBe(edit.id)
    const tooShort = envelopeOf(await callTool(client, "edit_track", { track_id, start: 1, end: 2 }))
    expect(tooShort.error).toMatchObject({ type: "invalid_request_error" })
    // What was heard in an upload is accompanied (it may well be a voice alone).
    const accompany = structured(await callTool(client, "add_instrumental", { track_id, style: "string quartet" }))
    expect(accompany).toMatchObject({ status: "pending", credits_used: priceOf.aether })
  })

  it("makes a persona of the track, lists it, and generate_music takes its persona_id", async () => {
    const persona = structured(
      await callTool(client, "create_persona", {
        track_id: String(upload.track_id),
        name: "Sines",
        description: "A chord of sines"
      })
    )
    expect(String(persona.id)).toMatch(/^per_/)
    expect(structured(await callTool(client, "get_persona", { id: String(persona.id) }))).toEqual(persona)
    const listed = structured(await callTool(client, "list_personas", {}))
    expect((listed.data as unknown as Array<Json>).map((p) => p.id)).toContain(persona.id)
    const song = structured(await callTool(client, "generate_music", { ...validSong, persona_id: String(persona.id) }))
    expect(song).toMatchObject({ status: "pending" })
  })

  it("uploads from a URL (through a redirect) as an MCP task, followed to ready by tasks/result", async () => {
    const { created, result } = await runAsTask(client, "upload_audio", {
      url: `${host.url}/redirect`,
      title: "Fetched"
    })
    expect(created?.taskId).toMatch(/^upl_/)
    const fetched = result?.structuredContent as Json
    expect(fetched).toMatchObject({
      id: created?.taskId,
      status: "ready",
      title: "Fetched",
      content_type: "audio/wav",
      bytes: wav.length
    })
    expect(host.hits).toEqual(expect.arrayContaining(["/redirect", "/song.wav"]))
    const listed = structured(await callTool(client, "list_uploads", { limit: 10 }))
    expect((listed.data as unknown as Array<Json>).map((u) => u.id)).toEqual([fetched.id, upload.id])
    // tasks/list shows the uploads beside the generations, newest first.
    const tasks = (await client.experimental.tasks.listTasks()).tasks
    expect(tasks[0]).toMatchObject({ taskId: fetched.id, status: "completed" })
    expect(tasks.map((task) => task.taskId)).toEqual(expect.arrayContaining([String(upload.id)]))
  }, 180_000)

  it("refuses a URL that serves no audio or nothing (a 404), or declares more than the cap, and keeps nothing", async () => {
    const before = await uploadsKept(live, account)
    const notAudio = envelopeOf(await callTool(client, "upload_audio", { url: `${host.url}/notes.wav` }))
    expect(notAudio.error).toMatchObject({ type: "invalid_request_error", code: "invalid_audio", param: "file" })
    const missing = envelopeOf(await callTool(client, "upload_audio", { url: `${host.url}/missing.wav` }))
    expect(missing.error).toMatchObject({ code: "invalid_parameter", param: "url" })
    expect(String(missing.error?.message)).toMatch(/answered 404/)
    const huge = envelopeOf(await callTool(client, "upload_audio", { url: `${host.url}/huge.wav` }))
    expect(huge.error).toMatchObject({ code: "request_too_large" })
    expect(await uploadsKept(live, account)).toBe(before)
  })
})

describe("upload_audio with an idempotency_key", () => {
  it("the same key and file again answer the first upload, kept once; another file under the key is refused", async () => {
    const owner = await createAccount(live)
    const agent = await connect(live, owner.key)
    try {
      const args = { data: base64, content_type: "audio/wav", idempotency_key: "agent-take-1" }
      const first = structured(await callTool(agent, "upload_audio", args))
      const again = structured(await callTool(agent, "upload_audio", args))
      expect(again).toEqual(first)
      const other = await callTool(agent, "upload_audio", { ...args, data: toneWav(7).toString("base64") })
      expect(envelopeOf(other).error).toMatchObject({ code: "idempotency_key_reused" })
      const rows = await live.query<{ id: string }>("select id from uploads where account_id = $1", owner.id)
      expect(rows).toEqual([{ id: first.id }])
    } finally {
      await agent.close()
    }
  })
})

describe("what upload_audio refuses", () => {
  it("refuses another account's upload and track everywhere: get, wait, list, cover, persona, tasks/get", async () => {
    const owner = await createAccount(live)
    const other = await createAccount(live)
    const ownerClient = await connect(live, owner.key)
    const pending = structured(await callTool(ownerClient, "upload_audio", { data: base64, content_type: "audio/wav" }))
    const ready = structured(
      await callTool(ownerClient, "wait_for_upload", { id: String(pending.id), timeout_seconds: 120 })
    )
    expect(ready.status).toBe("ready")
    const client = await connect(live, other.key)
    const id = String(ready.id)
    const track_id = String(ready.track_id)
    for (const [name, args] of [
      ["get_upload", { id }],
      ["wait_for_upload", { id, timeout_seconds: 1 }]
    ] as const) {
      expect(envelopeOf(await callTool(client, name, args)).error, name).toMatchObject({ type: "not_found" })
    }
    for (const [name, args] of [
      ["cover_track", { track_id, style: "punk" }],
      ["add_vocals", { track_id, lyrics: "[Verse]\nNot mine" }],
      ["edit_track", { track_id, start: 0, end: 3 }],
      ["create_persona", { track_id, name: "Stolen", description: "Not mine" }]
    ] as const) {
      expect(envelopeOf(await callTool(client, name, args)).error, name).toMatchObject({
        type: "not_found",
        param: "track_id"
      })
    }
    expect(structured(await callTool(client, "list_uploads", {})).data).toEqual([])
    const error = await rejectionOf(client.experimental.tasks.getTask(id))
    expect(error.data).toMatchObject({ error: { type: "not_found" } })
    expect((await client.experimental.tasks.listTasks()).tasks).toEqual([])
    const me = await api(live, "GET", "/api/v1/me", { key: other.key })
    expect(me.body.credits).toMatchObject({ total: 1_000 })
    await ownerClient.close()
    await client.close()
  }, 150_000)

  it("refuses a URL to a loopback, private or link-local address, or a name that resolves to one, fetching nothing", async () => {
    const account = await createAccount(strict)
    const client = await connect(strict, account.key)
    const port = new URL(host.url).port
    const seen = host.hits.length
    for (const url of [
      `${host.url}/song.wav`,
      `http://localhost:${port}/song.wav`,
      "http://10.1.2.3/song.wav",
      "http://169.254.169.254/latest/meta-data",
      "http://[::1]/song.wav"
    ]) {
      const refused = envelopeOf(await callTool(client, "upload_audio", { url }))
      expect(refused.error, url).toMatchObject({
        type: "invalid_request_error",
        code: "invalid_parameter",
        param: "url"
      })
      expect(String(refused.error?.message), url).toMatch(/not a public address|non-public addresses/)
    }
    expect(host.hits.length).toBe(seen)
    expect(await uploadsKept(strict, account)).toBe(0)
    await client.close()
  })

  it("refuses data past the stated size as invalid params (the envelope in data), reading nothing", async () => {
    const account = await createAccount(strict)
    const client = await connect(strict, account.key)
    const oversize = "A".repeat(maxInlineUploadBase64Chars + 4)
    const error = await rejectionOf(
      client.callTool({ name: "upload_audio", arguments: { data: oversize, content_type: "audio/wav" } })
    )
    expect(error.code).toBe(-32602)
    expect(error.data).toMatchObject({ error: { code: "invalid_parameter", param: "data" } })
    const both = await rejectionOf(
      client.callTool({
        name: "upload_audio",
        arguments: { data: base64, url: `${host.url}/song.wav`, content_type: "audio/wav" }
      })
    )
    expect(both.data).toMatchObject({ error: { param: "url" } })
    const neither = await rejectionOf(client.callTool({ name: "upload_audio", arguments: { title: "Nothing" } }))
    expect(neither.data).toMatchObject({ error: { code: "missing_parameter", param: "data" } })
    expect(await uploadsKept(strict, account)).toBe(0)
    await client.close()
  })

  it("refuses bad audio (not what it says, too short, an unknown type) with invalid_audio, keeping nothing", async () => {
    const account = await createAccount(strict)
    const client = await connect(strict, account.key)
    for (const [data, contentType] of [
      [Buffer.from("RIFF but not really a wave file at all").toString("base64"), "audio/wav"],
      [toneWav(1).toString("base64"), "audio/wav"],
      [base64, "text/plain"]
    ] as const) {
      const refused = envelopeOf(await callTool(client, "upload_audio", { data, content_type: contentType }))
      expect(refused.error, contentType).toMatchObject({
        type: "invalid_request_error",
        code: "invalid_audio",
        param: "file"
      })
    }
    expect(await uploadsKept(strict, account)).toBe(0)
    expect(structured(await callTool(client, "list_uploads", {})).data).toEqual([])
    await client.close()
  })
})
