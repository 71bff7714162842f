/**
 * Nudges idle workers: a callback or a freed slot wakes them at once instead of at their next
 * idle poll. In one process that is a local signal; on PostgreSQL it also travels as
 * `NOTIFY lyre_worker`, so an API process wakes separate worker processes (unless its own
 * worker has room for the task). Polling remains the
 * fallback (and the only way on PGlite, which has no second connection to listen on), so a
 * lost notification costs latency, never a task.
 */
import { randomBytes } from "node:crypto"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Queue } from "effect"
import type { Scope } from "effect"
import { makeLocalSignal } from "@lyre/core"

const channel = "lyre_worker"
/** Names this process's notifications, so it does not wake itself twice (locally, then by its own NOTIFY). */
const sender = randomBytes(8).toString("hex")

/** A `NOTIFY` for a statement to send itself: `pg_notify(channel, payload)`. */
export interface RemoteWakeup {
  readonly channel: string
  readonly payload: string
}

export class Wakeup extends Context.Service<
  Wakeup,
  {
    /** Wakes the workers of this process and, on PostgreSQL, every other process's. */
    readonly notify: Effect.Effect<void>
    /** Wakes the workers of this process only. */
    readonly notifyLocal: Effect.Effect<void>
    /**
     * What wakes other processes' workers, for a statement that makes a task due to send in its
     * own `pg_notify` (delivered at its commit, without a round trip of its own), followed by
     * `notifyLocal`. Null where there are no other processes (PGlite), and while this process's
     * own worker has a free slot: it takes the task at once, and waking the others would only make
     * them race it for the task (a NOTIFY costs the database and every listener).
     */
    readonly remote: () => RemoteWakeup | null
    /** A worker of this process says, for as long as the scope lasts, whether it has a free slot. */
    readonly attachWorker: (hasRoom: () => boolean) => Effect.Effect<void, never, Scope.Scope>
    /** Returns at the next notification (or at once if one came since the last wait), or after `millis`. */
    readonly wait: (millis: number) => Effect.Effect<void>
  }
>()("lyre/worker/Wakeup") {
  static readonly layerLocal = Layer.sync(Wakeup)(() => {
    const local = makeLocalSignal()
    return Wakeup.of({
      notify: local.notify,
      notifyLocal: local.notify,
      remote: () => null,
      attachWorker: () => Effect.void,
      wait: local.wait
    })
  })

  /** Local signals plus LISTEN/NOTIFY; `listen` is false for processes that only send (API with WORKER=off). */
  static readonly layerPg = (options: { readonly listen: boolean }) =>
    Layer.effect(
      Wakeup,
      Effect.gen(function* () {
        const pg = yield* PgClient.PgClient
        const local = makeLocalSignal()
        if (options.listen) {
          const listening = Effect.gen(function* () {
            const notifications = yield* pg.listen(channel)
            return yield* Effect.forever(
              Effect.flatMap(Queue.take(notifications), (notification) =>
                notification.payload === sender ? Effect.void : local.notify
              )
            )
          }).pipe(
            Effect.scoped,
            Effect.catchCause(() => Effect.sleep("1 second")),
            Effect.forever
          )
          yield* Effect.forkScoped(listening)
        }
        const notify = Effect.andThen(local.notify, pg.notify(channel, sender).pipe(Effect.ignore))
        const others: RemoteWakeup = { channel, payload: sender }
        const workers = new Set<() => boolean>()
        const remote = (): RemoteWakeup | null => {
          for (const hasRoom of workers) if (hasRoom()) return null
          return others
        }
        const attachWorker = (hasRoom: () => boolean) =>
          Effect.acquireRelease(
            Effect.sync(() => workers.add(hasRoom)),
            () => Effect.sync(() => workers.delete(hasRoom))
          ).pipe(Effect.asVoid)
        return Wakeup.of({ notify, notifyLocal: local.notify, remote, attachWorker, wait: local.wait })
      })
    )
}
