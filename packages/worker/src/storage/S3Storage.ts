/**
 * The storage port on an S3-compatible bucket (AWS S3, Cloudflare R2, MinIO) through the AWS SDK
 * for JavaScript v3, so API processes and workers on different machines share every file. Keys
 * are the port's keys under the bucket's prefix; the content type is still the key's extension.
 *
 * A write lands whole or not at all: a small body is one PutObject, a larger stream a multipart
 * upload that becomes visible only when completed and is aborted on any failure (a process
 * killed mid-upload leaves invisible parts, which the bucket's lifecycle rule clears).
 */
import { PassThrough, Readable, Transform } from "node:stream"
import { pipeline } from "node:stream/promises"
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException
} from "@aws-sdk/client-s3"
import { Upload } from "@aws-sdk/lib-storage"
import { Effect } from "effect"
import type { Scope } from "effect"
import { contentTypeOf, isStorageKey, maxObjectBytes, StorageError } from "./objects.ts"
import type { ObjectStore } from "./objects.ts"

export interface S3StorageOptions {
  readonly bucket: string
  /** Put before every key: empty, or ending with `/`. */
  readonly prefix: string
  /** `S3_ENDPOINT` (R2, MinIO, ...), addressed path-style; null is AWS's own endpoint for the region. */
  readonly endpoint: string | null
  readonly region: string
  /** `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`; null leaves them to the SDK's default chain (an instance role). */
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string } | null
}

const statusOf = (cause: S3ServiceException): number => cause.$metadata.httpStatusCode ?? 0

/** Answers that no retry can change: the process must not start on them. */
const misconfigured = new Set([
  "SignatureDoesNotMatch",
  "InvalidAccessKeyId",
  "NoSuchBucket",
  "AuthorizationHeaderMalformed",
  "PermanentRedirect"
])

/** One sentence naming what to check; a HEAD's error has no body, so its status speaks for it. */
const describe = (cause: unknown, options: S3StorageOptions): string => {
  if (!(cause instanceof S3ServiceException)) return cause instanceof Error ? cause.message : String(cause)
  switch (cause.name) {
    case "SignatureDoesNotMatch":
      return "the bucket refused the request's signature (SignatureDoesNotMatch): check AWS_SECRET_ACCESS_KEY"
    case "InvalidAccessKeyId":
      return "the bucket does not know the access key (InvalidAccessKeyId): check AWS_ACCESS_KEY_ID"
    case "NoSuchBucket":
      return `there is no bucket ${options.bucket} (NoSuchBucket): check STORAGE_URL`
    case "AuthorizationHeaderMalformed":
    case "PermanentRedirect":
      return `the bucket ${options.bucket} is not in region ${options.region} (${cause.name}): check S3_REGION and S3_ENDPOINT`
  }
  return statusOf(cause) === 403
    ? `the bucket refused access (HTTP 403 ${cause.name}): check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and the bucket's policy`
    : `${cause.name} (HTTP ${statusOf(cause)}): ${cause.message}`
}

const isMissing = (cause: unknown): boolean =>
  cause instanceof S3ServiceException &&
  (statusOf(cause) === 404 || cause.name === "NoSuchKey" || cause.name === "NotFound")

/** Counts a stream's bytes on their way to the upload, refusing an object larger than the port allows. */
const counting = () => {
  let size = 0
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length
      if (size > maxObjectBytes) done(new Error(`larger than ${maxObjectBytes} bytes`))
      else done(null, chunk)
    }
  })
  return { stream, size: () => size }
}

export const makeS3Storage = (options: S3StorageOptions): Effect.Effect<ObjectStore, StorageError, Scope.Scope> =>
  Effect.gen(function* () {
    const client = yield* Effect.acquireRelease(
      Effect.sync(
        () =>
          new S3Client({
            region: options.region,
            ...(options.endpoint === null
              ? {}
              : {
                  endpoint: options.endpoint,
                  forcePathStyle: true,
                  // Other stores than AWS differ in which of the SDK's default checksums they accept
                  // (its CRC32 trailers broke several in 2025): only the checksums an operation requires.
                  requestChecksumCalculation: "WHEN_REQUIRED" as const,
                  responseChecksumValidation: "WHEN_REQUIRED" as const
                }),
            ...(options.credentials === null ? {} : { credentials: options.credentials }),
            // A store that stops answering must not hold a request for long: the file answers fail instead.
            requestHandler: { connectionTimeout: 3_000, requestTimeout: 30_000 }
          })
      ),
      (client) => Effect.sync(() => client.destroy())
    )
    const Bucket = options.bucket
    const objectKey = (key: string) => `${options.prefix}${key}`

    // One look at the bucket: a wrong secret, key, bucket or region stops the start with a
    // sentence naming the variable. A missing probe object (404) or a policy that hides it (403)
    // is fine; a store out of reach is logged, and each request tries again.
    yield* Effect.tryPromise({
      try: (signal) =>
        client.send(new GetObjectCommand({ Bucket, Key: objectKey(".lyre-probe"), Range: "bytes=0-0" }), {
          abortSignal: signal
        }),
      catch: (cause) => cause
    }).pipe(
      Effect.tap((answer) => Effect.sync(() => answer.Body instanceof Readable && answer.Body.destroy())),
      Effect.catch((cause) => {
        if (cause instanceof S3ServiceException && misconfigured.has(cause.name)) {
          return Effect.fail(new StorageError({ message: `STORAGE_URL s3://${Bucket}: ${describe(cause, options)}` }))
        }
        if (isMissing(cause) || (cause instanceof S3ServiceException && statusOf(cause) === 403)) return Effect.void
        return Effect.logWarning(`storage: the bucket ${Bucket} did not answer at start: ${describe(cause, options)}`)
      })
    )

    const putBytes = (key: string, bytes: Uint8Array, signal: AbortSignal) =>
      client
        .send(
          new PutObjectCommand({
            Bucket,
            Key: objectKey(key),
            Body: bytes,
            ContentLength: bytes.length,
            ContentType: contentTypeOf(key)
          }),
          { abortSignal: signal }
        )
        .then(() => bytes.length)

    const putStream = async (key: string, body: Readable, signal: AbortSignal) => {
      const counted = counting()
      // A body that fails or closes before its end fails `counted`, and so the upload.
      pipeline(body, counted.stream).catch(() => undefined)
      const upload = new Upload({
        client,
        params: { Bucket, Key: objectKey(key), Body: counted.stream, ContentType: contentTypeOf(key) }
      })
      const abort = () => void upload.abort().catch(() => undefined)
      signal.addEventListener("abort", abort, { once: true })
      try {
        await upload.done()
        return counted.size()
      } catch (cause) {
        body.destroy()
        counted.stream.destroy()
        throw cause
      } finally {
        signal.removeEventListener("abort", abort)
      }
    }

    const storage: ObjectStore = {
      // Objects are in the bucket, not on this machine: a reader copies what it needs.
      localPath: () => null,
      put: (key, body) => {
        if (!isStorageKey(key))
          return Effect.fail(new StorageError({ message: `Could not store ${key}: invalid storage key` }))
        if (body instanceof Uint8Array && body.length > maxObjectBytes) {
          return Effect.fail(
            new StorageError({ message: `Could not store ${key}: larger than ${maxObjectBytes} bytes` })
          )
        }
        return Effect.tryPromise({
          try: (signal) => (body instanceof Uint8Array ? putBytes(key, body, signal) : putStream(key, body, signal)),
          catch: (cause) => new StorageError({ message: `Could not store ${key}: ${describe(cause, options)}` })
        }).pipe(Effect.map((size) => ({ size, contentType: contentTypeOf(key) })))
      },
      stat: (key) => {
        if (!isStorageKey(key)) return Effect.succeed(null)
        return Effect.tryPromise({
          try: (signal) => client.send(new HeadObjectCommand({ Bucket, Key: objectKey(key) }), { abortSignal: signal }),
          catch: (cause) => cause
        }).pipe(
          Effect.map((head) => ({ size: head.ContentLength ?? 0, contentType: contentTypeOf(key) })),
          // Not there is an answer; a store out of reach is not, and fails whoever asked.
          Effect.catch((cause) =>
            isMissing(cause)
              ? Effect.succeed(null)
              : Effect.die(new StorageError({ message: `Could not look up ${key}: ${describe(cause, options)}` }))
          )
        )
      },
      read: (key, range) => {
        const out = new PassThrough()
        if (!isStorageKey(key)) return out.end()
        const controller = new AbortController()
        // A reader that goes away (a player seeking elsewhere) ends the download from the bucket.
        out.once("close", () => controller.abort())
        client
          .send(new GetObjectCommand({ Bucket, Key: objectKey(key), Range: `bytes=${range.start}-${range.end}` }), {
            abortSignal: controller.signal
          })
          .then(
            (answer) => {
              if (answer.Body instanceof Readable) pipeline(answer.Body, out).catch(() => undefined)
              else out.destroy(new Error(`Could not read ${key}: the answer had no body`))
            },
            (cause: unknown) => out.destroy(new Error(`Could not read ${key}: ${describe(cause, options)}`))
          )
        return out
      },
      remove: (key) => {
        if (!isStorageKey(key)) return Effect.void
        // S3 answers a delete of a missing key with success, as the port asks.
        return Effect.tryPromise({
          try: (signal) =>
            client.send(new DeleteObjectCommand({ Bucket, Key: objectKey(key) }), { abortSignal: signal }),
          catch: (cause) => new StorageError({ message: `Could not remove ${key}: ${describe(cause, options)}` })
        }).pipe(Effect.asVoid)
      }
    }
    return storage
  })
