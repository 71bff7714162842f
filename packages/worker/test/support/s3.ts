/**
 * A real S3-protocol server for the tests: s3rver (the maintained `@20minutes` fork), which checks
 * every request's SigV4 signature against its one key pair and keeps objects on disk. It listens
 * on a loopback port and holds one bucket.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import S3rver from "@20minutes/s3rver"
import type { S3StorageOptions } from "../../src/storage/S3Storage.ts"

/** s3rver's built-in key pair: the only one it accepts. */
export const s3Credentials = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" } as const

export interface TestS3 {
  readonly endpoint: string
  readonly bucket: string
  /** Options for `Storage.layerS3` against this server, with any field replaced. */
  readonly options: (overrides?: Partial<S3StorageOptions>) => S3StorageOptions
  /** The environment `STORAGE_URL` and friends for a process using this server. */
  readonly env: (prefix: string) => Record<string, string>
  readonly close: () => Promise<void>
}

export const startS3 = async (bucket = "lyre-test"): Promise<TestS3> => {
  const directory = mkdtempSync(join(tmpdir(), "lyre-s3-"))
  const server = new S3rver({
    address: "127.0.0.1",
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }]
  })
  const { port } = await server.run()
  const endpoint = `http://127.0.0.1:${port}`
  return {
    endpoint,
    bucket,
    options: (overrides = {}) => ({
      bucket,
      prefix: "",
      endpoint,
      region: "us-east-1",
      credentials: s3Credentials,
      ...overrides
    }),
    env: (prefix) => ({
      STORAGE_URL: `s3://${bucket}/${prefix}`,
      S3_ENDPOINT: endpoint,
      S3_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: s3Credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: s3Credentials.secretAccessKey
    }),
    close: async () => {
      await server.close()
      rmSync(directory, { recursive: true, force: true })
    }
  }
}
