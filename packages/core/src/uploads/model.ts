/**
 * The Upload as the interface shows it (DESIGN.md section 11), its limits, and the schemas of its
 * routes: one zod schema per shape, read by tRPC, the OpenAPI document and every adapter.
 */
import { z } from "zod"
import { TaskError } from "../domain/models.ts"
import { uploadContentTypes } from "./contentTypes.ts"

/** Largest upload: a declared length past it is refused unread, a streamed body cut one byte past it. */
export const maxUploadBytes = 50 * 1024 * 1024
/** Shortest and longest audio kept, once decoded (seconds). */
export const minUploadSeconds = 5
export const maxUploadSeconds = 8 * 60

export {
  uploadContentTypeOf,
  uploadContentTypeOfFileName,
  uploadContentTypes,
  uploadExtensionOf
} from "./contentTypes.ts"
export const UploadContentType = z.enum(uploadContentTypes)
export type UploadContentType = z.infer<typeof UploadContentType>

export const UploadStatus = z.enum(["pending", "ready", "failed"])
export type UploadStatus = z.infer<typeof UploadStatus>

export const ChordSpan = z.object({
  start: z.number().describe("Seconds."),
  end: z.number().describe("Seconds."),
  chord: z.string().describe("`C`, `Am`, `G7`, ... or `N` where no chord is heard.")
})

export const UploadAnalysis = z.object({
  bpm: z.number(),
  key: z.string().describe("Tonic and mode, e.g. `A minor`."),
  time_signature: z.string().describe("E.g. `4/4`."),
  loudness_lufs: z.number().describe("Integrated loudness (ITU-R BS.1770)."),
  beats: z.array(z.number()).describe("Beat times in seconds."),
  chords: z.array(ChordSpan).describe("Chords on the beat grid.")
})
export type UploadAnalysis = z.infer<typeof UploadAnalysis>

/** The note transcription kept with an upload (not public): what later tasks compose from. */
export interface Transcription {
  readonly notes: ReadonlyArray<{
    readonly pitch: number
    readonly start: number
    readonly end: number
    readonly velocity: number
  }>
  /** The voice heard along its top line (register, centre, brightness, vibrato): what a persona of the upload's track sings with. */
  readonly voice?: HeardVoice | null | undefined
}

/** The voice heard in an upload (the engine's measure of it), kept with its transcription. */
export interface HeardVoice {
  readonly register: "m" | "f"
  readonly centre: number
  readonly brightness: number
  readonly vibrato: { readonly rate: number; readonly depth: number }
}

export const Upload = z.object({
  id: z.string().describe("Upload id (`upl_...`)."),
  status: UploadStatus,
  title: z.string().nullable(),
  content_type: UploadContentType,
  bytes: z.int(),
  duration: z.number().describe("Seconds, once decoded."),
  track_id: z.string().nullable().describe("Once `ready`: a track (`trk_...`) every song tool takes."),
  analysis: UploadAnalysis.nullable().describe("Once `ready`: what listening heard."),
  error: TaskError.nullable(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime()
})
export type Upload = z.infer<typeof Upload>

export const UploadList = z.object({ data: z.array(Upload), has_more: z.boolean() })
export type UploadList = z.infer<typeof UploadList>

export const DeletedUpload = z.object({ id: z.string(), deleted: z.literal(true) })
export type DeletedUpload = z.infer<typeof DeletedUpload>

/** The upload's own fields beside its file: `title` (a multipart form's field wins over the query's). */
export const CreateUploadInput = z.strictObject({
  title: z.string().max(200).optional().describe("A name for the upload (at most 200 characters).")
})

export const ListUploadsQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  starting_after: z.string().optional()
})

export const UploadIdParams = z.strictObject({ id: z.string() })
