/**
 * A track as every task on it needs it: its SourceTrack (the provider's ids, the request and seed
 * that made it, and the chain of tracks it was made from: extensions, covers, vocals,
 * instrumentals, edits, each back to the first song) and the persona its request named. One
 * reading for every tool, so a track made by any task is a source for any other.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { PersonaNotFound, TrackNotFound } from "../domain/errors.ts"
import { hasIdShape } from "../domain/ids.ts"
import type { GenerateRequest, ModelName } from "../domain/models.ts"
import type { DerivationKind, PersonaSource, SourceTrack, TrackDerivation } from "../provider/outcomes.ts"
import { Settings } from "../platform/Settings.ts"
import { providerRequestOf } from "./providerRequest.ts"
import { uploadTrackOf } from "./uploadTracks.ts"

/** The source row of a track: the track, its task, and what that task was made from. */
interface SourceRow {
  readonly track_id: string
  readonly provider_track_id: string | null
  readonly task_id: string
  readonly provider_task_id: string | null
  readonly track_index: number
  readonly duration: number | null
  readonly model: ModelName
  readonly request: GenerateRequest
  readonly tags: string | null
  readonly audio_url: string | null
  readonly source_track_id: string | null
  readonly continue_at: number | null
  readonly derivation: DerivationKind | null
  readonly span_start: number | null
  readonly span_end: number | null
  readonly persona_id: string | null
}

/** A track found for a task on it: what the provider needs, the task's own request, and its tags. */
export interface FoundTrack {
  readonly source: SourceTrack
  readonly model: ModelName
  readonly request: GenerateRequest
  /** The track's tags as its provider gave them (the engine's name the voice: "female vocals"). */
  readonly tags: string | null
}

interface PersonaRow {
  readonly id: string
  readonly track_id: string
  readonly provider_persona_id: string | null
}

/** How deep a chain of tracks is followed: far beyond any real use, and a guard against a cycle. */
const maxChain = 64

const sourceColumns = `
  t.id as track_id, t.provider_track_id, g.id as task_id, g.provider_task_id, t.track_index, t.duration, g.model,
  g.request, (select tr ->> 'tags' from jsonb_array_elements(g.tracks) tr where tr ->> 'id' = t.id) as tags,
  (select tr ->> 'audio_url' from jsonb_array_elements(g.tracks) tr where tr ->> 'id' = t.id) as audio_url,
  g.source_track_id, g.continue_at, g.derivation, g.span_start, g.span_end, g.persona_id`

export const trackNotFound = (trackId: string, param = "track_id") =>
  new TrackNotFound({ message: `No ready track ${trackId}.`, param })

export const personaNotFound = (personaId: string, param = "persona_id") =>
  new PersonaNotFound({ message: `No persona ${personaId}.`, param })

/** Built in a service's layer: `const sources = yield* trackSources`. */
export const trackSources = Effect.gen(function* () {
  const sql = yield* SqlClient
  const { publicUrl } = yield* Settings
  // A chain may begin at an upload's track rather than at a task's.
  const uploadTrack = (trackId: string, accountId: string | null) =>
    uploadTrackOf(sql, trackId, accountId, providerRequestOf, publicUrl)

  const sourceRow = (trackId: string) =>
    sql<SourceRow>`
      select ${sql.literal(sourceColumns)}
      from tracks t join generation_tasks g on g.id = t.task_id
      where t.id = ${trackId} and g.status = 'ready'`.pipe(Effect.orDie)

  const personaRow = (personaId: string) =>
    sql<PersonaRow>`select id, track_id, provider_persona_id from personas where id = ${personaId}`.pipe(Effect.orDie)

  /** A persona as its provider needs it; a deleted one still renders the tracks made with it. */
  const personaOf = (row: PersonaRow, depth: number): Effect.Effect<PersonaSource | undefined> =>
    Effect.gen(function* () {
      const [track] = yield* sourceRow(row.track_id)
      // A persona made from an upload's track keeps that voice as a task's track's is kept.
      const source =
        track !== undefined ? yield* sourceOf(track, depth + 1) : (yield* uploadTrack(row.track_id, null))?.source
      if (source === undefined) return undefined
      return { personaId: row.id, providerPersonaId: row.provider_persona_id, source }
    })

  /** The SourceTrack of a row, following what it was made from back to the first song. */
  const sourceOf = (row: SourceRow, depth: number): Effect.Effect<SourceTrack> =>
    Effect.gen(function* () {
      let parent: SourceTrack | null = null
      if (row.source_track_id !== null && depth < maxChain) {
        const [found] = yield* sourceRow(row.source_track_id)
        parent =
          found !== undefined
            ? yield* sourceOf(found, depth + 1)
            : ((yield* uploadTrack(row.source_track_id, null))?.source ?? null)
      }
      let persona: PersonaSource | undefined
      if (row.persona_id !== null && depth < maxChain) {
        const [found] = yield* personaRow(row.persona_id)
        if (found !== undefined) persona = yield* personaOf(found, depth)
      }
      const derives: TrackDerivation | null =
        parent === null || row.derivation === null
          ? null
          : row.derivation === "edit"
            ? { kind: "edit", source: parent, start: row.span_start ?? 0, end: row.span_end ?? 0 }
            : { kind: row.derivation, source: parent }
      return {
        trackId: row.track_id,
        providerTrackId: row.provider_track_id ?? "",
        providerTaskId: row.provider_task_id ?? "",
        taskId: row.task_id,
        index: row.track_index,
        duration: row.duration,
        audioUrl: row.audio_url,
        request: { ...providerRequestOf(row.request), persona },
        extends:
          parent !== null && row.derivation === null ? { source: parent, continueAt: row.continue_at ?? 0 } : null,
        derives
      }
    })

  /** A track of a ready task of this account, or 404 naming it (`param`: its field). */
  const findTrack = Effect.fnUntraced(function* (accountId: string, trackId: string, param = "track_id") {
    if (!hasIdShape("track", trackId)) return yield* trackNotFound(trackId, param)
    const [row] = yield* sql<SourceRow>`
      select ${sql.literal(sourceColumns)}
      from tracks t join generation_tasks g on g.id = t.task_id
      where t.id = ${trackId} and t.account_id = ${accountId} and g.status = 'ready'`.pipe(Effect.orDie)
    if (row === undefined) {
      const uploaded = yield* uploadTrack(trackId, accountId)
      if (uploaded === null) return yield* trackNotFound(trackId, param)
      return { ...uploaded, tags: null } satisfies FoundTrack
    }
    return {
      source: yield* sourceOf(row, 0),
      model: row.model,
      request: row.request,
      tags: row.tags
    } satisfies FoundTrack
  })

  /** A live persona of this account as a provider needs it, or 404 naming `persona_id`. */
  const findPersona = Effect.fnUntraced(function* (accountId: string, personaId: string) {
    if (!hasIdShape("persona", personaId)) return yield* personaNotFound(personaId)
    const [row] = yield* sql<PersonaRow>`
      select id, track_id, provider_persona_id from personas
      where id = ${personaId} and account_id = ${accountId} and deleted_at is null`.pipe(Effect.orDie)
    const persona = row === undefined ? undefined : yield* personaOf(row, 0)
    if (persona === undefined) return yield* personaNotFound(personaId)
    return persona
  })

  return { findTrack, findPersona }
})
