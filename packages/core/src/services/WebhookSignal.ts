/**
 * Wakes this process's webhook deliverer: a new event was written here (a task finished, a
 * ping, a redelivery) or an attempt freed a slot. Without it the deliverer still finds its work
 * by polling; the signal only cuts the wait. Other processes' deliverers poll.
 */
import { Context, Effect, Layer } from "effect"

export class WebhookSignal extends Context.Service<WebhookSignal, {
  readonly notify: Effect.Effect<void>
  /** Returns at the next notification (at once if one came since the last wait), or after `millis`. */
  readonly wait: (millis: number) => Effect.Effect<void>
}>()("lyre/core/services/WebhookSignal") {
  static readonly layer = Layer.sync(WebhookSignal)(() => {
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
    return WebhookSignal.of({ notify, wait })
  })
}
