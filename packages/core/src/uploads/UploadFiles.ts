/**
 * The port through which core receives an upload's file and lets it go. Core decides what is
 * asked (limits, order, allowance, rows, events); the composition root supplies where bytes go
 * and how they are decoded (@lyre/worker's storage and the engine's kept decoders), so core
 * depends on neither.
 */
import type { Readable } from "node:stream"
import { Context } from "effect"
import type { Effect } from "effect"
import type { InvalidAudio, UploadTooLarge } from "../domain/errors.ts"
import type { ValidationError } from "../domain/errors.ts"
import type { UploadContentType } from "./model.ts"

/** The audio file of an upload request: a raw body, or the `file` part of a multipart one. */
export interface AudioFile {
  readonly stream: Readable
  /** The type the client gave it: the body's `Content-Type`, or the part's. */
  readonly contentType: string
  /** The part's file name, when the client gave one. */
  readonly filename: string | null
}

/** The file of an upload request, or why there is none to read. */
export type OpenedAudio =
  | { readonly ok: true; readonly file: AudioFile }
  | { readonly ok: false; readonly error: ValidationError | UploadTooLarge }

/** The form's fields once its file has been read to the end, or why the form is refused. */
export type FormFields =
  | { readonly ok: true; readonly title: string | undefined }
  | { readonly ok: false; readonly error: ValidationError }

/**
 * An upload request's body, read only once the request is admitted (so a refused request is
 * answered without reading it), and handed to core by the adapter.
 */
export interface IncomingAudio {
  /** `Content-Length` as declared; null for a chunked body. */
  readonly declaredBytes: number | null
  /**
   * Reads up to the audio file; a body that has none is the request's fault (as is, for a file
   * fetched from a URL, one that cannot be fetched or declares a length past the cap).
   */
  readonly open: () => Promise<OpenedAudio>
  /**
   * The form's `title` field, once the file has been read to its end (a field after the file
   * counts too); a form with a second `file` part is refused here, as it is only seen then.
   */
  readonly fields: () => Promise<FormFields>
}

/** What a received file turned out to be, once decoded. */
export interface ReceivedAudio {
  readonly bytes: number
  /** SHA-256 of the file's bytes, hex: what an `Idempotency-Key`'s request hash covers of it. */
  readonly sha256: string
  /** Seconds. */
  readonly duration: number
}

export class UploadFiles extends Context.Service<
  UploadFiles,
  {
    /**
     * Streams the file to a staging place, counting its bytes (cut one past `maxUploadBytes`),
     * decodes it whole with a kept decoder of its type and checks it (not silent, 5 s to 8 min);
     * only then keeps it under `key` in storage. On any failure nothing is kept.
     */
    readonly receive: (
      key: string,
      file: AudioFile,
      type: UploadContentType
    ) => Effect.Effect<ReceivedAudio, InvalidAudio | UploadTooLarge>
    /** Removes a kept file; one already gone is no error. */
    readonly remove: (key: string) => Effect.Effect<void>
  }
>()("lyre/core/uploads/UploadFiles") {}
