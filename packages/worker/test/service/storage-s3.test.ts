/**
 * What only the bucket has: its start check refuses wrong credentials and an unknown bucket with
 * a sentence naming the variable to fix; keys live under the prefix; and a store out of reach
 * fails the calls that need it without stopping the start.
 */
import { createServer } from "node:net"
import type { AddressInfo } from "node:net"
import { HeadObjectCommand, S3Client } from "@aws-sdk/client-s3"
import { Cause, Effect, Exit, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Storage } from "../../src/storage/Storage.ts"
import type { S3StorageOptions } from "../../src/storage/S3Storage.ts"
import { s3Credentials, startS3 } from "../support/s3.ts"
import type { TestS3 } from "../support/s3.ts"

let s3: TestS3
beforeAll(async () => {
  s3 = await startS3()
})
afterAll(() => s3?.close())

const withStorage = <A, E>(options: S3StorageOptions, effect: Effect.Effect<A, E, Storage>) =>
  Effect.runPromiseExit(
    Effect.scoped(
      Layer.build(Storage.layerS3(options)).pipe(Effect.flatMap((context) => Effect.provide(effect, context)))
    )
  )

const failureOf = (exit: Exit.Exit<unknown, unknown>): string => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  return Cause.pretty(exit.cause)
}

describe("the bucket's start check", () => {
  it("refuses a wrong secret, naming AWS_SECRET_ACCESS_KEY", async () => {
    const exit = await withStorage(
      s3.options({ credentials: { ...s3Credentials, secretAccessKey: "not-the-secret" } }),
      Effect.void
    )
    const message = failureOf(exit)
    expect(message).toContain("StorageError")
    expect(message).toContain("SignatureDoesNotMatch")
    expect(message).toContain("check AWS_SECRET_ACCESS_KEY")
  })

  it("refuses an unknown access key, naming AWS_ACCESS_KEY_ID", async () => {
    const exit = await withStorage(
      s3.options({ credentials: { ...s3Credentials, accessKeyId: "NOBODY" } }),
      Effect.void
    )
    expect(failureOf(exit)).toContain("InvalidAccessKeyId): check AWS_ACCESS_KEY_ID")
  })

  it("refuses a bucket that does not exist, naming STORAGE_URL", async () => {
    const exit = await withStorage(s3.options({ bucket: "no-such-bucket" }), Effect.void)
    expect(failureOf(exit)).toContain("there is no bucket no-such-bucket (NoSuchBucket): check STORAGE_URL")
  })

  it("starts against a store out of reach, whose calls then fail: a put with a StorageError, a lookup as a defect", async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as AddressInfo
        probe.close(() => resolve(port))
      })
    })
    const options = s3.options({ endpoint: `http://127.0.0.1:${closed}` })
    expect(Exit.isSuccess(await withStorage(options, Effect.void))).toBe(true)
    const put = await withStorage(
      options,
      Storage.use((storage) => storage.put("gen_far/0.mp3", Buffer.from("x")))
    )
    expect(failureOf(put)).toContain("Could not store gen_far/0.mp3")
    const stat = await withStorage(
      options,
      Storage.use((storage) => storage.stat("gen_far/0.mp3"))
    )
    expect(Exit.isFailure(stat) && Cause.hasDies(stat.cause)).toBe(true)
    expect(failureOf(stat)).toContain("Could not look up gen_far/0.mp3")
  })
})

describe("keys under the prefix", () => {
  it("stores `<prefix><key>`, so two prefixes in one bucket never see each other's objects", async () => {
    const stored = await withStorage(
      s3.options({ prefix: "team-a/" }),
      Storage.use((storage) => storage.put("gen_p/0.mp3", Buffer.from("prefixed")))
    )
    expect(Exit.isSuccess(stored)).toBe(true)
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: "us-east-1",
      forcePathStyle: true,
      credentials: s3Credentials
    })
    try {
      const head = await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: "team-a/gen_p/0.mp3" }))
      expect(head.ContentLength).toBe(8)
      expect(head.ContentType).toBe("audio/mpeg")
    } finally {
      client.destroy()
    }
    const elsewhere = await withStorage(
      s3.options({ prefix: "team-b/" }),
      Storage.use((storage) => storage.stat("gen_p/0.mp3"))
    )
    expect(Exit.isSuccess(elsewhere) && elsewhere.value).toBeNull()
  })
})
