/** Uploads as stored, and as the API shows them. */
import type { Upload, UploadAnalysis, UploadContentType, UploadStatus } from "./model.ts"

export interface UploadRow {
  readonly id: string
  readonly status: UploadStatus
  readonly title: string | null
  readonly content_type: UploadContentType
  readonly bytes: number
  readonly duration: number
  readonly track_id: string | null
  readonly analysis: UploadAnalysis | null
  readonly error_code: string | null
  readonly error_message: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

export const uploadColumns = `id, status, title, content_type, bytes, duration, track_id, analysis, error_code,
  error_message, created_at, updated_at`

/**
 * The analysis is kept as jsonb, which orders an object's keys its own way (shortest first):
 * rendered field by field, in the schema's order, as answers go out unparsed (decision 0109).
 */
const renderAnalysis = (analysis: UploadAnalysis): UploadAnalysis => ({
  bpm: analysis.bpm,
  key: analysis.key,
  time_signature: analysis.time_signature,
  loudness_lufs: analysis.loudness_lufs,
  beats: analysis.beats,
  chords: analysis.chords.map((span) => ({ start: span.start, end: span.end, chord: span.chord }))
})

export const renderUpload = (row: UploadRow): Upload => ({
  id: row.id,
  status: row.status,
  title: row.title,
  content_type: row.content_type,
  bytes: row.bytes,
  duration: row.duration,
  track_id: row.track_id,
  analysis: row.analysis === null ? null : renderAnalysis(row.analysis),
  error: row.error_code === null ? null : { code: row.error_code, message: row.error_message ?? "" },
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString()
})

/** The storage key of an upload's file: its id, then `source` with its type's extension. */
export const uploadKeyOf = (id: string, extension: string): string => `${id}/source.${extension}`
