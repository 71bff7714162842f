/**
 * The song tools over MCP (issue 20) with the SDK's client, plain calls and its task API: a song
 * made with `generate_music` is extended with `extend_track` and exported with `export_track`;
 * each reaches `ready` through the worker (inline, against the fake upstream over real HTTP),
 * waited for with `wait_for_generation` / `wait_for_export` or `tasks/result`, and a ready export
 * comes with resource links to its files. Domain errors, idempotency and another account's track.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { CallToolResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import type { CallToolResult, Progress, Task } from "@modelcontextprotocol/sdk/types.js"
import { exportPriceOf, lyricsPrice, priceOf } from "@lyre/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
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

const connect = async (key: string): Promise<Client> => {
  const client = new Client({ name: "lyre-tools-agent", version: "1.0.0" }, { capabilities: { tasks: {} } })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } }
    })
  )
  await client.listTools()
  return client
}

const callTool = async (client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
  (await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })) as CallToolResult

const structured = (result: CallToolResult): Json => result.structuredContent as Json

/** The envelope of an `isError` result. */
const envelopeOf = (result: CallToolResult): Json => {
  expect(result.isError).toBe(true)
  const [text] = result.content
  if (text?.type !== "text") throw new Error("no text content")
  return JSON.parse(text.text) as Json
}

/** The first message of a task-augmented call: the created task, or the error that refused it. */
const startTask = async (client: Client, name: string, args: Record<string, unknown>) => {
  const stream = client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, { task: {} })
  const first = await stream.next()
  await stream.return()
  if (first.done === true) throw new Error("the stream ended without a message")
  return first.value
}

const rejectionOf = async (promise: Promise<unknown>): Promise<McpError> => {
  const error = await promise.then(
    () => undefined,
    (cause: unknown) => cause
  )
  expect(error).toBeInstanceOf(McpError)
  return error as McpError
}

const balance = async (account: TestAccount): Promise<number> =>
  (await api(server, "GET", "/api/v1/me", { key: account.key })).body.credits?.total as unknown as number

/** A ready song of the account, made and waited for over MCP; answers its first track's id. */
const song = async (client: Client, extra: Record<string, unknown> = {}): Promise<string> => {
  const created = await callTool(client, "generate_music", { ...validSong, ...extra })
  const done = structured(
    await callTool(client, "wait_for_generation", { id: String(structured(created).id), timeout_seconds: 30 })
  )
  expect(done.status).toBe("ready")
  return String(done.tracks?.[0]?.id)
}

const linksOf = (result: CallToolResult) => result.content.filter((item) => item.type === "resource_link")

describe("the tool list and the server card", () => {
  it("describe the song tools with core's prices, their hints and task support", async () => {
    const client = await connect((await createAccount(server)).key)
    const { tools } = await client.listTools()
    const card = (await (await fetch(`${server.url}/.well-known/mcp/server-card.json`)).json()) as {
      tools: typeof tools
    }
    expect(card.tools).toEqual(tools)
    const byName = new Map(tools.map((tool) => [tool.name, tool]))
    const exportTool = byName.get("export_track")
    for (const [format, price] of Object.entries(exportPriceOf))
      expect(exportTool?.description).toContain(`${format} ${price}`)
    for (const [model, price] of Object.entries(priceOf))
      expect(byName.get("extend_track")?.description).toContain(`${model} ${price}`)
    for (const name of ["extend_track", "export_track"]) {
      expect(byName.get(name)?.annotations).toMatchObject({
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true
      })
      expect(byName.get(name)?.execution?.taskSupport).toBe("optional")
      expect(Object.keys(byName.get(name)?.inputSchema.properties ?? {})).toContain("idempotency_key")
    }
    expect(exportTool?.inputSchema.required).toEqual(["track_id", "format"])
    expect(byName.get("extend_track")?.inputSchema.required).toEqual(["track_id"])
    expect(byName.get("wait_for_export")?.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true })
    await client.close()
  })
})

describe("extend_track and export_track as plain calls", () => {
  it("extend_track charges the model's price; wait_for_generation brings the whole songs with their links", async () => {
    const account = await createAccount(server)
    const client = await connect(account.key)
    const trackId = await song(client)
    const before = await balance(account)
    const args = {
      track_id: trackId,
      continue_at: 30,
      lyrics: "[Verse]\nThe city wakes in glass",
      idempotency_key: "extend-once"
    }
    const extended = await callTool(client, "extend_track", args)
    expect(extended.isError ?? false, JSON.stringify(extended.content)).toBe(false)
    expect(structured(extended)).toMatchObject({ status: "pending", model: "aether", credits_used: priceOf.aether })
    expect(String(structured(extended).id)).toMatch(/^gen_/)
    // Retried with its key (a lost answer): the same task, charged once.
    expect(structured(await callTool(client, "extend_track", args)).id).toBe(structured(extended).id)
    expect(await balance(account)).toBe(before - priceOf.aether)

    const done = await callTool(client, "wait_for_generation", {
      id: String(structured(extended).id),
      timeout_seconds: 30
    })
    expect(structured(done).status).toBe("ready")
    const tracks = structured(done).tracks as unknown as Array<Json>
    expect(
      linksOf(done)
        .filter((link) => link.mimeType === "audio/mpeg")
        .map((link) => link.uri)
    ).toEqual(tracks.map((t) => t.audio_url))
    await client.close()
  })

  it("export_track: pending at its price, wait_for_export with progress to ready files as resource links; again free", async () => {
    const account = await createAccount(server)
    const client = await connect(account.key)
    const trackId = await song(client)
    const before = await balance(account)
    const created = await callTool(client, "export_track", {
      track_id: trackId,
      format: "stems",
      idempotency_key: "stems-once"
    })
    const exported = structured(created)
    expect(exported).toMatchObject({
      track_id: trackId,
      format: "stems",
      status: "pending",
      credits_used: exportPriceOf.stems,
      files: []
    })
    expect(String(exported.id)).toMatch(/^exp_/)
    expect(linksOf(created)).toEqual([])
    // The same key answers the same export and charges once.
    const retried = await callTool(client, "export_track", {
      track_id: trackId,
      format: "stems",
      idempotency_key: "stems-once"
    })
    expect(structured(retried).id).toBe(exported.id)
    expect(await balance(account)).toBe(before - exportPriceOf.stems)

    const progress: Array<Progress> = []
    const waited = (await client.callTool(
      { name: "wait_for_export", arguments: { id: String(exported.id), timeout_seconds: 30 } },
      undefined,
      { onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true, timeout: 60_000 }
    )) as CallToolResult
    const ready = structured(waited)
    expect(ready).toMatchObject({ id: exported.id, status: "ready", credits_refunded: 0 })
    const files = ready.files as unknown as Array<{
      name: string
      url: string
      content_type: string
      stem: string | null
    }>
    expect(files.map((file) => file.stem)).toEqual(["vocals", "instrumental"])
    expect(linksOf(waited).map((link) => [link.uri, link.name, link.mimeType])).toEqual(
      files.map((f) => [f.url, f.name, f.content_type])
    )
    for (const file of files) {
      const response = await fetch(file.url)
      expect([response.status, response.headers.get("content-type")]).toEqual([200, file.content_type])
    }
    expect(progress.every((p) => /^Export exp_\w+ is pending after \d+ s\.$/.test(p.message ?? ""))).toBe(true)

    // Asked again for a format it has ready: that export, nothing charged.
    const again = await callTool(client, "export_track", { track_id: trackId, format: "stems" })
    expect(structured(again)).toMatchObject({ id: exported.id, status: "ready" })
    expect(linksOf(again)).toHaveLength(files.length)
    expect(await balance(account)).toBe(before - exportPriceOf.stems)
    await client.close()
  })
})

describe("the song tools as MCP tasks", () => {
  it("answer at once with gen_/exp_ ids; tasks/get, tasks/result and tasks/list read both kinds", async () => {
    const account = await createAccount(server)
    const client = await connect(account.key)
    const trackId = await song(client)

    const statuses: Array<Task> = []
    let created: Task | undefined
    let result: CallToolResult | undefined
    for await (const message of client.experimental.tasks.callToolStream(
      { name: "export_track", arguments: { track_id: trackId, format: "wav" } },
      CallToolResultSchema,
      { timeout: 60_000 }
    )) {
      if (message.type === "taskCreated") created = message.task
      else if (message.type === "taskStatus") statuses.push(message.task)
      else if (message.type === "result") result = message.result
      else throw message.error
    }
    const exportId = String(created?.taskId)
    expect(exportId).toMatch(/^exp_/)
    expect(statuses.at(-1)).toMatchObject({
      taskId: exportId,
      status: "completed",
      statusMessage: `Export ${exportId} is ready: 1 files.`
    })
    expect(result?.structuredContent).toMatchObject({ id: exportId, format: "wav", status: "ready" })
    expect(linksOf(result ?? { content: [] })).toEqual([
      expect.objectContaining({ name: "track.wav", mimeType: "audio/wav" })
    ])

    const extension = await startTask(client, "extend_track", { track_id: trackId, continue_at: 30 })
    if (extension.type !== "taskCreated") throw new Error(`expected a task, got ${extension.type}`)
    const extensionId = extension.task.taskId
    expect(extensionId).toMatch(/^gen_/)
    expect(extension.task.status).toBe("working")
    const extended = await client.experimental.tasks.getTaskResult(extensionId, CallToolResultSchema, {
      timeout: 60_000
    })
    expect(extended.structuredContent).toMatchObject({ id: extensionId, status: "ready" })

    expect(await client.experimental.tasks.getTask(exportId)).toMatchObject({ taskId: exportId, status: "completed" })
    const again = await client.experimental.tasks.getTaskResult(exportId, CallToolResultSchema)
    expect(again.structuredContent).toEqual(result?.structuredContent)
    const waitTask = await startTask(client, "wait_for_export", { id: exportId })
    expect(waitTask).toMatchObject({ type: "taskCreated", task: { taskId: exportId, status: "completed" } })

    // Newest first across both kinds: the extension, the export, the source song.
    const listed = await client.experimental.tasks.listTasks()
    expect(listed.tasks.map((task) => task.taskId.slice(0, 4))).toEqual(["gen_", "exp_", "gen_"])
    expect(listed.tasks.slice(0, 2).map((task) => task.taskId)).toEqual([extensionId, exportId])
    expect(listed.nextCursor).toBeUndefined()
    const error = await rejectionOf(client.experimental.tasks.cancelTask(exportId))
    expect(error.code).toBe(-32602)
    await client.close()
  })

  it("pages tasks/list across generations and exports without losing one", async () => {
    const account = await createAccount(server, { subscription: 10_000, concurrency_limit: 40 })
    const client = await connect(account.key)
    const trackId = await song(client)
    const ids: Array<string> = []
    // Interleaved: a generation, then an export of each format in turn (a second one of a format
    // would be the ready first, answered again).
    for (let i = 0; i < 21; i++) {
      const generation = await api(server, "POST", "/api/v1/music/generations", { key: account.key, body: validSong })
      ids.push(String(generation.body.id))
      const format = ["wav", "midi", "stems", "timed_lyrics"][i / 5]
      if (i % 5 !== 0 || format === undefined) continue
      const exported = await api(server, "POST", `/api/v1/music/tracks/${trackId}/exports`, {
        key: account.key,
        body: { format }
      })
      expect(exported.status).toBe(202)
      ids.push(String(exported.body.id))
    }
    const seen: Array<string> = []
    let cursor: string | undefined
    for (let page = 0; page < 3; page++) {
      const listed = await client.experimental.tasks.listTasks(cursor)
      seen.push(...listed.tasks.map((task) => task.taskId))
      cursor = listed.nextCursor
      if (cursor === undefined) break
    }
    expect(cursor).toBeUndefined()
    expect(new Set(seen).size).toBe(seen.length)
    expect(seen.filter((id) => ids.includes(id)).sort()).toEqual([...ids].sort())
    expect(seen).toHaveLength(ids.length + 1)
    await client.close()
  })
})

describe("a failed export", () => {
  it("is failed and refunded: wait_for_export shows it, tasks/get says why, tasks/result is an error result", async () => {
    const account = await createAccount(server)
    const client = await connect(account.key)
    const title = `Doomed export ${Math.random().toString(36).slice(2, 8)}`
    const trackId = await song(client, { title })
    server.upstream.control.onTrackOf(title, "wav", { outcome: "GENERATE_AUDIO_FAILED" })
    const before = await balance(account)
    const created = structured(await callTool(client, "export_track", { track_id: trackId, format: "wav" }))
    const waited = await callTool(client, "wait_for_export", { id: String(created.id), timeout_seconds: 30 })
    expect(structured(waited)).toMatchObject({
      status: "failed",
      credits_used: exportPriceOf.wav,
      credits_refunded: exportPriceOf.wav,
      error: { code: "provider_error" },
      files: []
    })
    expect(linksOf(waited)).toEqual([])
    const task = await client.experimental.tasks.getTask(String(created.id))
    expect(task.status).toBe("failed")
    expect(task.statusMessage).toMatch(
      new RegExp(`\\(provider_error\\)\\. ${exportPriceOf.wav} credits were refunded\\.$`)
    )
    const result = await client.experimental.tasks.getTaskResult(String(created.id), CallToolResultSchema)
    expect(result.isError).toBe(true)
    expect(result.structuredContent).toMatchObject({ id: created.id, status: "failed" })
    expect(await balance(account)).toBe(before)
    await client.close()
  })
})

describe("refusals", () => {
  it("timed_lyrics of an instrumental track is track_has_no_lyrics, and an extension the balance cannot pay is 402", async () => {
    const account = await createAccount(server, { subscription: priceOf.aether + exportPriceOf.wav })
    const client = await connect(account.key)
    const trackId = await song(client, { instrumental: true, lyrics: undefined })

    const plain = envelopeOf(await callTool(client, "export_track", { track_id: trackId, format: "timed_lyrics" }))
    expect(plain).toMatchObject({
      error: { type: "invalid_request_error", code: "track_has_no_lyrics", param: "format" }
    })
    const asTask = await startTask(client, "export_track", { track_id: trackId, format: "timed_lyrics" })
    if (asTask.type !== "error") throw new Error(`expected an error, got ${asTask.type}`)
    expect(asTask.error.code).toBe(-32602)
    expect(asTask.error.data).toMatchObject({ error: { code: "track_has_no_lyrics" } })

    const poor = envelopeOf(await callTool(client, "extend_track", { track_id: trackId, continue_at: 30 }))
    expect(poor).toMatchObject({ error: { type: "insufficient_credits", code: "insufficient_credits" } })
    const poorTask = await startTask(client, "extend_track", { track_id: trackId, continue_at: 30 })
    if (poorTask.type !== "error") throw new Error(`expected an error, got ${poorTask.type}`)
    expect(poorTask.error.code).toBe(-32012)

    const unknownFormat = await rejectionOf(callTool(client, "export_track", { track_id: trackId, format: "flac" }))
    expect(unknownFormat.code).toBe(-32602)
    expect(await balance(account)).toBe(exportPriceOf.wav)
    await client.close()
  })

  it("another account's track and export are not found on every tool and tasks/ method", async () => {
    const owner = await createAccount(server)
    const ownerClient = await connect(owner.key)
    const trackId = await song(ownerClient)
    const exported = structured(await callTool(ownerClient, "export_track", { track_id: trackId, format: "wav" }))
    const exportId = String(exported.id)

    const other = await createAccount(server)
    const client = await connect(other.key)
    for (const [name, args] of [
      ["extend_track", { track_id: trackId }],
      ["export_track", { track_id: trackId, format: "wav" }]
    ] as const) {
      expect(envelopeOf(await callTool(client, name, args))).toMatchObject({
        error: { type: "not_found", code: "track_not_found", param: "track_id" }
      })
      const refused = await startTask(client, name, args)
      if (refused.type !== "error") throw new Error(`expected an error, got ${refused.type}`)
      expect(refused.error.data).toMatchObject({ error: { code: "track_not_found" } })
    }
    expect(envelopeOf(await callTool(client, "wait_for_export", { id: exportId, timeout_seconds: 1 }))).toMatchObject({
      error: { code: "export_not_found" }
    })
    for (const attempt of [
      () => client.experimental.tasks.getTask(exportId),
      () => client.experimental.tasks.getTaskResult(exportId, CallToolResultSchema),
      () => client.experimental.tasks.cancelTask(exportId)
    ]) {
      const error = await rejectionOf(attempt())
      expect(error.code).toBe(-32602)
      expect(error.data).toMatchObject({ error: { type: "not_found", code: "export_not_found" } })
    }
    expect((await client.experimental.tasks.listTasks()).tasks).toEqual([])
    expect(await balance(other)).toBe(1_000)
    await ownerClient.close()
    await client.close()
  })
})

describe("write_lyrics (the upstream's lyrics endpoint, as the server's writer with PROVIDER=http)", () => {
  it("charges its price, waits to two variations, and as an MCP task tasks/result waits for them", async () => {
    const account = await createAccount(server, { scopes: ["profile", "lyrics:agent"] })
    const client = await connect(account.key)
    const created = structured(await callTool(client, "write_lyrics", { prompt: "a lighthouse keeper's last night" }))
    expect(created).toMatchObject({ status: "pending", credits_used: lyricsPrice })
    const done = structured(await callTool(client, "wait_for_lyrics", { id: String(created.id), timeout_seconds: 30 }))
    expect(done.status).toBe("ready")
    expect(done.variations).toHaveLength(2)

    const started = await startTask(client, "write_lyrics", { prompt: "as a task", sections: ["Verse", "Chorus"] })
    if (started.type !== "taskCreated") throw new Error(`expected a task, got ${started.type}`)
    expect(started.task.taskId).toMatch(/^lyt_/)
    const result = await client.experimental.tasks.getTaskResult(started.task.taskId, CallToolResultSchema, {
      timeout: 60_000
    })
    expect(result.structuredContent).toMatchObject({ id: started.task.taskId, status: "ready" })
    expect(await client.experimental.tasks.getTask(started.task.taskId)).toMatchObject({ status: "completed" })
    expect(await balance(account)).toBe(1_000 - 2 * lyricsPrice)
    await client.close()
  })

  it("a key without lyrics:agent is a 403 insufficient_scope challenge; bad arguments name the field", async () => {
    const key = (await createAccount(server)).key
    const res = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream"
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "write_lyrics", arguments: { prompt: "no scope" } }
      })
    })
    expect(res.status).toBe(403)
    expect(res.headers.get("www-authenticate")).toContain('scope="lyrics:agent"')
    expect(((await res.json()) as Json).error).toMatchObject({ code: "insufficient_scope" })
    const client = await connect(key)
    const invalid = await rejectionOf(callTool(client, "write_lyrics", { prompt: "" }))
    expect(invalid.code).toBe(-32602)
    expect(invalid.data).toMatchObject({ error: { param: "prompt" } })
    await client.close()
  })
})

describe("audio before ready (issue 54): a pending generation's streams in progress and results", {
  timeout: 60_000
}, () => {
  type Link = { uri: string; name: string; mimeType?: string }
  /** What a progress notification carries: the SDK hands its `_meta` on beside the message. */
  type Heard = Progress & { _meta?: { "lyre/previews"?: Array<Link> } }

  /** The progress seen, finishing the song at the first one that offers its streams. */
  const listener = (finish: () => void) => {
    const heard: Array<Heard> = []
    const onprogress = (p: Progress) => {
      heard.push(p as Heard)
      if ((p as Heard)._meta?.["lyre/previews"] !== undefined) finish()
    }
    return { heard, onprogress }
  }

  const expectStreams = (id: string, heard: ReadonlyArray<Heard>) => {
    const streaming = heard.find((p) => p._meta?.["lyre/previews"] !== undefined)
    const links = streaming?._meta?.["lyre/previews"] ?? []
    expect(links.map((link) => [link.name, link.mimeType])).toEqual([
      [`${id}-0-stream.mp3`, "audio/mpeg"],
      [`${id}-1-stream.mp3`, "audio/mpeg"]
    ])
    links.forEach((link, index) => {
      expect(link.uri.startsWith(`${server.url}/files/streams/${id}/${index}.mp3?`)).toBe(true)
    })
    expect(streaming?.message).toMatch(
      new RegExp(
        `^Task ${id} is pending after \\d+ s\\. Hear it while it is made: ${links.map((l) => l.uri.replace(/[?.]/g, "\\$&")).join(" ")}$`
      )
    )
    return links
  }

  it("wait_for_generation's progress names each take's stream and links it; the result links the final files", async () => {
    const account = await createAccount(server)
    const client = await connect(account.key)
    const song = streamingSong(server, "wait")
    const created = await callTool(client, "generate_music", song.request)
    expect(linksOf(created)).toEqual([])
    const id = String(structured(created).id)
    const { heard, onprogress } = listener(song.finish)
    const waited = (await client.callTool(
      { name: "wait_for_generation", arguments: { id, timeout_seconds: 60 } },
      undefined,
      { onprogress, resetTimeoutOnProgress: true, timeout: 90_000 }
    )) as CallToolResult
    expect(structured(waited).status).toBe("ready")
    expectStreams(id, heard)
    const tracks = structured(waited).tracks as unknown as Array<{ audio_url: string }>
    expect(
      linksOf(waited)
        .filter((link) => link.mimeType === "audio/mpeg")
        .map((link) => link.uri)
    ).toEqual(tracks.map((track) => track.audio_url))
    await client.close()
  })

  it("as an MCP task: tasks/get's message and a pending result name the streams; tasks/result's progress links them", async () => {
    const account = await createAccount(server)
    const client = await connect(account.key)
    const song = streamingSong(server, "task")
    const started = await startTask(client, "generate_music", song.request)
    if (started.type !== "taskCreated") throw new Error(`expected a task, got ${started.type}`)
    const id = started.task.taskId
    await expect
      .poll(async () => (await client.experimental.tasks.getTask(id)).statusMessage, { timeout: 30_000, interval: 200 })
      .toContain(`Hear it while it is made: ${server.url}/files/streams/${id}/0.mp3?`)
    const pending = await callTool(client, "get_generation", { id })
    expect(structured(pending).status).toBe("pending")
    const pendingLinks = linksOf(pending)
    expect(pendingLinks.map((link) => link.uri)).toEqual(
      (structured(pending).previews as unknown as Array<{ stream_url: string }>).map((p) => p.stream_url)
    )

    const { heard, onprogress } = listener(song.finish)
    const result = await client.experimental.tasks.getTaskResult(id, CallToolResultSchema, {
      onprogress,
      resetTimeoutOnProgress: true,
      timeout: 90_000
    })
    expect(result.structuredContent).toMatchObject({ id, status: "ready", previews: [] })
    expect(expectStreams(id, heard).map((link) => link.uri)).toEqual(pendingLinks.map((link) => link.uri))
    await client.close()
  })
})
