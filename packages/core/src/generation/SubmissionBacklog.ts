/**
 * Submission outcomes the database did not take, kept by the process that learned them until it
 * answers again (docs/decisions/0058-kept-submission-outcomes.md). Between the provider's answer and
 * its record the database can go away; the provider has then started (or refused) work that only
 * this process knows of, and the Suno-style contract has no lookup by our id. So the record is
 * kept here and tried again, growing the wait between rounds up to 2 s, until it commits. The
 * same holds the check of a charge whose answer was lost (submission.ts): only this process knows
 * the work's id, and only it can tell that the work was never sent.
 *
 * Bounded: at most `maxKept` at once, each kept until its work's deadline (past which the deadline
 * sweep has settled the work, and recording it would change nothing). An outcome turned away at
 * the cap, one still kept when its deadline passes, and any kept by a process that dies are left
 * to the rules that hold without this: the task's callback, else its deadline and refund.
 *
 * One warning when the first outcome of an outage is kept, one when the cap first turns one away,
 * one when every kept outcome is settled; `lyre_kept_submissions` counts them meanwhile.
 */
import { Clock, Context, Effect, Exit, Layer } from "effect"
import { causeIsDatabaseUnavailable } from "../domain/unavailable.ts"
import { makeLocalSignal } from "../platform/LocalSignal.ts"
import { Metrics } from "../observability/Metrics.ts"
import type { KeptSubmissionResult } from "../observability/Metrics.ts"

export interface BacklogPolicy {
  /** Most outcomes one process keeps at once; past it, an outcome is left to its callback and deadline. */
  readonly maxKept: number
  /** Wait before the first round of attempts, doubled after each round the database refused. */
  readonly retryMillis: number
  readonly maxRetryMillis: number
  /** What a stopping process gives its last round. */
  readonly lastRoundMillis: number
}

/**
 * 10,000 records of a few hundred bytes each (a closure over ids) is a few MB: more than the
 * creates an API process answers in the outages it should ride out (at 100 creates a second,
 * 100 s of them).
 */
export const backlogPolicy: BacklogPolicy = {
  maxKept: 10_000,
  retryMillis: 250,
  maxRetryMillis: 2_000,
  lastRoundMillis: 1_000
}

/** An outcome to record once the database answers. */
export interface KeptOutcome {
  /** What it is the outcome of, for log lines: `task_id` or `export_id`. */
  readonly noun: "task" | "export"
  readonly id: string
  /** The work's deadline (epoch millis): from then on the deadline sweep settles it instead. */
  readonly until: number
  /** Its statements, which must be safe to run again (each is conditional on the work's state). */
  readonly record: Effect.Effect<void>
}

/** What happened to the outcomes of one outage, for its closing log line. */
interface OutageTally {
  recorded: number
  pastDeadline: number
  turnedAway: number
  failed: number
}

const freshTally = (): OutageTally => ({ recorded: 0, pastDeadline: 0, turnedAway: 0, failed: 0 })

export class SubmissionBacklog extends Context.Service<
  SubmissionBacklog,
  {
    /** Keeps an outcome to record when the database answers; false when the cap turned it away. */
    readonly keep: (outcome: KeptOutcome) => Effect.Effect<boolean>
    /** How many outcomes are kept now. */
    readonly size: Effect.Effect<number>
  }
>()("lyre/core/generation/SubmissionBacklog") {
  static readonly layer = (policy: BacklogPolicy = backlogPolicy) => Layer.effect(SubmissionBacklog, make(policy))
}

const make = Effect.fnUntraced(function* (policy: BacklogPolicy) {
  const metrics = yield* Metrics
  const kept = new Map<string, KeptOutcome>()
  const signal = makeLocalSignal()
  /** The outage under way (since the first outcome kept), or null. */
  let outage: OutageTally | null = null

  const counted = (result: KeptSubmissionResult) => {
    metrics.keptSubmission(result)
    metrics.keptSubmissions(kept.size)
  }

  const keep = (outcome: KeptOutcome): Effect.Effect<boolean> =>
    Effect.suspend(() => {
      const first = outage === null
      outage ??= freshTally()
      const tally: OutageTally = outage
      const annotations = { [`${outcome.noun}_id`]: outcome.id }
      if (kept.size >= policy.maxKept && !kept.has(outcome.id)) {
        tally.turnedAway++
        counted("turned_away")
        return tally.turnedAway === 1
          ? Effect.logWarning(
              `submissions: ${policy.maxKept} outcomes kept, the most this process holds; ` +
                "the rest are left to their callbacks and deadlines"
            ).pipe(Effect.annotateLogs(annotations), Effect.as(false))
          : Effect.succeed(false)
      }
      kept.set(outcome.id, outcome)
      counted("kept")
      const announce = first
        ? Effect.logWarning(
            "submissions: the database is out of reach; keeping what it did not record, to record when it answers"
          ).pipe(Effect.annotateLogs(annotations))
        : Effect.void
      return Effect.andThen(announce, Effect.as(signal.notify, true))
    })

  /** One attempt at every kept outcome, oldest first; false when the database is still away. */
  const round = Effect.gen(function* () {
    for (const [id, outcome] of [...kept]) {
      outage ??= freshTally()
      const tally = outage
      // Only this outcome is let go or removed: a newer one kept for the same work stays.
      const settled = () => kept.get(id) === outcome && kept.delete(id)
      if ((yield* Clock.currentTimeMillis) >= outcome.until) {
        settled()
        tally.pastDeadline++
        counted("past_deadline")
        continue
      }
      const exit = yield* Effect.exit(outcome.record)
      if (Exit.isFailure(exit) && causeIsDatabaseUnavailable(exit.cause)) return false
      settled()
      if (Exit.isSuccess(exit)) {
        tally.recorded++
        counted("recorded")
      } else {
        // Not an outage: trying again would fail again. The work is left to its deadline.
        tally.failed++
        counted("failed")
        yield* Effect.logError("submissions: recording a kept outcome failed", exit.cause).pipe(
          Effect.annotateLogs({ [`${outcome.noun}_id`]: id })
        )
      }
    }
    const ended = outage
    if (kept.size === 0 && ended !== null) {
      outage = null
      yield* Effect.logWarning("submissions: every kept outcome is settled").pipe(
        Effect.annotateLogs({
          recorded: ended.recorded,
          past_deadline: ended.pastDeadline,
          turned_away: ended.turnedAway,
          failed: ended.failed
        })
      )
    }
    return true
  })

  /** Rounds while anything is kept, waiting longer after each the database refused. */
  const drain = Effect.gen(function* () {
    let wait = policy.retryMillis
    while (true) {
      if (kept.size === 0) {
        yield* signal.wait(60_000)
        continue
      }
      yield* Effect.sleep(wait)
      wait = (yield* round) ? policy.retryMillis : Math.min(wait * 2, policy.maxRetryMillis)
    }
  })

  // Added before the drain is forked, so it runs after the drain is interrupted: a stopping
  // process gives what it keeps one bounded last round, and says what it leaves behind.
  yield* Effect.addFinalizer(() =>
    Effect.gen(function* () {
      if (kept.size === 0) return
      yield* round.pipe(Effect.timeoutOption(policy.lastRoundMillis), Effect.ignore)
      if (kept.size === 0) return
      yield* Effect.logWarning(
        "submissions: stopping with outcomes unrecorded; their callbacks and deadlines settle them"
      ).pipe(Effect.annotateLogs({ unrecorded: kept.size }))
    })
  )
  yield* Effect.forkScoped(drain)

  return SubmissionBacklog.of({ keep, size: Effect.sync(() => kept.size) })
})
