/**
 * Uploads (DESIGN.md section 11): an account's own audio, free of credits, kept up to its plan's
 * allowance. A request is judged in this order once admitted (credential, plan, scope, requests
 * per minute): a declared length past the limit (413, the body unread), the allowance (403),
 * the body (400 without a `file`, 413 cut while streamed, 400 `invalid_audio` when it does not
 * decode as what it says or is silent, too short or too long). Only a file that decoded is kept,
 * and only then is its row written, `pending`, for the listening worker. Listening moves it to
 * `ready` (its analysis, and a track every song tool takes) or `failed`, each by a conditional
 * update that writes its event (`upload.ready`, `upload.failed`) in the same transaction.
 */
import { createHash } from "node:crypto"
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import {
  InvalidAudio,
  InvalidParameter,
  UploadNotFound,
  UploadQuotaExceeded,
  UploadTooLarge
} from "../domain/errors.ts"
import type { IdempotencyKeyReused, MissingParameter, ProviderError, ValidationError } from "../domain/errors.ts"
import { hasIdShape, Ids } from "../domain/ids.ts"
import type { Principal } from "../domain/principal.ts"
import { keptUploadsAllowed } from "../domain/pricing.ts"
import { stillPending } from "../generation/domain/tasks.ts"
import { Settings } from "../platform/Settings.ts"
import { WebhookSignal } from "../webhooks/WebhookSignal.ts"
import { WriteSql } from "../platform/WriteSql.ts"
import { maxUploadBytes, uploadContentTypeOf, uploadContentTypes, uploadExtensionOf } from "./model.ts"
import type { DeletedUpload, Transcription, Upload, UploadAnalysis, UploadList } from "./model.ts"
import { renderUpload, uploadColumns, uploadKeyOf } from "./rows.ts"
import type { UploadRow } from "./rows.ts"
import { UploadFiles } from "./UploadFiles.ts"
import type { IncomingAudio } from "./UploadFiles.ts"
import { canonicalJson, heldAnswer, idempotencyWindowMillis } from "../money/charge.ts"
import type { Charged } from "../money/charge.ts"

export type CreateUploadError =
  | ValidationError
  | MissingParameter
  | InvalidAudio
  | UploadTooLarge
  | UploadQuotaExceeded
  | IdempotencyKeyReused
  // Never an upload's own answer: a key held by a paid call's 500 is replayed as that call's error.
  | ProviderError

/** Why listening gave up on an upload, as its `error` shows it. */
export interface UploadFailure {
  readonly code: string
  readonly message: string
}

export class Uploads extends Context.Service<
  Uploads,
  {
    /**
     * `POST /v1/music/uploads`: 202 the pending Upload; with an `Idempotency-Key`, the first
     * answer again for the same file and title (decision 0008), one upload counted once.
     */
    readonly create: (
      principal: Principal,
      input: { readonly title?: string | undefined },
      audio: IncomingAudio,
      idempotencyKey?: string | undefined
    ) => Effect.Effect<Charged<Upload>, CreateUploadError>
    readonly get: (principal: Principal, id: string) => Effect.Effect<Upload, UploadNotFound>
    readonly list: (
      principal: Principal,
      query: { readonly limit: number; readonly startingAfter: string | undefined }
    ) => Effect.Effect<UploadList, InvalidParameter>
    /** `DELETE`: the file goes (tracks made from it stay); the upload is then not found. */
    readonly remove: (principal: Principal, id: string) => Effect.Effect<DeletedUpload, UploadNotFound>
    /** Every kept upload of an account, newest first (the admin API). */
    readonly uploadsOfAccount: (accountId: string, limit: number) => Effect.Effect<ReadonlyArray<Upload>>
    /** The stored file and type of a pending upload, for listening; null when it is no longer pending. */
    readonly pendingFile: (id: string) => Effect.Effect<{ readonly key: string; readonly contentType: string } | null>
    /** pending -> ready with its analysis, transcription and track, and `upload.ready`; false when not pending. */
    readonly markReady: (id: string, analysis: UploadAnalysis, transcription: Transcription) => Effect.Effect<boolean>
    /** pending -> failed with `upload.failed`; false when not pending. */
    readonly markFailed: (id: string, failure: UploadFailure) => Effect.Effect<boolean>
  }
>()("lyre/core/uploads/Uploads") {
  static readonly layer = Layer.effect(
    Uploads,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const writes = yield* WriteSql
      const ids = yield* Ids
      const files = yield* UploadFiles
      const settings = yield* Settings
      const signal = yield* WebhookSignal

      const notFound = (id: string) => new UploadNotFound({ message: `No upload ${id}.`, param: "id" })
      const quotaExceeded = (allowed: number) =>
        new UploadQuotaExceeded({
          message: `This account keeps ${allowed} uploads, as many as its plan allows: delete one to upload another.`
        })

      /** Uploads that count against the allowance: kept, and not failed. */
      const keptCount = (accountId: string) =>
        sql<{ n: number }>`
          select count(*)::int as n from uploads
          where account_id = ${accountId} and deleted_at is null and status <> 'failed'`.pipe(
          Effect.map((rows) => rows[0]?.n ?? 0),
          Effect.orDie
        )

      /** Whether a live row holds the key: then its answer, not the allowance, decides (decision 0008). */
      const keyHeld = (accountId: string, key: string, now: number) =>
        sql<{ n: number }>`
          select count(*)::int as n from idempotency_keys
          where account_id = ${accountId} and key = ${key}
            and created_at > ${new Date(now - idempotencyWindowMillis).toISOString()}::timestamptz`.pipe(
          Effect.map((rows) => (rows[0]?.n ?? 0) > 0),
          Effect.orDie
        )

      const create = Effect.fn("Uploads.create")(function* (
        principal: Principal,
        input: { readonly title?: string | undefined },
        audio: IncomingAudio,
        idempotencyKey?: string | undefined
      ) {
        if (audio.declaredBytes !== null && audio.declaredBytes > maxUploadBytes) {
          return yield* new UploadTooLarge({ message: `An upload is at most ${maxUploadBytes} bytes.` })
        }
        const allowed = keptUploadsAllowed[principal.plan]
        // A retry of a kept upload is answered however full the account is since; its body is
        // read first, as only the body says whether it is the same request.
        const held =
          idempotencyKey !== undefined &&
          (yield* keyHeld(principal.accountId, idempotencyKey, yield* Clock.currentTimeMillis))
        if (!held && (yield* keptCount(principal.accountId)) >= allowed) return yield* quotaExceeded(allowed)

        const opened = yield* Effect.promise(() => audio.open())
        if (!opened.ok) return yield* Effect.fail(opened.error)
        const type = uploadContentTypeOf(opened.file.contentType)
        if (type === null) {
          opened.file.stream.resume()
          return yield* new InvalidAudio({
            message: `An upload is audio: ${uploadContentTypes.join(", ")} (this one is ${opened.file.contentType || "untyped"}).`,
            param: "file"
          })
        }
        const id = yield* ids.make("upload")
        const key = uploadKeyOf(id, uploadExtensionOf[type])
        const received = yield* files.receive(key, opened.file, type)
        const fields = yield* Effect.promise(() => audio.fields())
        if (!fields.ok) {
          yield* files.remove(key)
          return yield* Effect.fail(fields.error)
        }
        const title = fields.title ?? input.title
        if (title !== undefined && [...title].length > 200) {
          yield* files.remove(key)
          return yield* new InvalidParameter({ message: "title must be at most 200 characters long.", param: "title" })
        }

        const now = yield* Clock.currentTimeMillis
        const idempotency =
          idempotencyKey === undefined
            ? undefined
            : {
                key: idempotencyKey,
                requestHash: createHash("sha256")
                  .update(
                    canonicalJson({ upload: { file: received.sha256, content_type: type, title: title ?? null } })
                  )
                  .digest("hex")
              }
        const body = (row: UploadRow): Upload => renderUpload(row)
        // One upload at a time per account past this point: the account row's lock makes the
        // allowance exact however many arrive together, and a key's claim single.
        const outcome = yield* writes
          .withTransaction(
            Effect.gen(function* () {
              yield* writes`select id from accounts where id = ${principal.accountId} for update`
              if (idempotency !== undefined) {
                const answer = yield* heldAnswer<Upload>(
                  writes,
                  principal.accountId,
                  idempotency.key,
                  idempotency.requestHash,
                  now
                )
                if (answer !== undefined) return answer
              }
              const [counted] = yield* writes<{ n: number }>`
            select count(*)::int as n from uploads
            where account_id = ${principal.accountId} and deleted_at is null and status <> 'failed'`
              if ((counted?.n ?? 0) >= allowed) return null
              const [inserted] = yield* writes<UploadRow>`
            insert into uploads (id, account_id, credential_subject, status, title, content_type, bytes, duration,
              storage_key, next_poll_at, deadline_at, created_at, updated_at)
            values (${id}, ${principal.accountId}, ${principal.subject}, 'pending', ${title ?? null}, ${type},
              ${received.bytes}, ${received.duration}, ${key}, ${new Date(now).toISOString()}::timestamptz,
              ${new Date(now + settings.generationTimeoutSeconds * 1000).toISOString()}::timestamptz, ${new Date(now).toISOString()}::timestamptz,
              ${new Date(now).toISOString()}::timestamptz)
            returning ${writes.literal(uploadColumns)}`
              if (inserted === undefined) return null
              const created = body(inserted)
              if (idempotency !== undefined) {
                yield* writes`
            insert into idempotency_keys (account_id, key, request_hash, response_status, response_body, created_at)
            values (${principal.accountId}, ${idempotency.key}, ${idempotency.requestHash}, 202,
                    ${JSON.stringify(created)}::json, ${new Date(now).toISOString()}::timestamptz)`
              }
              return { status: 202, body: created, replayed: false }
            })
          )
          .pipe(
            Effect.catchTag("SqlError", (error) => Effect.die(error)),
            Effect.tapError(() => files.remove(key))
          )
        if (outcome === null) {
          yield* files.remove(key)
          return yield* quotaExceeded(allowed)
        }
        // A replay keeps the first upload: this request's copy of the file goes.
        if (outcome.replayed) yield* files.remove(key)
        return outcome
      })

      const get = Effect.fnUntraced(function* (principal: Principal, id: string) {
        if (!hasIdShape("upload", id)) return yield* notFound(id)
        const [row] = yield* sql<UploadRow>`
          select ${sql.literal(uploadColumns)} from uploads
          where id = ${id} and account_id = ${principal.accountId} and deleted_at is null`.pipe(Effect.orDie)
        if (row === undefined) return yield* notFound(id)
        return renderUpload(row)
      })

      const list = Effect.fn("Uploads.list")(function* (
        principal: Principal,
        query: { readonly limit: number; readonly startingAfter: string | undefined }
      ) {
        const cursor = query.startingAfter
        if (cursor !== undefined) {
          const [found] = hasIdShape("upload", cursor)
            ? yield* sql`select 1 from uploads where id = ${cursor} and account_id = ${principal.accountId}`.pipe(
                Effect.orDie
              )
            : []
          if (found === undefined) {
            return yield* new InvalidParameter({
              message: `starting_after: no upload ${cursor}.`,
              param: "starting_after"
            })
          }
        }
        const rows = yield* sql<UploadRow>`
          select ${sql.literal(uploadColumns)} from uploads u
          where u.account_id = ${principal.accountId} and u.deleted_at is null
          ${
            cursor === undefined
              ? sql``
              : sql`and (u.created_at, u.id) < (select created_at, id from uploads where id = ${cursor})`
          }
          order by u.created_at desc, u.id desc
          limit ${query.limit + 1}`.pipe(Effect.orDie)
        return { data: rows.slice(0, query.limit).map(renderUpload), has_more: rows.length > query.limit }
      })

      const remove = Effect.fn("Uploads.remove")(function* (principal: Principal, id: string) {
        if (!hasIdShape("upload", id)) return yield* notFound(id)
        const [row] = yield* sql<{ storage_key: string }>`
          select storage_key from uploads
          where id = ${id} and account_id = ${principal.accountId} and deleted_at is null`.pipe(Effect.orDie)
        if (row === undefined) return yield* notFound(id)
        // The file first: should this stop midway, the upload is still there to delete again.
        yield* files.remove(row.storage_key)
        const nowIso = new Date(yield* Clock.currentTimeMillis).toISOString()
        yield* writes`
          update uploads
          set deleted_at = ${nowIso}::timestamptz, updated_at = ${nowIso}::timestamptz,
              next_poll_at = null, deadline_at = null, lease_owner = null, lease_expires_at = null
          where id = ${id} and deleted_at is null`.pipe(Effect.orDie)
        return { id, deleted: true as const }
      })

      const uploadsOfAccount = Effect.fnUntraced(function* (accountId: string, limit: number) {
        const rows = yield* sql<UploadRow>`
          select ${sql.literal(uploadColumns)} from uploads where account_id = ${accountId} and deleted_at is null
          order by created_at desc, id desc limit ${limit}`.pipe(Effect.orDie)
        return rows.map(renderUpload)
      })

      const pendingFile = Effect.fnUntraced(function* (id: string) {
        const [row] = yield* sql<{ storage_key: string; content_type: string }>`
          select storage_key, content_type from uploads
          where id = ${id} and ${sql.literal(stillPending())} and deleted_at is null`.pipe(Effect.orDie)
        return row === undefined ? null : { key: row.storage_key, contentType: row.content_type }
      })

      const writeEvent = Effect.fnUntraced(function* (
        accountId: string,
        type: "upload.ready" | "upload.failed",
        row: UploadRow,
        nowIso: string
      ) {
        const eventId = yield* ids.make("event")
        yield* writes`
          insert into outbox_events (id, account_id, type, payload, created_at)
          values (${eventId}, ${accountId}, ${type}, ${JSON.stringify(renderUpload(row))}::jsonb, ${nowIso}::timestamptz)`
      })

      const markReady = Effect.fnUntraced(function* (
        id: string,
        analysis: UploadAnalysis,
        transcription: Transcription
      ) {
        const nowIso = new Date(yield* Clock.currentTimeMillis).toISOString()
        const trackId = yield* ids.make("track")
        const done = yield* writes
          .withTransaction(
            Effect.gen(function* () {
              const [row] = yield* writes<UploadRow & { account_id: string }>`
            with done as (
              update uploads
              set status = 'ready', analysis = ${JSON.stringify(analysis)}::jsonb,
                  transcription = ${JSON.stringify(transcription)}::jsonb, track_id = ${trackId},
                  updated_at = ${nowIso}::timestamptz, lease_owner = null, lease_expires_at = null, next_poll_at = null
              where id = ${id} and ${writes.literal(stillPending())} and deleted_at is null
              returning ${writes.literal(uploadColumns)}, account_id
            ),
            made as (
              insert into tracks (id, task_id, upload_id, account_id, track_index, provider_track_id, duration, created_at)
              select ${trackId}, null, done.id, done.account_id, 0, null, done.duration, ${nowIso}::timestamptz from done
            )
            select * from done`
              if (row === undefined) return false
              yield* writeEvent(row.account_id, "upload.ready", row, nowIso)
              return true
            })
          )
          .pipe(Effect.orDie)
        if (done) yield* signal.notify
        return done
      })

      const markFailed = Effect.fnUntraced(function* (id: string, failure: UploadFailure) {
        const nowIso = new Date(yield* Clock.currentTimeMillis).toISOString()
        const done = yield* writes
          .withTransaction(
            Effect.gen(function* () {
              const [row] = yield* writes<UploadRow & { account_id: string }>`
            update uploads
            set status = 'failed', error_code = ${failure.code}, error_message = ${failure.message},
                updated_at = ${nowIso}::timestamptz, lease_owner = null, lease_expires_at = null, next_poll_at = null
            where id = ${id} and ${writes.literal(stillPending())} and deleted_at is null
            returning ${writes.literal(uploadColumns)}, account_id`
              if (row === undefined) return false
              yield* writeEvent(row.account_id, "upload.failed", row, nowIso)
              return true
            })
          )
          .pipe(Effect.orDie)
        if (done) yield* signal.notify
        return done
      })

      return Uploads.of({ create, get, list, remove, uploadsOfAccount, pendingFile, markReady, markFailed })
    })
  )
}
