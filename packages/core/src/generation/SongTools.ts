/**
 * Song tools (DESIGN.md section 9): extending a track, and exporting it as WAV, MIDI, stems or
 * timed lyrics. Both work on a track of a `ready` task of the caller's account, found through
 * its row in `tracks`; anything else (another account's, unknown, malformed, not ready) is 404
 * `track_not_found`. An extension is a generation (Generations.create with the source attached,
 * so its price, limits, key and events are a generation's). An export is charged by the same
 * statement as a generation (money/charge.ts), submitted after the commit, and moved out of
 * `pending` only by conditional updates that free its slot, and on failure refund it and write
 * `export.failed` in the same transaction, so a second worker or a duplicate callback applies
 * nothing twice.
 */
import { createHash } from "node:crypto"
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import {
  ExportNotFound,
  InvalidParameter,
  MissingParameter,
  TrackHasNoLyrics,
  type TrackNotFound
} from "../domain/errors.ts"
import type { RequestValidationError } from "../domain/validation.ts"
import { exportColumns, renderExport } from "../domain/exports.ts"
import type { ExportRow } from "../domain/exports.ts"
import { hasIdShape, Ids, randomBase62 } from "../domain/ids.ts"
import { mergedRequest } from "./merge.ts"
import { trackSources } from "./sources.ts"
import type {
  Export,
  ExportFile,
  ExportFormat,
  ExportList,
  ExportRequest,
  ExtendRequest,
  TimedWord
} from "../domain/models.ts"
import type { Principal } from "../domain/principal.ts"
import { exportPriceOf } from "../domain/pricing.ts"
import { stillPending } from "./domain/tasks.ts"
import type { TaskFailure } from "./domain/tasks.ts"
import { Provider } from "../provider/Provider.ts"
import { canonicalJson, charge, claimKeyWithAnswer, heldAnswer } from "../money/charge.ts"
import type { Charged, ChargeError } from "../money/charge.ts"
import { refundOfFailed } from "../money/refund.ts"
import { Metrics } from "../observability/Metrics.ts"
import { callbackUrlFor, Generations, providerFailure } from "./Generations.ts"
import type { CreateError, CreateOutcome } from "./Generations.ts"
import { Settings } from "../platform/Settings.ts"
import { WebhookSignal } from "../webhooks/WebhookSignal.ts"
import { submissionRecorder } from "./submission.ts"
import type { SubmittedKind } from "./submission.ts"
import { WriteSql } from "../platform/WriteSql.ts"

export type ExtendError = CreateError | TrackNotFound | RequestValidationError
export type ExportError = ChargeError | TrackNotFound | TrackHasNoLyrics

export type { FoundTrack } from "../generation/sources.ts"

export class SongTools extends Context.Service<
  SongTools,
  {
    /** `POST /v1/music/tracks/{track_id}/extensions`: 202 a GenerationTask. */
    readonly extend: (
      principal: Principal,
      input: ExtendRequest,
      idempotencyKey: string | undefined
    ) => Effect.Effect<CreateOutcome, ExtendError>
    /** `POST /v1/music/tracks/{track_id}/exports`: 202 a new Export, or 200 the account's ready one, free. */
    readonly createExport: (
      principal: Principal,
      input: ExportRequest,
      idempotencyKey: string | undefined
    ) => Effect.Effect<Charged<Export>, ExportError>
    readonly getExport: (principal: Principal, id: string) => Effect.Effect<Export, ExportNotFound>
    readonly listExports: (
      principal: Principal,
      query: {
        readonly trackId: string | undefined
        readonly limit: number
        readonly startingAfter: string | undefined
      }
    ) => Effect.Effect<ExportList, InvalidParameter>
    /** Every export of an account, newest first (the admin API). */
    readonly exportsOfAccount: (accountId: string, limit: number) => Effect.Effect<ReadonlyArray<Export>>
    /** pending -> ready with its files and `export.completed`; false when not pending. */
    readonly markExportReady: (
      exportId: string,
      files: ReadonlyArray<ExportFile>,
      timedLyrics: ReadonlyArray<TimedWord> | null
    ) => Effect.Effect<boolean>
    /** pending -> failed, refunded once, with `export.failed`; false when not pending. */
    readonly markExportFailed: (exportId: string, error: TaskFailure) => Effect.Effect<boolean>
  }
>()("lyre/core/generation/SongTools") {
  static readonly layer = Layer.effect(
    SongTools,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const writes = yield* WriteSql
      const ids = yield* Ids
      const settings = yield* Settings
      const provider = yield* Provider
      const signal = yield* WebhookSignal
      const generations = yield* Generations
      const metrics = yield* Metrics
      const submissions = yield* submissionRecorder
      const exportKind: SubmittedKind = {
        table: "exports",
        noun: "export",
        providerIdColumn: "provider_export_id",
        relaxedAccept: false,
        failureOf: exportFailure,
        markFailed: (id, failure) => markExportFailed(id, failure)
      }

      const { findTrack } = yield* trackSources

      const extend = Effect.fn("SongTools.extend")(function* (
        principal: Principal,
        input: ExtendRequest,
        idempotencyKey: string | undefined
      ) {
        const found = yield* findTrack(principal.accountId, input.track_id)
        const duration = found.source.duration
        if (input.continue_at === undefined && duration === null) {
          return yield* new MissingParameter({
            message: "continue_at is required: the track's duration is unknown.",
            param: "continue_at"
          })
        }
        if (input.continue_at !== undefined && duration !== null && input.continue_at >= duration) {
          return yield* new InvalidParameter({
            message: `continue_at must be above 0 and below the track's duration (${duration} seconds).`,
            param: "continue_at"
          })
        }
        const continueAt = input.continue_at ?? duration ?? 0
        const { track_id: _track, continue_at: _at, ...given } = input
        const request = yield* mergedRequest(found.request, given, input)
        return yield* generations.create(principal, request, idempotencyKey, {
          extend: { source: found.source, continueAt }
        })
      })

      const exportNotFound = (id: string) => new ExportNotFound({ message: `No export ${id}.`, param: "id" })

      const readyExport = (accountId: string, trackId: string, format: ExportFormat) =>
        sql<ExportRow>`
          select ${sql.literal(exportColumns)} from exports
          where account_id = ${accountId} and track_id = ${trackId} and format = ${format} and status = 'ready'
          order by created_at desc, id desc limit 1`.pipe(Effect.orDie)

      const createExport = Effect.fn("SongTools.createExport")(function* (
        principal: Principal,
        input: ExportRequest,
        idempotencyKey: string | undefined
      ) {
        const found = yield* findTrack(principal.accountId, input.track_id)
        if (
          input.format === "timed_lyrics" &&
          (found.request.instrumental || (found.request.lyrics ?? "").trim() === "")
        ) {
          return yield* new TrackHasNoLyrics({
            message: "This track is instrumental: it has no lyrics to time.",
            param: "format"
          })
        }
        const now = yield* Clock.currentTimeMillis
        const idempotency =
          idempotencyKey === undefined
            ? undefined
            : {
                key: idempotencyKey,
                requestHash: createHash("sha256")
                  .update(canonicalJson({ export: input }))
                  .digest("hex")
              }
        // A key already used answers what it answered, before anything else is decided.
        if (idempotency !== undefined) {
          const held = yield* heldAnswer<Export>(
            writes,
            principal.accountId,
            idempotency.key,
            idempotency.requestHash,
            now
          )
          if (held !== undefined) return held
        }
        const [ready] = yield* readyExport(principal.accountId, input.track_id, input.format)
        if (ready !== undefined) {
          const body = renderExport(ready)
          return idempotency === undefined
            ? { status: 200, body, replayed: false }
            : yield* claimKeyWithAnswer(writes, principal.accountId, idempotency, 200, body, now)
        }

        const exportId = yield* ids.make("export")
        const price = exportPriceOf[input.format]
        const nowIso = new Date(now).toISOString()
        const deadlineIso = new Date(now + settings.generationTimeoutSeconds * 1000).toISOString()
        const callbackToken = randomBase62(32)
        const body = renderExport({
          id: exportId,
          track_id: input.track_id,
          task_id: found.source.taskId,
          format: input.format,
          status: "pending",
          credits_used: price,
          credits_refunded: 0,
          error_code: null,
          error_message: null,
          files: [],
          timed_lyrics: null,
          created_at: new Date(now),
          updated_at: new Date(now)
        })
        const work = writes`
          insert into exports (id, account_id, credential_subject, track_id, task_id, upload_id, format, model, status,
            credits_used, debit_subscription, debit_onetime, deadline_at, callback_token, created_at, updated_at)
          select ${exportId}, ${principal.accountId}, ${principal.subject}, ${input.track_id},
                 ${found.source.upload === undefined ? found.source.taskId : null}, ${found.source.upload?.uploadId ?? null},
                 ${input.format}, ${found.model}, 'pending', ${price}, s_take, o_take, ${deadlineIso}::timestamptz,
                 ${callbackToken}, ${nowIso}::timestamptz, ${nowIso}::timestamptz
          from debit
          returning id`
        const key = idempotency === undefined ? undefined : { accountId: principal.accountId, key: idempotency.key }
        const counted = Effect.sync(() => metrics.exportCreated(input.format))
        const submit = provider.submitExport({
          exportId,
          format: input.format,
          source: found.source,
          callbackUrl: callbackUrlFor(settings.publicUrl, exportId, callbackToken)
        })
        const created = yield* submissions.charged(
          charge(writes, {
            principal,
            model: found.model,
            price,
            nowMillis: now,
            ledgerId: yield* ids.make("ledgerEntry"),
            lowEventId: yield* ids.make("event"),
            work,
            ledgerColumn: "export_id",
            body,
            idempotency,
            priceText: `A ${input.format} export costs`
          }),
          { kind: exportKind, id: exportId, model: found.model, idempotency: key, counted, submit }
        )
        if (created.replayed) return created
        yield* counted
        yield* submissions.record(exportKind, exportId, found.model, yield* submit, key)
        return created
      })

      const getExport = Effect.fnUntraced(function* (principal: Principal, id: string) {
        if (!hasIdShape("export", id)) return yield* exportNotFound(id)
        const [row] = yield* sql<ExportRow>`
          select ${sql.literal(exportColumns)} from exports
          where id = ${id} and account_id = ${principal.accountId}`.pipe(Effect.orDie)
        if (row === undefined) return yield* exportNotFound(id)
        return renderExport(row)
      })

      const listExports = Effect.fn("SongTools.listExports")(function* (
        principal: Principal,
        query: {
          readonly trackId: string | undefined
          readonly limit: number
          readonly startingAfter: string | undefined
        }
      ) {
        const cursor = query.startingAfter
        if (cursor !== undefined) {
          const [found] = hasIdShape("export", cursor)
            ? yield* sql`select 1 from exports where id = ${cursor} and account_id = ${principal.accountId}`.pipe(
                Effect.orDie
              )
            : []
          if (found === undefined) {
            return yield* new InvalidParameter({
              message: `starting_after: no export ${cursor}.`,
              param: "starting_after"
            })
          }
        }
        const rows = yield* sql<ExportRow>`
          select ${sql.literal(exportColumns)} from exports e
          where e.account_id = ${principal.accountId}
          ${query.trackId === undefined ? sql`` : sql`and e.track_id = ${query.trackId}`}
          ${
            cursor === undefined
              ? sql``
              : sql`and (e.created_at, e.id) < (select created_at, id from exports where id = ${cursor})`
          }
          order by e.created_at desc, e.id desc
          limit ${query.limit + 1}`.pipe(Effect.orDie)
        return { data: rows.slice(0, query.limit).map(renderExport), has_more: rows.length > query.limit }
      })

      const exportsOfAccount = Effect.fnUntraced(function* (accountId: string, limit: number) {
        const rows = yield* sql<ExportRow>`
          select ${sql.literal(exportColumns)} from exports where account_id = ${accountId}
          order by created_at desc, id desc limit ${limit}`.pipe(Effect.orDie)
        return rows.map(renderExport)
      })

      /** The event of a transition, in the transaction that made it: its data is the Export. */
      const writeEvent = Effect.fnUntraced(function* (
        accountId: string,
        type: "export.completed" | "export.failed",
        row: ExportRow,
        nowIso: string
      ) {
        const eventId = yield* ids.make("event")
        yield* writes`
          insert into outbox_events (id, account_id, type, payload, created_at)
          values (${eventId}, ${accountId}, ${type}, ${JSON.stringify(renderExport(row))}::jsonb, ${nowIso}::timestamptz)`
      })

      const markExportReady = Effect.fnUntraced(function* (
        exportId: string,
        files: ReadonlyArray<ExportFile>,
        timedLyrics: ReadonlyArray<TimedWord> | null
      ) {
        const nowIso = new Date(yield* Clock.currentTimeMillis).toISOString()
        const done = yield* writes
          .withTransaction(
            Effect.gen(function* () {
              const [row] = yield* writes<ExportRow & { account_id: string }>`
            with done as (
              update exports
              set status = 'ready', files = ${JSON.stringify(files)}::jsonb,
                  timed_lyrics = ${timedLyrics === null ? null : JSON.stringify(timedLyrics)}::jsonb,
                  updated_at = ${nowIso}::timestamptz, lease_owner = null, lease_expires_at = null, next_poll_at = null
              where id = ${exportId} and ${writes.literal(stillPending())}
              returning ${writes.literal(exportColumns)}, account_id, credential_subject
            ),
            freed as (
              update credential_inflight c set pending = c.pending - 1
              from done where c.subject = done.credential_subject
            )
            select * from done`
              if (row === undefined) return null
              yield* writeEvent(row.account_id, "export.completed", row, nowIso)
              return row.format
            })
          )
          .pipe(Effect.orDie)
        if (done === null) return false
        metrics.exportReady(done)
        yield* signal.notify
        return true
      })

      const markExportFailed = Effect.fnUntraced(function* (exportId: string, error: TaskFailure) {
        const nowIso = new Date(yield* Clock.currentTimeMillis).toISOString()
        const ledgerId = yield* ids.make("ledgerEntry")
        const done = yield* writes
          .withTransaction(
            Effect.gen(function* () {
              const [row] = yield* writes<ExportRow & { account_id: string }>`
            with failed as (
              update exports
              set status = 'failed', error_code = ${error.code}, error_message = ${error.message},
                  last_error = coalesce(${error.detail ?? null}::text, last_error),
                  credits_refunded = credits_used, updated_at = ${nowIso}::timestamptz,
                  lease_owner = null, lease_expires_at = null, next_poll_at = null
              where id = ${exportId} and ${writes.literal(stillPending())}
              returning ${writes.literal(exportColumns)}, account_id, credential_subject, debit_subscription, debit_onetime
            ),
            ${refundOfFailed(writes, { ledgerId, nowIso, ledgerColumn: "export_id", freesSlot: true })}
            select * from failed`
              if (row === undefined) return null
              yield* writeEvent(row.account_id, "export.failed", row, nowIso)
              return row.format
            })
          )
          .pipe(Effect.orDie)
        if (done === null) return false
        metrics.exportFailed(done, error.code)
        yield* signal.notify
        return true
      })

      return SongTools.of({
        extend,
        createExport,
        getExport,
        listExports,
        exportsOfAccount,
        markExportReady,
        markExportFailed
      })
    })
  )
}

/** An export's failure as clients see it; the provider's words stay in `detail`. */
export const exportFailure = (code: string, detail: string): TaskFailure => ({
  ...providerFailure(code, detail),
  message:
    code === "content_policy"
      ? "The export was refused by the content policy; its credits were refunded."
      : "The music provider could not make this export; its credits were refunded."
})
