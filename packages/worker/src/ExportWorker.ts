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
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { exportFailure, Ids, SongTools } from "@lyre/core"
import type { ExportFormat, ExportPollOutcome } from "@lyre/core"
import { Provider } from "@lyre/core/provider/Provider"
import { rehostExportFiles } from "./rehost.ts"
import { Storage } from "./storage/Storage.ts"
import { timeoutFailure } from "./TaskWorker.ts"

export interface ExportWorkerOptions {
  readonly workerId: string
  /** Where re-hosted files are served: `{publicUrl}/files/...`. */
  readonly publicUrl: string
  /** The first delay between polls, doubled per poll up to `maxPollSeconds`. */
  readonly pollSeconds: number
  readonly maxPollSeconds?: number
  readonly leaseSeconds: number
  readonly downloadTimeoutMs?: number
  /** Exports processed at once by this worker. */
  readonly concurrency?: number
  /** How often the worker looks for due exports. */
  readonly idleMillis?: number
  readonly sweepMillis?: number
}

interface Claimed {
  readonly id: string
  readonly provider_export_id: string
  readonly format: ExportFormat
  readonly attempts: number
  readonly hints: number
}

export class ExportWorker extends Context.Service<ExportWorker, {
  /** Fails every pending export past its deadline; answers how many this call failed. */
  readonly sweep: Effect.Effect<number>
  /** Claims and processes due exports once; answers how many it claimed. */
  readonly tick: Effect.Effect<number>
  /** Claims, processes and sweeps until interrupted. */
  readonly run: Effect.Effect<never>
}>()("lyre/worker/ExportWorker") {
  static readonly layer = (options: ExportWorkerOptions) => Layer.effect(ExportWorker, make(options))
}

const make = Effect.fnUntraced(function*(options: ExportWorkerOptions) {
  const sql = yield* SqlClient
  const provider = yield* Provider
  const tools = yield* SongTools
  const context = Context.merge(Context.make(Storage, yield* Storage), Context.make(Ids, yield* Ids))
  const concurrency = options.concurrency ?? 8
  const idleMillis = options.idleMillis ?? 250
  const sweepMillis = options.sweepMillis ?? 1_000
  const maxPollSeconds = Math.max(options.maxPollSeconds ?? 60, options.pollSeconds)
  const rehostOptions = { publicUrl: options.publicUrl, timeoutMs: options.downloadTimeoutMs ?? 60_000 }
  const iso = (millis: number) => new Date(millis).toISOString()

  const claim = Effect.fnUntraced(function*(limit: number) {
    const now = yield* Clock.currentTimeMillis
    return yield* sql<Claimed>`
      update exports e
      set lease_owner = ${options.workerId}, lease_expires_at = ${iso(now + options.leaseSeconds * 1000)}::timestamptz,
          attempts = e.attempts + 1
      from (
        select id from exports
        where status = 'pending' and submission_state = 'accepted' and next_poll_at <= ${iso(now)}::timestamptz
          and (lease_expires_at is null or lease_expires_at < ${iso(now)}::timestamptz)
        order by next_poll_at
        limit ${limit}
        for update skip locked
      ) due
      where e.id = due.id
      returning e.id, e.provider_export_id, e.format, e.attempts, e.hints`.pipe(Effect.orDie)
  })

  /**
   * Gives the export back, due after the backoff, or at once when a callback came meanwhile.
   * `movedTo` is the provider's new id for it (a pending outcome's `providerExportId`), stored in
   * the same statement, so only the lease holder moves it and it is polled under that id from now on.
   */
  const release = Effect.fnUntraced(function*(claimed: Claimed, reason: string, movedTo: string | null = null) {
    const now = yield* Clock.currentTimeMillis
    const delay = Math.min(maxPollSeconds, options.pollSeconds * 2 ** Math.max(0, claimed.attempts - 1))
    yield* sql`
      update exports
      set lease_owner = null, lease_expires_at = null, last_error = ${reason},
          provider_export_id = coalesce(${movedTo}::text, provider_export_id),
          next_poll_at = case when hints = ${claimed.hints} then ${iso(now + delay * 1000)}::timestamptz
                              else ${iso(now)}::timestamptz end
      where id = ${claimed.id} and status = 'pending' and lease_owner = ${options.workerId}`.pipe(Effect.orDie)
  })

  const settle = Effect.fnUntraced(function*(claimed: Claimed, outcome: ExportPollOutcome) {
    switch (outcome._tag) {
      case "Pending":
        return yield* release(claimed, "pending", outcome.providerExportId ?? null)
      case "Unknown":
        return yield* release(claimed, outcome.message)
      case "Failed":
        yield* tools.markExportFailed(claimed.id, exportFailure(outcome.code, outcome.message))
        return
      case "Succeeded": {
        const rehosted = yield* rehostExportFiles(claimed.id, outcome.files, outcome.timedLyrics, rehostOptions).pipe(
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
    Effect.flatMap(provider.pollExport(claimed.provider_export_id, claimed.format), (outcome) => settle(claimed, outcome)).pipe(
      Effect.onInterrupt(() => release(claimed, "worker stopped").pipe(Effect.catchCause(() => Effect.void))),
      Effect.catchCause((cause) =>
        Effect.logError("worker: export processing failed", cause).pipe(
          Effect.annotateLogs({ export_id: claimed.id }),
          Effect.andThen(release(claimed, "internal error").pipe(Effect.catchCause(() => Effect.void)))
        )
      )
    )

  const sweep = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const late = yield* sql<{ id: string }>`
      select id from exports where status = 'pending' and deadline_at <= ${iso(now)}::timestamptz
      order by deadline_at limit 100`.pipe(Effect.orDie)
    let failed = 0
    for (const { id } of late) {
      if (yield* tools.markExportFailed(id, { ...timeoutFailure, message: "The export did not finish in time; its credits were refunded." })) failed++
    }
    return failed
  }).pipe(Effect.withSpan("ExportWorker.sweep"))

  const tick = Effect.gen(function*() {
    const claimed = yield* claim(concurrency)
    yield* Effect.forEach(claimed, processExport, { concurrency: "unbounded", discard: true })
    return claimed.length
  })

  /**
   * Exports are few beside tasks and each takes seconds, so a batch at a time is enough: claim
   * what is due (up to `concurrency`), finish it, sweep, and look again after the idle interval
   * when nothing was due.
   */
  const run = Effect.gen(function*() {
    let lastSweep = 0
    while (true) {
      const now = yield* Clock.currentTimeMillis
      if (now - lastSweep >= sweepMillis) {
        lastSweep = now
        yield* sweep.pipe(Effect.catchCause((cause) => Effect.logError("worker: export sweep failed", cause)))
      }
      const claimed = yield* tick.pipe(
        Effect.catchCause((cause) => Effect.as(Effect.logError("worker: export claim failed", cause), 0))
      )
      if (claimed === 0) yield* Effect.sleep(idleMillis)
    }
  })

  return ExportWorker.of({ sweep, tick, run })
})
