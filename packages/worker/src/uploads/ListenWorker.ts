/**
 * The listening worker: every pending upload is listened to once, on the built-in engine's
 * listener (worker threads of its own, whatever the provider), and moved to `ready` with its
 * analysis, transcription and track, or to `failed`. It leases uploads as the other pollers lease
 * tasks and exports (leaseQueue.ts): any number of workers share the table, a crashed one's
 * lease expires, and an upload past its deadline fails.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Leases, Uploads } from "@lyre/core"
import { makeListener } from "@lyre/engine"
import type { AudioType, Listener } from "@lyre/engine"
import { runBatches } from "../batchLoop.ts"
import { leaseQueue } from "../leaseQueue.ts"
import type { Leased, LeaseOptions } from "../leaseQueue.ts"
import { Storage } from "../storage/Storage.ts"

export interface ListenWorkerOptions extends LeaseOptions {
  /** Uploads listened to at once by this worker (each holds one listener thread). */
  readonly concurrency?: number
  readonly idleMillis?: number
  /** The longest rest after empty looks in a row (default 1 s). */
  readonly maxIdleMillis?: number
  readonly sweepMillis?: number
}

export class ListenWorker extends Context.Service<
  ListenWorker,
  {
    /** Claims and listens to pending uploads once; answers how many it claimed. */
    readonly tick: Effect.Effect<number>
    /** Claims, listens and sweeps until interrupted. */
    readonly run: Effect.Effect<never>
  }
>()("lyre/worker/uploads/ListenWorker") {
  static readonly layer = (options: ListenWorkerOptions) => Layer.effect(ListenWorker, make(options))
}

const failure = (message: string) => ({ code: "listening_failed", message })

/** A stored file read whole: listening decodes it in one piece. */
const readAll = (storage: Storage["Service"], key: string) =>
  Effect.gen(function* () {
    const info = yield* storage.stat(key)
    if (info === null || info.size === 0) return null
    const stream = storage.read(key, { start: 0, end: info.size - 1 })
    return yield* Effect.promise(async () => {
      const parts: Array<Buffer> = []
      for await (const chunk of stream as AsyncIterable<Buffer>) parts.push(chunk)
      return new Uint8Array(Buffer.concat(parts))
    })
  })

const make = Effect.fnUntraced(function* (options: ListenWorkerOptions) {
  const sql = yield* SqlClient
  const uploads = yield* Uploads
  const storage = yield* Storage
  const concurrency = options.concurrency ?? 1
  const idleMillis = options.idleMillis ?? 250
  const sweepMillis = options.sweepMillis ?? 1_000
  const listener: Listener = yield* Effect.acquireRelease(
    Effect.sync(() => makeListener({ threads: concurrency })),
    (made) => Effect.promise(() => made.close())
  )
  const queue = leaseQueue<Leased>(
    sql,
    yield* Leases,
    { table: "uploads", noun: "upload", columns: [], relaxed: false },
    options
  )
  // As the task poller's: once the loop has stopped, before the pool closes.
  yield* Effect.addFinalizer(() => queue.handBack)

  const listenTo = (claimed: Leased) =>
    queue.guarded(
      claimed,
      Effect.gen(function* () {
        const file = yield* uploads.pendingFile(claimed.id)
        if (file === null) return
        const bytes = yield* readAll(storage, file.key)
        if (bytes === null) {
          yield* uploads.markFailed(claimed.id, failure("The uploaded file is no longer in storage."))
          return
        }
        const heard = yield* Effect.tryPromise(() => listener.listen(bytes, file.contentType as AudioType)).pipe(
          Effect.result
        )
        if (heard._tag === "Failure") {
          yield* uploads.markFailed(claimed.id, failure("The upload could not be listened to."))
          return
        }
        const { analysis, transcription } = heard.success
        yield* uploads.markReady(
          claimed.id,
          { ...analysis, beats: [...analysis.beats], chords: [...analysis.chords] },
          transcription
        )
      })
    )

  const sweep = queue
    .sweep((id) => uploads.markFailed(id, failure("Listening to the upload did not finish in time.")))
    .pipe(Effect.withSpan("ListenWorker.sweep"))

  const tick = Effect.gen(function* () {
    const claimed = yield* queue.claim(concurrency)
    yield* Effect.forEach(claimed, listenTo, { concurrency: "unbounded", discard: true })
    return claimed.length
  })

  const run = runBatches({
    name: "listen worker",
    tick,
    sweep,
    idleMillis,
    maxIdleMillis: options.maxIdleMillis,
    sweepMillis
  })

  return ListenWorker.of({ tick, run })
})
