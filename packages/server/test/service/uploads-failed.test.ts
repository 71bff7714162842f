/**
 * Listening that cannot finish: an upload whose file is gone before it is listened to moves to
 * `failed` once, with `upload.failed` written beside it; a second worker's tick changes nothing.
 * The listening worker is run here by hand on the server's own services.
 */
import { rmSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { Effect } from "effect"
import { ListenWorker } from "@lyre/worker"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, createAccount, startTestServer } from "../support/harness.ts"
import type { Json, TestAccount, TestServer } from "../support/harness.ts"

const { WaveFile } = createRequire(import.meta.url)("wavefile") as typeof import("wavefile")

let server: TestServer
let account: TestAccount
beforeAll(async () => {
  server = await startTestServer()
  account = await createAccount(server)
}, 60_000)
afterAll(() => server.close())

const tick = () =>
  server.runtime.runPromise(
    Effect.scoped(
      ListenWorker.use((worker) => worker.tick).pipe(
        Effect.provide(ListenWorker.layer({ workerId: "test-listener", pollSeconds: 1, leaseSeconds: 60 }))
      )
    )
  )

describe("listening that cannot finish", () => {
  it("an upload whose file is gone is failed once, with upload.failed", async () => {
    const wav = new WaveFile()
    wav.fromScratch(
      1,
      44_100,
      "16",
      Array.from({ length: 44_100 * 6 }, (_, i) => Math.round(6000 * Math.sin(i / 25)))
    )
    const created = await fetch(`${server.url}/api/v1/music/uploads`, {
      method: "POST",
      headers: { authorization: `Bearer ${account.key}`, "content-type": "audio/wav" },
      body: Buffer.from(wav.toBuffer())
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as Json }))
    expect(created.status).toBe(202)
    const id = String(created.body.id)
    rmSync(join(server.config.dataDir, "files", id), { recursive: true, force: true })
    expect(await tick()).toBe(1)
    const failed = (await api(server, "GET", `/api/v1/music/uploads/${id}`, { key: account.key })).body
    expect(failed.status).toBe("failed")
    expect(failed.error?.code).toBe("listening_failed")
    expect(failed.track_id).toBeNull()
    expect(await tick()).toBe(0)
    const events = await server.query<{ type: string }>(
      "select type from outbox_events where payload ->> 'id' = $1",
      id
    )
    expect(events.map((e) => e.type)).toEqual(["upload.failed"])
  })
})
