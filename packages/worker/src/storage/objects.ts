/**
 * What every store shares, the port's side of it: keys, content types, the size limit, the
 * error and the shape of a store. `Storage.ts` (the port and its file store) and `S3Storage.ts`
 * both build on this file, so neither has to import the other's module to agree on them.
 */
import type { Readable } from "node:stream"
import { Schema } from "effect"
import type { Effect } from "effect"

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
  gif: "image/gif",
  mid: "audio/midi",
  lrc: "text/plain; charset=utf-8",
  vtt: "text/vtt; charset=utf-8",
  json: "application/json",
  zip: "application/zip",
  // A sidecar manifest store (content credentials) beside a file whose format has no place for one.
  c2pa: "application/c2pa"
}

/**
 * Keys are `<segment>/<segment>.<ext>` of URL-safe characters, or such a key's sidecar
 * `<segment>/<segment>.<ext>.c2pa`; anything else is refused.
 */
const keyShape = /^[A-Za-z0-9_-]+\/[A-Za-z0-9_-]+\.[a-z0-9]+(?:\.c2pa)?$/

export const isStorageKey = (key: string): boolean => keyShape.test(key)

export const contentTypeOf = (key: string): string =>
  contentTypes[key.slice(key.lastIndexOf(".") + 1)] ?? "application/octet-stream"

/** What a store does: the service behind the `Storage` tag. */
export interface ObjectStore {
  /** Stores the whole stream under `key`, replacing what was there. */
  readonly put: (key: string, body: Readable | Uint8Array) => Effect.Effect<StoredObject, StorageError>
  /** Size and type of a stored object, or null; a store out of reach is a defect (a `StorageError`). */
  readonly stat: (key: string) => Effect.Effect<StoredObject | null>
  /** Bytes `start..end` (inclusive) of a stored object; a failure midway destroys the stream with its error. */
  readonly read: (key: string, range: { readonly start: number; readonly end: number }) => Readable
  /** Removes a stored object (a deleted upload's file); one already gone is no error. */
  readonly remove: (key: string) => Effect.Effect<void, StorageError>
  /** Where a key's object is a file on this machine, to be read in place; null for a remote store. */
  readonly localPath: (key: string) => string | null
}

/** Largest object accepted (a long song in a lossless format is well below). */
export const maxObjectBytes = 256 * 1024 * 1024
