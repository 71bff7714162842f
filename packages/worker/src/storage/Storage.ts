/**
 * Where re-hosted audio and images live. The port speaks keys (`<task id>/<index>.mp3`) and
 * byte streams; `FileStorage` keeps them as files under `DATA_DIR/files`, and an object store
 * can take its place later. A write lands whole or not at all (temporary file, then rename), so
 * a worker that dies mid-download leaves no half file behind a lasting URL.
 */
import { createReadStream } from "node:fs"
import { mkdir, rename, rm, stat, writeFile } from "node:fs/promises"
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

const gather = async (body: Readable): Promise<Buffer> => {
  const chunks: Array<Buffer> = []
  let size = 0
  for await (const chunk of body) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array)
    size += buffer.length
    if (size > maxObjectBytes) throw new Error(`larger than ${maxObjectBytes} bytes`)
    chunks.push(buffer)
  }
  return Buffer.concat(chunks, size)
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
          const parent = dirname(path)
          if (!made.has(parent)) {
            await mkdir(parent, { recursive: true })
            made.add(parent)
          }
          // Gathered first, then written in one call: far fewer file operations than a stream's
          // write per network chunk (audio files are a few megabytes).
          const bytes = body instanceof Uint8Array ? body : await gather(body)
          const temporary = `${path}.${randomBytes(6).toString("hex")}.part`
          try {
            await writeFile(temporary, bytes)
            await rename(temporary, path)
          } catch (cause) {
            await rm(temporary, { force: true })
            throw cause
          }
          return { size: bytes.length, contentType: contentTypeOf(key) }
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
