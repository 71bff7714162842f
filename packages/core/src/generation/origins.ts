/**
 * The facts of a finished file's making, read from a task's or an export's row for its content
 * credentials (provenance/origin.ts decides what they say): the work, the model, the source
 * track's file and whether the user's own audio is in it. Nothing about the account is read.
 */
import { Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { FileOrigin, FileWork } from "../provenance/origin.ts"

interface SourceRow {
  readonly source_track_id: string | null
  readonly source_url: string | null
  readonly source_title: string | null
  readonly upload_key: string | null
  readonly upload_title: string | null
  readonly upload_type: string | null
}

interface TaskRow extends SourceRow {
  readonly model: string | null
  readonly derivation: "cover" | "vocals" | "instrumental" | "edit" | null
}

interface ExportRow extends SourceRow {
  readonly model: string | null
  readonly format: "wav" | "midi" | "stems" | "timed_lyrics"
}

/** A source track's file: an upload's, or a task's track as hosted (`.../files/<key>`). */
const sourceOf = (row: SourceRow): { readonly origin: FileOrigin["source"]; readonly userAudio: boolean } => {
  if (row.upload_key !== null) {
    return {
      origin: { storageKey: row.upload_key, title: row.upload_title, contentType: row.upload_type ?? "audio/mpeg" },
      userAudio: true
    }
  }
  const key = row.source_url === null ? null : /\/files\/([^?#]+)/.exec(row.source_url)?.[1]
  if (key === undefined || key === null) return { origin: null, userAudio: false }
  const type = key.endsWith(".wav") ? "audio/wav" : "audio/mpeg"
  return {
    origin: { storageKey: decodeURIComponent(key), title: row.source_title, contentType: type },
    userAudio: false
  }
}

const sourceColumns = (sql: SqlClient) => sql`
  st.id as source_track_id,
  (select tr ->> 'audio_url' from jsonb_array_elements(sg.tracks) tr where tr ->> 'id' = st.id) as source_url,
  (select tr ->> 'title' from jsonb_array_elements(sg.tracks) tr where tr ->> 'id' = st.id) as source_title,
  u.storage_key as upload_key, u.title as upload_title, u.content_type as upload_type`

const sourceJoins = (sql: SqlClient) => sql`
  left join generation_tasks sg on sg.id = st.task_id
  left join uploads u on u.id = st.upload_id and u.deleted_at is null`

/**
 * A task's origin, `maker` being the provider that rendered it. A cover sings the source again,
 * so only the other tools on an upload's track mix the user's audio in.
 */
export const taskOrigin = (sql: SqlClient, taskId: string, maker: string) =>
  Effect.gen(function* () {
    const [row] = yield* sql<TaskRow>`
      select g.model, g.derivation, ${sourceColumns(sql)}
      from generation_tasks g
      left join tracks st on st.id = g.source_track_id
      ${sourceJoins(sql)}
      where g.id = ${taskId}`
    const work: FileWork = row === undefined || row.source_track_id === null ? "song" : (row.derivation ?? "extension")
    const source = row === undefined ? { origin: null, userAudio: false } : sourceOf(row)
    return {
      work,
      model: row?.model ?? null,
      maker,
      userAudio: source.userAudio && work !== "cover",
      source: source.origin
    } satisfies FileOrigin
  })

/** An export's origin: made from its track, which is its source. */
export const exportOrigin = (sql: SqlClient, exportId: string, maker: string) =>
  Effect.gen(function* () {
    const [row] = yield* sql<ExportRow>`
      select e.model, e.format, ${sourceColumns(sql)}
      from exports e
      join tracks st on st.id = e.track_id
      ${sourceJoins(sql)}
      where e.id = ${exportId}`
    const source = row === undefined ? { origin: null, userAudio: false } : sourceOf(row)
    return {
      work: row?.format ?? "wav",
      model: row?.model ?? null,
      maker,
      userAudio: source.userAudio,
      source: source.origin
    } satisfies FileOrigin
  })
