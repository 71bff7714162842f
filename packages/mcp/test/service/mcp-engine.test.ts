/**
 * An agent's whole errand against the built-in engine: generate, wait with progress
 * notifications, and receive the ready song with links to its MP3s and covers; and the same
 * errand as an MCP task, followed by the SDK client's task API to its result. A pending message
 * may end with the takes' stream addresses once the engine's first audio is out (issue 54).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"
import type { CallToolResult, Progress, Task } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createAccount, startTestServer } from "../../../server/test/support/harness.ts"
import type { Json, TestServer } from "../../../server/test/support/harness.ts"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer({
    provider: "embedded",
    providerUrl: null,
    providerApiKey: null,
    worker: "inline",
    providerPollSeconds: 2
  })
})
afterAll(() => server.close())

describe("generate -> wait -> ready over MCP", () => {
  it("waits with progress notifications and returns the song with resource links", async () => {
    const account = await createAccount(server)
    const client = new Client({ name: "lyre-test-agent", version: "1.0.0" })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${account.key}` } }
      })
    )
    await client.listTools()
    const created = (await client.callTool({
      name: "generate_music",
      arguments: { style: "lofi hip hop, 80 bpm, piano", title: "Rain on Glass", lyrics: "[Verse]\nRain on the glass" }
    })) as CallToolResult
    const id = String((created.structuredContent as Json).id)

    const progress: Array<Progress> = []
    let result: CallToolResult | undefined
    // A render takes seconds to a minute on a busy machine; a wait lasts at most 120 s.
    for (let attempt = 0; attempt < 2; attempt++) {
      result = (await client.callTool(
        { name: "wait_for_generation", arguments: { id, timeout_seconds: 120 } },
        undefined,
        { onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true, timeout: 150_000 }
      )) as CallToolResult
      if (String((result.structuredContent as Json).status) !== "pending") break
    }
    const task = result?.structuredContent as Json
    expect(task.status).toBe("ready")
    expect(progress.length).toBeGreaterThan(0)
    expect(progress.every((p) => p.total === 120 && typeof p.message === "string")).toBe(true)
    const values = progress.map((p) => p.progress)
    expect(values).toEqual([...values].sort((a, b) => a - b))

    const tracks = task.tracks as unknown as Array<Json>
    const links = (result?.content ?? []).filter((item) => item.type === "resource_link")
    expect(links.filter((link) => link.mimeType === "audio/mpeg").map((link) => link.uri)).toEqual(
      tracks.map((t) => t.audio_url)
    )
    expect(links.filter((link) => link.mimeType === "image/png").map((link) => link.uri)).toEqual(
      tracks.map((t) => t.image_url)
    )
    const audio = await fetch(String(tracks[0]?.audio_url))
    expect(audio.headers.get("content-type")).toBe("audio/mpeg")
    await client.close()
  }, 300_000)

  it("runs generate_music as a task: created at once, polled with tasks/get, the song from tasks/result", async () => {
    const account = await createAccount(server)
    const client = new Client({ name: "lyre-task-agent", version: "1.0.0" }, { capabilities: { tasks: {} } })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${account.key}` } }
      })
    )
    await client.listTools()
    const statuses: Array<Task> = []
    let created: Task | undefined
    let result: CallToolResult | undefined
    for await (const message of client.experimental.tasks.callToolStream(
      {
        name: "generate_music",
        arguments: { style: "lofi hip hop, 80 bpm, piano", title: "Rain on Glass", instrumental: true }
      },
      CallToolResultSchema,
      { timeout: 150_000 }
    )) {
      if (message.type === "taskCreated") created = message.task
      else if (message.type === "taskStatus") statuses.push(message.task)
      else if (message.type === "result") result = message.result
      else throw message.error
    }
    expect(created?.taskId).toMatch(/^gen_/)
    expect(created?.status).toBe("working")
    expect(statuses.at(-1)).toMatchObject({ taskId: created?.taskId, status: "completed" })
    expect(
      statuses
        .filter((task) => task.status === "working")
        .every((task) =>
          /is pending after \d+ s\.( Hear it while it is made: \S+( \S+)*)?$/.test(task.statusMessage ?? "")
        )
    ).toBe(true)
    const task = result?.structuredContent as Json
    expect(task).toMatchObject({ id: created?.taskId, status: "ready" })
    expect(result?._meta?.["io.modelcontextprotocol/related-task"]).toEqual({ taskId: created?.taskId })
    const links = (result?.content ?? []).filter((item) => item.type === "resource_link")
    expect(links.filter((link) => link.mimeType === "audio/mpeg")).toHaveLength(2)
    // tasks/result answers again on any request, from the database.
    const again = await client.experimental.tasks.getTaskResult(String(created?.taskId), CallToolResultSchema)
    expect(again.structuredContent).toEqual(task)

    // Asked while the task still works, tasks/result waits for the end, with the wait tool's progress.
    const stream = client.experimental.tasks.callToolStream(
      {
        name: "generate_music",
        arguments: { style: "ambient drone, 60 bpm", title: "Still Water", instrumental: true }
      },
      CallToolResultSchema,
      { task: {} }
    )
    const first = await stream.next()
    await stream.return()
    const second = first.done !== true && first.value.type === "taskCreated" ? first.value.task : undefined
    expect(second?.status).toBe("working")
    const waitProgress: Array<Progress> = []
    const waited = await client.experimental.tasks.getTaskResult(String(second?.taskId), CallToolResultSchema, {
      timeout: 150_000,
      resetTimeoutOnProgress: true,
      onprogress: (p) => waitProgress.push(p)
    })
    expect(waited.structuredContent).toMatchObject({ id: second?.taskId, status: "ready" })
    expect(waited._meta?.["io.modelcontextprotocol/related-task"]).toEqual({ taskId: second?.taskId })
    expect(waitProgress.length).toBeGreaterThan(0)
    expect(
      waitProgress.every(
        (p) =>
          p.total === undefined &&
          /^Task gen_\w+ is pending after \d+ s\.( Hear it while it is made: \S+( \S+)*)?$/.test(p.message ?? "")
      )
    ).toBe(true)
    await client.close()
  }, 300_000)
})
