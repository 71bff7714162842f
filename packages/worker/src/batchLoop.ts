/**
 * The loop of a queue worked a batch at a time (exports, uploads being listened to): claim what is
 * due, finish it, sweep past deadlines every `sweepMillis`, and look again after `idleMillis` when
 * nothing was due, resting twice as long after each further empty look, up to `maxIdleMillis`
 * (core's IdleRest). As the task poller does, a lost database is said once under `name`, waited out
 * with growing pauses, and resumed.
 */
import { Clock, Effect } from "effect"
import { makeIdleRest, makeOutageBackoff } from "@lyre/core"

export interface BatchLoop {
  /** Names the worker in its outage lines (`export worker: the database is out of reach`). */
  readonly name: string
  /** Claims and finishes one batch; answers how many it claimed. */
  readonly tick: Effect.Effect<number>
  readonly sweep: Effect.Effect<number>
  readonly idleMillis: number
  /** The longest rest after empty looks (default 1 s): how late work due by the clock may be found. */
  readonly maxIdleMillis?: number | undefined
  readonly sweepMillis: number
}

export const runBatches = ({
  name,
  tick,
  sweep,
  idleMillis,
  maxIdleMillis,
  sweepMillis
}: BatchLoop): Effect.Effect<never> =>
  Effect.gen(function* () {
    let lastSweep = 0
    const outage = makeOutageBackoff(name, { baseMillis: idleMillis, maxMillis: 2_000 })
    const idle = makeIdleRest(idleMillis, maxIdleMillis)
    while (true) {
      const now = yield* Clock.currentTimeMillis
      if (now - lastSweep >= sweepMillis) {
        lastSweep = now
        yield* outage.guard(sweep, "sweep", 0)
      }
      const claimed = yield* outage.guard(tick, "claim", 0)
      const backoff = outage.delayMillis()
      if (claimed > 0) idle.reset()
      if (backoff > 0) yield* Effect.sleep(backoff)
      else if (claimed === 0) yield* Effect.sleep(idle.next())
    }
  })
