/**
 * The one shape of a polled queue (graphile-worker style), for tasks and exports alike: any
 * number of workers share one table.
 *
 * - claim: one `update ... from (select ... for update skip locked)` leases due rows to this
 *   worker; a crashed worker's lease expires and another takes the row over;
 * - release: gives a row back, due again after a backoff doubled per attempt up to
 *   `maxPollSeconds`, or at once when a callback came during the lease (the hint count moved);
 * - sweep: pending rows past their deadline fail, refunded, through the queue's own transition;
 * - guarded: a row's processing, handed back at once when the worker stops, and on a defect
 *   logged and released rather than left to its lease;
 * - handBack: when the worker has stopped, everything it still holds, in one statement.
 *
 * Every lease is in the process's `Leases` book from the moment its claim returns until the row
 * is released or settled. A claim is not interrupted: once sent it commits whether or not
 * anyone reads its answer, and rows leased by an answer nobody read would wait out their
 * lease. So a stopping worker knows every row it holds, hands them back before the pool closes
 * (the queue's layer finalizer, after the loop and its fibers have stopped), and what it could
 * not hand back stays in the book for the drain to name.
 *
 * Transitions are conditional on `pending`, so a second worker applies nothing twice.
 */
import { Cause, Clock, Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { Fragment } from "effect/sql/Statement"
import { causeIsDatabaseUnavailable, doubled, handBackWithin, relaxedCommit, stillPending } from "@lyre/core"
import type { LeaseBook } from "@lyre/core"

/** The options every queue's worker takes. */
export interface LeaseOptions {
  /** Names the leases this worker takes (host, pid and a random part). */
  readonly workerId: string
  /** `PROVIDER_POLL_SECONDS`: the first delay between polls, doubled per poll up to `maxPollSeconds`. */
  readonly pollSeconds: number
  readonly maxPollSeconds?: number
  /** How long a claim holds a row; a crashed worker's rows come back after this. */
  readonly leaseSeconds: number
}

/** What every claimed row carries, beside the queue's own columns. */
export interface Leased {
  readonly id: string
  readonly attempts: number
  readonly hints: number
}

export interface QueueShape {
  readonly table: "generation_tasks" | "exports" | "uploads" | "lyrics_tasks"
  /** What it holds, in log lines and spans: `worker: task processing failed`, `task_id`. */
  readonly noun: "task" | "export" | "upload" | "lyrics"
  /** The columns a claim returns beside id, attempts and hints. */
  readonly columns: ReadonlyArray<string>
  /**
   * Whether a claim and a release commit without waiting for the WAL flush. A lease PostgreSQL
   * loses in a crash only lets another worker take the row too, and a lost release leaves the
   * lease to expire. An export's release can carry the provider's new id for it, which a lost
   * commit would lose: that queue commits durably.
   */
  readonly relaxed: boolean
}

export const leaseQueue = <C extends Leased>(
  sql: SqlClient,
  book: LeaseBook,
  shape: QueueShape,
  options: LeaseOptions
) => {
  const maxPollSeconds = Math.max(options.maxPollSeconds ?? 60, options.pollSeconds)
  const table = sql.literal(shape.table)
  const relaxedCte = shape.relaxed ? sql`with ${sql.literal(relaxedCommit.cte)}` : sql``
  const relaxedApplied = shape.relaxed ? sql`and ${sql.literal(relaxedCommit.applied)}` : sql``

  const claim = Effect.fnUntraced(function* (limit: number) {
    const now = yield* Clock.currentTimeMillis
    return yield* sql<C>`
      ${relaxedCte}
      update ${table} q
      set lease_owner = ${options.workerId}, lease_expires_at = ${new Date(now + options.leaseSeconds * 1000).toISOString()}::timestamptz,
          attempts = q.attempts + 1
      from (
        select id from ${table}
        where status = 'pending' and submission_state = 'accepted' and next_poll_at <= ${new Date(now).toISOString()}::timestamptz
          and (lease_expires_at is null or lease_expires_at < ${new Date(now).toISOString()}::timestamptz)
        order by next_poll_at
        limit ${limit}
        for update skip locked
      ) due
      where q.id = due.id ${relaxedApplied}
      returning ${sql.literal(["id", "attempts", "hints", ...shape.columns].map((c) => `q.${c}`).join(", "))}`.pipe(
      Effect.orDie,
      Effect.tap((rows) =>
        Effect.sync(() =>
          book.hold(
            shape.noun,
            rows.map((row) => row.id)
          )
        )
      ),
      Effect.uninterruptible
    )
  })

  /** Gives the row back; `also` sets more columns in the same statement (`column = ...,`). */
  const release = Effect.fnUntraced(function* (claimed: C, reason: string, also: Fragment = sql``) {
    const now = yield* Clock.currentTimeMillis
    const delay = doubled(options.pollSeconds, maxPollSeconds, Math.max(0, claimed.attempts - 1))
    yield* sql`
      ${relaxedCte}
      update ${table}
      set lease_owner = null, lease_expires_at = null, last_error = ${reason}, ${also}
          next_poll_at = case when hints = ${claimed.hints} then ${new Date(now + delay * 1000).toISOString()}::timestamptz
                              else ${new Date(now).toISOString()}::timestamptz end
      where id = ${claimed.id} and ${sql.literal(stillPending())} and lease_owner = ${options.workerId}
        ${relaxedApplied}`.pipe(Effect.orDie)
    book.free(shape.noun, [claimed.id])
  })

  /**
   * Everything this worker still holds, given back due at once (another worker takes it
   * now rather than at lease expiry), within what is left of the drain. What could not be
   * given back stays in the book.
   */
  const handBack = Effect.suspend(() => {
    const ids = book.held(shape.noun)
    if (ids.length === 0) return Effect.void
    const statement = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      yield* sql`
        ${relaxedCte}
        update ${table}
        set lease_owner = null, lease_expires_at = null, last_error = 'worker stopped', next_poll_at = ${new Date(now).toISOString()}::timestamptz
        where id in ${sql.in(ids)} and ${sql.literal(stillPending())} and lease_owner = ${options.workerId}
          ${relaxedApplied}`
    })
    return handBackWithin(book, statement).pipe(
      // Rows settled meanwhile, or no longer this worker's, needed nothing: all of them are off the book.
      Effect.tap((done) => Effect.sync(() => done && book.free(shape.noun, ids)))
    )
  })

  /** Fails every pending row past its deadline; answers how many this call failed. */
  const sweep = (fail: (id: string) => Effect.Effect<boolean>) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const late = yield* sql<{ id: string }>`
        select id from ${table}
        where status = 'pending' and deadline_at <= ${new Date(now).toISOString()}::timestamptz
        order by deadline_at limit 100`.pipe(Effect.orDie)
      let failed = 0
      for (const { id } of late) {
        if (yield* fail(id)) failed++
      }
      return failed
    })

  const guarded = <E, R>(claimed: C, processing: Effect.Effect<void, E, R>): Effect.Effect<void, never, R> =>
    processing.pipe(
      // Settled (ready, failed) or released: the lease is over either way.
      Effect.andThen(Effect.sync(() => book.free(shape.noun, [claimed.id]))),
      // A worker stopping gracefully hands its rows back at once rather than at lease expiry; one
      // that fails (or outlasts the drain) stays in the book for `handBack` and the drain's line.
      Effect.onInterrupt(() => handBackWithin(book, release(claimed, "worker stopped"))),
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.void
          : // In an outage the loop has said so once; the release fails too, and the lease expires
            // (or the drain hands it back: it is still in the book).
            (causeIsDatabaseUnavailable(cause)
              ? Effect.void
              : Effect.logError(`worker: ${shape.noun} processing failed`, cause)
            ).pipe(
              Effect.annotateLogs({ [`${shape.noun}_id`]: claimed.id }),
              Effect.andThen(release(claimed, "internal error").pipe(Effect.catchCause(() => Effect.void)))
            )
      )
    )

  return { claim, release, sweep, guarded, handBack }
}
