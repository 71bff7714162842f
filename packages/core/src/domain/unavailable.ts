/**
 * Telling an outage of the database from a fault of ours. Repositories treat SQL failures as
 * defects (a statement that fails is a bug), so the one place that answers for a defect asks
 * this first: a connection that cannot be made or was lost, or a server shutting down or not
 * yet accepting, is 503 `service_unavailable` with `Retry-After`, never a 500.
 */
import { Effect } from "effect"
import type { Cause } from "effect"
import { isSqlError } from "effect/sql/SqlError"
import { doubled } from "./backoff.ts"
import { ServiceUnavailable } from "./errors.ts"

/**
 * SQLSTATE 57P01 admin_shutdown (a fast or smart stop ends the session), 57P02 crash_shutdown,
 * 57P03 cannot_connect_now (starting up, shutting down, in recovery). Class 08 is already a
 * `ConnectionError` reason.
 */
const goingAway = new Set(["57P01", "57P02", "57P03"])

const sqlStateOf = (cause: unknown): unknown =>
  typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined

export const isDatabaseUnavailable = (u: unknown): boolean => {
  if (!isSqlError(u)) return false
  if (u.reason._tag === "ConnectionError") return true
  const code = sqlStateOf(u.reason.cause)
  return typeof code === "string" && goingAway.has(code)
}

export const causeIsDatabaseUnavailable = (cause: Cause.Cause<unknown>): boolean =>
  cause.reasons.some(
    (reason) =>
      (reason._tag === "Die" && isDatabaseUnavailable(reason.defect)) ||
      (reason._tag === "Fail" && isDatabaseUnavailable(reason.error))
  )

/**
 * Whether a statement lost to an outage may have committed: the database went away while it ran,
 * so its answer may be what was lost. A connect that failed (`operation: "connect"`) sent nothing.
 */
export const causeMayHaveCommitted = (cause: Cause.Cause<unknown>): boolean =>
  cause.reasons.some((reason) => {
    const error = reason._tag === "Die" ? reason.defect : reason._tag === "Fail" ? reason.error : undefined
    return isDatabaseUnavailable(error) && isSqlError(error) && error.reason.operation !== "connect"
  })

/** `effect`, with the database out of reach answered by `onOutage`; any other failure stays as it was. */
export const onDatabaseOutage = <A, E, R, B, R2>(
  effect: Effect.Effect<A, E, R>,
  onOutage: Effect.Effect<B, never, R2>
): Effect.Effect<A | B, E, R | R2> =>
  Effect.catchCause(effect, (cause) => (causeIsDatabaseUnavailable(cause) ? onOutage : Effect.failCause(cause)))

/** Seconds a client is told to wait: a restart or a fail-over takes a few. */
export const databaseRetryAfterSeconds = 2

export const databaseUnavailable = (): ServiceUnavailable =>
  new ServiceUnavailable({
    message: "The service cannot reach its database right now. Retry shortly.",
    retryAfterSeconds: databaseRetryAfterSeconds
  })

/**
 * A background loop's view of the database (the task worker's, the webhook deliverer's). While
 * the database is out of reach the loop's steps fail: the first failure of an outage is logged,
 * the rest are not, and the loop waits longer between rounds (doubling up to `maxMillis`) until
 * a step succeeds again, which is logged too. Its leases are in the database, so it resumes
 * where they left off: its own are released or expire, and are claimed again. Any other failure
 * is a fault and is logged every time, as before.
 */
export const makeOutageBackoff = (
  label: string,
  options: { readonly baseMillis: number; readonly maxMillis: number }
) => {
  let failures = 0
  const recovered = Effect.suspend(() => {
    if (failures === 0) return Effect.void
    failures = 0
    return Effect.logWarning(`${label}: the database answers again; resuming`)
  })
  return {
    /** Runs `step`; a failure is logged as above and answered with `orElse`. */
    guard: <A, E, R>(step: Effect.Effect<A, E, R>, what: string, orElse: A): Effect.Effect<A, never, R> =>
      step.pipe(
        Effect.tap(() => recovered),
        Effect.catchCause((cause) =>
          Effect.suspend(() => {
            if (!causeIsDatabaseUnavailable(cause))
              return Effect.as(Effect.logError(`${label}: ${what} failed`, cause), orElse)
            failures++
            return Effect.as(
              failures === 1
                ? Effect.logWarning(`${label}: the database is out of reach; backing off until it answers`, cause)
                : Effect.void,
              orElse
            )
          })
        )
      ),
    /** How long to wait before the next round while the database is out of reach; 0 otherwise. */
    delayMillis: (): number => (failures === 0 ? 0 : doubled(options.baseMillis, options.maxMillis, failures - 1))
  }
}
