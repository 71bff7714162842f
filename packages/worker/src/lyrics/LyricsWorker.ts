/**
 * The lyrics worker: drives every pending lyrics task to `ready` or `failed` through the
 * LyricsWriter, on the `lyrics_tasks` table, as the other queues are driven (leaseQueue.ts): any
 * number of workers share it, a crashed one's lease expires, and a task past its deadline fails
 * with `generation_timeout`, refunded. A writer's words are kept only as core's rule keeps them
 * (two variations, each valid as a generation's `lyrics`); anything else fails the task, refunded.
 * An asynchronous writer (the upstream) takes a task once; its id is stored with the release, and
 * from then on the task is polled under it (a callback only makes it due now).
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { keptVariations, Leases, lyricsFailure, Lyrics, LyricsWriter } from "@lyre/core"
import type { LyricsStep } from "@lyre/core"
import { runBatches } from "../batchLoop.ts"
import { leaseQueue } from "../leaseQueue.ts"
import type { Leased, LeaseOptions } from "../leaseQueue.ts"

export interface LyricsWorkerOptions extends LeaseOptions {
  /** Tasks written at once by this worker. */
  readonly concurrency?: number
  readonly idleMillis?: number
  /** The longest rest after empty looks in a row (default 1 s). */
  readonly maxIdleMillis?: number
  readonly sweepMillis?: number
}

export class LyricsWorker extends Context.Service<
  LyricsWorker,
  {
    /** Fails every pending task past its deadline; answers how many this call failed. */
    readonly sweep: Effect.Effect<number>
    /** Claims and works due tasks once; answers how many it claimed. */
    readonly tick: Effect.Effect<number>
    /** Claims, works and sweeps until interrupted. */
    readonly run: Effect.Effect<never>
  }
>()("lyre/worker/lyrics/LyricsWorker") {
  static readonly layer = (options: LyricsWorkerOptions) => Layer.effect(LyricsWorker, make(options))
}

const make = Effect.fnUntraced(function* (options: LyricsWorkerOptions) {
  const sql = yield* SqlClient
  const lyrics = yield* Lyrics
  const writer = yield* LyricsWriter
  const concurrency = options.concurrency ?? 4
  const queue = leaseQueue<Leased>(
    sql,
    yield* Leases,
    // A release may carry the upstream's id for the task, which a lost commit would lose.
    { table: "lyrics_tasks", noun: "lyrics", columns: [], relaxed: false },
    options
  )
  // As the other queues': once the loop has stopped, before the pool closes.
  yield* Effect.addFinalizer(() => queue.handBack)

  const settle = Effect.fnUntraced(function* (claimed: Leased, step: LyricsStep, title: string | undefined) {
    switch (step._tag) {
      case "Taken":
        return yield* queue.release(claimed, "taken", sql`provider_task_id = ${step.providerTaskId},`)
      case "NotYet":
        return yield* queue.release(claimed, step.message)
      case "Failed":
        yield* lyrics.markFailed(claimed.id, lyricsFailure(step.code, `${writer.name}: ${step.detail}`))
        return
      case "Written": {
        const kept = keptVariations(step.variations, title)
        if (kept.ok) yield* lyrics.markReady(claimed.id, kept.variations)
        else yield* lyrics.markFailed(claimed.id, lyricsFailure("lyrics_failed", `${writer.name}: ${kept.detail}`))
        return
      }
    }
  })

  const work = (claimed: Leased) =>
    queue.guarded(
      claimed,
      Effect.gen(function* () {
        const job = yield* lyrics.pendingJob(claimed.id)
        if (job === null) return
        const step = yield* writer.step(job)
        yield* settle(claimed, step, job.request.title)
      })
    )

  const sweep = queue
    .sweep((id) => lyrics.markFailed(id, lyricsFailure("generation_timeout", "past its deadline")))
    .pipe(Effect.withSpan("LyricsWorker.sweep"))

  const tick = Effect.gen(function* () {
    const claimed = yield* queue.claim(concurrency)
    yield* Effect.forEach(claimed, work, { concurrency: "unbounded", discard: true })
    return claimed.length
  })

  const run = runBatches({
    name: "lyrics worker",
    tick,
    sweep,
    idleMillis: options.idleMillis ?? 100,
    maxIdleMillis: options.maxIdleMillis,
    sweepMillis: options.sweepMillis ?? 1_000
  })

  return LyricsWorker.of({ sweep, tick, run })
})
