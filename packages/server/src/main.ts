#!/usr/bin/env node
/**
 * `pnpm start` (the published `lyre-server`): every surface in one process, which is
 * `createLyre` from the environment plus `listen`. With no configuration this is the embedded
 * default (PGlite under DATA_DIR, in-memory limits, generated secrets, a bootstrapped account).
 */
import { Effect } from "effect"
import type { LeaseBook } from "@lyre/core"
import { providerLabel, Readiness } from "./app.ts"
import { bootstrapEmbedded } from "./bootstrap.ts"
import { loadConfig } from "./config.ts"
import { listen } from "./http/server.ts"
import { runDrained } from "./drain.ts"
import { makeLogger } from "./log.ts"
import { startLyre } from "./lyre.ts"

const program = (leases: LeaseBook) =>
  Effect.gen(function* () {
    const config = yield* loadConfig
    const logger = makeLogger(config.logLevel)
    const embedded = config.databaseUrl === null

    const { lyre, runtime } = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => startLyre(config, leases),
        catch: (cause) => (cause instanceof Error ? cause : new Error(String(cause)))
      }),
      (started) => Effect.promise(() => started.lyre.close())
    )
    const adminToken = lyre.adminToken
    const drainDelayMillis = config.drainDelaySeconds * 1000
    const server = yield* Effect.acquireRelease(
      Effect.promise(() => listen(lyre.handler, config.port, config.host)),
      // In-flight requests get what is left of 7 s after the delay, inside the 10 s drain.
      (running) => Effect.promise(() => running.close(Math.max(1_000, 7_000 - drainDelayMillis)))
    )
    // The signal itself flips /readyz to 503, before its interruption reaches the finalizers: on a
    // busy process every hop between the two was time the load balancer kept sending here.
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        const markDraining = () => runtime.runSync(Readiness.use((readiness) => readiness.drain))
        process.once("SIGTERM", markDraining)
        process.once("SIGINT", markDraining)
        return markDraining
      }),
      (markDraining) =>
        Effect.sync(() => {
          process.removeListener("SIGTERM", markDraining)
          process.removeListener("SIGINT", markDraining)
        })
    )
    // Finalizers run last first: on SIGTERM /readyz answers 503 (already, by the listener above),
    // the load balancer is given DRAIN_DELAY_SECONDS to notice, then the listener closes and the
    // requests in flight finish, then the worker hands its leases back and the pools close.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => logger.log("info", "draining", { port: server.port })).pipe(
        Effect.andThen(Effect.promise(() => runtime.runPromise(Readiness.use((readiness) => readiness.drain)))),
        Effect.andThen(Effect.sleep(drainDelayMillis))
      )
    )
    const banner: Record<string, unknown> = {
      url: config.publicUrl,
      port: server.port,
      mode: embedded ? "embedded" : "production",
      database: embedded ? `pglite:${config.dataDir}/pglite` : "postgres",
      limits: config.redisUrl === null ? "memory" : "redis",
      provider: providerLabel(config),
      worker: config.worker
    }
    if (embedded) {
      const boot = yield* Effect.promise(() => bootstrapEmbedded(runtime, config.dataDir))
      Object.assign(banner, { admin_token: adminToken, account_id: boot.account_id, api_key: boot.api_key })
    }
    logger.log("info", "listening", banner)
    if (embedded) {
      process.stderr.write(
        `\nLyre is running at ${config.publicUrl}\n` +
          `  admin token : ${adminToken}\n` +
          `  API key     : ${String(banner["api_key"])}  (Pro account ${String(banner["account_id"])})\n` +
          `  try         : curl -H "Authorization: Bearer ${String(banner["api_key"])}" ${config.publicUrl}/api/v1/me\n` +
          `  sign in     : ${config.publicUrl}/signin as demo@lyre.local, password in ${config.dataDir}/bootstrap.json\n\n`
      )
    }
    return yield* Effect.never
  }).pipe(Effect.scoped)

runDrained("lyre", program)
