/**
 * An upload's track as the song tools see it: a SourceTrack whose root is the upload (its file
 * and stored listening), and a request that names its tempo and key, so that what is composed
 * from it (an extension's continuation) is in them. Found only while the upload is kept and
 * `ready`, and, when an account is given, only for that account.
 */
import { Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import { GenerateRequest } from "../domain/models.ts"
import type { SourceTrack, UploadSource } from "../provider/outcomes.ts"

interface UploadTrackRow {
  readonly track_id: string
  readonly upload_id: string
  readonly title: string | null
  readonly content_type: UploadSource["contentType"]
  readonly duration: number
  readonly storage_key: string
  readonly analysis: UploadSource["analysis"]
  readonly transcription: UploadSource["transcription"]
}

/** The request an upload's track stands for: instrumental, at the tempo and in the key heard. */
export const uploadRequestOf = (row: Pick<UploadTrackRow, "title" | "analysis">): GenerateRequest =>
  GenerateRequest.parse({
    style: `${row.analysis.bpm} bpm, in ${row.analysis.key}`,
    title: row.title ?? "Upload",
    instrumental: true,
    model: "aether"
  })

export const uploadTrackOf = (
  sql: SqlClient,
  trackId: string,
  accountId: string | null,
  providerRequestOf: (request: GenerateRequest) => SourceTrack["request"],
  publicUrl: string
) =>
  Effect.gen(function* () {
    const [row] = yield* sql<UploadTrackRow>`
      select t.id as track_id, u.id as upload_id, u.title, u.content_type, u.duration, u.storage_key, u.analysis,
             u.transcription
      from tracks t join uploads u on u.id = t.upload_id
      where t.id = ${trackId} and u.status = 'ready' and u.deleted_at is null
      ${accountId === null ? sql`` : sql`and t.account_id = ${accountId}`}`.pipe(Effect.orDie)
    if (row === undefined) return null
    const request = uploadRequestOf(row)
    const upload: UploadSource = {
      uploadId: row.upload_id,
      storageKey: row.storage_key,
      contentType: row.content_type,
      duration: row.duration,
      analysis: row.analysis,
      transcription: row.transcription
    }
    const source: SourceTrack = {
      trackId: row.track_id,
      providerTrackId: "",
      providerTaskId: "",
      taskId: row.upload_id,
      index: 0,
      duration: row.duration,
      // The upload's own file, which an upstream is handed signed (generation/signedFiles.ts).
      audioUrl: `${publicUrl}/files/${row.storage_key}`,
      request: providerRequestOf(request),
      extends: null,
      derives: null,
      upload
    }
    return { source, model: request.model, request }
  })
