import type { GenerationTask, ModelName, Preview, TaskStatus, Track } from "../../domain/models.ts"

/** A preview as stored: what the task shows, and where the provider's audio is read (never shown). */
export interface StoredPreview extends Preview {
  /** `file:` (the built-in engine's growing file) or `http(s):` (the upstream's stream). */
  readonly source: string
}

/** A task's error as stored and sent in `job.failed`. */
export interface TaskFailure {
  readonly code: string
  readonly message: string
  /** What the provider said, for operators (kept in `last_error`); never shown to clients. */
  readonly detail?: string | undefined
}

/** A generation task as stored. */
export interface TaskRow {
  readonly id: string
  readonly status: TaskStatus
  readonly model: ModelName | null
  readonly credits_used: number
  readonly credits_refunded: number
  readonly error_code: string | null
  readonly error_message: string | null
  readonly tracks: ReadonlyArray<Track>
  /** Null until the task's audio starts (and on rows read without the column). */
  readonly previews?: ReadonlyArray<StoredPreview> | null | undefined
  readonly created_at: Date
  readonly updated_at: Date
}

export const taskColumns = [
  "id",
  "status",
  "model",
  "credits_used",
  "credits_refunded",
  "error_code",
  "error_message",
  "tracks",
  "previews",
  "created_at",
  "updated_at"
] as const

/**
 * A stored track as the API shows it. The tracks are kept as jsonb, which orders an object's
 * keys its own way (shortest first): each is rendered field by field, in the schema's order,
 * as answers go out unparsed (decision 0109).
 */
const renderStoredTrack = (track: Track): Track => ({
  id: track.id,
  audio_url: track.audio_url,
  duration: track.duration,
  title: track.title,
  lyrics: track.lyrics,
  image_url: track.image_url,
  tags: track.tags,
  index: track.index
})

export const renderTask = (row: TaskRow): GenerationTask => ({
  id: row.id,
  status: row.status,
  model: row.model,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
  credits_used: row.credits_used,
  credits_refunded: row.credits_refunded,
  error: row.error_code === null ? null : { code: row.error_code, message: row.error_message ?? "" },
  tracks: row.tracks.map(renderStoredTrack),
  // Offered only while pending: at ready the final files are in `tracks`, at failed there is nothing.
  previews:
    row.status === "pending" && row.previews != null
      ? row.previews.map((p) => ({ index: p.index, stream_url: p.stream_url }))
      : []
})

/**
 * "Still pending", for statements that address one task by id, as SQL over the task's columns
 * (`alias` names the table when the statement joins). It says `not in` the terminal states
 * rather than `= 'pending'` on purpose: the partial indexes on pending tasks (`where status =
 * 'pending'`) cannot serve it, so the only plan is the primary key. A plan cached while the
 * table was small could otherwise walk every pending task to find one id, and a service with
 * many tasks in flight pays for it on every transition.
 */
export const stillPending = (alias?: string): string =>
  `${alias === undefined ? "" : `${alias}.`}status not in ('ready', 'failed')`
