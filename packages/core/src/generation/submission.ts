/**
 * What a submission's outcome does to the work it submitted, for every paid call that submits
 * after its charge commits (a generation, an extension, an export; docs/decisions/0012-worker-submission-at-most-once.md):
 * accepted stores the provider's id and the first poll; unknown leaves the work pending for the
 * worker, which never submits it again, and tells the model's circuit; rejected fails the work
 * (its refund and event) and makes the key's stored answer the 500 in one transaction, and the
 * call answers that 500. Accepted and unknown only move the submission state forward: a callback
 * may already have told us the provider's id.
 *
 * The database can go away between the provider's answer and its record. An accepted or rejected
 * outcome is then kept by this process and recorded when the database answers (SubmissionBacklog),
 * and the call answers as the outcome says (202, or the 500), not 503: the work was charged and
 * the provider has it, so a retry without a key would pay twice. An unknown outcome needs no
 * record (a row still `submitting` is read as unknown), nor does the circuit during an outage.
 * A charge whose answer the outage took is checked the same way once the database answers
 * (`charged`). See docs/decisions/0058-kept-submission-outcomes.md.
 */
import { Clock, Effect } from "effect"
import type { Fragment } from "effect/sql/Statement"
import { ProviderError, renderError } from "../domain/errors.ts"
import { stillPending } from "./domain/tasks.ts"
import type { TaskFailure } from "./domain/tasks.ts"
import { causeMayHaveCommitted, onDatabaseOutage } from "../domain/unavailable.ts"
import type { SubmitOutcome } from "../provider/outcomes.ts"
import { relaxedCommit } from "../sql/relaxedCommit.ts"
import { Circuits } from "./Circuits.ts"
import { Settings } from "../platform/Settings.ts"
import { SubmissionBacklog } from "./SubmissionBacklog.ts"
import { WriteSql } from "../platform/WriteSql.ts"

/** The kind of work a submission was for: where its row is and how it fails. */
export interface SubmittedKind {
  readonly table: "generation_tasks" | "exports"
  /** What it is called in log lines: `task_id`, `export_id`. */
  readonly noun: "task" | "export"
  /** The column that holds the provider's id of the work. */
  readonly providerIdColumn: "provider_task_id" | "provider_export_id"
  /**
   * Whether the accepted record may commit without waiting for the WAL flush. Only where a
   * lost record is recovered: a task's callback carries the provider's task id, which the intake
   * adopts. An export's callback only hints its poll, so an export that lost its provider id
   * would wait for its deadline and be refunded for work the provider did: it commits durably.
   */
  readonly relaxedAccept: boolean
  /** The failure clients see for a rejection; the provider's words stay in `detail`. */
  readonly failureOf: (code: string, detail: string) => TaskFailure
  /** pending -> failed with its refund and event (false when not pending). */
  readonly markFailed: (id: string, failure: TaskFailure) => Effect.Effect<boolean>
}

/** The key a call was made with, whose stored answer a rejection replaces. */
export interface SubmittedKey {
  readonly accountId: string
  readonly key: string
}

/** A paid call's work, as a charge the database may have taken without saying so needs it. */
export interface ChargedWork {
  readonly kind: SubmittedKind
  readonly id: string
  readonly model: string
  readonly idempotency: SubmittedKey | undefined
  /** Counts the work created (metrics), as the call does once its charge answers. */
  readonly counted: Effect.Effect<void>
  /** The submission the call would have made. */
  readonly submit: Effect.Effect<SubmitOutcome>
}

/** A kind's names and clauses as constants of its statements. */
interface KindPieces {
  readonly table: Fragment
  readonly providerIdColumn: Fragment
  /** The relaxed commit's CTE and its use, or nothing for a kind that commits durably. */
  readonly relaxedWith: Fragment
  readonly relaxedApplied: Fragment
}

/** The row of a work whose charge may have committed: whether it is there, still never sent. */
interface ChargedRow {
  readonly status: string
  readonly submission_state: string
}

export interface SubmissionRecorder {
  /** Records a submission's outcome; a rejection, once recorded, is the call's 500 `provider_error`. */
  readonly record: (
    kind: SubmittedKind,
    id: string,
    model: string,
    outcome: SubmitOutcome,
    idempotency: SubmittedKey | undefined
  ) => Effect.Effect<void, ProviderError>
  /**
   * The charge of `work`, failing as it fails. When the database went away while its statement
   * ran (not before: a connect that failed sent nothing), the charge may have committed with its
   * answer lost, and the call answers 503 before submitting. Then this process keeps a check to
   * run when the database answers: a row still `submitting` is work nobody sent (only this process
   * knew its id), so it is sent and recorded if the call had a key (whose retry replays the 202
   * and follows the work), and otherwise failed and refunded at once (the caller was told 503 and
   * retries as a new call).
   */
  readonly charged: <A, E, R>(charging: Effect.Effect<A, E, R>, work: ChargedWork) => Effect.Effect<A, E, R>
}

/**
 * What follows a paid call's charge: its submission's record and the check of a charge whose
 * answer was lost. Built in a service's layer: `const submissions = yield* submissionRecorder`.
 */
export const submissionRecorder: Effect.Effect<
  SubmissionRecorder,
  never,
  WriteSql | Circuits | SubmissionBacklog | Settings
> = Effect.gen(function* () {
  const writes = yield* WriteSql
  const circuits = yield* Circuits
  const backlog = yield* SubmissionBacklog
  const { providerPollSeconds, generationTimeoutSeconds } = yield* Settings

  /** Keeps `record` for when the database answers, until the work's deadline settles it instead. */
  const keep = (kind: SubmittedKind, id: string, record: Effect.Effect<void>) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      backlog.keep({ noun: kind.noun, id, until: now + generationTimeoutSeconds * 1000, record })
    )

  /** Runs `record`; with the database out of reach, keeps it. */
  const recordOrKeep = (kind: SubmittedKind, id: string, record: Effect.Effect<void>) =>
    onDatabaseOutage(record, keep(kind, id, record)).pipe(Effect.asVoid)

  /** A provider failure for the model's circuit, which an outage lets go uncounted. */
  const countFailure = (model: string) => onDatabaseOutage(circuits.recordFailure(model), Effect.void)

  /**
   * The constant pieces of a kind's statements, made at its first record rather than on every
   * call: the accepted record runs on every paid call.
   */
  const piecesByKind = new Map<SubmittedKind, KindPieces>()
  const stillPendingClause = writes.literal(stillPending())
  const piecesOf = (kind: SubmittedKind): KindPieces => {
    let pieces = piecesByKind.get(kind)
    if (pieces === undefined) {
      pieces = {
        table: writes.literal(kind.table),
        providerIdColumn: writes.literal(kind.providerIdColumn),
        relaxedWith: writes.literal(kind.relaxedAccept ? `with ${relaxedCommit.cte}` : ""),
        relaxedApplied: writes.literal(kind.relaxedAccept ? `and ${relaxedCommit.applied}` : "")
      }
      piecesByKind.set(kind, pieces)
    }
    return pieces
  }

  const record = Effect.fnUntraced(function* (
    kind: SubmittedKind,
    id: string,
    model: string,
    outcome: SubmitOutcome,
    idempotency: SubmittedKey | undefined
  ) {
    const { table, providerIdColumn, relaxedWith, relaxedApplied } = piecesOf(kind)
    switch (outcome._tag) {
      case "Accepted": {
        // The first poll counts from when the record commits, which may be after an outage.
        const accepted = Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const firstPoll = new Date(now + providerPollSeconds * 1000).toISOString()
          yield* writes`
            ${relaxedWith}
            update ${table}
            set ${providerIdColumn} = ${outcome.providerTaskId}, submission_state = 'accepted',
                next_poll_at = ${firstPoll}::timestamptz
            where id = ${id} and ${stillPendingClause} and submission_state <> 'accepted'
            ${relaxedApplied}`.pipe(Effect.orDie)
        })
        return yield* recordOrKeep(kind, id, accepted)
      }
      case "Unknown": {
        yield* onDatabaseOutage(
          writes`
            update ${table} set submission_state = 'unknown', last_error = ${outcome.message}
            where id = ${id} and submission_state = 'submitting'`.pipe(Effect.orDie),
          Effect.void
        )
        yield* countFailure(model)
        return
      }
      case "Rejected": {
        const failure = kind.failureOf(outcome.code, outcome.message)
        const error = new ProviderError({ message: failure.message })
        yield* recordOrKeep(
          kind,
          id,
          writes
            .withTransaction(
              Effect.gen(function* () {
                yield* kind.markFailed(id, failure)
                if (idempotency !== undefined) {
                  yield* writes`
                update idempotency_keys
                set response_status = 500, response_body = ${JSON.stringify(renderError(error).body)}::json
                where account_id = ${idempotency.accountId} and key = ${idempotency.key}`
                }
              })
            )
            .pipe(Effect.asVoid, Effect.orDie)
        )
        if (outcome.countsTowardCircuit) yield* countFailure(model)
        return yield* error
      }
    }
  })

  /** Runs once the database answers; only ever sends work whose row says nobody sent it. */
  const settleUnsureCharge = (work: ChargedWork): Effect.Effect<void> =>
    Effect.gen(function* () {
      const [row] = yield* writes<ChargedRow>`
        select status, submission_state from ${piecesOf(work.kind).table} where id = ${work.id}`.pipe(Effect.orDie)
      if (row === undefined || row.status !== "pending" || row.submission_state !== "submitting") return
      if (work.idempotency === undefined) {
        yield* work.kind.markFailed(work.id, lostChargeFailure(work.kind.noun))
        return yield* work.counted
      }
      yield* work.counted
      // From here on nothing fails for an outage (the record keeps itself), so this never runs twice.
      const outcome = yield* work.submit
      yield* record(work.kind, work.id, work.model, outcome, work.idempotency).pipe(Effect.ignore)
    })

  const charged = <A, E, R>(charging: Effect.Effect<A, E, R>, work: ChargedWork): Effect.Effect<A, E, R> =>
    Effect.catchCause(charging, (cause) =>
      causeMayHaveCommitted(cause)
        ? Effect.andThen(keep(work.kind, work.id, settleUnsureCharge(work)), Effect.failCause(cause))
        : Effect.failCause(cause)
    )

  return { record, charged }
})

/** A charge that committed while its call answered 503, undone because no key can find it. */
export const lostChargeFailure = (noun: "task" | "export"): TaskFailure => ({
  code: "service_unavailable",
  message:
    `The service lost its database while accepting this ${noun}, before it reached the provider; ` +
    "its credits were refunded."
})
