/**
 * The environment, read once through Effect Config and validated at start. A bad value stops
 * the process with a message that names the variable.
 */
import { Config, Effect, Option, Schema } from "effect"
import { defaultWebhookRetryDelaysSeconds } from "@lyre/core"
import type { S3StorageOptions } from "@lyre/worker"

export interface ServerConfig {
  readonly port: number
  readonly host: string
  readonly publicUrl: string
  readonly dataDir: string
  readonly databaseUrl: string | null
  readonly redisUrl: string | null
  readonly adminToken: string | null
  readonly secretKey: string | null
  readonly requestsPerMinute: number
  readonly generationTimeoutSeconds: number
  readonly worker: "inline" | "off"
  /** `embedded` (no PROVIDER): the built-in provider in-process; `http`: the Suno-style upstream. */
  readonly provider: "embedded" | "http"
  readonly providerUrl: string | null
  readonly providerApiKey: string | null
  /** First delay between polls of an accepted task; it doubles per poll up to a minute. */
  readonly providerPollSeconds: number
  /**
   * `ENGINE_MAX_SECONDS`: the built-in engine cuts each take after this many seconds, with a short
   * fade (demonstrations, previews, tests that need a song but not a whole one); unset, whole songs.
   */
  readonly engineMaxSeconds: number | null
  /** Limit for every call to the provider (submit, record-info). */
  readonly providerTimeoutSeconds: number
  /** How long a worker's claim on a task lasts; a crashed worker's tasks return after this. */
  readonly workerLeaseSeconds: number
  /** `WEBHOOK_RETRY_DELAYS`: seconds before each retry of a failed webhook delivery, then dead. */
  readonly webhookRetryDelaysSeconds: ReadonlyArray<number>
  /** `WEBHOOK_ALLOW_PRIVATE`: loopback and private addresses may receive webhooks (development, tests). */
  readonly webhookAllowPrivate: boolean
  readonly logLevel: "debug" | "info" | "warn" | "error"
  /** `METRICS`: `off` leaves every metric a no-op and `/metrics` unserved. */
  readonly metrics: "on" | "off"
  /**
   * `CHECK_ANSWERS`: every REST answer is parsed by its output schema and must come out unchanged,
   * or it is a 500 (tests, staging). Off, answers go out as the procedures render them (0109).
   */
  readonly checkAnswers: boolean
  /** `METRICS_TOKEN`: the bearer token `/metrics` asks for; unset, only loopback peers may scrape. */
  readonly metricsToken: string | null
  /** `METRICS_PORT`: where a process also serves `/metrics` alone (a lone worker has no other listener). */
  readonly metricsPort: number | null
  /** `OTEL_EXPORTER_OTLP_ENDPOINT`: traces go to `{endpoint}/v1/traces` over OTLP/HTTP when set. */
  readonly otlpEndpoint: string | null
  /**
   * `DRAIN_DELAY_SECONDS` (0 to 5, default 0): after a `SIGTERM`, how long `/readyz` answers 503
   * while the listener still takes connections, so a load balancer stops sending before it closes.
   */
  readonly drainDelaySeconds: number
  /** `STORAGE_URL`: `s3://BUCKET/PREFIX` keeps files in a bucket every machine shares; unset, under `DATA_DIR/files`. */
  readonly storageUrl: string | null
  /** `S3_ENDPOINT`: an S3-compatible store other than AWS (R2, MinIO), addressed path-style. */
  readonly s3Endpoint: string | null
  /** `S3_REGION`: the bucket's region (`us-east-1` when unset; R2 takes `auto`). */
  readonly s3Region: string | null
  /** `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`: both, or neither for the SDK's default chain (an instance role). */
  readonly awsAccessKeyId: string | null
  readonly awsSecretAccessKey: string | null
  /**
   * `LYRICS_MODEL_URL`: an OpenAI-compatible chat completions server (its base URL, `.../v1`)
   * that writes lyrics; unset, the upstream writes them (`PROVIDER=http`), else the built-in lyricist.
   */
  readonly lyricsModelUrl: string | null
  /** `LYRICS_MODEL`: the model named in each request to that server (required with the URL). */
  readonly lyricsModel: string | null
  /** `LYRICS_MODEL_KEY`: its bearer key, when it asks for one. */
  readonly lyricsModelKey: string | null
  /** `LYRICS_MODEL_TIMEOUT_SECONDS` (default 60): how long one answer of that server may take. */
  readonly lyricsModelTimeoutSeconds: number
  /**
   * `C2PA_SIGNING_CERT` and `C2PA_SIGNING_KEY`: the content credentials' signing chain (PEM, end
   * entity first) and its PKCS #8 key (ES256 or Ed25519), each as PEM text or a path to a PEM
   * file; unset, a local CA and certificate made once in `DATA_DIR/c2pa` (on no trust list), in
   * the embedded default only: production refuses to start without them (decision 0131).
   */
  readonly c2paSigningCert: string | null
  readonly c2paSigningKey: string | null
}

const positiveInt = (name: string) => Config.schema(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)), name)
const positiveSeconds = (name: string) => Config.schema(Schema.Finite.check(Schema.isGreaterThan(0)), name)

const optionalString = (name: string) =>
  Config.String(name).pipe(
    Config.option,
    Config.map((value) => Option.getOrNull(Option.filter(value, (s) => s !== "")))
  )

const config = Config.all({
  port: Config.Port("PORT").pipe(Config.withDefault(8080)),
  host: Config.String("HOST").pipe(Config.withDefault("127.0.0.1")),
  publicUrl: optionalString("PUBLIC_URL"),
  dataDir: Config.String("DATA_DIR").pipe(Config.withDefault(".data")),
  databaseUrl: optionalString("DATABASE_URL"),
  redisUrl: optionalString("REDIS_URL"),
  adminToken: optionalString("ADMIN_TOKEN"),
  secretKey: optionalString("SECRET_KEY"),
  requestsPerMinute: positiveInt("RATE_LIMIT_RPM").pipe(Config.withDefault(60)),
  generationTimeoutSeconds: positiveInt("GENERATION_TIMEOUT_SECONDS").pipe(Config.withDefault(900)),
  worker: Config.Literals(["inline", "off"], "WORKER").pipe(Config.withDefault("inline" as const)),
  provider: Config.Literals(["embedded", "http"], "PROVIDER").pipe(Config.withDefault("embedded" as const)),
  providerUrl: optionalString("PROVIDER_URL"),
  providerApiKey: optionalString("PROVIDER_API_KEY"),
  providerPollSeconds: positiveSeconds("PROVIDER_POLL_SECONDS").pipe(Config.withDefault(5)),
  engineMaxSeconds: positiveSeconds("ENGINE_MAX_SECONDS").pipe(Config.option, Config.map(Option.getOrNull)),
  providerTimeoutSeconds: positiveSeconds("PROVIDER_TIMEOUT_SECONDS").pipe(Config.withDefault(10)),
  workerLeaseSeconds: positiveSeconds("WORKER_LEASE_SECONDS").pipe(Config.withDefault(60)),
  webhookRetryDelays: optionalString("WEBHOOK_RETRY_DELAYS"),
  webhookAllowPrivate: Config.Boolean("WEBHOOK_ALLOW_PRIVATE").pipe(Config.withDefault(false)),
  logLevel: Config.Literals(["debug", "info", "warn", "error"], "LOG_LEVEL").pipe(Config.withDefault("info" as const)),
  metrics: Config.Literals(["on", "off"], "METRICS").pipe(Config.withDefault("on" as const)),
  checkAnswers: Config.Boolean("CHECK_ANSWERS").pipe(Config.withDefault(false)),
  metricsToken: optionalString("METRICS_TOKEN"),
  metricsPort: Config.Port("METRICS_PORT").pipe(Config.option, Config.map(Option.getOrNull)),
  otlpEndpoint: optionalString("OTEL_EXPORTER_OTLP_ENDPOINT"),
  drainDelaySeconds: Config.schema(
    Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(5)),
    "DRAIN_DELAY_SECONDS"
  ).pipe(Config.withDefault(0)),
  storageUrl: optionalString("STORAGE_URL"),
  s3Endpoint: optionalString("S3_ENDPOINT"),
  s3Region: optionalString("S3_REGION"),
  awsAccessKeyId: optionalString("AWS_ACCESS_KEY_ID"),
  awsSecretAccessKey: optionalString("AWS_SECRET_ACCESS_KEY"),
  lyricsModelUrl: optionalString("LYRICS_MODEL_URL"),
  lyricsModel: optionalString("LYRICS_MODEL"),
  lyricsModelKey: optionalString("LYRICS_MODEL_KEY"),
  lyricsModelTimeoutSeconds: positiveSeconds("LYRICS_MODEL_TIMEOUT_SECONDS").pipe(Config.withDefault(60)),
  c2paSigningCert: optionalString("C2PA_SIGNING_CERT"),
  c2paSigningKey: optionalString("C2PA_SIGNING_KEY")
})

export class ConfigurationError extends Schema.TaggedError<ConfigurationError>()("ConfigurationError", {
  message: Schema.String
}) {}

const check = (ok: boolean, message: string) => (ok ? Effect.void : Effect.fail(new ConfigurationError({ message })))

/** `s3://BUCKET` or `s3://BUCKET/PREFIX`: a bucket name as S3 allows it, a prefix of path segments. */
const storageUrlShape = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/([A-Za-z0-9!_.*'()/-]*))?$/

type StorageSettings = Pick<
  ServerConfig,
  "storageUrl" | "s3Endpoint" | "s3Region" | "awsAccessKeyId" | "awsSecretAccessKey"
>

/**
 * The bucket the storage settings name, or null for files under `DATA_DIR`; or the first problem,
 * a sentence naming its variable. `loadConfig` refuses to start on a problem; the composition
 * root reads the bucket from the same settings.
 */
export const storageOf = (
  settings: StorageSettings
): { readonly bucket: S3StorageOptions | null } | { readonly problem: string } => {
  const { storageUrl, s3Endpoint, s3Region, awsAccessKeyId, awsSecretAccessKey } = settings
  if (storageUrl === null) {
    // Without STORAGE_URL every machine keeps files of its own: an endpoint alone is a mistake.
    return s3Endpoint === null
      ? { bucket: null }
      : { problem: "S3_ENDPOINT is set but STORAGE_URL is not: set STORAGE_URL=s3://BUCKET/PREFIX" }
  }
  const match = storageUrlShape.exec(storageUrl)
  if (match === null) {
    return {
      problem:
        "STORAGE_URL must be s3://BUCKET or s3://BUCKET/PREFIX (a bucket name of 3-63 lowercase letters, digits, dots and hyphens)"
    }
  }
  if (s3Endpoint !== null && !/^https?:\/\/[^/?#]+\/?$/.test(s3Endpoint)) {
    return { problem: "S3_ENDPOINT must be an http(s) URL with no path, e.g. https://ACCOUNT.r2.cloudflarestorage.com" }
  }
  if (s3Region !== null && !/^[a-z0-9-]+$/.test(s3Region))
    return { problem: "S3_REGION must be a region name, e.g. us-east-1 or auto" }
  if ((awsAccessKeyId === null) !== (awsSecretAccessKey === null)) {
    return {
      problem:
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together: set both, or neither to use the instance's role"
    }
  }
  const segments = (match[2] ?? "").split("/").filter((segment) => segment !== "")
  return {
    bucket: {
      bucket: match[1] ?? "",
      prefix: segments.length === 0 ? "" : `${segments.join("/")}/`,
      endpoint: s3Endpoint?.replace(/\/+$/, "") ?? null,
      region: s3Region ?? "us-east-1",
      credentials:
        awsAccessKeyId === null || awsSecretAccessKey === null
          ? null
          : { accessKeyId: awsAccessKeyId, secretAccessKey: awsSecretAccessKey }
    }
  }
}

/** The validated configuration; fails with one readable sentence per problem. */
export const loadConfig: Effect.Effect<ServerConfig, ConfigurationError> = Effect.gen(function* () {
  const { webhookRetryDelays, ...raw } = yield* config
  const webhookRetryDelaysSeconds =
    webhookRetryDelays === null
      ? defaultWebhookRetryDelaysSeconds
      : webhookRetryDelays.split(",").map((part) => Number(part.trim()))
  yield* check(
    webhookRetryDelaysSeconds.every((seconds) => Number.isFinite(seconds) && seconds > 0),
    "WEBHOOK_RETRY_DELAYS must be positive numbers of seconds separated by commas, e.g. 60,300,1800"
  )
  yield* check(
    raw.databaseUrl === null || /^postgres(ql)?:\/\//.test(raw.databaseUrl),
    "DATABASE_URL must be a postgres:// or postgresql:// URL"
  )
  yield* check(
    raw.redisUrl === null || /^rediss?:\/\//.test(raw.redisUrl),
    "REDIS_URL must be a redis:// or rediss:// URL"
  )
  yield* check(raw.secretKey === null || raw.secretKey.length >= 32, "SECRET_KEY must be at least 32 characters long")
  yield* check(
    raw.databaseUrl === null || raw.secretKey !== null,
    "SECRET_KEY is required when DATABASE_URL is set (production); only the embedded default generates one"
  )
  yield* check(
    raw.adminToken === null || raw.adminToken.length >= 16,
    "ADMIN_TOKEN must be at least 16 characters long"
  )
  yield* check(
    raw.provider !== "http" || (raw.providerUrl !== null && /^https?:\/\//.test(raw.providerUrl)),
    "PROVIDER_URL must be an http(s) URL when PROVIDER=http"
  )
  yield* check(
    raw.provider !== "http" || raw.providerApiKey !== null,
    "PROVIDER_API_KEY is required when PROVIDER=http"
  )
  yield* check(
    raw.metricsToken === null || raw.metricsToken.length >= 16,
    "METRICS_TOKEN must be at least 16 characters long"
  )
  yield* check(
    raw.otlpEndpoint === null || /^https?:\/\/[^/?#]+(\/[^?#]*)?$/.test(raw.otlpEndpoint),
    "OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL with no query, e.g. http://collector:4318"
  )
  yield* check(
    raw.lyricsModelUrl === null || /^https?:\/\/[^?#]+$/.test(raw.lyricsModelUrl),
    "LYRICS_MODEL_URL must be an http(s) URL with no query, e.g. http://127.0.0.1:8080/v1"
  )
  yield* check(
    raw.lyricsModelUrl === null || raw.lyricsModel !== null,
    "LYRICS_MODEL is required when LYRICS_MODEL_URL is set (the model's name on that server)"
  )
  yield* check(
    (raw.c2paSigningCert === null) === (raw.c2paSigningKey === null),
    "C2PA_SIGNING_CERT and C2PA_SIGNING_KEY go together: set both, or neither for a local certificate"
  )
  yield* check(
    raw.databaseUrl === null || raw.c2paSigningCert !== null,
    "C2PA_SIGNING_CERT and C2PA_SIGNING_KEY are required when DATABASE_URL is set (production): the operator signs what it serves; only the embedded default makes a local certificate, whose files (DATA_DIR/c2pa/signing-chain.pem, signing-key.pem) they may name (decision 0131)"
  )
  const storage = storageOf(raw)
  if ("problem" in storage) return yield* new ConfigurationError({ message: storage.problem })
  const publicUrl = raw.publicUrl ?? `http://${raw.host === "0.0.0.0" ? "127.0.0.1" : raw.host}:${raw.port}`
  yield* check(/^https?:\/\/[^/]+(\/[^?#]*)?$/.test(publicUrl), "PUBLIC_URL must be an http(s) URL with no query")
  return {
    ...raw,
    webhookRetryDelaysSeconds,
    publicUrl: publicUrl.replace(/\/+$/, ""),
    otlpEndpoint: raw.otlpEndpoint?.replace(/\/+$/, "") ?? null
  }
}).pipe(Effect.catchTag("ConfigError", (error) => Effect.fail(new ConfigurationError({ message: error.message }))))
