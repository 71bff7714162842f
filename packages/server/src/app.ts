/**
 * The application layer: database, limiter store, settings and core, built once into the
 * runtime every surface shares.
 */
import { Context, Effect, Layer, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Redis } from "ioredis"
import { coreLayer, RateLimiter, Settings } from "@lyre/core"
import type { CoreServices } from "@lyre/core"
import type { ServerConfig } from "./config.ts"
import { databaseLayer } from "./database.ts"

/** Answers /readyz: can we reach the database (and Redis, when configured)? */
export class Readiness extends Context.Service<Readiness, {
  readonly check: Effect.Effect<{ readonly database: boolean; readonly redis: boolean | null }>
}>()("lyre/server/Readiness") {}

const redisLayer = (url: string) =>
  Effect.acquireRelease(
    Effect.sync(() => new Redis(url, { maxRetriesPerRequest: 2, enableAutoPipelining: true })),
    (client) => Effect.promise(() => client.quit().catch(() => "closed"))
  )

export interface AppSecrets {
  readonly secretKey: string
}

export type AppServices = CoreServices | Readiness | SqlClient

export const appLayer = (config: ServerConfig, secrets: AppSecrets): Layer.Layer<AppServices, unknown> => {
  const database = databaseLayer({ databaseUrl: config.databaseUrl, dataDir: config.dataDir })
  const settings = Settings.layer({
    publicUrl: config.publicUrl,
    secretKey: secrets.secretKey,
    requestsPerMinute: config.requestsPerMinute,
    generationTimeoutSeconds: config.generationTimeoutSeconds
  })
  const limiterAndReadiness = Layer.unwrap(Effect.gen(function*() {
    const sql = yield* SqlClient
    const redis = config.redisUrl === null ? null : yield* redisLayer(config.redisUrl)
    const databaseUp = sql`select 1`.pipe(Effect.as(true), Effect.catch(() => Effect.succeed(false)))
    const redisUp = redis === null
      ? Effect.succeed(null)
      : Effect.promise(() => redis.ping().then(() => true, () => false))
    const readiness = Layer.succeed(Readiness)(Readiness.of({
      check: Effect.all({ database: databaseUp, redis: redisUp })
    }))
    return Layer.merge(redis === null ? RateLimiter.layerMemory : RateLimiter.layerRedis(redis), readiness)
  }))
  return coreLayer.pipe(
    Layer.provideMerge(limiterAndReadiness),
    Layer.provideMerge(settings),
    Layer.provideMerge(database)
  )
}

export type AppRuntime = ManagedRuntime.ManagedRuntime<AppServices, unknown>

export const makeAppRuntime = async (config: ServerConfig, secrets: AppSecrets): Promise<AppRuntime> => {
  const runtime = ManagedRuntime.make(appLayer(config, secrets))
  await runtime.context()
  return runtime
}
