/**
 * A wake-up within one process: `notify` releases every current `wait`, or, when nobody waits,
 * makes the next `wait` return at once, so a notification is never lost between two waits.
 * The task worker's and the webhook deliverer's wake-ups are both built on it.
 */
import { Effect } from "effect"

export interface LocalSignal {
  readonly notify: Effect.Effect<void>
  /** Returns at the next notification (at once if one came since the last wait), or after `millis`. */
  readonly wait: (millis: number) => Effect.Effect<void>
}

export const makeLocalSignal = (): LocalSignal => {
  let waiters = new Set<() => void>()
  let pending = false
  const notify = Effect.sync(() => {
    if (waiters.size === 0) {
      pending = true
      return
    }
    const woken = waiters
    waiters = new Set()
    for (const wake of woken) wake()
  })
  const wait = (millis: number) =>
    Effect.callback<void>((resume) => {
      if (pending) {
        pending = false
        resume(Effect.void)
        return
      }
      const done = (): void => {
        clearTimeout(timer)
        waiters.delete(done)
        resume(Effect.void)
      }
      const timer = setTimeout(done, millis)
      waiters.add(done)
      return Effect.sync(() => {
        clearTimeout(timer)
        waiters.delete(done)
      })
    })
  return { notify, wait }
}
