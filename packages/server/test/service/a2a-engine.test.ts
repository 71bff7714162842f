/**
 * An A2A agent against the built-in engine, end to end: a text-only message streamed with the
 * SDK's client becomes an instrumental rendered by the engine, and the stream ends with two
 * artifacts whose file parts are playable MP3s served by Lyre.
 */
import type { Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent } from "@a2a-js/sdk-0.3"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { a2aClient, textMessage } from "../support/a2a.ts"
import { createAccount, startTestServer } from "../support/harness.ts"
import type { TestServer } from "../support/harness.ts"

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

describe("A2A with the built-in engine", () => {
  it("streams a text-only message to a completed instrumental with two hosted MP3s", async () => {
    const account = await createAccount(server)
    const client = await a2aClient(server, account.key)
    const events: Array<Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent> = []
    for await (const event of client.sendMessageStream(textMessage("slow ambient piano with soft pads, 70 bpm"))) {
      events.push(event as Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent)
    }
    // A render can take longer than the keep-alive: `working` status-updates may come before the end.
    const working = events.filter((e) => e.kind === "status-update" && !e.final)
    expect(working.every((e) => e.kind === "status-update" && e.status.state === "working")).toBe(true)
    expect(events.filter((e) => !working.includes(e)).map((e) => e.kind)).toEqual([
      "task",
      "artifact-update",
      "artifact-update",
      "status-update"
    ])
    const last = events.at(-1)
    expect(last).toMatchObject({ kind: "status-update", final: true, status: { state: "completed" } })
    for (const event of events.filter((e): e is TaskArtifactUpdateEvent => e.kind === "artifact-update")) {
      const [file, data] = event.artifact.parts
      expect(data).toMatchObject({ kind: "data", data: { title: "Slow Ambient Piano With Soft", lyrics: null } })
      if (file?.kind !== "file" || !("uri" in file.file)) throw new Error("no file part")
      expect(file.file.mimeType).toBe("audio/mpeg")
      const audio = await fetch(file.file.uri)
      expect(audio.headers.get("content-type")).toBe("audio/mpeg")
      expect((await audio.arrayBuffer()).byteLength).toBeGreaterThan(100_000)
    }
  }, 180_000)
})
