/**
 * What a submission's outcome does to the work it submitted, for every paid call that submits
 * after its charge commits (a generation, an extension, an export; docs/decisions/0012-worker-submission-at-most-once.md):
 * accepted stores the provider's id and the first poll; unknown leaves the work pending for the
 * worker, which never submits it again, and tells the model's circuit; rejected fails the work
 * (its refund and event) and makes the key's stored answer the 500 in one transaction, and the
 * call answers that 500. Accepted and unknown only move the submission state forward: a callback
 * may already have told us the provider's id.
 */
import { Clock, Effect } from "effect"
import { ProviderError, renderError } from "../domain/errors.ts"
import { stillPending } from "./domain/tasks.ts"
import type { TaskFailure } from "./domain/tasks.ts"
import type { SubmitOutcome } from "../provider/outcomes.ts"
import { relaxedCommit } from "../sql/relaxedCommit.ts"
import { Circuits } from "./Circuits.ts"
import { Settings } from "../platform/Settings.ts"
import { WriteSql } from "../platform/WriteSql.ts"

/** The kind of work a submission was for: where its row is and how it fails. */
export interface SubmittedKind {
  readonly table: "generation_tasks" | "exports"
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

/**
 * Records a submission's outcome; a rejection, once recorded, is the call's 500 `provider_error`.
 * Built in a service's layer: `const recordSubmission = yield* submissionRecorder`.
 */
export const submissionRecorder = Effect.gen(function*() {
  const writes = yield* WriteSql
  const circuits = yield* Circuits
  const { providerPollSeconds } = yield* Settings
  return Effect.fnUntraced(function*(
    kind: SubmittedKind,
    id: string,
    model: string,
    outcome: SubmitOutcome,
    idempotency: SubmittedKey | undefined
  ) {
    const table = writes.literal(kind.table)
    switch (outcome._tag) {
      case "Accepted": {
        const now = yield* Clock.currentTimeMillis
        const firstPoll = new Date(now + providerPollSeconds * 1000).toISOString()
        yield* writes`
          ${kind.relaxedAccept ? writes`with ${writes.literal(relaxedCommit.cte)}` : writes``}
          update ${table}
          set ${writes.literal(kind.providerIdColumn)} = ${outcome.providerTaskId}, submission_state = 'accepted',
              next_poll_at = ${firstPoll}::timestamptz
          where id = ${id} and ${writes.literal(stillPending())} and submission_state <> 'accepted'
          ${kind.relaxedAccept ? writes`and ${writes.literal(relaxedCommit.applied)}` : writes``}`.pipe(Effect.orDie)
        return
      }
      case "Unknown": {
        yield* writes`
          update ${table} set submission_state = 'unknown', last_error = ${outcome.message}
          where id = ${id} and submission_state = 'submitting'`.pipe(Effect.orDie)
        yield* circuits.recordFailure(model)
        return
      }
      case "Rejected": {
        const failure = kind.failureOf(outcome.code, outcome.message)
        const error = new ProviderError({ message: failure.message })
        yield* writes.withTransaction(Effect.gen(function*() {
          yield* kind.markFailed(id, failure)
          if (idempotency !== undefined) {
            yield* writes`
              update idempotency_keys
              set response_status = 500, response_body = ${JSON.stringify(renderError(error).body)}::jsonb
              where account_id = ${idempotency.accountId} and key = ${idempotency.key}`
          }
        })).pipe(Effect.orDie)
        if (outcome.countsTowardCircuit) yield* circuits.recordFailure(model)
        return yield* error
      }
    }
  })
})
