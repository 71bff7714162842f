/**
 * Agents' song tools against the built-in engine (the embedded default): one song rendered, then
 * exported and extended over MCP (the SDK client's task API) and exported over A2A 1.0 (the 1.x
 * client), each to files the service serves with the media types the results name.
 */
import { randomUUID } from "node:crypto"
import { Role, TaskState } from "@a2a-js/sdk"
import type { Message, Task as A2aTask } from "@a2a-js/sdk"
import { ClientFactory, JsonRpcTransportFactory } from "@a2a-js/sdk/client"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"
import type { CallToolResult, Task } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, createAccount, startTestServer } from "../support/harness.ts"
import type { Json, TestAccount, TestServer } from "../support/harness.ts"

let server: TestServer
let account: TestAccount
let trackId: string
let duration: number
beforeAll(async () => {
  server = await startTestServer({
    provider: "embedded",
    // Half a minute: the voice comes in, and the tests read lengths and sung words past 8 s.
    engineMaxSeconds: 30,
    providerUrl: null,
    providerApiKey: null,
    worker: "inline",
    providerPollSeconds: 1
  })
  account = await createAccount(server, { subscription: 1_000 })
  const created = await api(server, "POST", "/api/v1/music/generations", {
    key: account.key,
    body: {
      style: "indie pop, 100 bpm",
      title: "Paper Boats",
      lyrics: "[Verse]\nPaper boats on the river\n[Chorus]\nCarry me home"
    }
  })
  const until = Date.now() + 200_000
  let body = created.body
  while (String(body.status) === "pending" && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 500))
    body = (await api(server, "GET", `/api/v1/music/generations/${String(created.body.id)}`, { key: account.key })).body
  }
  expect(body.status).toBe("ready")
  trackId = String(body.tracks?.[0]?.id)
  duration = Number(body.tracks?.[0]?.duration)
}, 240_000)
afterAll(() => server.close())

const mcpClient = async (): Promise<Client> => {
  const client = new Client({ name: "lyre-engine-tools-agent", version: "1.0.0" }, { capabilities: { tasks: {} } })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${account.key}` } }
    })
  )
  await client.listTools()
  return client
}

/** A task-augmented call followed by the SDK to its result. */
const runAsTask = async (client: Client, name: string, args: Record<string, unknown>) => {
  let created: Task | undefined
  let result: CallToolResult | undefined
  for await (const message of client.experimental.tasks.callToolStream(
    { name, arguments: args },
    CallToolResultSchema,
    { timeout: 200_000 }
  )) {
    if (message.type === "taskCreated") created = message.task
    else if (message.type === "result") result = message.result
    else if (message.type === "error") throw message.error
  }
  return { created, result }
}

describe("song tools for agents on the built-in engine", () => {
  it("MCP: export_track midi as a task to a Standard MIDI File linked as audio/midi", async () => {
    const client = await mcpClient()
    const { created, result } = await runAsTask(client, "export_track", { track_id: trackId, format: "midi" })
    expect(created?.taskId).toMatch(/^exp_/)
    expect(result?.structuredContent).toMatchObject({ id: created?.taskId, status: "ready", format: "midi" })
    const links = (result?.content ?? []).filter((item) => item.type === "resource_link")
    // A MIDI file has no place for a manifest: its content credentials come beside it (record 0123).
    expect(links).toEqual([
      expect.objectContaining({ name: "track.mid", mimeType: "audio/midi" }),
      expect.objectContaining({ name: "track.mid.c2pa", mimeType: "application/c2pa" })
    ])
    const link = links[0]
    const midi = await fetch(link?.type === "resource_link" ? link.uri : "")
    expect(midi.headers.get("content-type")).toBe("audio/midi")
    expect(
      Buffer.from(await midi.arrayBuffer())
        .subarray(0, 4)
        .toString("latin1")
    ).toBe("MThd")
    await client.close()
  }, 200_000)

  it("MCP: extend_track as a task to whole songs longer than continue_at by 20 s", async () => {
    const client = await mcpClient()
    const continueAt = Math.min(20, Math.floor(duration / 2))
    const { created, result } = await runAsTask(client, "extend_track", { track_id: trackId, continue_at: continueAt })
    expect(created?.taskId).toMatch(/^gen_/)
    const task = result?.structuredContent as Json
    expect(task.status).toBe("ready")
    for (const track of task.tracks as unknown as Array<Json>)
      expect(Number(track.duration)).toBeGreaterThanOrEqual(continueAt + 20)
    await client.close()
  }, 240_000)

  it("A2A 1.0: export_track timed_lyrics completes with the .lrc, WebVTT and JSON files as file parts", async () => {
    const fetchImpl: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers)
      headers.set("authorization", `Bearer ${account.key}`)
      return fetch(input, { ...init, headers })
    }
    const client = await new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })] }).createFromUrl(
      server.url
    )
    const message: Message = {
      messageId: randomUUID(),
      contextId: "",
      taskId: "",
      role: Role.ROLE_USER,
      parts: [
        {
          content: { $case: "data", value: { operation: "export_track", track_id: trackId, format: "timed_lyrics" } },
          metadata: undefined,
          filename: "",
          mediaType: ""
        }
      ],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: []
    }
    let task = (await client.sendMessage({
      tenant: "",
      message,
      configuration: undefined,
      metadata: undefined
    })) as A2aTask
    const until = Date.now() + 120_000
    while (task.status?.state === TaskState.TASK_STATE_WORKING && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 500))
      task = await client.getTask({ tenant: "", id: task.id, historyLength: undefined })
    }
    expect(task.id).toMatch(/^exp_/)
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    const parts = task.artifacts[0]?.parts ?? []
    expect(parts.slice(0, 3).map((part) => [part.filename, part.mediaType])).toEqual([
      ["lyrics.lrc", "text/plain; charset=utf-8"],
      ["lyrics.vtt", "text/vtt; charset=utf-8"],
      ["lyrics.json", "application/json"]
    ])
    const data = parts[3]?.content
    const words = data?.$case === "data" ? (data.value["timed_lyrics"] as Array<{ text: string; start: number }>) : []
    expect(words.length).toBeGreaterThan(4)
    const vtt = parts[1]?.content
    expect(await (await fetch(vtt?.$case === "url" ? vtt.value : "")).text()).toMatch(/^WEBVTT/)
  }, 200_000)
})
