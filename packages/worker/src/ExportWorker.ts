/**
 * The export poller: drives every accepted export to `ready` or `failed` as the task poller
 * drives tasks, on the `exports` table:
 *
 * - claim: one `update ... from (select ... for update skip locked)` leases due exports to this
 *   worker; a crashed worker's lease expires and another takes the export over;
 * - process: the provider's status query decides (callbacks only make an export due now); a
 *   success has every file re-hosted into storage (and for timed lyrics the `.lrc`, WebVTT and
 *   JSON files written from the words) before `markExportReady`; a failure is
 *   `markExportFailed` (refund and `export.failed`, once); anything else is released with a
 *   growing delay;
 * - sweep: pending exports past their deadline fail with `generation_timeout`, refunded.
 *
 * Nothing here knows whose provider it is: the port's outcomes are the whole vocabulary.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { ContentCredentials, exportFailure, exportOrigin, Ids, Leases, SongTools } from "@lyre/core"
import type { ExportFormat, ExportPollOutcome } from "@lyre/core"
import { Provider } from "@lyre/core/provider/Provider"
import { runBatches } from "./batchLoop.ts"
import { leaseQueue } from "./leaseQueue.ts"
import type { Leased, LeaseOptions } from "./leaseQueue.ts"
import { UpstreamConnections } from "./provider/upstreamAgents.ts"
import { provenanceOf, RehostError, rehostExportFiles } from "./rehost.ts"
import { Storage } from "./storage/Storage.ts"
import { timeoutFailure } from "./TaskWorker.ts"

export interface ExportWorkerOptions extends LeaseOptions {
  /** Where re-hosted files are served: `{publicUrl}/files/...`. */
  readonly publicUrl: string
  readonly downloadTimeoutMs?: number
  /** Exports processed at once by this worker. */
  readonly concurrency?: number
  /** How long the worker first rests after a look that found no due export. */
  readonly idleMillis?: number
  /** The longest rest after empty looks in a row (default 1 s). */
  readonly maxIdleMillis?: number
  readonly sweepMillis?: number
}

interface Claimed extends Leased {
  readonly provider_export_id: string
  readonly format: ExportFormat
}

export class ExportWorker extends Context.Service<
  ExportWorker,
  {
    /** Fails every pending export past its deadline; answers how many this call failed. */
    readonly sweep: Effect.Effect<number>
    /** Claims and processes due exports once; answers how many it claimed. */
    readonly tick: Effect.Effect<number>
    /** Claims, processes and sweeps until interrupted. */
    readonly run: Effect.Effect<never>
  }
>()("lyre/worker/ExportWorker") {
  static readonly layer = (options: ExportWorkerOptions) =>
    Layer.effect(ExportWorker, make(options)).pipe(Layer.provide(UpstreamConnections.layer))
}

const make = Effect.fnUntraced(function* (options: ExportWorkerOptions) {
  const sql = yield* SqlClient
  const provider = yield* Provider
  const tools = yield* SongTools
  const context = Context.merge(
    Context.merge(Context.make(Storage, yield* Storage), Context.make(Ids, yield* Ids)),
    Context.make(ContentCredentials, yield* ContentCredentials)
  )
  const concurrency = options.concurrency ?? 8
  const idleMillis = options.idleMillis ?? 250
  const sweepMillis = options.sweepMillis ?? 1_000
  const rehostOptions = {
    publicUrl: options.publicUrl,
    agents: yield* UpstreamConnections,
    timeoutMs: options.downloadTimeoutMs ?? 60_000
  }
  const queue = leaseQueue<Claimed>(
    sql,
    yield* Leases,
    {
      table: "exports",
      noun: "export",
      columns: ["provider_export_id", "format"],
      relaxed: false
    },
    options
  )
  const { claim } = queue
  // As the task poller's: once the loop has stopped, before the pool closes.
  yield* Effect.addFinalizer(() => queue.handBack)

  /**
   * Gives the export back. `movedTo` is the provider's new id for it (a pending outcome's
   * `providerExportId`), stored in the same statement, so only the lease holder moves it and it
   * is polled under that id from now on.
   */
  const release = (claimed: Claimed, reason: string, movedTo: string | null = null) =>
    queue.release(claimed, reason, sql`provider_export_id = coalesce(${movedTo}::text, provider_export_id),`)

  const settle = Effect.fnUntraced(function* (claimed: Claimed, outcome: ExportPollOutcome) {
    switch (outcome._tag) {
      case "Pending":
        return yield* release(claimed, "pending", outcome.providerExportId ?? null)
      case "Unknown":
        return yield* release(claimed, outcome.message)
      case "Failed":
        yield* tools.markExportFailed(claimed.id, exportFailure(outcome.code, outcome.message))
        return
      case "Succeeded": {
        const rehosted = yield* exportOrigin(sql, claimed.id, provider.name).pipe(
          Effect.mapError((error) => new RehostError({ message: error.message, definite: false })),
          Effect.flatMap((origin) =>
            rehostExportFiles(claimed.id, outcome.files, outcome.timedLyrics, rehostOptions, provenanceOf(origin))
          ),
          Effect.provideContext(context),
          Effect.result
        )
        if (rehosted._tag === "Success") {
          yield* tools.markExportReady(claimed.id, rehosted.success, outcome.timedLyrics)
          return
        }
        const error = rehosted.failure
        if (error.definite) {
          yield* tools.markExportFailed(claimed.id, exportFailure("provider_error", error.message))
          return
        }
        return yield* release(claimed, error.message)
      }
    }
  })

  const processExport = (claimed: Claimed) =>
    queue.guarded(
      claimed,
      Effect.flatMap(provider.pollExport(claimed.provider_export_id, claimed.format), (outcome) =>
        settle(claimed, outcome)
      )
    )

  const sweep = queue
    .sweep((id) =>
      tools.markExportFailed(id, {
        ...timeoutFailure,
        message: "The export did not finish in time; its credits were refunded."
      })
    )
    .pipe(Effect.withSpan("ExportWorker.sweep"))

  const tick = Effect.gen(function* () {
    const claimed = yield* claim(concurrency)
    yield* Effect.forEach(claimed, processExport, { concurrency: "unbounded", discard: true })
    return claimed.length
  })

  // Exports are few beside tasks and each takes seconds, so a batch at a time is enough.
  const run = runBatches({
    name: "export worker",
    tick,
    sweep,
    idleMillis,
    maxIdleMillis: options.maxIdleMillis,
    sweepMillis
  })

  return ExportWorker.of({ sweep, tick, run })
})
