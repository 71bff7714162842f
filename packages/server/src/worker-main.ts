#!/usr/bin/env node
/**
 * `pnpm worker` (the published `lyre-worker`): a task worker alone, for production
 * (`DATABASE_URL`, `PROVIDER=http`). Any number of them share the database with the API
 * processes: they claim due tasks with leases, poll the provider, re-host files, and fail what
 * outlives its deadline. SIGTERM stops it gracefully, handing its leases back (exit 0; 3 with
 * the ids it could not hand back in one line); a kill -9 loses nothing (its leases expire and
 * another worker takes over).
 */
import { Effect, Layer } from "effect"
import type { LeaseBook } from "@lyre/core"
import { appLayer, providerLabel, workerId } from "./app.ts"
import { ConfigurationError, loadConfig } from "./config.ts"
import { runDrained } from "./drain.ts"
import { makeLogger } from "./log.ts"
import { metricsListenerLayer } from "./metricsListener.ts"

const program = (leases: LeaseBook) =>
  Effect.gen(function* () {
    const loaded = yield* loadConfig
    if (loaded.databaseUrl === null) {
      return yield* new ConfigurationError({
        message: "pnpm worker needs DATABASE_URL: the embedded default runs its worker inside pnpm start"
      })
    }
    if (loaded.provider !== "http") {
      return yield* new ConfigurationError({
        message: "pnpm worker needs PROVIDER=http with PROVIDER_URL and PROVIDER_API_KEY"
      })
    }
    if (loaded.secretKey === null) return yield* new ConfigurationError({ message: "SECRET_KEY is required" })
    const config = { ...loaded, worker: "inline" as const }
    const logger = makeLogger(config.logLevel)
    logger.log("info", "worker starting", {
      worker_id: workerId,
      provider: providerLabel(config),
      poll_seconds: config.providerPollSeconds,
      lease_seconds: config.workerLeaseSeconds
    })
    const app = appLayer(config, { secretKey: config.secretKey ?? "" }, { answersRequests: false }, leases)
    const launched =
      config.metricsPort === null || config.metrics === "off"
        ? app
        : metricsListenerLayer({ port: config.metricsPort, host: config.host, token: config.metricsToken }).pipe(
            Layer.provide(app)
          )
    return yield* Effect.scoped(
      Effect.gen(function* () {
        yield* Layer.build(launched)
        // Finalizers run last first: the line comes as the signal is taken, before the hand-back.
        yield* Effect.addFinalizer(() => Effect.sync(() => logger.log("info", "draining", { worker_id: workerId })))
        return yield* Effect.never
      })
    )
  })

runDrained("lyre worker", program)
