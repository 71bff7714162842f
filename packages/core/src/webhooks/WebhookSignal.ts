/**
 * Wakes this process's webhook deliverer: a new event was written here (a task finished, a
 * ping, a redelivery) or an attempt freed a slot. Without it the deliverer still finds its work
 * by polling; the signal only cuts the wait. Other processes' deliverers poll.
 */
import { Context, Layer } from "effect"
import type { Effect } from "effect"
import { makeLocalSignal } from "../platform/LocalSignal.ts"

export class WebhookSignal extends Context.Service<
  WebhookSignal,
  {
    readonly notify: Effect.Effect<void>
    /** Returns at the next notification (at once if one came since the last wait), or after `millis`. */
    readonly wait: (millis: number) => Effect.Effect<void>
  }
>()("lyre/core/webhooks/WebhookSignal") {
  static readonly layer = Layer.sync(WebhookSignal)(() => WebhookSignal.of(makeLocalSignal()))
}
