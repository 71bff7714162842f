/**
 * Generation tasks: creation (the charge), reads, and the state machine. Creation is one
 * statement: it checks model availability, the credential's in-flight counter and the balance
 * on locked rows, debits (subscription before one-time), counts the task in flight, writes the
 * ledger row and the task; any failure leaves nothing behind. Every statement that moves a task
 * out of `pending` frees its slot in that same statement.
 *
 * Submission follows the commit, never inside the transaction: accepted stores the provider's
 * task id; a definite rejection fails the task with its refund and its `job.failed` event in one
 * statement and answers 500 `provider_error` (kept as the idempotent answer); an unknown outcome
 * leaves the task pending for the worker, which never submits it again (docs/decisions/0012-worker-submission-at-most-once.md).
 */
import { createHash } from "node:crypto"
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { InvalidParameter, TaskNotFound } from "../domain/errors.ts"
import type { PersonaNotFound } from "../domain/errors.ts"
import { providerRequestOf } from "./providerRequest.ts"
import { trackSources } from "./sources.ts"
import { hasIdShape, Ids, randomBase62 } from "../domain/ids.ts"
import type { GenerateRequest, GenerationTask, GenerationTaskList, Track } from "../domain/models.ts"
import type { Principal } from "../domain/principal.ts"
import { priceOf } from "../domain/pricing.ts"
import { renderTask, stillPending } from "./domain/tasks.ts"
import type { StoredPreview, TaskFailure, TaskRow } from "./domain/tasks.ts"
import type {
  Extension,
  PersonaSource,
  ProviderPreview,
  ProviderSubmission,
  TrackDerivation
} from "../provider/outcomes.ts"
import { signFileUrl } from "./signedFiles.ts"
import { Provider } from "../provider/Provider.ts"
import { canonicalJson, charge } from "../money/charge.ts"
import type { Charged, ChargeError } from "../money/charge.ts"
import { refundOfFailed } from "../money/refund.ts"
import { Metrics } from "../observability/Metrics.ts"
import { currentTraceContext, fnTracedWhen, TaskTraces } from "../observability/TaskTraces.ts"
import { submissionRecorder } from "./submission.ts"
import type { SubmittedKind } from "./submission.ts"
import { WriteSql } from "../platform/WriteSql.ts"
import { Settings } from "../platform/Settings.ts"
import { WebhookSignal } from "../webhooks/WebhookSignal.ts"

/** The answer of a create call: a fresh task, or the first answer replayed for an idempotency key. */
export type CreateOutcome = Charged<GenerationTask>

export type CreateError = ChargeError | PersonaNotFound

/** What a generation is made from, when it is made from a track: an extension, or a task of section 11. */
export type TaskOrigin = { readonly extend: Extension } | { readonly derive: TrackDerivation }

/** A finished track as the worker hands it over: the interface's shape, and the provider's id of it. */
export interface FinishedTrack {
  readonly track: Track
  /** The upstream's `audioId`: what a song tool on this track names it by. */
  readonly providerTrackId: string | null
}

/**
 * A provider's failure as clients see it: a message per error code. The provider's own words
 * (its codes, its hosts, its account's state) go to `detail` only.
 */
export const providerFailure = (code: string, detail: string): TaskFailure => ({
  code,
  message:
    code === "content_policy"
      ? "The request was refused by the content policy; its credits were refunded."
      : "The music provider could not generate this task; its credits were refunded.",
  detail
})

/** The callback address the provider is given for a task: unsigned callbacks carry its secret token. */
export const callbackUrlFor = (publicUrl: string, taskId: string, token: string): string =>
  `${publicUrl}/internal/provider/callback/${taskId}?token=${token}`

/** `created_at` in the JSON of events, exactly as `renderTask` writes it. */
export const isoText = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

export { providerRequestOf } from "./providerRequest.ts"

/** The storage-like key of a track's stream while it is made: `{site_url}/files/streams/{task}/{index}.mp3`. */
export const streamKeyOf = (taskId: string, index: number): string => `streams/${taskId}/${index}.mp3`

/**
 * Where a task's stream stands, for the server's `/files/streams/...`: its status, the provider's
 * address of the track's audio while pending, and the final file's once ready.
 */
export interface StreamLookup {
  readonly status: "pending" | "ready" | "failed"
  /** The provider's address (`file:` or `http(s):`) while pending and streaming; else null. */
  readonly source: string | null
  /** The track's final file once ready; else null. */
  readonly audioUrl: string | null
}

/** What the provider receives: the validated request, our task id and where to call back. */
const submissionOf = (
  taskId: string,
  request: GenerateRequest,
  callbackUrl: string,
  origin: TaskOrigin | undefined,
  persona: PersonaSource | undefined
): ProviderSubmission => ({
  taskId,
  ...providerRequestOf(request),
  persona,
  callbackUrl,
  extend: origin !== undefined && "extend" in origin ? origin.extend : undefined,
  derive: origin !== undefined && "derive" in origin ? origin.derive : undefined
})

/** What an idempotency key's hash covers: a task made from a track covers its track and span too. */
const hashedRequest = (request: GenerateRequest, origin: TaskOrigin | undefined): unknown => {
  if (origin === undefined) return request
  if ("extend" in origin)
    return { extend: origin.extend.source.trackId, continue_at: origin.extend.continueAt, request }
  const span = origin.derive.kind === "edit" ? { start: origin.derive.start, end: origin.derive.end } : {}
  return { derive: origin.derive.kind, track: origin.derive.source.trackId, ...span, request }
}

export class Generations extends Context.Service<
  Generations,
  {
    /** A generation; with `origin`, one made from a track (its request already merged). */
    readonly create: (
      principal: Principal,
      request: GenerateRequest,
      idempotencyKey: string | undefined,
      origin?: TaskOrigin | undefined
    ) => Effect.Effect<CreateOutcome, CreateError>
    readonly get: (principal: Principal, id: string) => Effect.Effect<GenerationTask, TaskNotFound>
    readonly list: (
      principal: Principal,
      page: { readonly limit: number; readonly startingAfter: string | undefined }
    ) => Effect.Effect<GenerationTaskList, InvalidParameter>
    /**
     * pending -> ready with its tracks (and their rows, with the provider's ids) and its
     * `job.completed` event, in one statement; false when the task was not pending (applied once).
     */
    readonly markReady: (taskId: string, tracks: ReadonlyArray<FinishedTrack>) => Effect.Effect<boolean>
    /**
     * pending -> failed, refunding the debited buckets and writing `job.failed` in the same
     * statement; false when not pending.
     */
    readonly markFailed: (taskId: string, error: TaskFailure) => Effect.Effect<boolean>
    /**
     * A pending task's audio has started: its previews (Lyre's own signed stream addresses) and
     * its `job.streaming` event, in one statement, once; false when already set or not pending.
     */
    readonly markStreaming: (taskId: string, previews: ReadonlyArray<ProviderPreview>) => Effect.Effect<boolean>
    /** What `/files/streams/{task}/{index}.mp3` serves; null when there is no such task. */
    readonly streamOf: (taskId: string, index: number) => Effect.Effect<StreamLookup | null>
  }
>()("lyre/core/generation/Generations") {
  static readonly layer = Layer.effect(
    Generations,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const writes = yield* WriteSql
      const ids = yield* Ids
      const settings = yield* Settings
      const provider = yield* Provider
      const signal = yield* WebhookSignal
      const metrics = yield* Metrics
      const traced = yield* TaskTraces
      const submissions = yield* submissionRecorder
      const sources = yield* trackSources

      const taskKind: SubmittedKind = {
        table: "generation_tasks",
        noun: "task",
        providerIdColumn: "provider_task_id",
        relaxedAccept: true,
        failureOf: providerFailure,
        markFailed: (id, failure) => markFailed(id, failure)
      }

      const create = fnTracedWhen(
        traced,
        "Generations.create"
      )(function* (
        principal: Principal,
        request: GenerateRequest,
        idempotencyKey: string | undefined,
        origin?: TaskOrigin | undefined
      ) {
        const persona =
          request.persona_id === undefined
            ? undefined
            : yield* sources.findPersona(principal.accountId, request.persona_id)
        const now = yield* Clock.currentTimeMillis
        const taskId = yield* ids.make("task")
        const ledgerId = yield* ids.make("ledgerEntry")
        const lowEventId = yield* ids.make("event")
        const price = priceOf[request.model]
        const nowIso = new Date(now).toISOString()
        const deadlineIso = new Date(now + settings.generationTimeoutSeconds * 1000).toISOString()
        const callbackToken = randomBase62(32)
        const traceContext = traced ? yield* currentTraceContext : null

        // A key on a track covers the track too: the same body for another track is another request.
        const requestHash =
          idempotencyKey === undefined
            ? ""
            : createHash("sha256")
                .update(canonicalJson(hashedRequest(request, origin)))
                .digest("hex")
        const extension = origin !== undefined && "extend" in origin ? origin.extend : undefined
        const derivation = origin !== undefined && "derive" in origin ? origin.derive : undefined
        const body = renderTask({
          id: taskId,
          status: "pending",
          model: request.model,
          credits_used: price,
          credits_refunded: 0,
          error_code: null,
          error_message: null,
          tracks: [],
          created_at: new Date(now),
          updated_at: new Date(now)
        })

        const work = writes`
          insert into generation_tasks (id, account_id, credential_subject, status, model, request, credits_used,
            debit_subscription, debit_onetime, deadline_at, created_at, updated_at, callback_token,
            submission_state, trace_context, source_track_id, continue_at, derivation, span_start, span_end, persona_id)
          select ${taskId}, ${principal.accountId}, ${principal.subject}, 'pending', ${request.model},
                 ${JSON.stringify(request)}::jsonb, ${price}, s_take, o_take, ${deadlineIso}::timestamptz,
                 ${nowIso}::timestamptz, ${nowIso}::timestamptz, ${callbackToken}, 'submitting', ${traceContext}::text,
                 ${(extension ?? derivation)?.source.trackId ?? null}::text, ${extension?.continueAt ?? null}::double precision,
                 ${derivation?.kind ?? null}::text, ${derivation?.kind === "edit" ? derivation.start : null}::double precision,
                 ${derivation?.kind === "edit" ? derivation.end : null}::double precision, ${persona?.personaId ?? null}::text
          from debit
          returning id`

        const key = idempotencyKey === undefined ? undefined : { accountId: principal.accountId, key: idempotencyKey }
        const counted = Effect.sync(() => metrics.taskCreated(request.model, price))
        const submit = provider.submit(
          submissionOf(taskId, request, callbackUrlFor(settings.publicUrl, taskId, callbackToken), origin, persona)
        )
        const created = yield* submissions.charged(
          charge(writes, {
            principal,
            model: request.model,
            price,
            nowMillis: now,
            ledgerId,
            lowEventId,
            work,
            ledgerColumn: "task_id",
            body,
            idempotency: idempotencyKey === undefined ? undefined : { key: idempotencyKey, requestHash },
            priceText: `The ${request.model} model costs`
          }),
          { kind: taskKind, id: taskId, model: request.model, idempotency: key, counted, submit }
        )
        if (created.replayed) return created
        yield* counted
        yield* submissions.record(taskKind, taskId, request.model, yield* submit, key)
        return created
      })

      const get = Effect.fnUntraced(function* (principal: Principal, id: string) {
        if (!hasIdShape("task", id)) return yield* new TaskNotFound({ message: `No generation task ${id}.` })
        const [row] = yield* sql<TaskRow>`
          select id, status, model, credits_used, credits_refunded, error_code, error_message, tracks,
                 previews, created_at, updated_at
          from generation_tasks where id = ${id} and account_id = ${principal.accountId}`.pipe(Effect.orDie)
        if (row === undefined) return yield* new TaskNotFound({ message: `No generation task ${id}.` })
        return renderTask(row)
      })

      const list = Effect.fn("Generations.list")(function* (
        principal: Principal,
        page: { readonly limit: number; readonly startingAfter: string | undefined }
      ) {
        const cursor = page.startingAfter
        if (cursor !== undefined) {
          const [found] =
            cursor !== undefined && hasIdShape("task", cursor)
              ? yield* sql`select 1 from generation_tasks where id = ${cursor} and account_id = ${principal.accountId}`.pipe(
                  Effect.orDie
                )
              : []
          if (found === undefined) {
            return yield* new InvalidParameter({
              message: `starting_after: no generation task ${cursor}.`,
              param: "starting_after"
            })
          }
        }
        const rows = yield* sql<TaskRow>`
          select id, status, model, credits_used, credits_refunded, error_code, error_message, tracks,
                 previews, created_at, updated_at
          from generation_tasks t
          where t.account_id = ${principal.accountId}
          ${
            cursor === undefined
              ? sql``
              : sql`and (t.created_at, t.id) < (select created_at, id from generation_tasks where id = ${cursor})`
          }
          order by t.created_at desc, t.id desc
          limit ${page.limit + 1}`.pipe(Effect.orDie)
        return {
          data: rows.slice(0, page.limit).map(renderTask),
          has_more: rows.length > page.limit
        }
      })

      const markReady = Effect.fnUntraced(function* (taskId: string, finished: ReadonlyArray<FinishedTrack>) {
        const now = new Date(yield* Clock.currentTimeMillis).toISOString()
        const eventId = yield* ids.make("event")
        const tracks = finished.map((f) => f.track)
        const trackRows = finished.map((f) => ({
          id: f.track.id,
          index: f.track.index,
          duration: f.track.duration,
          provider_track_id: f.providerTrackId
        }))
        const rows = yield* writes<{ model: string }>`
          with done as (
            update generation_tasks
            set status = 'ready', tracks = ${JSON.stringify(tracks)}::jsonb, updated_at = ${now}::timestamptz,
                lease_owner = null, lease_expires_at = null, next_poll_at = null
            where id = ${taskId} and ${writes.literal(stillPending())}
            returning id, account_id, credential_subject, credits_used, tracks, created_at, model
          ),
          freed as (
            update credential_inflight c set pending = c.pending - 1
            from done where c.subject = done.credential_subject
          ),
          kept as (
            insert into tracks (id, task_id, account_id, track_index, provider_track_id, duration, created_at)
            select t.id, done.id, done.account_id, t.index, t.provider_track_id, t.duration, ${now}::timestamptz
            from done, jsonb_to_recordset(${JSON.stringify(trackRows)}::jsonb)
              as t(id text, index integer, provider_track_id text, duration double precision)
          ),
          event as (
            insert into outbox_events (id, account_id, type, payload, created_at)
            select ${eventId}, account_id, 'job.completed',
                   jsonb_build_object('task_id', id, 'status', 'ready', 'tracks', tracks, 'credits_used', credits_used,
                                      'created_at', ${writes.literal(isoText("created_at"))}),
                   ${now}::timestamptz
            from done
          )
          select model from done`.pipe(Effect.orDie)
        const [done] = rows
        if (done === undefined) return false
        metrics.taskReady(done.model)
        yield* signal.notify
        return true
      })

      const markFailed = Effect.fnUntraced(function* (taskId: string, error: TaskFailure) {
        const now = new Date(yield* Clock.currentTimeMillis).toISOString()
        const ledgerId = yield* ids.make("ledgerEntry")
        const eventId = yield* ids.make("event")
        const rows = yield* writes<{ model: string; credits_refunded: number }>`
          with failed as (
            update generation_tasks
            set status = 'failed', error_code = ${error.code}, error_message = ${error.message},
                last_error = coalesce(${error.detail ?? null}::text, last_error),
                credits_refunded = credits_used, updated_at = ${now}::timestamptz,
                lease_owner = null, lease_expires_at = null, next_poll_at = null
            where id = ${taskId} and ${writes.literal(stillPending())}
            returning id, account_id, credential_subject, debit_subscription, debit_onetime, credits_refunded,
                      created_at, model
          ),
          ${refundOfFailed(writes, {
            ledgerId,
            nowIso: now,
            ledgerColumn: "task_id",
            freesSlot: true,
            carry: ["model", "credits_refunded"]
          })},
          event as (
            insert into outbox_events (id, account_id, type, payload, created_at)
            select ${eventId}, account_id, 'job.failed',
                   jsonb_build_object('task_id', id, 'status', 'failed',
                                      'error', jsonb_build_object('code', ${error.code}::text, 'message', ${error.message}::text),
                                      'credits_refunded', credits_refunded,
                                      'created_at', ${writes.literal(isoText("created_at"))}),
                   ${now}::timestamptz
            from failed
          )
          select model, credits_refunded from refunded`.pipe(Effect.orDie)
        const [refund] = rows
        if (refund === undefined) return false
        metrics.taskFailed(refund.model, error.code, refund.credits_refunded)
        yield* signal.notify
        return true
      })

      const markStreaming = Effect.fnUntraced(function* (taskId: string, offered: ReadonlyArray<ProviderPreview>) {
        if (offered.length === 0) return false
        const nowMillis = yield* Clock.currentTimeMillis
        const now = new Date(nowMillis).toISOString()
        const eventId = yield* ids.make("event")
        // Signed like the files an upstream is handed, for as long as the task can stay pending
        // and an hour more: the address is the access (another task's, or unsigned, is a 404).
        const expires = Math.floor(nowMillis / 1000) + settings.generationTimeoutSeconds + 3600
        const previews: ReadonlyArray<StoredPreview> = [...offered]
          .sort((a, b) => a.index - b.index)
          .map((p) => ({
            index: p.index,
            stream_url: signFileUrl(
              `${settings.publicUrl}/files/${streamKeyOf(taskId, p.index)}`,
              settings.publicUrl,
              settings.secretKey,
              expires
            ),
            source: p.url
          }))
        const shown = previews.map((p) => ({ index: p.index, stream_url: p.stream_url }))
        const rows = yield* writes<{ id: string }>`
          with streaming as (
            update generation_tasks set previews = ${JSON.stringify(previews)}::jsonb, updated_at = ${now}::timestamptz
            where id = ${taskId} and ${writes.literal(stillPending())} and previews is null
            returning id, account_id, created_at
          ),
          event as (
            insert into outbox_events (id, account_id, type, payload, created_at)
            select ${eventId}, account_id, 'job.streaming',
                   jsonb_build_object('task_id', id, 'previews', ${JSON.stringify(shown)}::jsonb,
                                      'created_at', ${writes.literal(isoText("created_at"))}),
                   ${now}::timestamptz
            from streaming
          )
          select id from streaming`.pipe(Effect.orDie)
        if (rows.length === 0) return false
        yield* signal.notify
        return true
      })

      const streamOf = Effect.fnUntraced(function* (taskId: string, index: number) {
        if (!hasIdShape("task", taskId)) return null
        const [row] = yield* sql<{
          status: "pending" | "ready" | "failed"
          previews: ReadonlyArray<StoredPreview> | null
          tracks: ReadonlyArray<Track>
        }>`select status, previews, tracks from generation_tasks where id = ${taskId}`.pipe(Effect.orDie)
        if (row === undefined) return null
        return {
          status: row.status,
          source: row.status === "pending" ? (row.previews?.find((p) => p.index === index)?.source ?? null) : null,
          audioUrl: row.status === "ready" ? (row.tracks.find((t) => t.index === index)?.audio_url ?? null) : null
        }
      })

      return Generations.of({ create, get, list, markReady, markFailed, markStreaming, streamOf })
    })
  )
}
