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
 * leaves the task pending for the worker, which never submits it again (docs/decisions.md).
 */
import { createHash } from "node:crypto"
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import {
  ConcurrentLimitExceeded,
  IdempotencyKeyReused,
  InsufficientCredits,
  InvalidParameter,
  ModelUnavailable,
  ProviderError,
  renderError,
  TaskNotFound
} from "../domain/errors.ts"
import { alertFires, armedAfter, creditsLowPayload } from "../domain/creditAlert.ts"
import { hasIdShape, Ids, randomBase62 } from "../domain/ids.ts"
import type { GenerateRequest, GenerationTask, GenerationTaskList, Track } from "../domain/models.ts"
import type { Principal } from "../domain/principal.ts"
import { priceOf } from "../domain/pricing.ts"
import { renderTask, stillPending } from "../domain/tasks.ts"
import { relaxedCommit } from "../sql/relaxedCommit.ts"
import type { TaskRow } from "../domain/tasks.ts"
import type { ProviderSubmission, SubmitOutcome } from "../provider/outcomes.ts"
import { Provider } from "../provider/Provider.ts"
import { Circuits } from "./Circuits.ts"
import { Metrics } from "./Metrics.ts"
import { currentTraceContext, TaskTraces } from "./TaskTraces.ts"
import { WriteSql } from "./WriteSql.ts"
import { Settings } from "./Settings.ts"
import { WebhookSignal } from "./WebhookSignal.ts"

/** The answer of a create call: a fresh task, or the first answer replayed for an idempotency key. */
export interface CreateOutcome {
  readonly status: number
  readonly body: GenerationTask
  readonly replayed: boolean
}

export type CreateError =
  | IdempotencyKeyReused
  | ModelUnavailable
  | ConcurrentLimitExceeded
  | InsufficientCredits
  | ProviderError

/** A task's error as stored and sent in `job.failed`. */
export interface TaskFailure {
  readonly code: string
  readonly message: string
  /** What the provider said, for operators (kept in `last_error`); never shown to clients. */
  readonly detail?: string | undefined
}

/**
 * A provider's failure as clients see it: a message per error code. The provider's own words
 * (its codes, its hosts, its account's state) go to `detail` only.
 */
export const providerFailure = (code: string, detail: string): TaskFailure => ({
  code,
  message: code === "content_policy"
    ? "The request was refused by the content policy; its credits were refunded."
    : "The music provider could not generate this task; its credits were refunded.",
  detail
})

/** The callback address the provider is given for a task: unsigned callbacks carry its secret token. */
export const callbackUrlFor = (publicUrl: string, taskId: string, token: string): string =>
  `${publicUrl}/internal/provider/callback/${taskId}?token=${token}`

/** A debit: the total before and after, against the row `prev` locked. */
const debitAlert = {
  before: "prev.s + prev.o",
  after: "prev.s + prev.o - prev.price",
  threshold: "prev.t",
  armed: "prev.armed"
}

/** A refund, in the SET of the update of `accounts a` from the failed task. */
const refundAlert = {
  before: "a.subscription_credits + a.onetime_credits",
  after: "a.subscription_credits + a.onetime_credits + failed.debit_subscription + failed.debit_onetime",
  threshold: "a.credit_alert_threshold",
  armed: "a.credit_alert_armed"
}

/** `created_at` in the JSON of events, exactly as `renderTask` writes it. */
const isoText = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

const idempotencyWindowMillis = 24 * 60 * 60 * 1000

/** What the charge statement reports: its checks in order, and whether it debited. */
interface ChargeOutcome {
  readonly available: boolean
  readonly retry_after_seconds: number
  readonly pending: number | null
  readonly balance: number
  readonly debited: boolean
}
/** What a 429 for concurrency suggests: tasks take seconds to finish, so try again soon. */
const concurrencyRetryAfterSeconds = 5

const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v)

/** The message of a stored error envelope (an idempotent 500 replayed). */
const storedErrorMessage = (body: unknown): string => {
  if (typeof body === "object" && body !== null && "error" in body) {
    const error = body.error
    if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
      return error.message
    }
  }
  return "The provider refused the task."
}

/** What the provider receives: the validated request, our task id and where to call back. */
const submissionOf = (taskId: string, request: GenerateRequest, callbackUrl: string): ProviderSubmission => ({
  taskId,
  model: request.model,
  style: request.style,
  title: request.title,
  lyrics: request.instrumental ? null : request.lyrics ?? null,
  instrumental: request.instrumental,
  vocal_gender: request.vocal_gender,
  negative_tags: request.negative_tags,
  style_weight: request.style_weight,
  weirdness_constraint: request.weirdness_constraint,
  audio_weight: request.audio_weight,
  callbackUrl
})

export class Generations extends Context.Service<Generations, {
  readonly create: (
    principal: Principal,
    request: GenerateRequest,
    idempotencyKey: string | undefined
  ) => Effect.Effect<CreateOutcome, CreateError>
  readonly get: (principal: Principal, id: string) => Effect.Effect<GenerationTask, TaskNotFound>
  readonly list: (
    principal: Principal,
    page: { readonly limit: number; readonly startingAfter: string | undefined }
  ) => Effect.Effect<GenerationTaskList, InvalidParameter>
  /**
   * pending -> ready with its tracks and its `job.completed` event, in one statement; false
   * when the task was not pending (applied once).
   */
  readonly markReady: (taskId: string, tracks: ReadonlyArray<Track>) => Effect.Effect<boolean>
  /**
   * pending -> failed, refunding the debited buckets and writing `job.failed` in the same
   * statement; false when not pending.
   */
  readonly markFailed: (taskId: string, error: TaskFailure) => Effect.Effect<boolean>
}>()("lyre/core/services/Generations") {
  static readonly layer = Layer.effect(
    Generations,
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const writes = yield* WriteSql
      const ids = yield* Ids
      const settings = yield* Settings
      const provider = yield* Provider
      const circuits = yield* Circuits
      const signal = yield* WebhookSignal
      const metrics = yield* Metrics
      const traced = yield* TaskTraces

      /**
       * The answer a key holds: the first answer replayed, or a refusal for another body;
       * undefined when no live row holds it (none, or one past the window, which is removed).
       */
      const heldAnswer = Effect.fnUntraced(function*(accountId: string, key: string, requestHash: string, now: number) {
        const expiredBefore = new Date(now - idempotencyWindowMillis)
        const [held] = yield* writes<{
          request_hash: string
          response_status: number
          response_body: GenerationTask
          created_at: Date
        }>`
          select request_hash, response_status, response_body, created_at from idempotency_keys
          where account_id = ${accountId} and key = ${key}`.pipe(Effect.orDie)
        if (held === undefined) return undefined
        if (held.created_at.getTime() <= expiredBefore.getTime()) {
          yield* writes`
            delete from idempotency_keys
            where account_id = ${accountId} and key = ${key} and created_at <= ${expiredBefore.toISOString()}::timestamptz`.pipe(
            Effect.orDie
          )
          return undefined
        }
        if (held.request_hash !== requestHash) {
          return yield* new IdempotencyKeyReused({
            message: "This Idempotency-Key was already used with a different request body."
          })
        }
        if (held.response_status === 500) return yield* new ProviderError({ message: storedErrorMessage(held.response_body) })
        return { status: held.response_status, body: held.response_body, replayed: true } satisfies CreateOutcome
      })

      const create = Effect.fn("Generations.create")(function*(
        principal: Principal,
        request: GenerateRequest,
        idempotencyKey: string | undefined
      ) {
        const now = yield* Clock.currentTimeMillis
        const taskId = yield* ids.make("task")
        const ledgerId = yield* ids.make("ledgerEntry")
        const lowEventId = yield* ids.make("event")
        const price = priceOf[request.model]
        const nowIso = new Date(now).toISOString()
        const deadlineIso = new Date(now + settings.generationTimeoutSeconds * 1000).toISOString()
        const callbackToken = randomBase62(32)
        const traceContext = traced ? yield* currentTraceContext : null

        const requestHash = idempotencyKey === undefined
          ? ""
          : createHash("sha256").update(canonicalJson(request)).digest("hex")
        // The 202 answer depends on nothing the charge reads, so a key's claim stores it at once.
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

        /**
         * With a key, the charge also claims it: the row holding this answer, written with the
         * task. A key already held makes the insert a unique violation, which undoes the whole
         * statement, so nothing is charged; a concurrent request with the key waits for the
         * first to commit and then meets that violation.
         */
        const claim = idempotencyKey === undefined
          ? writes``
          : writes`,
          claim as (
            insert into idempotency_keys (account_id, key, request_hash, response_status, response_body, created_at)
            select ${principal.accountId}, ${idempotencyKey}, ${requestHash}, 202, ${JSON.stringify(body)}::jsonb,
                   ${nowIso}::timestamptz
            from task
          )`

        /**
         * The charge, as one statement: model availability, the credential's in-flight counter
         * (locked, after the account row: the order every writer of both keeps), the balance,
         * then debit, counter, task, ledger row and any `credits.low` event, all hanging on the
         * one row `debit` returns. Without an idempotency key it needs no transaction around it.
         */
        const charge = writes<ChargeOutcome>`
          with switch as (
            select coalesce((select available from model_status where model = ${request.model}), true) as switched_on,
                   coalesce((select retry_after_seconds from model_status where model = ${request.model}), 0)
                     as retry_after_seconds,
                   (select open_until from model_circuits
                    where model = ${request.model} and open_until > ${nowIso}::timestamptz) as open_until
          ),
          model as (
            select switched_on and open_until is null as available,
                   case when not switched_on then retry_after_seconds
                        else ceil(extract(epoch from (open_until - ${nowIso}::timestamptz)))::int end
                     as retry_after_seconds
            from switch
          ),
          -- The counter row first, then the account row: the order of every statement that takes
          -- both (a completing task frees its slot, then its event's foreign key takes a key share
          -- of the account; a refund frees the slot, then credits the account). "No key update"
          -- is the mode of the updates that follow, and lets those key shares through.
          slot as (
            select subject, pending from credential_inflight
            where subject = ${principal.subject} for no key update
          ),
          prev as (
            select a.id, a.subscription_credits as s, a.onetime_credits as o, a.credit_alert_threshold as t,
                   a.credit_alert_armed as armed, ${price}::int as price
            from accounts a, slot
            where a.id = ${principal.accountId} for no key update of a
          ),
          debit as (
            update accounts a
            set subscription_credits = prev.s - least(prev.s, ${price}),
                onetime_credits = prev.o - (${price} - least(prev.s, ${price})),
                credit_alert_armed = ${writes.literal(armedAfter(debitAlert))},
                updated_at = ${nowIso}::timestamptz
            from prev, model, slot
            where a.id = prev.id and model.available and slot.pending < ${principal.concurrencyLimit}
              and prev.s + prev.o >= ${price}
            returning a.subscription_credits as s_after, a.onetime_credits as o_after,
                      least(prev.s, ${price}) as s_take, ${price} - least(prev.s, ${price}) as o_take,
                      prev.t as threshold, ${writes.literal(alertFires(debitAlert))} as alert
          ),
          admitted as (
            update credential_inflight c set pending = c.pending + 1
            from debit where c.subject = ${principal.subject}
          ),
          low as (
            insert into outbox_events (id, account_id, type, payload, created_at)
            select ${lowEventId}, ${principal.accountId}, 'credits.low',
                   ${writes.literal(creditsLowPayload("threshold", "s_after", "o_after"))}, ${nowIso}::timestamptz
            from debit where alert
          ),
          task as (
            insert into generation_tasks (id, account_id, credential_subject, status, model, request, credits_used,
              debit_subscription, debit_onetime, deadline_at, created_at, updated_at, callback_token,
              submission_state, trace_context)
            select ${taskId}, ${principal.accountId}, ${principal.subject}, 'pending', ${request.model},
                   ${JSON.stringify(request)}::jsonb, ${price}, s_take, o_take, ${deadlineIso}::timestamptz,
                   ${nowIso}::timestamptz, ${nowIso}::timestamptz, ${callbackToken}, 'submitting', ${traceContext}::text
            from debit
            returning id
          ),
          ledger as (
            insert into credit_ledger (id, account_id, kind, task_id, subscription_delta, onetime_delta,
              subscription_after, onetime_after, created_at)
            select ${ledgerId}, ${principal.accountId}, 'debit', task.id, -s_take, -o_take, s_after, o_after,
                   ${nowIso}::timestamptz
            from debit, task
          )${claim}
          select model.available, model.retry_after_seconds, (select pending from slot) as pending,
                 coalesce((select s + o from prev), 0)::int as balance,
                 exists (select 1 from task) as debited
          from model`

        /** A credential whose counter row is missing gets one (at zero) and is charged again. */
        const ensureSlot = writes`
          insert into credential_inflight (subject) values (${principal.subject}) on conflict do nothing`.pipe(
          Effect.orDie
        )

        /** What a charge's outcome answers: the 202, or why nothing was charged, in the check order. */
        const answerOf = (outcome: ChargeOutcome | undefined): Effect.Effect<CreateOutcome, CreateError> => {
          if (outcome === undefined || !outcome.available) {
            return Effect.fail(new ModelUnavailable({
              message: `The ${request.model} model is temporarily unavailable. Retry later or choose another model.`,
              model: request.model,
              retryAfterSeconds: outcome?.retry_after_seconds ?? 60
            }))
          }
          if (!outcome.debited && (outcome.pending ?? 0) >= principal.concurrencyLimit) {
            return Effect.fail(new ConcurrentLimitExceeded({
              message: `At most ${principal.concurrencyLimit} generations may be in flight at once for this credential.`,
              retryAfterSeconds: concurrencyRetryAfterSeconds
            }))
          }
          if (!outcome.debited) {
            return Effect.fail(new InsufficientCredits({
              message: `The ${request.model} model costs ${price} credits; the balance is ${outcome.balance}.`
            }))
          }
          metrics.taskCreated(request.model, price)
          return Effect.succeed({ status: 202, body, replayed: false })
        }

        /** The charge; `held` when its claim met a key already held (and so it charged nothing). */
        const attempt = charge.pipe(
          Effect.map(([outcome]) => ({ held: false as const, outcome })),
          Effect.catchIf(
            (error) => error.reason._tag === "UniqueViolation" && idempotencyKey !== undefined,
            () => Effect.succeed({ held: true as const, outcome: undefined })
          ),
          Effect.orDie
        )

        /**
         * At most three charges: after a counter row is made, and after a key past its window
         * is removed. A held key answers first, whatever this request would have met.
         */
        const chargeOrFail = Effect.gen(function*() {
          for (let tries = 1; ; tries++) {
            const { held, outcome } = yield* attempt
            if (idempotencyKey !== undefined && (held || outcome?.debited !== true)) {
              const answer = yield* heldAnswer(principal.accountId, idempotencyKey, requestHash, now)
              if (answer !== undefined) return answer
            }
            const again = tries < 3 && (held || (outcome !== undefined && outcome.available && outcome.pending === null))
            if (again) {
              if (!held) yield* ensureSlot
              continue
            }
            if (held) return yield* Effect.die(new Error("An idempotency key stayed held with no row to answer from."))
            return yield* answerOf(outcome)
          }
        })

        const created = yield* chargeOrFail
        if (created.replayed) return created
        const outcome = yield* provider.submit(submissionOf(taskId, request, callbackUrlFor(settings.publicUrl, taskId, callbackToken)))
        yield* recordSubmission(taskId, request.model, outcome, idempotencyKey === undefined
          ? undefined
          : { accountId: principal.accountId, key: idempotencyKey })
        if (outcome._tag === "Rejected") {
          return yield* new ProviderError({ message: providerFailure(outcome.code, outcome.message).message })
        }
        return created
      })

      /**
       * Applies what the submission told us. Accepted and unknown only move the submission
       * state forward (a callback may already have told us the provider's task id); rejected
       * fails the task, with its refund and event, and makes the stored idempotent answer the 500.
       */
      const recordSubmission = Effect.fnUntraced(function*(
        taskId: string,
        model: string,
        outcome: SubmitOutcome,
        idempotency: { readonly accountId: string; readonly key: string } | undefined
      ) {
        const now = yield* Clock.currentTimeMillis
        switch (outcome._tag) {
          case "Accepted": {
            const firstPoll = new Date(now + settings.providerPollSeconds * 1000).toISOString()
            // Committed without waiting for the WAL flush: if PostgreSQL itself crashed and lost
            // this, the task would be as after a lost answer (submission unknown, never resent),
            // which a callback or the deadline already settles. The charge before it is durable.
            yield* writes`
              with ${writes.literal(relaxedCommit.cte)}
              update generation_tasks
              set provider_task_id = ${outcome.providerTaskId}, submission_state = 'accepted',
                  next_poll_at = ${firstPoll}::timestamptz
              where id = ${taskId} and ${writes.literal(stillPending())} and submission_state <> 'accepted'
                and ${writes.literal(relaxedCommit.applied)}`.pipe(Effect.orDie)
            return
          }
          case "Unknown": {
            yield* sql`
              update generation_tasks set submission_state = 'unknown', last_error = ${outcome.message}
              where id = ${taskId} and submission_state = 'submitting'`.pipe(Effect.orDie)
            yield* circuits.recordFailure(model)
            return
          }
          case "Rejected": {
            const failure = providerFailure(outcome.code, outcome.message)
            const error = new ProviderError({ message: failure.message })
            yield* writes.withTransaction(Effect.gen(function*() {
              yield* markFailed(taskId, failure)
              if (idempotency !== undefined) {
                yield* writes`
                  update idempotency_keys
                  set response_status = 500, response_body = ${JSON.stringify(renderError(error).body)}::jsonb
                  where account_id = ${idempotency.accountId} and key = ${idempotency.key}`
              }
            })).pipe(Effect.orDie)
            if (outcome.countsTowardCircuit) yield* circuits.recordFailure(model)
            return
          }
        }
      })

      const get = Effect.fnUntraced(function*(principal: Principal, id: string) {
        if (!hasIdShape("task", id)) return yield* new TaskNotFound({ message: `No generation task ${id}.` })
        const [row] = yield* sql<TaskRow>`
          select id, status, model, credits_used, credits_refunded, error_code, error_message, tracks,
                 created_at, updated_at
          from generation_tasks where id = ${id} and account_id = ${principal.accountId}`.pipe(Effect.orDie)
        if (row === undefined) return yield* new TaskNotFound({ message: `No generation task ${id}.` })
        return renderTask(row)
      })

      const list = Effect.fn("Generations.list")(function*(
        principal: Principal,
        page: { readonly limit: number; readonly startingAfter: string | undefined }
      ) {
        const cursor = page.startingAfter
        if (cursor !== undefined) {
          const [found] = cursor !== undefined && hasIdShape("task", cursor)
            ? yield* sql`select 1 from generation_tasks where id = ${cursor} and account_id = ${principal.accountId}`
              .pipe(Effect.orDie)
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
                 created_at, updated_at
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

      const markReady = Effect.fnUntraced(function*(taskId: string, tracks: ReadonlyArray<Track>) {
        const now = new Date(yield* Clock.currentTimeMillis).toISOString()
        const eventId = yield* ids.make("event")
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

      const markFailed = Effect.fnUntraced(function*(taskId: string, error: TaskFailure) {
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
          -- The counter row before the account row, as in create: the refund joins the freed slot.
          freed as (
            update credential_inflight c set pending = c.pending - 1
            from failed where c.subject = failed.credential_subject
            returning c.subject
          ),
          refunded as (
            update accounts a
            set subscription_credits = a.subscription_credits + failed.debit_subscription,
                onetime_credits = a.onetime_credits + failed.debit_onetime,
                credit_alert_armed = ${writes.literal(armedAfter(refundAlert))},
                updated_at = ${now}::timestamptz
            from failed left join freed on true
            where a.id = failed.account_id
            returning a.id as account_id, a.subscription_credits, a.onetime_credits, failed.id as task_id,
                      failed.debit_subscription, failed.debit_onetime, failed.model, failed.credits_refunded
          ),
          entry as (
            insert into credit_ledger (id, account_id, kind, task_id, subscription_delta, onetime_delta,
              subscription_after, onetime_after, created_at)
            select ${ledgerId}, account_id, 'refund', task_id, debit_subscription, debit_onetime,
                   subscription_credits, onetime_credits, ${now}::timestamptz
            from refunded
          ),
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

      return Generations.of({ create, get, list, markReady, markFailed })
    })
  )
}
