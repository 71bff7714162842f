/**
 * MCP tasks (protocol revision 2025-11-25) through the SDK client's task API: a task-augmented
 * `generate_music` answers at once with Lyre's own task, and `tasks/get`, `tasks/list`,
 * `tasks/cancel` read it from the database on a stateless server. Tasks stay pending on the main
 * server here (no worker); a failed one runs against the fake upstream with the worker inline, and
 * completion against the built-in engine is in mcp-engine.test.ts.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { CallToolResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { priceOf } from "@lyre/core"
import { startFakeUpstream } from "@lyre/fake-upstream"
import { api, createAccount, startTestServer, validSong } from "../../../server/test/support/harness.ts"
import type { Json, TestServer } from "../../../server/test/support/harness.ts"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

const connect = async (key: string, on: TestServer = server): Promise<Client> => {
  const client = new Client({ name: "lyre-task-agent", version: "1.0.0" }, { capabilities: { tasks: {} } })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${on.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } }
    })
  )
  // The client learns which tools take tasks from tools/list.
  await client.listTools()
  return client
}

/** The first message of a task-augmented call: the created task, or the error that refused it. */
const startTask = async (client: Client, name: string, args: Record<string, unknown>) => {
  const stream = client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, {
    task: { ttl: 60_000 }
  })
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

describe("task-augmented tools/call", () => {
  it("declares task support on the paid tools and the waits, and the capability", async () => {
    const account = await createAccount(server)
    const client = await connect(account.key)
    expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } })
    const { tools } = await client.listTools()
    const supported = tools.filter((tool) => tool.execution?.taskSupport === "optional").map((tool) => tool.name)
    expect(supported).toEqual([
      "generate_music",
      "wait_for_generation",
      "extend_track",
      "export_track",
      "wait_for_export",
      "write_lyrics",
      "wait_for_lyrics",
      "upload_audio",
      "wait_for_upload",
      "cover_track",
      "add_vocals",
      "add_instrumental",
      "edit_track"
    ])
    const card = (await (await fetch(`${server.url}/.well-known/mcp/server-card.json`)).json()) as Json
    expect(card["capabilities"]).toMatchObject({ tasks: { requests: { tools: { call: {} } } } })
    await client.close()
  })

  it("answers at once with Lyre's task id, charged once, and tasks/get and tasks/list read it", async () => {
    const account = await createAccount(server, { subscription: 1_000 })
    const client = await connect(account.key)
    const first = await startTask(client, "generate_music", { ...validSong })
    if (first.type !== "taskCreated") throw new Error(`expected a task, got ${first.type}`)
    const { task } = first
    expect(task.taskId).toMatch(/^gen_/)
    expect(task).toMatchObject({ status: "working", ttl: null, pollInterval: 1_000 })
    expect(task.statusMessage).toMatch(new RegExp(`^Task ${task.taskId} is pending after \\d+ s\\.$`))

    // The REST view of the same task: one charge, the price of the default model.
    const rest = await api(server, "GET", `/api/v1/music/generations/${task.taskId}`, { key: account.key })
    expect(rest.body).toMatchObject({ id: task.taskId, status: "pending", credits_used: priceOf.aether })
    const me = await api(server, "GET", "/api/v1/me", { key: account.key })
    expect(me.body.credits).toMatchObject({ total: 1_000 - priceOf.aether })

    const got = await client.experimental.tasks.getTask(task.taskId)
    expect(got).toMatchObject({ taskId: task.taskId, status: "working", createdAt: task.createdAt })
    const listed = await client.experimental.tasks.listTasks()
    expect(listed.tasks.map((t) => t.taskId)).toEqual([task.taskId])

    // A task-augmented wait stands for the same generation.
    const waited = await startTask(client, "wait_for_generation", { id: task.taskId })
    expect(waited).toMatchObject({ type: "taskCreated", task: { taskId: task.taskId, status: "working" } })
    await client.close()
  })

  it("pages tasks/list with the last id as the cursor", async () => {
    const account = await createAccount(server, { subscription: 10_000, concurrency_limit: 30 })
    const client = await connect(account.key)
    const ids: Array<string> = []
    for (let i = 0; i < 21; i++) {
      const created = await api(server, "POST", "/api/v1/music/generations", {
        key: account.key,
        body: { ...validSong, model: "aether" }
      })
      ids.push(String(created.body.id))
    }
    const page = await client.experimental.tasks.listTasks()
    expect(page.tasks).toHaveLength(20)
    expect(page.nextCursor).toBe(page.tasks.at(-1)?.taskId)
    const rest = await client.experimental.tasks.listTasks(page.nextCursor)
    expect(rest.nextCursor).toBeUndefined()
    expect([...page.tasks, ...rest.tasks].map((t) => t.taskId).sort()).toEqual([...ids].sort())
    await client.close()
  })

  it("answers tasks/cancel as A2A does: the generation cannot be cancelled, and it goes on", async () => {
    const account = await createAccount(server)
    const client = await connect(account.key)
    const first = await startTask(client, "generate_music", { ...validSong })
    if (first.type !== "taskCreated") throw new Error(`expected a task, got ${first.type}`)
    const error = await rejectionOf(client.experimental.tasks.cancelTask(first.task.taskId))
    expect(error.code).toBe(-32602)
    expect(error.message).toMatch(/cannot be cancelled/)
    expect((await client.experimental.tasks.getTask(first.task.taskId)).status).toBe("working")
    await client.close()
  })

  it("refuses a create it cannot charge with a JSON-RPC error carrying the envelope, and charges nothing", async () => {
    const account = await createAccount(server, { subscription: priceOf.aether - 1 })
    const client = await connect(account.key)
    const refused = await startTask(client, "generate_music", { ...validSong })
    if (refused.type !== "error") throw new Error(`expected an error, got ${refused.type}`)
    expect(refused.error.code).toBe(-32012)
    expect(refused.error.data).toMatchObject({ error: { type: "insufficient_credits", code: "insufficient_credits" } })

    const invalid = await startTask(client, "generate_music", { style: "synthwave", title: "No lyrics" })
    if (invalid.type !== "error") throw new Error(`expected an error, got ${invalid.type}`)
    expect(invalid.error.code).toBe(-32602)
    expect(invalid.error.data).toMatchObject({ error: { code: "missing_parameter", param: "lyrics" } })

    const me = await api(server, "GET", "/api/v1/me", { key: account.key })
    expect(me.body.credits).toMatchObject({ total: priceOf.aether - 1 })
    expect((await client.experimental.tasks.listTasks()).tasks).toEqual([])
    await client.close()
  })

  it("counts tasks/ methods against the requests-per-minute limit: -32013 with the envelope", async () => {
    const account = await createAccount(server, { requests_per_minute: 2 })
    const client = await connect(account.key)
    const first = await startTask(client, "generate_music", { ...validSong })
    if (first.type !== "taskCreated") throw new Error(`expected a task, got ${first.type}`)
    await client.experimental.tasks.getTask(first.task.taskId)
    const error = await rejectionOf(client.experimental.tasks.getTask(first.task.taskId))
    expect(error.code).toBe(-32013)
    expect(error.data).toMatchObject({ error: { type: "rate_limit_error", code: "rpm_exceeded" } })
    await client.close()
  })

  it("refuses a task-augmented call of a tool that answers at once", async () => {
    const account = await createAccount(server)
    const client = await connect(account.key)
    const refused = await startTask(client, "get_account", {})
    if (refused.type !== "error") throw new Error(`expected an error, got ${refused.type}`)
    expect(refused.error.code).toBe(-32601)
    await client.close()
  })

  it("does not find another account's task through any tasks/ method", async () => {
    const owner = await createAccount(server)
    const other = await createAccount(server)
    const ownerClient = await connect(owner.key)
    const first = await startTask(ownerClient, "generate_music", { ...validSong })
    if (first.type !== "taskCreated") throw new Error(`expected a task, got ${first.type}`)
    const { taskId } = first.task
    const client = await connect(other.key)
    for (const attempt of [
      () => client.experimental.tasks.getTask(taskId),
      () => client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema),
      () => client.experimental.tasks.cancelTask(taskId)
    ]) {
      const error = await rejectionOf(attempt())
      expect(error.code).toBe(-32602)
      expect(error.data).toMatchObject({ error: { type: "not_found", code: "task_not_found" } })
    }
    const waited = await startTask(client, "wait_for_generation", { id: taskId })
    if (waited.type !== "error") throw new Error(`expected an error, got ${waited.type}`)
    expect(waited.error.data).toMatchObject({ error: { code: "task_not_found" } })
    expect((await client.experimental.tasks.listTasks()).tasks).toEqual([])
    await ownerClient.close()
    await client.close()
  })

  it("keeps a plain call as it was: the pending task as the tool's result", async () => {
    const account = await createAccount(server)
    const client = await connect(account.key)
    const result = (await client.callTool({ name: "generate_music", arguments: { ...validSong } })) as CallToolResult
    expect(result.isError ?? false).toBe(false)
    expect(result.structuredContent).toMatchObject({ status: "pending", credits_used: priceOf.aether })
    await client.close()
  })

  it("asks for a credential on tasks/ methods as on tools/call", async () => {
    const response = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tasks/list", params: {} })
    })
    expect(response.status).toBe(401)
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer /)
  })
})

describe("a generation that fails", () => {
  it("is a failed task with the error and the refund, and tasks/result the error result", async () => {
    const upstreamKey = "mcp-tasks-key"
    const upstream = await startFakeUpstream({ apiKey: upstreamKey, audioBytes: 16 * 1024 })
    const failing = await startTestServer({
      provider: "http",
      providerUrl: upstream.url,
      providerApiKey: upstreamKey,
      worker: "inline",
      providerPollSeconds: 0.2
    })
    try {
      upstream.control.onTitle("Doomed", { outcome: "GENERATE_AUDIO_FAILED" })
      const account = await createAccount(failing)
      const client = await connect(account.key, failing)
      const first = await startTask(client, "generate_music", { ...validSong, title: "Doomed" })
      if (first.type !== "taskCreated") throw new Error(`expected a task, got ${first.type}`)
      const { taskId } = first.task
      const until = Date.now() + 20_000
      let task = await client.experimental.tasks.getTask(taskId)
      while (task.status === "working" && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 200))
        task = await client.experimental.tasks.getTask(taskId)
      }
      expect(task.status).toBe("failed")
      expect(task.statusMessage).toMatch(/\(provider_error\)\. 50 credits were refunded\.$/)
      expect(task.pollInterval).toBeUndefined()
      const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)
      expect(result.isError).toBe(true)
      const cancel = await rejectionOf(client.experimental.tasks.cancelTask(taskId))
      expect(cancel.code).toBe(-32602)
      expect(cancel.message).toMatch(/terminal status: failed/)
      expect(result.structuredContent).toMatchObject({
        id: taskId,
        status: "failed",
        credits_refunded: 50,
        error: { code: "provider_error" }
      })
      const me = await api(failing, "GET", "/api/v1/me", { key: account.key })
      expect(me.body.credits).toMatchObject({ total: 1_000 })
      await client.close()
    } finally {
      await failing.close()
      await upstream.close()
    }
  }, 60_000)
})
