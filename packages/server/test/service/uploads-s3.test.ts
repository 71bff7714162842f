/**
 * An upload on a bucket (s3rver, checking every signature): the file is kept as an object under
 * the upload's id, nothing is left beside it locally, a refused upload leaves no object, and
 * DELETE takes the object away.
 */
import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"
import { createRequire } from "node:module"
import { randomBase62 } from "@lyre/core"
import { Storage } from "@lyre/worker"
import { ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startS3 } from "../../../worker/test/support/s3.ts"
import type { TestS3 } from "../../../worker/test/support/s3.ts"
import { api, createAccount, startTestServer } from "../support/harness.ts"
import type { Json, TestAccount, TestServer } from "../support/harness.ts"

const { WaveFile } = createRequire(import.meta.url)("wavefile") as typeof import("wavefile")

let s3: TestS3
let server: TestServer
let account: TestAccount
let bucket: ManagedRuntime.ManagedRuntime<Storage, unknown>
const prefix = `uploads-${randomBase62(6).toLowerCase()}`

beforeAll(async () => {
  s3 = await startS3()
  const env = s3.env(prefix)
  server = await startTestServer({
    storageUrl: `s3://${s3.bucket}/${prefix}`,
    s3Endpoint: s3.endpoint,
    s3Region: "us-east-1",
    awsAccessKeyId: env["AWS_ACCESS_KEY_ID"] ?? "",
    awsSecretAccessKey: env["AWS_SECRET_ACCESS_KEY"] ?? ""
  })
  account = await createAccount(server)
  bucket = ManagedRuntime.make(Storage.layerS3(s3.options({ prefix: `${prefix}/` })))
}, 60_000)
afterAll(async () => {
  await bucket?.dispose()
  await server?.close()
  await s3?.close()
})

const objectOf = (key: string) => bucket.runPromise(Storage.use((storage) => storage.stat(key)))

const sine = (seconds: number): Buffer => {
  const wav = new WaveFile()
  const samples = Array.from({ length: Math.round(seconds * 44_100) }, (_, i) => Math.round(8000 * Math.sin(i / 20)))
  wav.fromScratch(1, 44_100, "16", samples)
  return Buffer.from(wav.toBuffer())
}

const upload = (body: Buffer) =>
  fetch(`${server.url}/api/v1/music/uploads`, {
    method: "POST",
    headers: { authorization: `Bearer ${account.key}`, "content-type": "audio/wav" },
    body
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as Json }))

describe("uploads on a bucket", () => {
  it("keeps the file in the bucket, and DELETE removes it", async () => {
    const wav = sine(6)
    const created = await upload(wav)
    expect(created.status).toBe(202)
    const key = `${String(created.body.id)}/source.wav`
    expect(await objectOf(key)).toEqual({ size: wav.length, contentType: "audio/wav" })
    expect(existsSync(join(server.config.dataDir, "files", String(created.body.id)))).toBe(false)
    const deleted = await api(server, "DELETE", `/api/v1/music/uploads/${String(created.body.id)}`, {
      key: account.key
    })
    expect(deleted.status).toBe(200)
    expect(await objectOf(key)).toBeNull()
  })

  it("a refused upload leaves nothing: no upload, no staging file", async () => {
    const refused = await upload(sine(2))
    expect(refused.status).toBe(400)
    expect((await api(server, "GET", "/api/v1/music/uploads", { key: account.key })).body.data).toEqual([])
    expect(readdirSync(join(server.config.dataDir, "upload-staging"))).toEqual([])
  })
})
