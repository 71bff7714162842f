/**
 * The Upload as the interface shows it (DESIGN.md section 11), its limits, and the schemas of its
 * routes: one zod schema per shape, read by tRPC, the OpenAPI document and every adapter.
 */
import { z } from "zod"
import { uploadContentTypes } from "../domain/contentTypes.ts"
import { UploadAnalysis } from "../domain/listening.ts"
import { TaskError } from "../domain/models.ts"

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
} from "../domain/contentTypes.ts"
export { ChordSpan, UploadAnalysis } from "../domain/listening.ts"
export type { HeardVoice, Transcription } from "../domain/listening.ts"
export const UploadContentType = z.enum(uploadContentTypes)
export type UploadContentType = z.infer<typeof UploadContentType>

export const UploadStatus = z.enum(["pending", "ready", "failed"])
export type UploadStatus = z.infer<typeof UploadStatus>

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
