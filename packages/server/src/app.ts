/**
 * The application layer: database, limiter store, settings and core, built once into the
 * runtime every surface shares.
 */
import { hostname } from "node:os"
import { join } from "node:path"
import { Context, Effect, Layer, Logger, ManagedRuntime, Redacted, References } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Redis } from "ioredis"
import {
  type ContentCredentials,
  coreLayer,
  DenyList,
  Ids,
  Leases,
  makeLeaseBook,
  type LyricsWriter,
  type Provider,
  randomBase62,
  RateLimiter,
  RedisGate,
  reportUnreturned,
  Settings,
  Uploads,
  signedFileSeconds,
  signFileUrl,
  WebhookWorker
} from "@lyre/core"
import type { CoreServices, DenyFeed, LeaseBook } from "@lyre/core"
import {
  builtInLyricsWriterLayer,
  chatLyricsWriterLayer,
  engineProviderLayer,
  ExportWorker,
  ListenWorker,
  LyricsWorker,
  ProviderCallbacks,
  Storage,
  SunoHttpProvider,
  sunoLyricsWriterLayer,
  TaskWorker,
  uploadFilesLayer,
  Wakeup
} from "@lyre/worker"
import { ConfigurationError, storageOf } from "./config.ts"
import { contentCredentialsLayer } from "./contentCredentials.ts"
import { effectLinesOf, makeLogger } from "./log.ts"
import type { ServerConfig } from "./config.ts"
import { databaseLayer } from "./database.ts"
import { measuredProvider, observabilityLayer } from "./observability.ts"

export interface ReadinessChecks {
  /** Null while draining: the answer is 503 then whatever the database says, so it is not asked. */
  readonly database: boolean | null
  /** Null without `REDIS_URL`, and while draining. Reported, not required: while Redis is away the process falls back. */
  readonly redis: boolean | null
  /** A `SIGTERM` came: the process finishes what it has and takes nothing new. */
  readonly draining: boolean
}

/** Answers /readyz: can we reach the database, and are we not draining? */
export class Readiness extends Context.Service<
  Readiness,
  {
    readonly check: Effect.Effect<ReadinessChecks>
    /** From now on /readyz answers 503, so a load balancer sends nothing more here. */
    readonly drain: Effect.Effect<void>
  }
>()("lyre/server/Readiness") {}

export const isReady = (checks: ReadinessChecks): boolean => checks.database === true && !checks.draining

/** How long /readyz waits on each dependency: a load balancer's check must not hang on an outage. */
const readinessTimeout = "750 millis"

/**
 * A Redis client that never holds a request: a command while disconnected fails at once (no
 * offline queue), one lost with its connection is not sent again, and none waits past the
 * gate's bound. It reconnects every second at most, so the service finds Redis again soon after
 * it returns. The commands' client waits up to two seconds at start for its first connection,
 * then goes on without it (the fallbacks answer until it comes); the deny-list's subscription
 * (`autoPipelining: false`) needs no wait, as it subscribes whenever its connection is ready.
 *
 * The gate is the one bound on a call (record 0110): ioredis' own `commandTimeout` would only
 * reject a command's promise (the command stays queued for its reply all the same), and it
 * clears its timer with `delete`, which turns every command into a slow dictionary-mode object.
 * Unbounded here, what runs outside the gate (the deny-list's subscription and its catch-up)
 * completes when a hung Redis answers again instead of giving up before it does.
 */
export const redisLayer = (url: string, options: { readonly autoPipelining: boolean } = { autoPipelining: true }) =>
  Effect.acquireRelease(
    Effect.callback<Redis>((resume) => {
      const client = new Redis(url, {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        connectTimeout: 1_000,
        retryStrategy: (times) => Math.min(100 * times, 1_000),
        enableAutoPipelining: options.autoPipelining
      })
      // Without a listener ioredis prints every failed reconnection; the gate logs the outage once.
      client.on("error", () => undefined)
      const started = () => {
        clearTimeout(timer)
        client.off("ready", started)
        resume(Effect.succeed(client))
      }
      const timer = setTimeout(started, options.autoPipelining ? 2_000 : 0)
      client.once("ready", started)
    }),
    (client) => Effect.promise(() => client.quit().catch(() => client.disconnect()))
  )

/**
 * The deny-list's revocations channel on `client`, a connection of its own (a subscribed
 * connection can send nothing else), live again after every reconnection.
 */
export const denyFeedOf = (client: Redis): DenyFeed => ({
  listen: (channel, { onMessage, onLive }) => {
    const message = (from: string, text: string) => {
      if (from === channel) onMessage(text)
    }
    const subscribe = () => {
      client.subscribe(channel).then(
        () => onLive(true),
        () => onLive(false)
      )
    }
    const down = () => onLive(false)
    client.on("message", message)
    client.on("ready", subscribe)
    client.on("close", down)
    if (client.status === "ready") subscribe()
    return () => {
      client.off("message", message)
      client.off("ready", subscribe)
      client.off("close", down)
    }
  }
})

const denyFeedLayer = (url: string) => Effect.map(redisLayer(url, { autoPipelining: false }), denyFeedOf)

export interface AppSecrets {
  readonly secretKey: string
}

/**
 * With no trace exporter, nothing reads a span: every statement and traced function would still
 * make one (its clock readings, its attributes, the SQL text), so spans are switched off for the
 * whole process, the request fibers and the worker's alike. With OTEL_EXPORTER_OTLP_ENDPOINT set
 * they are all made and exported as before (docs/decisions/0059-spans-only-when-exported.md).
 */
const untracedUnlessExported = (config: ServerConfig) =>
  config.otlpEndpoint === null ? Layer.succeed(References.TracerEnabled)(false) : Layer.empty

export type AppServices =
  | CoreServices
  | Readiness
  | SqlClient
  | Provider
  | Storage
  | ProviderCallbacks
  | Wakeup
  | Leases
  | ContentCredentials

/**
 * The provider port: `PROVIDER=http` is the Suno-style upstream; without it, the built-in engine
 * renders in this process's worker threads (the embedded default needs no network at all).
 */
const providerLayer = (config: ServerConfig, secrets: AppSecrets): Layer.Layer<Provider, never, Storage> =>
  measuredProvider(
    config.provider === "http"
      ? SunoHttpProvider.providerLayer({
          baseUrl: config.providerUrl ?? "",
          apiKey: config.providerApiKey ?? "",
          timeoutMs: config.providerTimeoutSeconds * 1000,
          // The upstream reads our tracks through signed addresses that expire within the hour.
          signFileUrl: (url) =>
            signFileUrl(url, config.publicUrl, secrets.secretKey, Math.floor(Date.now() / 1000) + signedFileSeconds)
        })
      : engineProviderLayer({
          stagingDir: join(config.dataDir, "engine"),
          pcmCacheDir: join(config.dataDir, "engine-pcm"),
          maxSeconds: config.engineMaxSeconds ?? undefined
        })
  )

/**
 * The lyrics writer (DESIGN.md section 12): the chat model `LYRICS_MODEL_URL` names when set (the
 * operator's explicit choice for words), else the upstream's lyrics endpoint with `PROVIDER=http`,
 * else the engine's built-in lyricist, offline.
 */
export const lyricsWriterLayer = (config: ServerConfig): Layer.Layer<LyricsWriter, never, Storage> =>
  config.lyricsModelUrl !== null
    ? chatLyricsWriterLayer({
        url: config.lyricsModelUrl,
        model: config.lyricsModel ?? "",
        apiKey: config.lyricsModelKey === null ? null : Redacted.make(config.lyricsModelKey),
        timeoutMs: config.lyricsModelTimeoutSeconds * 1000
      })
    : config.provider === "http"
      ? sunoLyricsWriterLayer({
          baseUrl: config.providerUrl ?? "",
          apiKey: config.providerApiKey ?? "",
          timeoutMs: config.providerTimeoutSeconds * 1000
        })
      : builtInLyricsWriterLayer

/** Files: in the bucket `STORAGE_URL` names, which every machine shares, else under `DATA_DIR/files`. */
const storageLayer = (config: ServerConfig): Layer.Layer<Storage, unknown> => {
  const storage = storageOf(config)
  if ("problem" in storage)
    return Layer.effect(Storage)(Effect.fail(new ConfigurationError({ message: storage.problem })))
  return storage.bucket === null ? Storage.layerFiles(join(config.dataDir, "files")) : Storage.layerS3(storage.bucket)
}

/** The label of the provider in use, for the start banner. */
export const providerLabel = (config: ServerConfig): string => (config.provider === "http" ? "http" : "engine")

/** What names this process's leases: host, process and a random part (a restarted pid is a new worker). */
export const workerId = `${hostname()}:${process.pid}:${randomBase62(6)}`

/**
 * The task worker, the export worker, the listening worker (uploads) and the webhook deliverer, running for as long as the layer lives.
 * `pnpm start` includes them unless `WORKER=off`; `pnpm worker` is this alone.
 */
const inlineWorker = (config: ServerConfig) =>
  Layer.mergeAll(
    Layer.effectDiscard(Effect.forkScoped(TaskWorker.use((worker) => worker.run))).pipe(
      Layer.provide(
        TaskWorker.layer({
          workerId,
          publicUrl: config.publicUrl,
          pollSeconds: config.providerPollSeconds,
          leaseSeconds: config.workerLeaseSeconds
        })
      )
    ),
    Layer.effectDiscard(Effect.forkScoped(ExportWorker.use((worker) => worker.run))).pipe(
      Layer.provide(
        ExportWorker.layer({
          workerId,
          publicUrl: config.publicUrl,
          pollSeconds: config.providerPollSeconds,
          leaseSeconds: config.workerLeaseSeconds
        })
      )
    ),
    Layer.effectDiscard(Effect.forkScoped(ListenWorker.use((worker) => worker.run))).pipe(
      Layer.provide(
        ListenWorker.layer({
          workerId,
          pollSeconds: config.providerPollSeconds,
          leaseSeconds: config.workerLeaseSeconds
        })
      )
    ),
    Layer.effectDiscard(Effect.forkScoped(LyricsWorker.use((worker) => worker.run))).pipe(
      Layer.provide(
        LyricsWorker.layer({
          workerId,
          pollSeconds: config.providerPollSeconds,
          leaseSeconds: config.workerLeaseSeconds
        })
      ),
      Layer.provide(lyricsWriterLayer(config))
    ),
    Layer.effectDiscard(Effect.forkScoped(WebhookWorker.use((deliverer) => deliverer.run))).pipe(
      Layer.provide(WebhookWorker.layer({ workerId, leaseSeconds: config.workerLeaseSeconds }))
    )
  )

export interface AppRole {
  /**
   * Whether this process answers requests (and so checks access tokens): only then does it keep
   * a mirror of the deny-list, on a Redis connection of its own. `pnpm worker` answers none.
   */
  readonly answersRequests: boolean
}

/**
 * Built after the services and before the workers, so its finalizer runs once every worker has
 * stopped and handed back what it could, and before the pools close: the drain's one line
 * naming what is still held.
 */
const drainReport = Layer.effectDiscard(Effect.addFinalizer(() => Leases.use((book) => reportUnreturned(book))))

/**
 * `leases` is the process's book of held leases: the entry point's own when it reads it after
 * the runtime is gone (the exit code, the drain's hard limit), else one of the runtime's own.
 */
export const appLayer = (
  config: ServerConfig,
  secrets: AppSecrets,
  role: AppRole = { answersRequests: true },
  leases: LeaseBook = makeLeaseBook()
): Layer.Layer<AppServices, unknown> => {
  const database = databaseLayer({ databaseUrl: config.databaseUrl, dataDir: config.dataDir })
  const settings = Settings.layer({
    publicUrl: config.publicUrl,
    secretKey: secrets.secretKey,
    requestsPerMinute: config.requestsPerMinute,
    generationTimeoutSeconds: config.generationTimeoutSeconds,
    providerPollSeconds: config.providerPollSeconds,
    webhookRetryDelaysSeconds: config.webhookRetryDelaysSeconds,
    webhookAllowPrivate: config.webhookAllowPrivate
  })
  const runsWorker = config.worker === "inline"
  const wakeup = config.databaseUrl === null ? Wakeup.layerLocal : Wakeup.layerPg({ listen: runsWorker })
  const logLevel = Layer.succeed(References.MinimumLogLevel)(
    ({ debug: "Debug", info: "Info", warn: "Warn", error: "Error" } as const)[config.logLevel]
  )
  const limiterAndReadiness = Layer.unwrap(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const redisUrl = config.redisUrl
      const redis = redisUrl === null ? null : yield* redisLayer(redisUrl)
      const denyFeed = redisUrl === null || !role.answersRequests ? undefined : yield* denyFeedLayer(redisUrl)
      const databaseUp = sql`select 1`.pipe(
        Effect.as(true),
        Effect.timeoutOrElse({ duration: readinessTimeout, orElse: () => Effect.succeed(false) }),
        Effect.catchCause(() => Effect.succeed(false))
      )
      const redisUp =
        redis === null
          ? Effect.succeed(null)
          : Effect.promise(() =>
              redis.ping().then(
                () => true,
                () => false
              )
            ).pipe(Effect.timeoutOrElse({ duration: readinessTimeout, orElse: () => Effect.succeed(false) }))
      let draining = false
      const readiness = Layer.succeed(Readiness)(
        Readiness.of({
          // A draining process answers at once: a busy one would otherwise keep a load balancer
          // sending to it while `select 1` waits its turn behind the requests it is finishing.
          check: Effect.suspend(
            (): Effect.Effect<ReadinessChecks> =>
              draining
                ? Effect.succeed({ database: null, redis: null, draining: true })
                : Effect.all(
                    { database: databaseUp, redis: redisUp, draining: Effect.succeed(false) },
                    { concurrency: 3 }
                  )
          ),
          drain: Effect.sync(() => {
            draining = true
          })
        })
      )
      return Layer.mergeAll(
        redis === null ? RateLimiter.layerMemory : RateLimiter.layerRedis(redis),
        redis === null ? DenyList.layerMemory : DenyList.layerRedis(redis, denyFeed),
        readiness
      ).pipe(Layer.provide(RedisGate.layer()))
    })
  )
  // Uploads reach storage through the UploadFiles port (core knows no storage).
  const uploads = Uploads.layer.pipe(
    Layer.provide(uploadFilesLayer({ stagingDir: join(config.dataDir, "upload-staging") }))
  )
  const services = Layer.mergeAll(ProviderCallbacks.layer, uploads).pipe(
    Layer.provideMerge(coreLayer),
    Layer.provideMerge(
      Layer.mergeAll(
        limiterAndReadiness,
        providerLayer(config, secrets),
        wakeup,
        Ids.layer,
        Leases.layer(leases),
        contentCredentialsLayer(config)
      )
    ),
    Layer.provideMerge(observabilityLayer(config)),
    // The engine reads uploads' files, and uploads keep them: both sit above storage.
    Layer.provideMerge(storageLayer(config)),
    Layer.provideMerge(settings),
    Layer.provideMerge(database)
  )
  // Provided, not merged: merged layers are torn down in parallel, so the pools could close while
  // the stopping worker still hands its leases back; provided, the worker stops first, then the
  // drain's report, then the services and their pools.
  const withWorker = runsWorker
    ? inlineWorker(config).pipe(Layer.provideMerge(drainReport), Layer.provideMerge(services))
    : services
  // Effect's own log lines (the worker's) are the server's JSON lines, in the same shape.
  return withWorker.pipe(
    Layer.provideMerge(untracedUnlessExported(config)),
    Layer.provide(Layer.merge(logLevel, Logger.layer([effectLinesOf(makeLogger(config.logLevel))])))
  )
}

export type AppRuntime = ManagedRuntime.ManagedRuntime<AppServices, unknown>

export const makeAppRuntime = async (
  config: ServerConfig,
  secrets: AppSecrets,
  leases: LeaseBook = makeLeaseBook()
): Promise<AppRuntime> => {
  const runtime = ManagedRuntime.make(appLayer(config, secrets, { answersRequests: true }, leases))
  await runtime.context()
  return runtime
}
