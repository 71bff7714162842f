/**
 * The storage settings: unset keeps files under DATA_DIR; `STORAGE_URL=s3://BUCKET/PREFIX` with
 * its S3 variables names a bucket; every bad value stops the start with a sentence naming the
 * variable. `createLyre` takes the same settings as options.
 */
import { Exit } from "effect"
import { describe, expect, it } from "vitest"
import { storageOf } from "../../src/config.ts"
import { configFromOptions } from "../../src/lyre.ts"
import { configFailureOf, loadConfigFrom } from "../support/config.ts"

const loaded = async (env: Record<string, string>) => {
  const exit = await loadConfigFrom(env)
  if (!Exit.isSuccess(exit)) throw new Error(JSON.stringify(exit.cause))
  return exit.value
}

describe("storage settings", () => {
  it("keep files under DATA_DIR when STORAGE_URL is unset", async () => {
    const config = await loaded({})
    expect(config).toMatchObject({
      storageUrl: null,
      s3Endpoint: null,
      s3Region: null,
      awsAccessKeyId: null,
      awsSecretAccessKey: null
    })
    expect(storageOf(config)).toEqual({ bucket: null })
  })

  it("name a bucket, its prefix, an endpoint addressed path-style, the region and the key pair", async () => {
    const config = await loaded({
      STORAGE_URL: "s3://lyre-media/prod/files/",
      S3_ENDPOINT: "https://account.r2.cloudflarestorage.com/",
      S3_REGION: "auto",
      AWS_ACCESS_KEY_ID: "AKIDEXAMPLE",
      AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
    })
    expect(storageOf(config)).toEqual({
      bucket: {
        bucket: "lyre-media",
        prefix: "prod/files/",
        endpoint: "https://account.r2.cloudflarestorage.com",
        region: "auto",
        credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" }
      }
    })
  })

  it("default to AWS's endpoint in us-east-1, no prefix, and the SDK's credential chain", async () => {
    expect(storageOf(await loaded({ STORAGE_URL: "s3://lyre-media" }))).toEqual({
      bucket: { bucket: "lyre-media", prefix: "", endpoint: null, region: "us-east-1", credentials: null }
    })
  })

  it("are options of createLyre too", async () => {
    const config = await configFromOptions({
      publicUrl: "https://lyre.example",
      storageUrl: "s3://lyre-media/x",
      s3Endpoint: "http://127.0.0.1:9000",
      awsAccessKeyId: "minio",
      awsSecretAccessKey: "minio-secret"
    })
    expect(storageOf(config)).toMatchObject({
      bucket: { bucket: "lyre-media", prefix: "x/", endpoint: "http://127.0.0.1:9000" }
    })
  })

  const bad: ReadonlyArray<readonly [string, Record<string, string>, string]> = [
    ["a URL of another scheme", { STORAGE_URL: "https://lyre-media/files" }, "STORAGE_URL must be s3://BUCKET"],
    ["a bucket name S3 refuses", { STORAGE_URL: "s3://Lyre_Media" }, "STORAGE_URL must be s3://BUCKET"],
    ["a bucket name too short", { STORAGE_URL: "s3://ab" }, "STORAGE_URL must be s3://BUCKET"],
    [
      "an endpoint that is not http(s)",
      { STORAGE_URL: "s3://lyre-media", S3_ENDPOINT: "ftp://store" },
      "S3_ENDPOINT must be"
    ],
    [
      "an endpoint with a path",
      { STORAGE_URL: "s3://lyre-media", S3_ENDPOINT: "https://store/bucket" },
      "S3_ENDPOINT must be"
    ],
    ["a region that is not a name", { STORAGE_URL: "s3://lyre-media", S3_REGION: "US East" }, "S3_REGION must be"],
    [
      "a key id without its secret",
      { STORAGE_URL: "s3://lyre-media", AWS_ACCESS_KEY_ID: "AKID" },
      "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together"
    ],
    [
      "a secret without its key id",
      { STORAGE_URL: "s3://lyre-media", AWS_SECRET_ACCESS_KEY: "s" },
      "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together"
    ],
    ["an endpoint without STORAGE_URL", { S3_ENDPOINT: "https://store" }, "S3_ENDPOINT is set but STORAGE_URL is not"]
  ]
  it.each(bad)("refuse %s, naming the variable", async (_name, env, message) => {
    expect(await configFailureOf(env)).toContain(message)
  })
})
