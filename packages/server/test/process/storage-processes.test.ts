/**
 * Many machines, one bucket: a worker on one `DATA_DIR` re-hosts a track into a real S3-protocol
 * server (s3rver, checking every signature), and an API process on another `DATA_DIR` serves the
 * same file at `/files/...` with ranges, streamed from the bucket. Neither keeps a local copy.
 *
 * On PostgreSQL the worker is a `pnpm worker` process sharing the API's database, as in
 * production. On the embedded default (PGlite, one process owns the database) it is the inline
 * worker of a `pnpm start` process, and the API here serves the file without any database row:
 * the key alone finds it.
 *
 * A process started with a wrong secret stops at once, saying which variable to check; one whose
 * bucket is out of reach starts, and answers its file requests 503 with `Retry-After`.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { randomBase62 } from "@lyre/core"
import { Storage } from "@lyre/worker"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startS3 } from "../../../worker/test/support/s3.ts"
import type { TestS3 } from "../../../worker/test/support/s3.ts"
import { storageOf } from "../../src/config.ts"
import { expectServedWithRanges } from "../support/files.ts"
import { api, backend, createAccount, startTestServer, validSong } from "../support/harness.ts"
import type { TestServer } from "../support/harness.ts"
import { adminCall, freePort, spawnEntry } from "../support/processes.ts"
import type { Spawned } from "../support/processes.ts"
import { signingEnv } from "../support/signing.ts"

let s3: TestS3
/** The API process: its own DATA_DIR, files from the bucket. */
let server: TestServer
const prefix = `machines-${randomBase62(6).toLowerCase()}`
const spawned: Array<Spawned> = []
const dataDirs: Array<string> = []

const s3Overrides = () => ({
  storageUrl: `s3://${s3.bucket}/${prefix}`,
  s3Endpoint: s3.endpoint,
  s3Region: "us-east-1",
  awsAccessKeyId: s3.env(prefix)["AWS_ACCESS_KEY_ID"] ?? "",
  awsSecretAccessKey: s3.env(prefix)["AWS_SECRET_ACCESS_KEY"] ?? ""
})

beforeAll(async () => {
  s3 = await startS3()
  server = await startTestServer({ ...s3Overrides(), worker: "off" })
})
afterAll(async () => {
  await Promise.all(spawned.map((process) => process.stop()))
  await server?.close()
  await s3?.close()
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true })
})

const newDataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "lyre-machine-"))
  dataDirs.push(dir)
  return dir
}

/** The environment of a process on another machine: its own DATA_DIR, the same bucket and provider. */
const machineEnv = (dataDir: string): Record<string, string> => ({
  ...s3.env(prefix),
  DATA_DIR: dataDir,
  PROVIDER: "http",
  PROVIDER_URL: server.upstream.url,
  PROVIDER_API_KEY: server.config.providerApiKey ?? "",
  PROVIDER_POLL_SECONDS: "0.2",
  LOG_LEVEL: "info"
})

const waitReady = async (baseUrl: string, key: string, id: string): Promise<Record<string, unknown>> => {
  const until = Date.now() + 20_000
  for (;;) {
    const response = await fetch(`${baseUrl}/api/v1/music/generations/${id}`, {
      headers: { authorization: `Bearer ${key}` }
    })
    const task = (await response.json()) as Record<string, unknown>
    if (task["status"] !== "pending" || Date.now() > until) return task
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** Re-hosts one song on the other machine; answers the path of its first track's audio. */
const rehostElsewhere = async (workerDataDir: string): Promise<string> => {
  if (backend.database === "postgres") {
    const worker = spawnEntry("worker-main", {
      ...machineEnv(workerDataDir),
      DATABASE_URL: String(server.config.databaseUrl),
      SECRET_KEY: String(server.config.secretKey),
      ...(await signingEnv()),
      PUBLIC_URL: server.url
    })
    spawned.push(worker)
    await worker.waitFor("worker starting")
    const account = await createAccount(server)
    const created = await api(server, "POST", "/api/v1/music/generations", { key: account.key, body: validSong })
    expect(created.status).toBe(202)
    const task = await waitReady(server.url, account.key, String(created.body.id))
    expect(task["status"]).toBe("ready")
    const tracks = task["tracks"] as ReadonlyArray<Record<string, unknown>>
    return new URL(String(tracks[0]?.["audio_url"])).pathname
  }
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const adminToken = randomBase62(32)
  const service = spawnEntry("main", {
    ...machineEnv(workerDataDir),
    PORT: String(port),
    ADMIN_TOKEN: adminToken,
    WORKER: "inline"
  })
  spawned.push(service)
  await service.waitFor('"msg":"listening"')
  const admin = (path: string, body: unknown) => adminCall(url, adminToken, "POST", path, body)
  const account = await admin("/accounts", { email: "machines@example.test", plan: "pro", subscription_credits: 1_000 })
  const key = String(
    (await admin(`/accounts/${String(account["id"])}/keys`, { name: "t", scopes: ["music:generate"] }))["key"]
  )
  const created = await fetch(`${url}/api/v1/music/generations`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(validSong)
  })
  expect(created.status).toBe(202)
  const task = await waitReady(url, key, String(((await created.json()) as Record<string, unknown>)["id"]))
  expect(task["status"]).toBe("ready")
  const tracks = task["tracks"] as ReadonlyArray<Record<string, unknown>>
  return new URL(String(tracks[0]?.["audio_url"])).pathname
}

describe("files shared through the bucket", () => {
  it("a worker on one DATA_DIR re-hosts, an API process on another serves the file with ranges", {
    timeout: 60_000
  }, async () => {
    const workerDataDir = newDataDir()
    const path = await rehostElsewhere(workerDataDir)
    expect(path).toMatch(/^\/files\/gen_[0-9A-Za-z]+\/0\.mp3$/)

    const bytes = await expectServedWithRanges(`${server.url}${path}`, 16 * 1024)

    const missing = await fetch(`${server.url}/files/gen_nothing/0.mp3`)
    expect(missing.status).toBe(404)
    await missing.arrayBuffer()

    // The bytes live in the bucket, under the prefix, and on neither machine's disk.
    const settings = storageOf(server.config)
    if (!("bucket" in settings) || settings.bucket === null) throw new Error("the API process has no bucket")
    const stored = await Effect.runPromise(
      Effect.scoped(
        Layer.build(Storage.layerS3(settings.bucket)).pipe(
          Effect.flatMap((context) =>
            Effect.provide(
              Storage.use((storage) => storage.stat(path.slice("/files/".length))),
              context
            )
          )
        )
      )
    )
    expect(stored).toEqual({ size: bytes.length, contentType: "audio/mpeg" })
    expect(settings.bucket.prefix).toBe(`${prefix}/`)
    expect(existsSync(join(workerDataDir, "files"))).toBe(false)
    expect(existsSync(join(server.config.dataDir, "files"))).toBe(false)
  })

  it("a process given a wrong secret does not start, and says to check AWS_SECRET_ACCESS_KEY", {
    timeout: 60_000
  }, async () => {
    const env = {
      ...machineEnv(newDataDir()),
      AWS_SECRET_ACCESS_KEY: "not-the-secret",
      PORT: String(await freePort()),
      ...(backend.database === "postgres"
        ? {
            DATABASE_URL: String(server.config.databaseUrl),
            SECRET_KEY: String(server.config.secretKey),
            ...(await signingEnv()),
            WORKER: "off"
          }
        : {})
    }
    const service = spawnEntry("main", env)
    spawned.push(service)
    await service.waitFor("check AWS_SECRET_ACCESS_KEY")
    await new Promise<void>((resolve) =>
      service.child.exitCode === null ? service.child.once("exit", () => resolve()) : resolve()
    )
    expect(service.child.exitCode).not.toBe(0)
    expect(service.output()).toContain("SignatureDoesNotMatch")
    expect(service.output()).not.toContain('"msg":"listening"')
  })

  it("a bucket out of reach: the API starts, and a file request is 503 service_unavailable with Retry-After", {
    timeout: 60_000
  }, async () => {
    const away = await startTestServer({
      ...s3Overrides(),
      s3Endpoint: `http://127.0.0.1:${await freePort()}`,
      worker: "off"
    })
    try {
      const answer = await fetch(`${away.url}/files/gen_away/0.mp3`, { headers: { range: "bytes=0-9" } })
      expect(answer.status).toBe(503)
      expect(answer.headers.get("retry-after")).toBe("1")
      const body = (await answer.json()) as { error: Record<string, unknown> }
      expect(body.error).toMatchObject({
        type: "service_unavailable",
        code: "service_unavailable",
        retry_after_seconds: 1
      })
      const health = await fetch(`${away.url}/healthz`)
      expect(health.status).toBe(200)
      await health.arrayBuffer()
    } finally {
      await away.close()
    }
  })
})
