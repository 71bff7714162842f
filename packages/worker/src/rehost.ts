/**
 * Re-hosting: a finished task's audio and images are copied from the provider's expiring URLs
 * into our storage before the task becomes `ready`, so `audio_url` and `image_url` are the
 * service's own lasting addresses. Keys are fixed per task and track index, so a second worker
 * repeating the copy after a crash overwrites the same files instead of leaving orphans.
 */
import type { ReadableStream as WebReadableStream } from "node:stream/web"
import { Effect, Schema } from "effect"
import type { ProviderTrack, Track } from "@lyre/core"
import { Ids } from "@lyre/core"
import { contentTypes, Storage } from "./storage/Storage.ts"

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
  const byType = contentType === null ? undefined : extensionByType[contentType.split(";")[0]?.trim().toLowerCase() ?? ""]
  if (byType !== undefined) return byType
  const fromPath = /\.([a-z0-9]{2,4})$/i.exec(new URL(url).pathname)?.[1]?.toLowerCase()
  return fromPath !== undefined && fromPath in contentTypes ? fromPath : fallback
}

export interface RehostOptions {
  /** The site root: stored files are served at `{publicUrl}/files/<key>`. */
  readonly publicUrl: string
  /** Limit for each download, connect to last byte. */
  readonly timeoutMs: number
}

/** Downloads one file into storage; answers its lasting URL. */
const copy = Effect.fnUntraced(function*(
  url: string,
  key: (extension: string) => string,
  fallback: string,
  options: RehostOptions
) {
  const storage = yield* Storage
  const signal = AbortSignal.timeout(options.timeoutMs)
  const response = yield* Effect.tryPromise({
    try: () => fetch(url, { signal, redirect: "follow" }),
    catch: (cause) => new RehostError({ message: `Could not download ${url}: ${String(cause)}`, definite: false })
  })
  if (!response.ok || response.body === null) {
    yield* Effect.promise(() => response.arrayBuffer().catch(() => null))
    return yield* new RehostError({
      message: `Downloading ${url} answered HTTP ${response.status}`,
      definite: response.status === 404 || response.status === 410
    })
  }
  const storedKey = key(extensionOf(url, response.headers.get("content-type"), fallback))
  yield* storage.put(storedKey, response.body as WebReadableStream<Uint8Array>).pipe(
    Effect.mapError((error) => new RehostError({ message: error.message, definite: false }))
  )
  return `${options.publicUrl}/files/${storedKey}`
})

/**
 * Copies every track's audio (required) and image (optional: a missing cover leaves
 * `image_url` null) and answers the tracks as the interface shows them.
 */
export const rehostTracks = Effect.fn("rehostTracks")(function*(
  taskId: string,
  tracks: ReadonlyArray<ProviderTrack>,
  options: RehostOptions
) {
  const ids = yield* Ids
  return yield* Effect.forEach(tracks, (track, index) =>
    Effect.gen(function*() {
      const [audioUrl, imageUrl] = yield* Effect.all([
        copy(track.audioUrl, (extension) => `${taskId}/${index}.${extension}`, "mp3", options),
        track.imageUrl === null
          ? Effect.succeed(null)
          : copy(track.imageUrl, (extension) => `${taskId}/${index}-cover.${extension}`, "png", options).pipe(
            Effect.catchIf((error) => error.definite, () => Effect.succeed(null))
          )
      ], { concurrency: 2 })
      return {
        id: yield* ids.make("track"),
        audio_url: audioUrl,
        duration: track.duration,
        title: track.title,
        lyrics: track.lyrics,
        image_url: imageUrl,
        tags: track.tags,
        index
      } satisfies Track
    }), { concurrency: "unbounded" })
})
