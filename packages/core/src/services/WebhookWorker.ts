/**
 * The webhook deliverer, run by every worker next to the task poller. One loop:
 *
 * - fan out new outbox events into deliveries (each event taken by one worker, `skip locked`);
 * - claim due deliveries with a lease and POST each, signed, outside any transaction (10 s
 *   time-out, no redirects, private addresses refused unless allowed); the attempt is logged
 *   and the delivery moved on (succeeded, retried after the next delay, or dead) only while
 *   the lease is still ours;
 * - every `sweepMillis`, the `key.expiring` sweep.
 *
 * A crashed worker's leases expire and its deliveries are taken again: delivery is at least
 * once, and receivers dedupe by the event `id`, which every retry repeats.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { deliverWebhook, SIGNATURE_HEADER, signWebhook } from "@lyre/webhooks"
import type { ClaimedDelivery } from "./Webhooks.ts"
import { Webhooks } from "./Webhooks.ts"
import { Settings } from "./Settings.ts"

export interface WebhookWorkerOptions {
  /** Names this worker's leases. */
  readonly workerId: string
  /** How long a claim holds a delivery; far beyond the 10 s of an attempt. */
  readonly leaseSeconds: number
  /** Attempts in flight at once in this worker. */
  readonly concurrency?: number
  /** How long an idle worker waits before looking again. */
  readonly idleMillis?: number
  /** How often the `key.expiring` sweep runs. */
  readonly sweepMillis?: number
  /** Limit of one attempt (the interface's receivers get 10 s). */
  readonly timeoutMs?: number
}

/** The body every attempt of a delivery sends: the same bytes each time. */
export const envelopeOf = (delivery: ClaimedDelivery): string =>
  JSON.stringify({
    id: delivery.event_id,
    type: delivery.event_type,
    created: delivery.event_created,
    data: delivery.payload
  })

export class WebhookWorker extends Context.Service<WebhookWorker, {
  /** Fans out, claims up to `limit` due deliveries and attempts each; answers how many were attempted. */
  readonly runOnce: (limit?: number) => Effect.Effect<number>
  /** Fans out, delivers and sweeps until interrupted. */
  readonly run: Effect.Effect<never>
}>()("lyre/core/services/WebhookWorker") {
  static readonly layer = (options: WebhookWorkerOptions) => Layer.effect(WebhookWorker, make(options))
}

const make = Effect.fnUntraced(function*(options: WebhookWorkerOptions) {
  const webhooks = yield* Webhooks
  const settings = yield* Settings
  const concurrency = options.concurrency ?? 64
  const idleMillis = options.idleMillis ?? 100
  const sweepMillis = options.sweepMillis ?? 60_000
  const timeoutMs = options.timeoutMs ?? 10_000
  const fanOutBatch = 500

  const attempt = (delivery: ClaimedDelivery) =>
    Effect.gen(function*() {
      const attemptedAt = yield* Clock.currentTimeMillis
      const rawBody = envelopeOf(delivery)
      const signature = signWebhook(rawBody, delivery.secrets, Math.floor(attemptedAt / 1000))
      const result = yield* Effect.promise(() =>
        deliverWebhook({
          url: delivery.url,
          rawBody,
          headers: { [SIGNATURE_HEADER]: signature },
          timeoutMs,
          allowPrivate: settings.webhookAllowPrivate
        })
      )
      yield* webhooks.record(options.workerId, delivery, attemptedAt, result)
    }).pipe(
      Effect.onInterrupt(() => webhooks.release(options.workerId, delivery.id).pipe(Effect.catchCause(() => Effect.void))),
      Effect.catchCause((cause) =>
        Effect.logError("webhooks: delivery failed", cause).pipe(
          Effect.annotateLogs({ delivery_id: delivery.id }),
          Effect.andThen(webhooks.release(options.workerId, delivery.id).pipe(Effect.catchCause(() => Effect.void)))
        )
      ),
      Effect.withSpan("WebhookWorker.attempt", { attributes: { deliveryId: delivery.id } })
    )

  const fanOut = webhooks.fanOut(fanOutBatch).pipe(
    Effect.catchCause((cause) => Effect.as(Effect.logError("webhooks: fan-out failed", cause), 0))
  )

  const runOnce = (limit = concurrency) =>
    Effect.gen(function*() {
      yield* fanOut
      const claimed = yield* webhooks.claim(options.workerId, options.leaseSeconds, limit)
      yield* Effect.forEach(claimed, attempt, { concurrency: "unbounded", discard: true })
      return claimed.length
    })

  /** Slots freed by finished attempts wake the loop before its idle wait ends. */
  let wake: (() => void) | null = null
  const freed = () => {
    const resume = wake
    wake = null
    resume?.()
  }
  const idle = Effect.callback<void>((resume) => {
    const done = () => {
      clearTimeout(timer)
      wake = null
      resume(Effect.void)
    }
    const timer = setTimeout(done, idleMillis)
    wake = done
    return Effect.sync(() => {
      clearTimeout(timer)
      wake = null
    })
  })

  const run = Effect.gen(function*() {
    let inFlight = 0
    let lastSweep = 0
    while (true) {
      const now = yield* Clock.currentTimeMillis
      if (now - lastSweep >= sweepMillis) {
        lastSweep = now
        yield* webhooks.sweepExpiringKeys.pipe(
          Effect.catchCause((cause) => Effect.logError("webhooks: key sweep failed", cause))
        )
      }
      const fanned = yield* fanOut
      const free = concurrency - inFlight
      const claimed = free > 0
        ? yield* webhooks.claim(options.workerId, options.leaseSeconds, free).pipe(
          Effect.catchCause((cause) => Effect.as(Effect.logError("webhooks: claim failed", cause), []))
        )
        : []
      for (const delivery of claimed) {
        inFlight++
        yield* Effect.forkChild(attempt(delivery).pipe(
          Effect.ensuring(Effect.sync(() => {
            inFlight--
            freed()
          }))
        ))
      }
      const busy = claimed.length > 0 && claimed.length === free
      if ((claimed.length === 0 && fanned === 0) || busy || free <= 0) yield* idle
    }
  })

  return WebhookWorker.of({ runOnce, run })
})
