/**
 * Where re-hosted audio and images live. The port speaks keys (`<task id>/<index>.mp3`) and
 * byte streams; `FileStorage` keeps them as files under `DATA_DIR/files`, `S3Storage` as objects
 * in an S3-compatible bucket shared by every machine (`STORAGE_URL`). A write lands whole or not
 * at all (a temporary file then a rename; one PutObject or a completed multipart upload), so a
 * worker that dies mid-download leaves no half file behind a lasting URL.
 */
import { closeSync, createReadStream, mkdirSync, openSync, renameSync, rmdirSync, rmSync, writeSync } from "node:fs"
import { stat } from "node:fs/promises"
import { dirname, normalize, sep } from "node:path"
import { Readable } from "node:stream"
import { randomBytes } from "node:crypto"
import { Context, Effect, Layer } from "effect"
import { contentTypeOf, isStorageKey, maxObjectBytes, StorageError } from "./objects.ts"
import type { ObjectStore } from "./objects.ts"
import type { S3StorageOptions } from "./S3Storage.ts"

export { contentTypeOf, contentTypes, isStorageKey, maxObjectBytes, StorageError } from "./objects.ts"
export type { ObjectStore, StoredObject } from "./objects.ts"

export class Storage extends Context.Service<Storage, ObjectStore>()("lyre/worker/storage/Storage") {
  /** Files under `directory` (the composition root passes `DATA_DIR/files`). */
  static readonly layerFiles = (directory: string) => Layer.succeed(Storage)(makeFileStorage(directory))
  /**
   * Objects in an S3-compatible bucket. The AWS SDK is loaded only here, so the embedded default
   * never pays for it; building the layer checks the bucket and the credentials once.
   */
  static readonly layerS3 = (options: S3StorageOptions): Layer.Layer<Storage, StorageError> =>
    Layer.effect(Storage)(
      Effect.promise(() => import("./S3Storage.ts")).pipe(Effect.flatMap((module) => module.makeS3Storage(options)))
    )
}

/**
 * Bytes written per synchronous call before the event loop gets a turn: about a millisecond
 * of page-cache copying, so a long song never stalls the process for long.
 */
const writeSlice = 1024 * 1024

/**
 * Temporary names: random per process, then counted, so two processes (or two writes of one
 * key) never share one, without drawing random bytes for every file.
 */
const temporaryPrefix = randomBytes(6).toString("hex")
let temporaries = 0
const temporaryOf = (path: string): string => `${path}.${temporaryPrefix}${(temporaries++).toString(36)}.part`

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** Writes all of `bytes`: a write to a regular file takes everything but may, in principle, stop short. */
const writeAll = (fd: number, bytes: Uint8Array): void => {
  for (let offset = 0; offset < bytes.length; ) offset += writeSync(fd, bytes, offset)
}

/** Closes and removes a temporary file that will not be renamed into place. */
const discard = (fd: number, temporary: string): void => {
  try {
    closeSync(fd)
  } finally {
    rmSync(temporary, { force: true })
  }
}

/*
 * Files are written with synchronous calls. Through the thread pool every open, write, close and
 * rename is queued, run and signalled back, which cost several times the CPU of the system call
 * itself (1.8-2 ms against 0.3 ms per task of four files, measured on this machine); the calls
 * land in the page cache, so they are short.
 */

/** Bytes at hand (an in-process render): written 1 MiB per event-loop turn, then renamed into place. */
const writeBytes = async (path: string, bytes: Uint8Array): Promise<number> => {
  const temporary = temporaryOf(path)
  const fd = openSync(temporary, "w")
  try {
    for (let offset = 0; offset < bytes.length; offset += writeSlice) {
      if (offset > 0) await nextTurn()
      writeAll(fd, bytes.subarray(offset, offset + writeSlice))
    }
  } catch (cause) {
    discard(fd, temporary)
    throw cause
  }
  try {
    closeSync(fd)
    renameSync(temporary, path)
  } catch (cause) {
    rmSync(temporary, { force: true })
    throw cause
  }
  return bytes.length
}

/**
 * A download: each chunk is written as it arrives (a short synchronous write), so a file is never
 * held in memory whole and many downloads can be in flight; at its end the temporary file is
 * renamed into place. A body that fails or closes before its end leaves nothing behind.
 */
const writeStream = (path: string, body: Readable): Promise<number> =>
  new Promise((resolve, reject) => {
    const temporary = temporaryOf(path)
    let fd: number
    try {
      fd = openSync(temporary, "w")
    } catch (cause) {
      body.destroy()
      return reject(cause)
    }
    let size = 0
    let settled = false
    const fail = (cause: unknown): void => {
      if (settled) return
      settled = true
      body.destroy()
      try {
        discard(fd, temporary)
      } finally {
        reject(cause)
      }
    }
    body.on("data", (chunk: Uint8Array | string) => {
      if (settled) return
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk
      size += bytes.length
      if (size > maxObjectBytes) return fail(new Error(`larger than ${maxObjectBytes} bytes`))
      try {
        writeAll(fd, bytes)
      } catch (cause) {
        fail(cause)
      }
    })
    body.once("end", () => {
      if (settled) return
      settled = true
      try {
        closeSync(fd)
        renameSync(temporary, path)
        resolve(size)
      } catch (cause) {
        rmSync(temporary, { force: true })
        reject(cause)
      }
    })
    body.once("error", fail)
    // A body destroyed without an error (an aborted download) closes without its end. Every body
    // closes, a finished one too, so the error is made only for one that did not end: capturing
    // its stack cost about 38 thousand instructions a file (docs/decisions/0118-*).
    body.once("close", () => {
      if (!settled) fail(new Error("the body closed before its end"))
    })
  })

const makeFileStorage = (directory: string): Storage["Service"] => {
  const root = normalize(directory)
  const prefix = root.endsWith(sep) ? root : `${root}${sep}`
  /** Directories already made by this process: one mkdir per task, not per file. */
  const made = new Set<string>()
  // A key's shape is two plain segments (`isStorageKey`: no "." or ".." can be one, no leading
  // separator), so joined to the normalized root it is already a normal path inside it: checked
  // by its shape, not normalized again for every file.
  const pathOf = (key: string): string | null => (isStorageKey(key) ? `${prefix}${key}` : null)
  return {
    put: (key, body) =>
      Effect.tryPromise({
        try: async () => {
          const path = pathOf(key)
          if (path === null) throw new Error(`Invalid storage key ${key}`)
          const parent = dirname(path)
          if (!made.has(parent)) {
            mkdirSync(parent, { recursive: true })
            // Bounded: a long-running worker must not remember every task it ever stored.
            if (made.size >= 10_000) made.clear()
            made.add(parent)
          }
          const size = body instanceof Uint8Array ? await writeBytes(path, body) : await writeStream(path, body)
          return { size, contentType: contentTypeOf(key) }
        },
        catch: (cause) =>
          new StorageError({
            message: `Could not store ${key}: ${cause instanceof Error ? cause.message : String(cause)}`
          })
      }),
    stat: (key) =>
      Effect.promise(async () => {
        const path = pathOf(key)
        if (path === null) return null
        try {
          const info = await stat(path)
          return info.isFile() ? { size: info.size, contentType: contentTypeOf(key) } : null
        } catch {
          return null
        }
      }),
    read: (key, range) => {
      const path = pathOf(key)
      if (path === null) return Readable.from([])
      return createReadStream(path, { start: range.start, end: range.end })
    },
    localPath: pathOf,
    remove: (key) =>
      Effect.try({
        try: () => {
          const path = pathOf(key)
          if (path === null) return
          rmSync(path, { force: true })
          // A key's folder (an upload's, a task's) goes with its last file: none is left empty.
          const parent = dirname(path)
          try {
            rmdirSync(parent)
            made.delete(parent)
          } catch (cause) {
            const code = (cause as NodeJS.ErrnoException).code
            if (code !== "ENOTEMPTY" && code !== "EEXIST" && code !== "ENOENT") throw cause
          }
        },
        catch: (cause) =>
          new StorageError({
            message: `Could not remove ${key}: ${cause instanceof Error ? cause.message : String(cause)}`
          })
      })
  }
}
