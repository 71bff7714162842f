/**
 * The task poller: drives every accepted task to `ready` or `failed`, and fails what outlives
 * its deadline. Any number of workers share one database (graphile-worker style):
 *
 * - claim: one `update ... from (select ... for update skip locked)` takes due tasks and leases
 *   them to this worker; a crashed worker's lease expires and another takes the task over;
 * - process: record-info decides (callbacks only make a task due now); a success is re-hosted
 *   into storage, then `markReady`; a failure is `markFailed` (refund and event in one
 *   statement); anything else is released with a growing delay;
 * - sweep: pending tasks past their deadline fail with `generation_timeout`, refunded.
 *
 * Transitions are conditional on `pending`, so a second worker or a late callback applies
 * nothing twice. A task whose submission is unknown is never submitted again: a callback (its
 * URL names the task and carries the token) reveals the provider's task id, or the deadline
 * fails it with its refund.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import {
  ContentCredentials,
  Generations,
  Ids,
  Leases,
  makeIdleRest,
  makeOutageBackoff,
  providerFailure,
  TaskTraces,
  taskOrigin,
  traceParentOf
} from "@lyre/core"
import type { PollOutcome } from "@lyre/core"
import { Provider } from "@lyre/core/provider/Provider"
import { leaseQueue } from "./leaseQueue.ts"
import type { Leased, LeaseOptions } from "./leaseQueue.ts"
import { UpstreamConnections } from "./provider/upstreamAgents.ts"
import { provenanceOf, RehostError, rehostTracks } from "./rehost.ts"
import { Storage } from "./storage/Storage.ts"
import { Wakeup } from "./Wakeup.ts"

export interface TaskWorkerOptions extends LeaseOptions {
  /** Where re-hosted files are served: `{publicUrl}/files/...`. */
  readonly publicUrl: string
  /** Limit for each file download. */
  readonly downloadTimeoutMs?: number
  /** Tasks processed at once by this worker. */
  readonly concurrency?: number
  /** How long the worker first rests after a look that found no due task, unless woken. */
  readonly idleMillis?: number
  /**
   * The longest rest after empty looks in a row (default 1 s): how late a task due by the clock
   * (its next poll) is found when no callback wakes the worker.
   */
  readonly maxIdleMillis?: number
  /** How often the deadline sweep runs. */
  readonly sweepMillis?: number
  /**
   * Least time between two claims while tasks keep coming: a claim costs a statement whatever
   * it takes, so under load it waits this long to take the callbacks of several tasks at once.
   * An idle worker claims at once.
   */
  readonly claimGapMillis?: number
}

interface Claimed extends Leased {
  readonly provider_task_id: string
  readonly trace_context: string | null
}

export const timeoutFailure = {
  code: "generation_timeout",
  message: "The generation did not finish in time; its credits were refunded."
} as const

export class TaskWorker extends Context.Service<
  TaskWorker,
  {
    /** Fails every pending task past its deadline; answers how many this call failed. */
    readonly sweep: Effect.Effect<number>
    /** Claims, processes and sweeps until interrupted. */
    readonly run: Effect.Effect<never>
  }
>()("lyre/worker/TaskWorker") {
  static readonly layer = (options: TaskWorkerOptions) =>
    Layer.effect(TaskWorker, make(options)).pipe(Layer.provide(UpstreamConnections.layer))
}

const make = Effect.fnUntraced(function* (options: TaskWorkerOptions) {
  const sql = yield* SqlClient
  const provider = yield* Provider
  const generations = yield* Generations
  const wakeup = yield* Wakeup
  const traced = yield* TaskTraces
  const context = Context.merge(
    Context.merge(Context.make(Storage, yield* Storage), Context.make(Ids, yield* Ids)),
    Context.make(ContentCredentials, yield* ContentCredentials)
  )
  // Most of a task's time is waiting (record-info, downloads, the final statement), and on a
  // busy process those waits stretch: 32 in flight let the inline worker fall behind the create
  // rate in the benchmark. Downloads stream to disk, so a task in flight holds little memory.
  const concurrency = options.concurrency ?? 64
  const idleMillis = options.idleMillis ?? 250
  const sweepMillis = options.sweepMillis ?? 1_000
  const claimGapMillis = options.claimGapMillis ?? 10
  const rehostOptions = {
    publicUrl: options.publicUrl,
    agents: yield* UpstreamConnections,
    timeoutMs: options.downloadTimeoutMs ?? 30_000
  }
  const queue = leaseQueue<Claimed>(
    sql,
    yield* Leases,
    {
      table: "generation_tasks",
      noun: "task",
      columns: ["provider_task_id", "trace_context"],
      relaxed: true
    },
    options
  )
  const { claim, release } = queue
  // After the loop and its fibers have stopped (the loop is forked after this layer is built, so
  // it is stopped first) and before the pool closes: what is still leased goes back.
  yield* Effect.addFinalizer(() => queue.handBack)

  /**
   * Tasks whose previews this worker has recorded (the statement applies once in any case; this
   * spares it on every later look). Forgotten when the task ends; a task another worker finishes
   * leaves a few bytes here until the process ends.
   */
  const streaming = new Set<string>()

  const settle = Effect.fnUntraced(function* (task: Claimed, outcome: PollOutcome) {
    switch (outcome._tag) {
      case "Pending":
        // Audio before `ready` (DESIGN.md section 14): the first look that sees it offers it, once.
        if (outcome.previews !== undefined && outcome.previews.length > 0 && !streaming.has(task.id)) {
          streaming.add(task.id)
          yield* generations.markStreaming(task.id, outcome.previews)
          yield* release(task, "pending")
          // The upstream's next callback (`complete`) often comes while this look is on its way:
          // released due at once, the task is looked at again now rather than at the next idle look.
          return yield* wakeup.notifyLocal
        }
        return yield* release(task, "pending")
      case "Unknown":
        return yield* release(task, outcome.message)
      case "Failed":
        streaming.delete(task.id)
        yield* generations.markFailed(task.id, providerFailure(outcome.code, outcome.message))
        return
      case "Succeeded": {
        // Done before any look saw it streaming: its streams are still announced, once, before ready.
        if (outcome.previews !== undefined && outcome.previews.length > 0 && !streaming.has(task.id))
          yield* generations.markStreaming(task.id, outcome.previews)
        streaming.delete(task.id)
        // What the files' content credentials say: read before they are signed, in re-hosting.
        const rehosted = yield* taskOrigin(sql, task.id, provider.name).pipe(
          Effect.mapError((error) => new RehostError({ message: error.message, definite: false })),
          Effect.flatMap((origin) => rehostTracks(task.id, outcome.tracks, rehostOptions, provenanceOf(origin))),
          Effect.provideContext(context),
          Effect.result
        )
        if (rehosted._tag === "Success") {
          yield* generations.markReady(task.id, rehosted.success)
          return
        }
        const error = rehosted.failure
        if (error.definite) {
          yield* generations.markFailed(task.id, providerFailure("provider_error", error.message))
          return
        }
        return yield* release(task, error.message)
      }
    }
  })

  /**
   * No span per task unless traces are exported: this runs for every task, and its log lines
   * already name the task. Exported, the task's processing joins the trace of its create request.
   */
  const inTaskTrace = <A, E, R>(task: Claimed, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
    const trace = traced ? traceParentOf(task.trace_context) : null
    return trace === null
      ? effect
      : effect.pipe(
          Effect.withSpan("TaskWorker.process", {
            parent: trace.parent,
            attributes: { task_id: task.id, request_id: trace.requestId }
          })
        )
  }

  const processTask = (task: Claimed) =>
    queue.guarded(
      task,
      inTaskTrace(
        task,
        Effect.flatMap(provider.poll(task.provider_task_id), (outcome) => settle(task, outcome))
      )
    )

  const sweep = queue
    .sweep((id) => generations.markFailed(id, timeoutFailure))
    .pipe(Effect.withSpan("TaskWorker.sweep"))

  /**
   * Keeps up to `concurrency` tasks in flight: claims as many as there are free slots, processes
   * each in its own fiber, and sleeps until a notification (a callback made a task due), a slot
   * freed while every slot was busy, or the idle rest (longer after each empty look, up to
   * `maxIdleMillis`). A claim that took fewer tasks than it could saw everything due, so the
   * next one waits for news; under load claims are spaced by `claimGapMillis`, each taking what
   * came meanwhile, rather than one statement per task.
   */
  const run = Effect.gen(function* () {
    yield* Effect.logInfo("worker started").pipe(
      Effect.annotateLogs({ worker_id: options.workerId, provider: provider.name, concurrency })
    )
    let inFlight = 0
    const outage = makeOutageBackoff("worker", { baseMillis: idleMillis, maxMillis: 2_000 })
    const idle = makeIdleRest(idleMillis, options.maxIdleMillis)
    // While a slot is free, this process's callbacks wake only this worker (see Wakeup.remote).
    yield* wakeup.attachWorker(() => inFlight < concurrency)
    let lastSweep = 0
    let lastClaim = 0
    /** Every slot was busy at the last look: a finishing task wakes the loop. */
    let full = false
    const finished = Effect.suspend(() => {
      inFlight--
      if (!full) return Effect.void
      full = false
      return wakeup.notifyLocal
    })
    while (true) {
      let now = yield* Clock.currentTimeMillis
      if (now - lastSweep >= sweepMillis) {
        lastSweep = now
        yield* outage.guard(sweep, "sweep", 0)
      }
      const free = concurrency - inFlight
      if (free === 0) {
        full = true
        yield* wakeup.wait(idleMillis)
        continue
      }
      if (now - lastClaim < claimGapMillis) {
        yield* Effect.sleep(claimGapMillis - (now - lastClaim))
        now = yield* Clock.currentTimeMillis
      }
      lastClaim = now
      const claimed = yield* outage.guard(claim(free), "claim", [])
      for (const task of claimed) {
        inFlight++
        yield* Effect.forkChild(processTask(task).pipe(Effect.ensuring(finished)))
      }
      // Every free slot filled: more may be due, so look again (after the gap) without waiting.
      const backoff = outage.delayMillis()
      if (claimed.length > 0) idle.reset()
      if (backoff > 0) yield* Effect.sleep(backoff)
      else if (claimed.length < free) yield* wakeup.wait(idle.next())
    }
  }).pipe(Effect.scoped)

  return TaskWorker.of({ sweep, run })
})
