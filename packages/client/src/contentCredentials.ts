/**
 * Reading a file's content credentials (C2PA) as Lyre writes them: the manifest embedded in an
 * MP3 or WAV, or the sidecar `.c2pa` beside a MIDI file or a zip; validated by c2pa-rs
 * (`@lyre/provenance/reader`, the dashboard's reader too: it needs no Node), with no call to
 * the service.
 */
import { readAsset, readSidecar } from "@lyre/provenance/reader"
import type { ContentCredentialsReport, ReadOptions } from "@lyre/provenance/reader"

export type {
  ActionSummary,
  ContentCredentialsReport,
  IngredientSummary,
  ManifestSummary,
  ValidationFailure
} from "@lyre/provenance/reader"

export interface ContentCredentialsOptions extends ReadOptions {
  /** The file's name or media type, when its bytes alone do not say (`track.wav`, `audio/wav`). */
  readonly name?: string
  /** The sidecar manifest store, for a format with no place for one. */
  readonly sidecar?: Uint8Array
}

/** The media type of an MP3 or WAV by its bytes, else by its name; null for anything else. */
export const embeddedFormatOf = (bytes: Uint8Array, name = ""): "audio/mpeg" | "audio/wav" | null => {
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 12))
  if (head.startsWith("RIFF") && head.slice(8, 12) === "WAVE") return "audio/wav"
  if (head.startsWith("ID3") || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0)) return "audio/mpeg"
  if (/\.mp3$|audio\/mpeg/i.test(name)) return "audio/mpeg"
  if (/\.wav$|audio\/(x-)?wav/i.test(name)) return "audio/wav"
  return null
}

/** The content credentials of `bytes`: its sidecar's when one is given, else its embedded manifest's. */
export const readContentCredentials = (
  bytes: Uint8Array,
  options: ContentCredentialsOptions = {}
): Promise<ContentCredentialsReport> => {
  if (options.sidecar !== undefined) return readSidecar(options.sidecar, bytes, options)
  const format = embeddedFormatOf(bytes, options.name)
  if (format === null) return Promise.resolve({ state: "Missing", manifests: [], failures: [] })
  return readAsset(bytes, format, options)
}
