/**
 * The webhook deliverer, run by every worker next to the task poller. One loop:
 *
 * - fan out new outbox events into deliveries (each event taken by one worker, `skip locked`);
 * - claim due deliveries with a lease and POST each, signed, outside any transaction (10 s
 *   time-out, no redirects, private addresses refused unless allowed), up to `concurrency` at
 *   once, each in its own fiber so a slow receiver holds only its own slot;
 * - record: finished attempts are written together, one statement per batch, each logged and
 *   its delivery moved on (succeeded, retried after the next delay, or dead) only while the
 *   lease is still ours;
 * - every `sweepMillis`, the `key.expiring` sweep.
 *
 * A crashed worker's leases expire and its deliveries are taken again: delivery is at least
 * once, and receivers dedupe by the event `id`, which every retry repeats. A stopping one hands
 * back what it holds (every claimed delivery is in the `Leases` book until recorded or released;
 * a claim is not interrupted, as its rows would be leased with nobody to know), the last of it
 * in one statement once the loop has stopped and before the pool closes.
 */
import { Cause, Clock, Context, Effect, Exit, Layer } from "effect"
import { causeIsDatabaseUnavailable, makeOutageBackoff } from "../domain/unavailable.ts"
import { makeIdleRest } from "../platform/IdleRest.ts"
import { deliverWebhook, SIGNATURE_HEADER, signWebhook } from "@lyre/webhooks"
import type { AttemptOutcome, ClaimedDelivery } from "./Webhooks.ts"
import { Webhooks } from "./Webhooks.ts"
import { handBackWithin, Leases } from "../platform/Leases.ts"
import { Settings } from "../platform/Settings.ts"
import { WebhookSignal } from "./WebhookSignal.ts"

export interface WebhookWorkerOptions {
  /** Names this worker's leases. */
  readonly workerId: string
  /** How long a claim holds a delivery; far beyond the 10 s of an attempt. */
  readonly leaseSeconds: number
  /** Attempts in flight at once in this worker. */
  readonly concurrency?: number
  /** How long the worker first rests after a look that found nothing, unless woken. */
  readonly idleMillis?: number
  /**
   * The longest rest after empty looks in a row (default 1 s): how late a retry that falls due,
   * or an event another process wrote, is found.
   */
  readonly maxIdleMillis?: number
  /**
   * The least time between two looks for work. Every task transition wakes the deliverer; under
   * load the wakes come faster than events need a look each, and each look is two statements.
   */
  readonly lookGapMillis?: number
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

export class WebhookWorker extends Context.Service<
  WebhookWorker,
  {
    /** Fans out, delivers, records and sweeps until interrupted. */
    readonly run: Effect.Effect<never>
  }
>()("lyre/core/webhooks/WebhookWorker") {
  static readonly layer = (options: WebhookWorkerOptions) => Layer.effect(WebhookWorker, make(options))
}

interface Pending {
  readonly outcome: AttemptOutcome
  readonly done: (exit: Exit.Exit<void>) => void
}

const make = Effect.fnUntraced(function* (options: WebhookWorkerOptions) {
  const webhooks = yield* Webhooks
  const settings = yield* Settings
  const signal = yield* WebhookSignal
  const book = yield* Leases
  const concurrency = options.concurrency ?? 128
  const idleMillis = options.idleMillis ?? 100
  const sweepMillis = options.sweepMillis ?? 60_000
  const timeoutMs = options.timeoutMs ?? 10_000
  const lookGapMillis = options.lookGapMillis ?? 10
  const fanOutBatch = 500
  const recordBatch = 500
  // Claiming costs a statement: wait until a quarter of the slots are free rather than refill one by one.
  const refillAt = Math.max(1, Math.floor(concurrency / 4))

  /** Finished attempts waiting for the recorder, which writes them in one statement. */
  let queue: Array<Pending> = []
  let wakeRecorder: (() => void) | null = null
  const recorded = (outcome: AttemptOutcome) =>
    Effect.callback<void>((resume) => {
      queue.push({ outcome, done: (exit) => resume(exit) })
      const wake = wakeRecorder
      wakeRecorder = null
      wake?.()
    })
  const recorder = Effect.gen(function* () {
    while (true) {
      if (queue.length === 0) {
        yield* Effect.callback<void>((resume) => {
          wakeRecorder = () => resume(Effect.void)
          return Effect.sync(() => {
            wakeRecorder = null
          })
        })
      }
      const batch = queue.slice(0, recordBatch)
      queue = queue.slice(batch.length)
      const exit = yield* Effect.exit(
        webhooks.record(
          options.workerId,
          batch.map((pending) => pending.outcome)
        )
      )
      // Recorded, the deliveries have moved on (or their lease was lost): none is held any more.
      if (Exit.isSuccess(exit))
        book.free(
          "delivery",
          batch.map((pending) => pending.outcome.delivery.id)
        )
      for (const pending of batch) pending.done(exit)
    }
  })

  /** Gives deliveries back untried; off the book once the statement ran. */
  const release = (ids: ReadonlyArray<string>) =>
    webhooks.release(options.workerId, ids).pipe(Effect.andThen(Effect.sync(() => book.free("delivery", ids))))

  // Runs once the loop and its attempts have stopped (the loop is forked after this layer is
  // built), before the pool closes: whatever is still leased goes back, within the drain's time.
  yield* Effect.addFinalizer(() => Effect.suspend(() => handBackWithin(book, release(book.held("delivery")))))

  const attempt = (delivery: ClaimedDelivery) =>
    Effect.gen(function* () {
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
      yield* recorded({ delivery, attemptedAt, result })
    }).pipe(
      // Handed back at once when the worker stops; one that fails stays in the book for the drain.
      Effect.onInterrupt(() => handBackWithin(book, release([delivery.id]))),
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.void
          : // In an outage the loop has said so once; the release fails too, and the lease expires.
            (causeIsDatabaseUnavailable(cause)
              ? Effect.void
              : Effect.logError("webhooks: delivery failed", cause)
            ).pipe(
              Effect.annotateLogs({ delivery_id: delivery.id }),
              Effect.andThen(release([delivery.id]).pipe(Effect.catchCause(() => Effect.void)))
            )
      ),
      Effect.withSpan("WebhookWorker.attempt", { attributes: { deliveryId: delivery.id } })
    )

  /** Not interrupted once sent: its rows are leased whether or not anyone reads the answer. */
  const claim = (limit: number) =>
    webhooks.claim(options.workerId, options.leaseSeconds, limit).pipe(
      Effect.tap((claimed) =>
        Effect.sync(() =>
          book.hold(
            "delivery",
            claimed.map((delivery) => delivery.id)
          )
        )
      ),
      Effect.uninterruptible
    )

  const outage = makeOutageBackoff("webhooks", { baseMillis: idleMillis, maxMillis: 2_000 })
  const idle = makeIdleRest(idleMillis, options.maxIdleMillis)
  const fanOut = outage.guard(webhooks.fanOut(fanOutBatch), "fan-out", 0)

  const run = Effect.gen(function* () {
    yield* Effect.forkChild(recorder)
    let inFlight = 0
    let lastSweep = 0
    let lastLook = 0
    while (true) {
      let now = yield* Clock.currentTimeMillis
      if (now - lastLook < lookGapMillis) {
        yield* Effect.sleep(lookGapMillis - (now - lastLook))
        now = yield* Clock.currentTimeMillis
      }
      lastLook = now
      if (now - lastSweep >= sweepMillis) {
        lastSweep = now
        yield* outage.guard(webhooks.sweepExpiringKeys, "key sweep", undefined)
      }
      const fanned = yield* fanOut
      const free = concurrency - inFlight
      const claimed = free >= refillAt || inFlight === 0 ? yield* outage.guard(claim(free), "claim", []) : []
      for (const delivery of claimed) {
        inFlight++
        yield* Effect.forkChild(
          attempt(delivery).pipe(
            Effect.ensuring(
              Effect.suspend(() => {
                inFlight--
                return concurrency - inFlight === refillAt ? signal.notify : Effect.void
              })
            )
          )
        )
      }
      // More may be due at once (a full fan-out batch, or a claim that took every free slot but
      // slots are still free); otherwise rest until a new event, a freed quarter or the idle rest ends.
      const maybeMore =
        fanned === fanOutBatch || (claimed.length > 0 && claimed.length === free && concurrency - inFlight >= refillAt)
      if (fanned > 0 || claimed.length > 0) idle.reset()
      const backoff = outage.delayMillis()
      if (backoff > 0) yield* Effect.sleep(backoff)
      else if (!maybeMore) yield* signal.wait(idle.next())
    }
  })

  return WebhookWorker.of({ run })
})
