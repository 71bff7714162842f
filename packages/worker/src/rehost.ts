/**
 * Re-hosting: a finished task's audio and images are copied from the provider's expiring URLs
 * into our storage before the task becomes `ready`, so `audio_url` and `image_url` are the
 * service's own lasting addresses. Keys are fixed per task and track index, so a second worker
 * repeating the copy after a crash overwrites the same files instead of leaving orphans.
 */
import type { ClientRequest, IncomingMessage } from "node:http"
import { readFile } from "node:fs/promises"
import { buffer } from "node:stream/consumers"
import { fileURLToPath } from "node:url"
import { Effect, Schema } from "effect"
import type {
  ExportFile,
  FileOrigin,
  FinishedTrack,
  ProviderExportFile,
  ProviderTrack,
  RehostKind,
  TimedWord
} from "@lyre/core"
import { ContentCredentials, Ids, isSigned, Metrics, timedLyricsFiles } from "@lyre/core"
import { contentTypeOf, contentTypes, maxObjectBytes, Storage } from "./storage/Storage.ts"
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
 * What the files of one task or export say about their making (their content credentials,
 * DESIGN.md section 13), and their source file's bytes, read from storage once, when first needed.
 */
export interface Provenance {
  readonly origin: FileOrigin
  readonly source: Effect.Effect<Uint8Array | null, never, Storage>
}

/** A stored object's bytes, or null when it is missing or unreadable. */
const readStored = (key: string): Effect.Effect<Uint8Array | null, never, Storage> =>
  Effect.gen(function* () {
    const storage = yield* Storage
    const info = yield* storage.stat(key)
    if (info === null || info.size === 0) return null
    return yield* Effect.tryPromise(() => buffer(storage.read(key, { start: 0, end: info.size - 1 }))).pipe(
      Effect.orElseSucceed(() => null)
    )
  })

/** The provenance of files made as `origin` says; the source is read at most once. */
export const provenanceOf = (origin: FileOrigin): Provenance => {
  let read: Uint8Array | null | undefined
  const key = origin.source?.storageKey ?? null
  return {
    origin,
    source: Effect.suspend(() =>
      read !== undefined || key === null
        ? Effect.succeed(read ?? null)
        : Effect.tap(readStored(key), (bytes) =>
            Effect.sync(() => {
              read = bytes
            })
          )
    )
  }
}

const storageFailure = (error: { readonly message: string }) =>
  new RehostError({ message: error.message, definite: false })

/**
 * The one place a served file is written with its content credentials: audio is signed (its
 * manifest embedded, or a sidecar stored at `<key>.c2pa` beside it), anything else stored as it is.
 */
const storeSigned = Effect.fnUntraced(function* (
  key: string,
  bytes: Uint8Array,
  title: string,
  provenance: Provenance
) {
  const storage = yield* Storage
  const contentType = contentTypeOf(key)
  if (!isSigned(contentType)) {
    const stored = yield* storage.put(key, bytes).pipe(Effect.mapError(storageFailure))
    return { size: stored.size, sidecar: null }
  }
  const credentials = yield* ContentCredentials
  const source = provenance.origin.source === null ? null : yield* provenance.source
  const signed = yield* credentials
    .sign({ bytes, contentType, title }, provenance.origin, source)
    .pipe(Effect.mapError(storageFailure))
  const sidecar =
    signed.sidecar === null
      ? null
      : {
          key: `${key}.c2pa`,
          size: (yield* storage.put(`${key}.c2pa`, signed.sidecar).pipe(Effect.mapError(storageFailure))).size
        }
  const stored = yield* storage.put(key, signed.bytes).pipe(Effect.mapError(storageFailure))
  return { size: stored.size, sidecar }
})

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
  options: RehostOptions,
  signing: Signing
) {
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
  const stored = yield* storeSigned(storedKey, bytes, signing.title, signing.provenance)
  metrics.rehosted(kind, stored.size, (performance.now() - started) / 1000)
  return `${options.publicUrl}/files/${storedKey}`
})

/** How a copied file is signed: its title in the manifest and its provenance. */
interface Signing {
  readonly title: string
  readonly provenance: Provenance
}

/** A download's whole body, refused past the storage's limit (a declared length is checked first). */
const readBody = (url: string, response: IncomingMessage) =>
  Effect.tryPromise({
    try: async () => {
      const declared = Number(response.headers["content-length"] ?? 0)
      if (declared > maxObjectBytes) throw new Error(`larger than ${maxObjectBytes} bytes`)
      const chunks: Array<Buffer> = []
      let size = 0
      for await (const chunk of response) {
        const bytes = chunk as Buffer
        size += bytes.length
        if (size > maxObjectBytes) throw new Error(`larger than ${maxObjectBytes} bytes`)
        chunks.push(bytes)
      }
      return Buffer.concat(chunks, size)
    },
    catch: (cause) => new RehostError({ message: `Could not download ${url}: ${String(cause)}`, definite: false })
  })

/**
 * Downloads one file into storage; answers its lasting URL. Audio is read whole and signed
 * (`storeSigned`); an image streams to storage as it arrives.
 */
const copy = Effect.fnUntraced(function* (
  url: string,
  kind: RehostKind,
  key: (extension: string) => string,
  fallback: string,
  options: RehostOptions,
  signing: Signing
) {
  if (url.startsWith("file:")) return yield* copyLocal(url, kind, key, fallback, options, signing)
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
    // The time limit covers the download: signing after the last byte is not the upstream's time.
    const stored = isSigned(contentTypeOf(storedKey))
      ? yield* storeSigned(
          storedKey,
          yield* readBody(url, response).pipe(Effect.ensuring(Effect.sync(() => deadline.end()))),
          signing.title,
          signing.provenance
        )
      : yield* storage.put(storedKey, response).pipe(Effect.mapError(storageFailure))
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
  options: RehostOptions,
  provenance: Provenance
) {
  const ids = yield* Ids
  return yield* Effect.forEach(
    tracks,
    (track, index) =>
      Effect.gen(function* () {
        const [audioUrl, imageUrl] = yield* Effect.all(
          [
            copy(track.audioUrl, "audio", (extension) => `${taskId}/${index}.${extension}`, "mp3", options, {
              title: track.title ?? `${taskId}-${index}`,
              provenance
            }),
            track.imageUrl === null
              ? Effect.succeed(null)
              : copy(track.imageUrl, "cover", (extension) => `${taskId}/${index}-cover.${extension}`, "png", options, {
                  title: track.title ?? `${taskId}-${index}`,
                  provenance
                }).pipe(
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

/** Stores bytes at hand (an export's file given as bytes, or one the service wrote), signed if audio. */
const storeBytes = Effect.fnUntraced(function* (
  key: string,
  bytes: Uint8Array,
  options: RehostOptions,
  signing: Signing
) {
  const stored = yield* storeSigned(key, bytes, signing.title, signing.provenance)
  return { url: `${options.publicUrl}/files/${key}`, bytes: stored.size, sidecar: stored.sidecar }
})

/** An export's file, and its sidecar manifest's entry beside it when it has one. */
const withSidecar = (
  file: ExportFile,
  sidecar: { readonly key: string; readonly size: number } | null,
  options: RehostOptions
): ReadonlyArray<ExportFile> =>
  sidecar === null
    ? [file]
    : [
        file,
        {
          name: `${file.name}.c2pa`,
          url: `${options.publicUrl}/files/${sidecar.key}`,
          content_type: "application/c2pa",
          bytes: sidecar.size,
          stem: file.stem
        }
      ]

/**
 * Copies every file of a finished export into storage under `<export id>/...` (fixed keys, so a
 * repeat overwrites) and answers them as the Export shows them; for timed lyrics the service
 * writes the `.lrc`, WebVTT and JSON files from the words, whichever provider timed them.
 */
export const rehostExportFiles = Effect.fnUntraced(function* (
  exportId: string,
  files: ReadonlyArray<ProviderExportFile>,
  timedLyrics: ReadonlyArray<TimedWord> | null,
  options: RehostOptions,
  provenance: Provenance
) {
  const storage = yield* Storage
  const provided = yield* Effect.forEach(
    files,
    (file, index) =>
      Effect.gen(function* () {
        const { base, extension } = keyName(index, file.name, "bin")
        const key = (ext: string) => `${exportId}/${index}-${base}.${ext}`
        const signing = { title: file.name, provenance }
        if (file.content._tag === "Bytes") {
          const stored = yield* storeBytes(key(extension), file.content.bytes, options, signing)
          return withSidecar(
            { name: file.name, url: stored.url, content_type: file.contentType, bytes: stored.bytes, stem: file.stem },
            stored.sidecar,
            options
          )
        }
        let storedKey = key(extension)
        const url = yield* copy(file.content.url, "audio", (ext) => (storedKey = key(ext)), extension, options, signing)
        const stored = yield* storage.stat(storedKey)
        const sidecar = yield* storage.stat(`${storedKey}.c2pa`)
        return withSidecar(
          { name: file.name, url, content_type: file.contentType, bytes: stored?.size ?? 0, stem: file.stem },
          sidecar === null ? null : { key: `${storedKey}.c2pa`, size: sidecar.size },
          options
        )
      }),
    { concurrency: 4 }
  )
  const written =
    timedLyrics === null
      ? []
      : yield* Effect.forEach(timedLyricsFiles(timedLyrics), (file) =>
          Effect.gen(function* () {
            const stored = yield* storeBytes(`${exportId}/${file.name}`, Buffer.from(file.text, "utf8"), options, {
              title: file.name,
              provenance
            })
            return { name: file.name, url: stored.url, content_type: file.contentType, bytes: stored.bytes, stem: null }
          })
        )
  return [...provided.flat(), ...written] satisfies ReadonlyArray<ExportFile>
})
