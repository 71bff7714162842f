/**
 * Lyre as a request handler: `createLyre(options)` builds the whole service (database, worker,
 * every surface) and hands back a `node:http` handler and `close`, so an operator can mount it
 * inside a Node server of their own. `pnpm start` is this plus `listen`.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { ConfigProvider, Effect } from "effect"
import { makeLeaseBook } from "@lyre/core"
import type { LeaseBook } from "@lyre/core"
import { makeAppRuntime } from "./app.ts"
import type { AppRuntime } from "./app.ts"
import { loadConfig } from "./config.ts"
import type { ServerConfig } from "./config.ts"
import { handBackMillis } from "./drain.ts"
import { makeRequestHandler } from "./http/server.ts"
import { makeLogger } from "./log.ts"
import { readOrCreateSecret } from "./secrets.ts"

/** Each option and the environment variable of `pnpm start` that it stands for. */
const variableOf = {
  port: "PORT",
  host: "HOST",
  publicUrl: "PUBLIC_URL",
  dataDir: "DATA_DIR",
  databaseUrl: "DATABASE_URL",
  redisUrl: "REDIS_URL",
  adminToken: "ADMIN_TOKEN",
  secretKey: "SECRET_KEY",
  requestsPerMinute: "RATE_LIMIT_RPM",
  generationTimeoutSeconds: "GENERATION_TIMEOUT_SECONDS",
  worker: "WORKER",
  provider: "PROVIDER",
  providerUrl: "PROVIDER_URL",
  providerApiKey: "PROVIDER_API_KEY",
  providerPollSeconds: "PROVIDER_POLL_SECONDS",
  engineMaxSeconds: "ENGINE_MAX_SECONDS",
  providerTimeoutSeconds: "PROVIDER_TIMEOUT_SECONDS",
  workerLeaseSeconds: "WORKER_LEASE_SECONDS",
  webhookRetryDelaysSeconds: "WEBHOOK_RETRY_DELAYS",
  webhookAllowPrivate: "WEBHOOK_ALLOW_PRIVATE",
  logLevel: "LOG_LEVEL",
  metrics: "METRICS",
  checkAnswers: "CHECK_ANSWERS",
  metricsToken: "METRICS_TOKEN",
  metricsPort: "METRICS_PORT",
  otlpEndpoint: "OTEL_EXPORTER_OTLP_ENDPOINT",
  drainDelaySeconds: "DRAIN_DELAY_SECONDS",
  storageUrl: "STORAGE_URL",
  s3Endpoint: "S3_ENDPOINT",
  s3Region: "S3_REGION",
  awsAccessKeyId: "AWS_ACCESS_KEY_ID",
  awsSecretAccessKey: "AWS_SECRET_ACCESS_KEY",
  lyricsModelUrl: "LYRICS_MODEL_URL",
  lyricsModel: "LYRICS_MODEL",
  lyricsModelKey: "LYRICS_MODEL_KEY",
  lyricsModelTimeoutSeconds: "LYRICS_MODEL_TIMEOUT_SECONDS",
  c2paSigningCert: "C2PA_SIGNING_CERT",
  c2paSigningKey: "C2PA_SIGNING_KEY"
} as const satisfies { readonly [K in keyof ServerConfig]-?: string }

/**
 * The settings of the README's configuration table under their camelCase names; absent ones take
 * the same defaults as `pnpm start`. `publicUrl` is required: it is the address clients reach
 * (the base of `audio_url`), and a handler cannot know it. There is no port or host: the
 * operator's server listens. Nothing is read from the environment.
 */
export type LyreOptions = { readonly publicUrl: string } & {
  readonly [K in Exclude<keyof ServerConfig, "publicUrl" | "port" | "host">]?: ServerConfig[K] | null | undefined
}

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>

export interface Lyre {
  /**
   * Answers every path of the service (`/api/...`, `/trpc/...`, `/admin/v1/...`, `/files/...`,
   * `/.well-known/...`, `/healthz`): mount it at the root, or at the path of `publicUrl`, which
   * is then stripped from each request's URL.
   */
  readonly handler: RequestHandler
  /**
   * Stops the worker, which hands its leases back (for up to 9 s; what it could not is named in
   * one error line and comes back when its lease expires), closes the database and Redis;
   * in-flight requests should be done first.
   */
  readonly close: () => Promise<void>
  readonly config: ServerConfig
  /** The admin API's bearer token: the one given, or for the embedded default the one generated into `dataDir`. */
  readonly adminToken: string | null
}

const asVariable = (value: unknown): string | undefined =>
  value === null || value === undefined ? undefined : Array.isArray(value) ? value.join(",") : String(value)

/** Validates options exactly as `pnpm start` validates its environment, with the same messages. */
export const configFromOptions = (options: LyreOptions): Promise<ServerConfig> => {
  const variables: Record<string, string | undefined> = {}
  for (const [option, variable] of Object.entries(variableOf)) {
    variables[variable] = asVariable((options as Readonly<Record<string, unknown>>)[option])
  }
  return Effect.runPromise(
    loadConfig.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(variables))))
  )
}

/** A handler that serves `publicUrl`'s path as its root, and the root itself as well. */
const mountedAt = (path: string, handler: RequestHandler): RequestHandler =>
  path === ""
    ? handler
    : (req, res) => {
        const url = req.url ?? "/"
        if (url === path || url.startsWith(`${path}/`) || url.startsWith(`${path}?`)) {
          req.url = url.slice(path.length).replace(/^(?!\/)/, "/")
        }
        return handler(req, res)
      }

/**
 * Starts Lyre on a validated configuration; `pnpm start` uses the runtime for its bootstrap
 * account, and gives the book of leases its exit code reads.
 */
export const startLyre = async (
  config: ServerConfig,
  leases: LeaseBook = makeLeaseBook()
): Promise<{ readonly lyre: Lyre; readonly runtime: AppRuntime }> => {
  const secretKey = config.secretKey ?? readOrCreateSecret(config.dataDir, "secret-key", 48)
  const adminToken =
    config.adminToken ?? (config.databaseUrl === null ? readOrCreateSecret(config.dataDir, "admin-token", 32) : null)
  const runtime = await makeAppRuntime(config, { secretKey }, leases).catch((cause: unknown) => {
    throw new Error(`Could not start: ${cause instanceof Error ? cause.message : String(cause)}`, { cause })
  })
  const handler = makeRequestHandler({
    runtime,
    publicUrl: config.publicUrl,
    adminToken,
    logger: makeLogger(config.logLevel),
    metricsToken: config.metricsToken,
    checkAnswers: config.checkAnswers
  })
  const lyre: Lyre = {
    handler: mountedAt(new URL(config.publicUrl).pathname.replace(/\/+$/, ""), handler),
    close: () => {
      // A drain that began at a signal keeps its own deadline; otherwise it begins now.
      leases.drainBy(Date.now() + handBackMillis)
      return runtime.dispose()
    },
    config,
    adminToken
  }
  return { lyre, runtime }
}

/**
 * Builds Lyre for mounting in an existing Node server. Rejects with a `ConfigurationError` that
 * names the setting when an option is invalid, and with an `Error` when the database cannot be
 * reached or migrated.
 */
export const createLyre = async (options: LyreOptions): Promise<Lyre> => {
  const { lyre } = await startLyre(await configFromOptions(options))
  return lyre
}
