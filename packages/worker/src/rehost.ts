/**
 * Re-hosting: a finished task's audio and images are copied from the provider's expiring URLs
 * into our storage before the task becomes `ready`, so `audio_url` and `image_url` are the
 * service's own lasting addresses. Keys are fixed per task and track index, so a second worker
 * repeating the copy after a crash overwrites the same files instead of leaving orphans.
 */
import type { ClientRequest, IncomingMessage } from "node:http"
import { readFile } from "node:fs/promises"
import { fileURLToPath } from "node:url"
import { Effect, Schema } from "effect"
import type { ExportFile, FinishedTrack, ProviderExportFile, ProviderTrack, RehostKind, TimedWord } from "@lyre/core"
import { Ids, Metrics, timedLyricsFiles } from "@lyre/core"
import { contentTypes, Storage } from "./storage/Storage.ts"
import { requestOptionsOf, transportFor } from "./provider/upstreamAgents.ts"
import type { UpstreamAgents } from "./provider/upstreamAgents.ts"

export class RehostError extends Schema.TaggedError<RehostError>()("RehostError", {
  message: Schema.String,
  /** The provider said the file is gone (404, 410): retrying cannot help. */
  definite: Schema.Boolean
}) {}

const extensionByType: Readonly<Record<string, string>> = {
  ...Object.fromEntries(Object.entries(contentTypes).map(([extension, type]) => [type, extension])),
  "audio/mp3": "mp3",
  "image/jpg": "jpg"
}

const extensionOf = (url: string, contentType: string | null, fallback: string): string => {
  const byType =
    contentType === null ? undefined : extensionByType[contentType.split(";")[0]?.trim().toLowerCase() ?? ""]
  if (byType !== undefined) return byType
  const fromPath = /\.([a-z0-9]{2,4})$/i.exec(new URL(url).pathname)?.[1]?.toLowerCase()
  return fromPath !== undefined && fromPath in contentTypes ? fromPath : fallback
}

export interface RehostOptions {
  /** The site root: stored files are served at `{publicUrl}/files/<key>`. */
  readonly publicUrl: string
  /** The connections downloads share, bounded per origin. */
  readonly agents: UpstreamAgents
  /** Limit for each download, connect to last byte. */
  readonly timeoutMs: number
}

const maxRedirects = 3

/**
 * The time limit of one download, connect to last byte: on expiry the request in flight (the
 * last redirect's) is destroyed, which also fails the body stream being stored. A plain timer:
 * an AbortSignal per download cost a signal, its timer and listeners on every request.
 */
class Deadline {
  private current: ClientRequest | null = null
  private expired = false
  private readonly millis: number
  private readonly timer: NodeJS.Timeout
  constructor(millis: number) {
    this.millis = millis
    this.timer = setTimeout(() => {
      this.expired = true
      this.current?.destroy(new Error(`timed out after ${millis} ms`))
    }, millis)
  }
  /** The request now in flight; one made after expiry is destroyed at once. */
  track(request: ClientRequest): void {
    this.current = request
    if (this.expired) request.destroy(new Error(`timed out after ${this.millis} ms`))
  }
  /** Done: the timer goes (a finished request's connection is back in the agent's pool, untouched). */
  end(): void {
    clearTimeout(this.timer)
  }
  /** Given up (interrupted): the request in flight goes too. */
  abort(): void {
    clearTimeout(this.timer)
    this.current?.destroy()
  }
}

/**
 * GET with node:http (lighter than fetch for many large bodies), following a few redirects. The
 * time limit counts from the call, so a download waiting for one of the agent's connections
 * spends its own time waiting.
 */
const open = (url: string, agents: UpstreamAgents, deadline: Deadline, redirects = 0): Promise<IncomingMessage> =>
  new Promise((resolve, reject) => {
    const target = new URL(url)
    const onResponse = (response: IncomingMessage) => {
      const location = response.headers.location
      const status = response.statusCode ?? 0
      if (status >= 300 && status < 400 && location !== undefined && redirects < maxRedirects) {
        response.resume()
        resolve(open(new URL(location, target).toString(), agents, deadline, redirects + 1))
        return
      }
      resolve(response)
    }
    const transport = transportFor(target, agents)
    if (transport === null) return reject(new Error(`unsupported protocol ${target.protocol}`))
    const request = transport.request(requestOptionsOf(target, transport.agent, "GET"), onResponse)
    request.on("error", reject)
    request.end()
    deadline.track(request)
  })

/**
 * A `file:` URL (an in-process provider such as the built-in engine hands over its renders so)
 * is read from disk; a missing file is definite.
 */
const copyLocal = Effect.fnUntraced(function* (
  url: string,
  kind: RehostKind,
  key: (extension: string) => string,
  fallback: string,
  options: RehostOptions
) {
  const storage = yield* Storage
  const metrics = yield* Metrics
  const started = performance.now()
  const path = fileURLToPath(url)
  const bytes = yield* Effect.tryPromise({
    try: () => readFile(path),
    catch: (cause) =>
      new RehostError({
        message: `Could not read ${url}: ${String(cause)}`,
        definite: typeof cause === "object" && cause !== null && "code" in cause && cause.code === "ENOENT"
      })
  })
  const storedKey = key(extensionOf(url, null, fallback))
  const stored = yield* storage
    .put(storedKey, bytes)
    .pipe(Effect.mapError((error) => new RehostError({ message: error.message, definite: false })))
  metrics.rehosted(kind, stored.size, (performance.now() - started) / 1000)
  return `${options.publicUrl}/files/${storedKey}`
})

/** Downloads one file into storage; answers its lasting URL. */
const copy = Effect.fnUntraced(function* (
  url: string,
  kind: RehostKind,
  key: (extension: string) => string,
  fallback: string,
  options: RehostOptions
) {
  if (url.startsWith("file:")) return yield* copyLocal(url, kind, key, fallback, options)
  const storage = yield* Storage
  const metrics = yield* Metrics
  const started = performance.now()
  const deadline = new Deadline(options.timeoutMs)
  return yield* Effect.gen(function* () {
    const response = yield* Effect.tryPromise({
      try: () => open(url, options.agents, deadline),
      catch: (cause) => new RehostError({ message: `Could not download ${url}: ${String(cause)}`, definite: false })
    })
    const status = response.statusCode ?? 0
    if (status < 200 || status >= 300) {
      response.resume()
      return yield* new RehostError({
        message: `Downloading ${url} answered HTTP ${status}`,
        definite: status === 404 || status === 410
      })
    }
    const storedKey = key(extensionOf(url, response.headers["content-type"] ?? null, fallback))
    const stored = yield* storage
      .put(storedKey, response)
      .pipe(Effect.mapError((error) => new RehostError({ message: error.message, definite: false })))
    metrics.rehosted(kind, stored.size, (performance.now() - started) / 1000)
    return `${options.publicUrl}/files/${storedKey}`
  }).pipe(
    Effect.onInterrupt(() => Effect.sync(() => deadline.abort())),
    Effect.ensuring(Effect.sync(() => deadline.end()))
  )
})

/**
 * Copies every track's audio (required) and image (optional: a missing cover leaves
 * `image_url` null) and answers the tracks as the interface shows them, each with the
 * provider's id of it (which song tools on the track need).
 */
export const rehostTracks = Effect.fnUntraced(function* (
  taskId: string,
  tracks: ReadonlyArray<ProviderTrack>,
  options: RehostOptions
) {
  const ids = yield* Ids
  return yield* Effect.forEach(
    tracks,
    (track, index) =>
      Effect.gen(function* () {
        const [audioUrl, imageUrl] = yield* Effect.all(
          [
            copy(track.audioUrl, "audio", (extension) => `${taskId}/${index}.${extension}`, "mp3", options),
            track.imageUrl === null
              ? Effect.succeed(null)
              : copy(
                  track.imageUrl,
                  "cover",
                  (extension) => `${taskId}/${index}-cover.${extension}`,
                  "png",
                  options
                ).pipe(
                  Effect.catchIf(
                    (error) => error.definite,
                    () => Effect.succeed(null)
                  )
                )
          ],
          { concurrency: 2 }
        )
        return {
          track: {
            id: yield* ids.make("track"),
            audio_url: audioUrl,
            duration: track.duration,
            title: track.title,
            lyrics: track.lyrics,
            image_url: imageUrl,
            tags: track.tags,
            index
          },
          providerTrackId: track.providerTrackId
        } satisfies FinishedTrack
      }),
    { concurrency: "unbounded" }
  )
})

/** A file name as a storage key's last segment: its base in URL-safe characters, and its extension. */
const keyName = (
  index: number,
  name: string,
  fallbackExtension: string
): { readonly base: string; readonly extension: string } => {
  const dot = name.lastIndexOf(".")
  const rawBase = dot > 0 ? name.slice(0, dot) : name
  const rawExtension = dot > 0 ? name.slice(dot + 1).toLowerCase() : ""
  const base = rawBase.replace(/[^A-Za-z0-9_-]+/g, "_").slice(0, 80) || `file${index}`
  const extension = /^[a-z0-9]{1,5}$/.test(rawExtension) ? rawExtension : fallbackExtension
  return { base, extension }
}

/** Stores bytes at hand (an export's file given as bytes, or one the service wrote). */
const storeBytes = Effect.fnUntraced(function* (key: string, bytes: Uint8Array, options: RehostOptions) {
  const storage = yield* Storage
  const stored = yield* storage
    .put(key, bytes)
    .pipe(Effect.mapError((error) => new RehostError({ message: error.message, definite: false })))
  return { url: `${options.publicUrl}/files/${key}`, bytes: stored.size }
})

/**
 * Copies every file of a finished export into storage under `<export id>/...` (fixed keys, so a
 * repeat overwrites) and answers them as the Export shows them; for timed lyrics the service
 * writes the `.lrc`, WebVTT and JSON files from the words, whichever provider timed them.
 */
export const rehostExportFiles = Effect.fnUntraced(function* (
  exportId: string,
  files: ReadonlyArray<ProviderExportFile>,
  timedLyrics: ReadonlyArray<TimedWord> | null,
  options: RehostOptions
) {
  const storage = yield* Storage
  const provided = yield* Effect.forEach(
    files,
    (file, index) =>
      Effect.gen(function* () {
        const { base, extension } = keyName(index, file.name, "bin")
        const key = (ext: string) => `${exportId}/${index}-${base}.${ext}`
        if (file.content._tag === "Bytes") {
          const stored = yield* storeBytes(key(extension), file.content.bytes, options)
          return {
            name: file.name,
            url: stored.url,
            content_type: file.contentType,
            bytes: stored.bytes,
            stem: file.stem
          }
        }
        let storedKey = key(extension)
        const url = yield* copy(file.content.url, "audio", (ext) => (storedKey = key(ext)), extension, options)
        const stored = yield* storage.stat(storedKey)
        return { name: file.name, url, content_type: file.contentType, bytes: stored?.size ?? 0, stem: file.stem }
      }),
    { concurrency: 4 }
  )
  const written =
    timedLyrics === null
      ? []
      : yield* Effect.forEach(timedLyricsFiles(timedLyrics), (file) =>
          Effect.gen(function* () {
            const stored = yield* storeBytes(`${exportId}/${file.name}`, Buffer.from(file.text, "utf8"), options)
            return { name: file.name, url: stored.url, content_type: file.contentType, bytes: stored.bytes, stem: null }
          })
        )
  return [...provided, ...written] satisfies ReadonlyArray<ExportFile>
})
