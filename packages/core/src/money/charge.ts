/**
 * The charge of everything a caller pays for at accept (a generation, an extension, an export):
 * one statement that checks model availability, the credential's in-flight counter and the
 * balance on locked rows, debits (subscription before one-time), counts the work in flight,
 * writes the ledger row, the work's own row and any `credits.low` event, and with an
 * `Idempotency-Key` claims the key with the answer. Any failure leaves nothing behind. The
 * work's row is the only part that differs, so the check order, the limits and the key's
 * semantics are the same for every paid call.
 */
import { Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { Fragment } from "effect/sql/Statement"
import { alertFires, armedAfter, creditsLowPayload } from "../domain/creditAlert.ts"
import {
  ConcurrentLimitExceeded,
  IdempotencyKeyReused,
  InsufficientCredits,
  ModelUnavailable,
  ProviderError
} from "../domain/errors.ts"
import type { ModelName } from "../domain/models.ts"
import type { Principal } from "../domain/principal.ts"

export type ChargeError =
  | IdempotencyKeyReused
  | ModelUnavailable
  | ConcurrentLimitExceeded
  | InsufficientCredits
  | ProviderError

/** A paid call's answer: fresh, or the first answer replayed for an idempotency key. */
export interface Charged<B> {
  readonly status: number
  readonly body: B
  readonly replayed: boolean
}

/** A debit: the total before and after, against the row `prev` locked. */
const debitAlert = {
  before: "prev.s + prev.o",
  after: "prev.s + prev.o - prev.price",
  threshold: "prev.t",
  armed: "prev.armed"
}

/** How long a key holds its answer (decision 0008). */
export const idempotencyWindowMillis = 24 * 60 * 60 * 1000

/** What a 429 for concurrency suggests: work takes seconds to finish, so try again soon. */
const concurrencyRetryAfterSeconds = 5

/** What the charge statement reports: its checks in order, and whether it debited. */
interface ChargeOutcome {
  readonly available: boolean
  readonly retry_after_seconds: number
  readonly pending: number | null
  readonly balance: number
  readonly debited: boolean
}

export const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v
  )

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

export interface ChargeRequest<B> {
  readonly principal: Principal
  /** The model whose availability is checked; null for work no model makes (lyrics). */
  readonly model: ModelName | null
  /**
   * Whether the work holds one of the credential's in-flight slots until it finishes (checked
   * against the concurrency limit); default true. Lyrics count against the per-minute limit only.
   */
  readonly inflight?: boolean
  readonly price: number
  readonly nowMillis: number
  readonly ledgerId: string
  readonly lowEventId: string
  /**
   * The paid-for row: the body of a CTE named `work`, inserting it `from debit` (whose `s_take`
   * and `o_take` are the buckets debited) and `returning id`.
   */
  readonly work: Fragment
  /** The ledger column that names the work: `task_id`, `export_id` or `lyrics_id`. */
  readonly ledgerColumn: "task_id" | "export_id" | "lyrics_id"
  /** The 202 answer, stored with the key; it depends on nothing the charge reads. */
  readonly body: B
  /** A key and the hash of what was asked (the route's parameters and body). */
  readonly idempotency: { readonly key: string; readonly requestHash: string } | undefined
  /** "The aether model costs 50 credits", for the 402. */
  readonly priceText: string
}

/**
 * The answer a key holds: the first answer replayed, or a refusal for another body; undefined
 * when no live row holds it (none, or one past the window, which is removed).
 */
export const heldAnswer = <B>(
  writes: SqlClient,
  accountId: string,
  key: string,
  requestHash: string,
  now: number
): Effect.Effect<Charged<B> | undefined, IdempotencyKeyReused | ProviderError> =>
  Effect.gen(function* () {
    const expiredBefore = new Date(now - idempotencyWindowMillis)
    const [held] = yield* writes<{
      request_hash: string
      response_status: number
      response_body: B
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
    if (held.response_status === 500)
      return yield* new ProviderError({ message: storedErrorMessage(held.response_body) })
    return { status: held.response_status, body: held.response_body, replayed: true }
  })

/**
 * Stores an answer given without a charge (an export the account already has) under a key, so
 * a retry with the key gets it again; a key already held answers what it holds.
 */
export const claimKeyWithAnswer = <B>(
  writes: SqlClient,
  accountId: string,
  idempotency: { readonly key: string; readonly requestHash: string },
  status: number,
  body: B,
  now: number
): Effect.Effect<Charged<B>, IdempotencyKeyReused | ProviderError> =>
  Effect.gen(function* () {
    const inserted = yield* writes`
      insert into idempotency_keys (account_id, key, request_hash, response_status, response_body, created_at)
      values (${accountId}, ${idempotency.key}, ${idempotency.requestHash}, ${status}, ${JSON.stringify(body)}::json,
              ${new Date(now).toISOString()}::timestamptz)
      on conflict do nothing
      returning key`.pipe(Effect.orDie)
    if (inserted.length > 0) return { status, body, replayed: false }
    const held = yield* heldAnswer<B>(writes, accountId, idempotency.key, idempotency.requestHash, now)
    return held ?? { status, body, replayed: false }
  })

/** Charges for one piece of work, in the check order: model, concurrency, credits. */
export const charge = <B>(writes: SqlClient, request: ChargeRequest<B>): Effect.Effect<Charged<B>, ChargeError> => {
  const { principal, price, model, idempotency } = request
  const inflight = request.inflight ?? true
  /** Work outside the concurrency limit neither waits for a slot nor takes one. */
  const hasRoom = inflight ? writes`slot.pending < ${principal.concurrencyLimit}` : writes`true`
  const nowIso = new Date(request.nowMillis).toISOString()

  /**
   * With a key, the charge also claims it: the row holding this answer, written with the work.
   * A key already held makes the insert a unique violation, which undoes the whole statement, so
   * nothing is charged; a concurrent request with the key waits for the first to commit and
   * then meets that violation.
   */
  const claim =
    idempotency === undefined
      ? writes``
      : writes`,
      claim as (
        insert into idempotency_keys (account_id, key, request_hash, response_status, response_body, created_at)
        select ${principal.accountId}, ${idempotency.key}, ${idempotency.requestHash}, 202,
               ${JSON.stringify(request.body)}::json, ${nowIso}::timestamptz
        from work
      )`

  const statement = writes<ChargeOutcome>`
    with switch as (
      select coalesce((select available from model_status where model = ${model}), true) as switched_on,
             coalesce((select retry_after_seconds from model_status where model = ${model}), 0)
               as retry_after_seconds,
             (select open_until from model_circuits
              where model = ${model} and open_until > ${nowIso}::timestamptz) as open_until
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
      where a.id = prev.id and model.available and ${hasRoom}
        and prev.s + prev.o >= ${price}
      returning a.subscription_credits as s_after, a.onetime_credits as o_after,
                least(prev.s, ${price}) as s_take, ${price} - least(prev.s, ${price}) as o_take,
                prev.t as threshold, ${writes.literal(alertFires(debitAlert))} as alert
    ),
    admitted as (
      update credential_inflight c set pending = c.pending + 1
      from debit where c.subject = ${principal.subject} and ${inflight}
    ),
    low as (
      insert into outbox_events (id, account_id, type, payload, created_at)
      select ${request.lowEventId}, ${principal.accountId}, 'credits.low',
             ${writes.literal(creditsLowPayload("threshold", "s_after", "o_after"))}, ${nowIso}::timestamptz
      from debit where alert
    ),
    work as (${request.work}),
    ledger as (
      insert into credit_ledger (id, account_id, kind, ${writes.literal(request.ledgerColumn)}, subscription_delta,
        onetime_delta, subscription_after, onetime_after, created_at)
      select ${request.ledgerId}, ${principal.accountId}, 'debit', work.id, -s_take, -o_take, s_after, o_after,
             ${nowIso}::timestamptz
      from debit, work
    )${claim}
    select model.available, model.retry_after_seconds, (select pending from slot) as pending,
           coalesce((select s + o from prev), 0)::int as balance,
           exists (select 1 from work) as debited
    from model`

  /** The statement found no counter row for the credential (the model open): make one, charge again. */
  const slotMissing = (outcome: ChargeOutcome | undefined): boolean =>
    outcome?.available === true && outcome.pending === null

  /** A credential whose counter row is missing gets one (at zero) and is charged again. */
  const ensureSlot = writes`
    insert into credential_inflight (subject) values (${principal.subject}) on conflict do nothing`.pipe(Effect.orDie)

  /** What a charge's outcome answers: the 202, or why nothing was charged, in the check order. */
  const answerOf = (outcome: ChargeOutcome | undefined): Effect.Effect<Charged<B>, ChargeError> => {
    if (outcome === undefined || !outcome.available) {
      return Effect.fail(
        new ModelUnavailable({
          message: `The ${model} model is temporarily unavailable. Retry later or choose another model.`,
          // Work no model makes (null) finds no switch and no circuit: always available.
          model: model ?? "none",
          retryAfterSeconds: outcome?.retry_after_seconds ?? 60
        })
      )
    }
    if (!outcome.debited && inflight && (outcome.pending ?? 0) >= principal.concurrencyLimit) {
      return Effect.fail(
        new ConcurrentLimitExceeded({
          message: `At most ${principal.concurrencyLimit} generations may be in flight at once for this credential.`,
          retryAfterSeconds: concurrencyRetryAfterSeconds
        })
      )
    }
    if (!outcome.debited) {
      return Effect.fail(
        new InsufficientCredits({
          message: `${request.priceText} ${price} credits; the balance is ${outcome.balance}.`
        })
      )
    }
    return Effect.succeed({ status: 202, body: request.body, replayed: false })
  }

  /**
   * Without a key nothing can be held: the charge, and again (at most three in all) after a
   * missing counter row is made. Written without the keyed loop's generator: the path of every
   * create sent without a key.
   */
  if (idempotency === undefined) {
    const unkeyed = (tries: number): Effect.Effect<Charged<B>, ChargeError> =>
      Effect.flatMap(Effect.orDie(statement), ([outcome]) =>
        tries < 3 && slotMissing(outcome) ? Effect.andThen(ensureSlot, unkeyed(tries + 1)) : answerOf(outcome)
      )
    return unkeyed(1)
  }

  /** The charge; `held` when its claim met a key already held (and so it charged nothing). */
  const attempt = statement.pipe(
    Effect.map(([outcome]) => ({ held: false as const, outcome })),
    Effect.catchIf(
      (error) => error.reason._tag === "UniqueViolation" && idempotency !== undefined,
      () => Effect.succeed({ held: true as const, outcome: undefined })
    ),
    Effect.orDie
  )

  /**
   * At most three charges: after a counter row is made, and after a key past its window is
   * removed. A held key answers first, whatever this request would have met.
   */
  return Effect.gen(function* () {
    for (let tries = 1; ; tries++) {
      const { held, outcome } = yield* attempt
      if (idempotency !== undefined && (held || outcome?.debited !== true)) {
        const answer = yield* heldAnswer<B>(
          writes,
          principal.accountId,
          idempotency.key,
          idempotency.requestHash,
          request.nowMillis
        )
        if (answer !== undefined) return answer
      }
      const again = tries < 3 && (held || slotMissing(outcome))
      if (again) {
        if (!held) yield* ensureSlot
        continue
      }
      if (held) return yield* Effect.die(new Error("An idempotency key stayed held with no row to answer from."))
      return yield* answerOf(outcome)
    }
  })
}
