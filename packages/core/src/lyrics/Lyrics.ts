/**
 * The lyrics agent's tasks (DESIGN.md section 12): paid at accept (2 credits) by the charge every
 * paid call shares, in the same check order and with the same `Idempotency-Key` semantics, but
 * outside the concurrency limit (the charge takes no in-flight slot). A task is written `pending`
 * and due at once; the lyrics worker leases it, asks the LyricsWriter, and moves it out of
 * `pending` only by conditional updates: ready with its two variations and `lyrics.completed`, or
 * failed with its refund (exactly once) and `lyrics.failed`, in one transaction each.
 */
import { createHash } from "node:crypto"
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { InvalidParameter, LyricsNotFound } from "../domain/errors.ts"
import type { TrackNotFound } from "../domain/errors.ts"
import { hasIdShape, Ids, randomBase62 } from "../domain/ids.ts"
import type { Principal } from "../domain/principal.ts"
import { lyricsPrice } from "../domain/pricing.ts"
import { callbackUrlFor } from "../generation/Generations.ts"
import { stillPending } from "../generation/domain/tasks.ts"
import type { TaskFailure } from "../generation/domain/tasks.ts"
import { trackSources } from "../generation/sources.ts"
import { canonicalJson, charge } from "../money/charge.ts"
import type { Charged, ChargeError } from "../money/charge.ts"
import { refundOfFailed } from "../money/refund.ts"
import { Settings } from "../platform/Settings.ts"
import { WriteSql } from "../platform/WriteSql.ts"
import { WebhookSignal } from "../webhooks/WebhookSignal.ts"
import type { LyricsJob } from "./LyricsWriter.ts"
import type { LyricsRequest, LyricsTask, LyricsTaskList, LyricsVariation } from "./model.ts"

/** A lyrics task as stored. */
interface LyricsRow {
  readonly id: string
  readonly status: LyricsTask["status"]
  readonly prompt: string
  readonly variations: ReadonlyArray<LyricsVariation>
  readonly credits_used: number
  readonly credits_refunded: number
  readonly error_code: string | null
  readonly error_message: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

const lyricsColumns = [
  "id",
  "status",
  "prompt",
  "variations",
  "credits_used",
  "credits_refunded",
  "error_code",
  "error_message",
  "created_at",
  "updated_at"
].join(", ")

/** Field by field, in the schema's order: jsonb keeps its own key order (decision 0109). */
export const renderLyricsTask = (row: LyricsRow): LyricsTask => ({
  id: row.id,
  status: row.status,
  prompt: row.prompt,
  variations: row.variations.map((variation) => ({ title: variation.title, text: variation.text })),
  credits_used: row.credits_used,
  credits_refunded: row.credits_refunded,
  error: row.error_code === null ? null : { code: row.error_code, message: row.error_message ?? "" },
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString()
})

export type LyricsCreateError = ChargeError | TrackNotFound

export class Lyrics extends Context.Service<
  Lyrics,
  {
    /** `POST /v1/lyrics`: 202 a pending LyricsTask, charged; a key's first answer replayed. */
    readonly create: (
      principal: Principal,
      input: LyricsRequest,
      idempotencyKey: string | undefined
    ) => Effect.Effect<Charged<LyricsTask>, LyricsCreateError>
    readonly get: (principal: Principal, id: string) => Effect.Effect<LyricsTask, LyricsNotFound>
    readonly list: (
      principal: Principal,
      query: { readonly limit: number; readonly startingAfter: string | undefined }
    ) => Effect.Effect<LyricsTaskList, InvalidParameter>
    /** A pending task as its writer sees it; null once it is no longer pending. */
    readonly pendingJob: (id: string) => Effect.Effect<LyricsJob | null>
    /** pending -> ready with its variations and `lyrics.completed`; false when not pending. */
    readonly markReady: (id: string, variations: ReadonlyArray<LyricsVariation>) => Effect.Effect<boolean>
    /** pending -> failed, refunded once, with `lyrics.failed`; false when not pending. */
    readonly markFailed: (id: string, failure: TaskFailure) => Effect.Effect<boolean>
  }
>()("lyre/core/lyrics/Lyrics") {
  static readonly layer = Layer.effect(
    Lyrics,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const writes = yield* WriteSql
      const ids = yield* Ids
      const settings = yield* Settings
      const signal = yield* WebhookSignal
      const { findTrack } = yield* trackSources

      const notFound = (id: string) => new LyricsNotFound({ message: `No lyrics task ${id}.`, param: "id" })

      const create = Effect.fn("Lyrics.create")(function* (
        principal: Principal,
        input: LyricsRequest,
        idempotencyKey: string | undefined
      ) {
        // A track of another account is 404 before anything is charged.
        if (input.track_id !== undefined) yield* findTrack(principal.accountId, input.track_id)
        const now = yield* Clock.currentTimeMillis
        const id = yield* ids.make("lyrics")
        const nowIso = new Date(now).toISOString()
        const deadlineIso = new Date(now + settings.generationTimeoutSeconds * 1000).toISOString()
        const body = renderLyricsTask({
          id,
          status: "pending",
          prompt: input.prompt,
          variations: [],
          credits_used: lyricsPrice,
          credits_refunded: 0,
          error_code: null,
          error_message: null,
          created_at: new Date(now),
          updated_at: new Date(now)
        })
        const work = writes`
          insert into lyrics_tasks (id, account_id, credential_subject, status, prompt, request, track_id,
            credits_used, debit_subscription, debit_onetime, callback_token, next_poll_at, deadline_at,
            created_at, updated_at)
          select ${id}, ${principal.accountId}, ${principal.subject}, 'pending', ${input.prompt},
                 ${JSON.stringify(input)}::jsonb, ${input.track_id ?? null}, ${lyricsPrice}, s_take, o_take,
                 ${randomBase62(32)}, ${nowIso}::timestamptz, ${deadlineIso}::timestamptz,
                 ${nowIso}::timestamptz, ${nowIso}::timestamptz
          from debit
          returning id`
        return yield* charge(writes, {
          principal,
          model: null,
          inflight: false,
          price: lyricsPrice,
          nowMillis: now,
          ledgerId: yield* ids.make("ledgerEntry"),
          lowEventId: yield* ids.make("event"),
          work,
          ledgerColumn: "lyrics_id",
          body,
          idempotency:
            idempotencyKey === undefined
              ? undefined
              : {
                  key: idempotencyKey,
                  requestHash: createHash("sha256")
                    .update(canonicalJson({ lyrics: input }))
                    .digest("hex")
                },
          priceText: "Writing lyrics costs"
        })
      })

      const get = Effect.fnUntraced(function* (principal: Principal, id: string) {
        if (!hasIdShape("lyrics", id)) return yield* notFound(id)
        const [row] = yield* sql<LyricsRow>`
          select ${sql.literal(lyricsColumns)} from lyrics_tasks
          where id = ${id} and account_id = ${principal.accountId}`.pipe(Effect.orDie)
        if (row === undefined) return yield* notFound(id)
        return renderLyricsTask(row)
      })

      const list = Effect.fn("Lyrics.list")(function* (
        principal: Principal,
        query: { readonly limit: number; readonly startingAfter: string | undefined }
      ) {
        const cursor = query.startingAfter
        if (cursor !== undefined) {
          const [found] = hasIdShape("lyrics", cursor)
            ? yield* sql`select 1 from lyrics_tasks where id = ${cursor} and account_id = ${principal.accountId}`.pipe(
                Effect.orDie
              )
            : []
          if (found === undefined) {
            return yield* new InvalidParameter({
              message: `starting_after: no lyrics task ${cursor}.`,
              param: "starting_after"
            })
          }
        }
        const rows = yield* sql<LyricsRow>`
          select ${sql.literal(lyricsColumns)} from lyrics_tasks l
          where l.account_id = ${principal.accountId}
          ${
            cursor === undefined
              ? sql``
              : sql`and (l.created_at, l.id) < (select created_at, id from lyrics_tasks where id = ${cursor})`
          }
          order by l.created_at desc, l.id desc
          limit ${query.limit + 1}`.pipe(Effect.orDie)
        return { data: rows.slice(0, query.limit).map(renderLyricsTask), has_more: rows.length > query.limit }
      })

      const pendingJob = Effect.fnUntraced(function* (id: string) {
        const [row] = yield* sql<{
          account_id: string
          request: LyricsRequest
          track_id: string | null
          provider_task_id: string | null
          callback_token: string
        }>`
          select account_id, request, track_id, provider_task_id, callback_token from lyrics_tasks
          where id = ${id} and ${sql.literal(stillPending())}`.pipe(Effect.orDie)
        if (row === undefined) return null
        // The track was the account's at accept; a track no longer found is written without it.
        const fit =
          row.track_id === null
            ? null
            : yield* findTrack(row.account_id, row.track_id).pipe(
                Effect.map((found) => found.source),
                Effect.catchTag("TrackNotFound", () => Effect.succeed(null))
              )
        return {
          id,
          request: row.request,
          fit,
          providerTaskId: row.provider_task_id,
          callbackUrl: callbackUrlFor(settings.publicUrl, id, row.callback_token)
        } satisfies LyricsJob
      })

      /** The event of a transition, in the transaction that made it: its data is the LyricsTask. */
      const writeEvent = Effect.fnUntraced(function* (
        accountId: string,
        type: "lyrics.completed" | "lyrics.failed",
        row: LyricsRow,
        nowIso: string
      ) {
        const eventId = yield* ids.make("event")
        yield* writes`
          insert into outbox_events (id, account_id, type, payload, created_at)
          values (${eventId}, ${accountId}, ${type}, ${JSON.stringify(renderLyricsTask(row))}::jsonb, ${nowIso}::timestamptz)`
      })

      const markReady = Effect.fnUntraced(function* (id: string, variations: ReadonlyArray<LyricsVariation>) {
        const nowIso = new Date(yield* Clock.currentTimeMillis).toISOString()
        const done = yield* writes
          .withTransaction(
            Effect.gen(function* () {
              const [row] = yield* writes<LyricsRow & { account_id: string }>`
                update lyrics_tasks
                set status = 'ready', variations = ${JSON.stringify(variations)}::jsonb,
                    updated_at = ${nowIso}::timestamptz, lease_owner = null, lease_expires_at = null, next_poll_at = null
                where id = ${id} and ${writes.literal(stillPending())}
                returning ${writes.literal(lyricsColumns)}, account_id`
              if (row === undefined) return false
              yield* writeEvent(row.account_id, "lyrics.completed", row, nowIso)
              return true
            })
          )
          .pipe(Effect.orDie)
        if (done) yield* signal.notify
        return done
      })

      const markFailed = Effect.fnUntraced(function* (id: string, failure: TaskFailure) {
        const nowIso = new Date(yield* Clock.currentTimeMillis).toISOString()
        const ledgerId = yield* ids.make("ledgerEntry")
        const done = yield* writes
          .withTransaction(
            Effect.gen(function* () {
              const [row] = yield* writes<LyricsRow & { account_id: string }>`
                with failed as (
                  update lyrics_tasks
                  set status = 'failed', error_code = ${failure.code}, error_message = ${failure.message},
                      last_error = coalesce(${failure.detail ?? null}::text, last_error),
                      credits_refunded = credits_used, updated_at = ${nowIso}::timestamptz,
                      lease_owner = null, lease_expires_at = null, next_poll_at = null
                  where id = ${id} and ${writes.literal(stillPending())}
                  returning ${writes.literal(lyricsColumns)}, account_id, debit_subscription, debit_onetime
                ),
                ${refundOfFailed(writes, { ledgerId, nowIso, ledgerColumn: "lyrics_id", freesSlot: false })}
                select * from failed`
              if (row === undefined) return false
              yield* writeEvent(row.account_id, "lyrics.failed", row, nowIso)
              return true
            })
          )
          .pipe(Effect.orDie)
        if (done) yield* signal.notify
        return done
      })

      return Lyrics.of({ create, get, list, pendingJob, markReady, markFailed })
    })
  )
}
