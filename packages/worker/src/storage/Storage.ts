/**
 * Where re-hosted audio and images live. The port speaks keys (`<task id>/<index>.mp3`) and
 * byte streams; `FileStorage` keeps them as files under `DATA_DIR/files`, and an object store
 * can take its place later. A write lands whole or not at all (temporary file, then rename), so
 * a worker that dies mid-download leaves no half file behind a lasting URL.
 */
import { closeSync, createReadStream, mkdirSync, openSync, renameSync, rmSync, writeSync, writevSync } from "node:fs"
import { stat } from "node:fs/promises"
import { dirname, join, normalize, sep } from "node:path"
import { Readable } from "node:stream"
import { randomBytes } from "node:crypto"
import { Context, Effect, Layer, Schema } from "effect"

export class StorageError extends Schema.TaggedError<StorageError>()("StorageError", {
  message: Schema.String
}) {}

export interface StoredObject {
  readonly size: number
  readonly contentType: string
}

/** Content types by extension: the extension is the stored type. */
export const contentTypes: Readonly<Record<string, string>> = {
  mp3: "audio/mpeg",
  wav: "audio/wav",
  m4a: "audio/mp4",
  ogg: "audio/ogg",
  flac: "audio/flac",
  png: "image/png",
  jpg: "image/jpeg",
  webp: "image/webp",
  gif: "image/gif"
}

/** Keys are `<segment>/<segment>.<ext>` of URL-safe characters; anything else is refused. */
const keyShape = /^[A-Za-z0-9_-]+\/[A-Za-z0-9_-]+\.[a-z0-9]+$/

export const isStorageKey = (key: string): boolean => keyShape.test(key)

const contentTypeOf = (key: string): string => contentTypes[key.slice(key.lastIndexOf(".") + 1)] ?? "application/octet-stream"

export class Storage extends Context.Service<Storage, {
  /** Stores the whole stream under `key`, replacing what was there. */
  readonly put: (key: string, body: Readable | Uint8Array) => Effect.Effect<StoredObject, StorageError>
  /** Size and type of a stored object, or null. */
  readonly stat: (key: string) => Effect.Effect<StoredObject | null>
  /** Bytes `start..end` (inclusive) of a stored object. */
  readonly read: (key: string, range: { readonly start: number; readonly end: number }) => Readable
}>()("lyre/worker/storage/Storage") {
  /** Files under `directory` (the composition root passes `DATA_DIR/files`). */
  static readonly layerFiles = (directory: string) => Layer.succeed(Storage)(makeFileStorage(directory))
}

/** Largest object accepted (a long song in a lossless format is well below). */
const maxObjectBytes = 256 * 1024 * 1024

/**
 * The body's chunks, as they came (listening for events is lighter than an async iterator,
 * and writing the chunks with `writev` spares a copy into one buffer).
 */
const gather = (body: Readable): Promise<ReadonlyArray<Uint8Array>> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Uint8Array> = []
    let size = 0
    let settled = false
    const fail = (error: unknown): void => {
      if (settled) return
      settled = true
      body.destroy()
      reject(error)
    }
    body.on("data", (chunk: Uint8Array | string) => {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk
      size += bytes.length
      if (size > maxObjectBytes) return fail(new Error(`larger than ${maxObjectBytes} bytes`))
      chunks.push(bytes)
    })
    body.once("end", () => {
      if (settled) return
      settled = true
      resolve(chunks)
    })
    body.once("error", fail)
    // A body destroyed without an error (an aborted download) closes without its end.
    body.once("close", () => fail(new Error("the body closed before its end")))
  })

/**
 * Bytes written per synchronous call before the event loop gets a turn: about a millisecond
 * of page-cache copying, so a long song never stalls the process for long.
 */
const writeSlice = 1024 * 1024

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** The chunks cut into batches of at most `writeSlice` bytes (views, not copies). */
const batches = (chunks: ReadonlyArray<Uint8Array>): Array<Array<Uint8Array>> => {
  const all: Array<Array<Uint8Array>> = []
  let batch: Array<Uint8Array> = []
  let room = writeSlice
  for (const chunk of chunks) {
    for (let offset = 0; offset < chunk.length;) {
      const piece = chunk.subarray(offset, offset + room)
      batch.push(piece)
      offset += piece.length
      room -= piece.length
      if (room === 0) {
        all.push(batch)
        batch = []
        room = writeSlice
      }
    }
  }
  if (batch.length > 0) all.push(batch)
  return all
}

/** Writes a batch whole: `writev` on a regular file writes everything but may, in principle, stop short. */
const writeBatch = (fd: number, batch: ReadonlyArray<Uint8Array>): void => {
  let written = writevSync(fd, batch)
  for (const piece of batch) {
    if (written >= piece.length) {
      written -= piece.length
      continue
    }
    for (let offset = written; offset < piece.length;) offset += writeSync(fd, piece, offset)
    written = 0
  }
}

/**
 * Writes the chunks to a temporary file beside `path` and renames it into place, with
 * synchronous calls. The thread pool's round trip (open, write, close and rename each queued,
 * run and signalled back) cost several times the CPU of the system calls themselves; a write
 * lands in the page cache, so the calls are short, and a large object is written a slice per turn.
 */
const writeWhole = async (path: string, chunks: ReadonlyArray<Uint8Array>): Promise<void> => {
  const temporary = `${path}.${randomBytes(6).toString("hex")}.part`
  try {
    const fd = openSync(temporary, "w")
    try {
      let first = true
      for (const batch of batches(chunks)) {
        if (!first) await nextTurn()
        first = false
        writeBatch(fd, batch)
      }
    } finally {
      closeSync(fd)
    }
    renameSync(temporary, path)
  } catch (cause) {
    rmSync(temporary, { force: true })
    throw cause
  }
}

const makeFileStorage = (directory: string): Storage["Service"] => {
  const root = normalize(directory)
  /** Directories already made by this process: one mkdir per task, not per file. */
  const made = new Set<string>()
  const pathOf = (key: string): string | null => {
    if (!isStorageKey(key)) return null
    const path = normalize(join(root, key))
    return path.startsWith(root + sep) ? path : null
  }
  return {
    put: (key, body) =>
      Effect.tryPromise({
        try: async () => {
          const path = pathOf(key)
          if (path === null) throw new Error(`Invalid storage key ${key}`)
          // Gathered first, then written whole: far fewer file operations than a stream's
          // write per network chunk (audio files are a few megabytes).
          const chunks = body instanceof Uint8Array ? [body] : await gather(body)
          const parent = dirname(path)
          if (!made.has(parent)) {
            mkdirSync(parent, { recursive: true })
            // Bounded: a long-running worker must not remember every task it ever stored.
            if (made.size >= 10_000) made.clear()
            made.add(parent)
          }
          await writeWhole(path, chunks)
          return { size: chunks.reduce((sum, chunk) => sum + chunk.length, 0), contentType: contentTypeOf(key) }
        },
        catch: (cause) => new StorageError({ message: `Could not store ${key}: ${cause instanceof Error ? cause.message : String(cause)}` })
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
    }
  }
}
