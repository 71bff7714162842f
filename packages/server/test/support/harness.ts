/**
 * A real server for tests: the same composition as `pnpm start`, on a port of its own, against
 * a fresh database. With DATABASE_URL set that is a new PostgreSQL database created for this
 * server (dropped on close); without it, PGlite in a temporary directory. REDIS_URL likewise
 * selects the Redis limiter or the in-memory one, so the same suite runs both ways.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { inject } from "vitest"
import { defaultWebhookRetryDelaysSeconds, randomBase62 } from "@lyre/core"
import { startFakeUpstream } from "@lyre/fake-upstream"
import type { FakeUpstream } from "@lyre/fake-upstream"
import { makeAppRuntime } from "../../src/app.ts"
import type { AppRuntime } from "../../src/app.ts"
import type { ServerConfig } from "../../src/config.ts"
import { listen, makeRequestHandler } from "../../src/http/server.ts"
import { makeLogger } from "../../src/log.ts"
import { copyPgliteTemplate } from "../../../../test/databaseTemplate.ts"

/**
 * A parsed JSON answer, indexable to any depth for assertions; cast a leaf where a test computes
 * with it.
 */
export interface Json {
  readonly [key: string]: Json
}

export interface TestServer {
  readonly url: string
  readonly adminToken: string
  readonly runtime: AppRuntime
  readonly config: ServerConfig
  /** The fake upstream started for this server (its provider unless overrides name another). */
  readonly upstream: FakeUpstream
  /** Runs SQL against this server's database. */
  readonly query: <A extends object>(text: string, ...params: ReadonlyArray<unknown>) => Promise<ReadonlyArray<A>>
  readonly admin: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: Json }>
  readonly close: () => Promise<void>
}

export const backend = {
  database: process.env["DATABASE_URL"] ? "postgres" : "pglite",
  limiter: process.env["REDIS_URL"] ? "redis" : "memory"
} as const

const withDatabase = (baseUrl: string, name: string): string => {
  const url = new URL(baseUrl)
  url.pathname = `/${name}`
  return url.toString()
}

const runOn = <A>(url: string, program: Effect.Effect<A, unknown, SqlClient>): Promise<A> =>
  Effect.runPromise(
    Effect.scoped(Effect.provide(program, PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })))
  )

export const startTestServer = async (overrides: Partial<ServerConfig> = {}): Promise<TestServer> => {
  const dataDir = mkdtempSync(join(tmpdir(), "lyre-test-"))
  const baseDatabaseUrl = process.env["DATABASE_URL"] ?? null
  const databaseName = `lyre_test_${randomBase62(12).toLowerCase()}`
  // A copy of the run's migrated template (test/databaseTemplate.ts), where the lane made one.
  const template = inject("lyreDatabaseTemplate") ?? null
  const pgliteTemplate = inject("lyrePgliteTemplate") ?? null
  if (baseDatabaseUrl !== null) {
    await runOn(
      baseDatabaseUrl,
      SqlClient.use((sql) =>
        sql.unsafe(`create database ${databaseName}${template === null ? "" : ` template ${template}`}`)
      )
    )
  } else if (pgliteTemplate !== null) {
    copyPgliteTemplate(pgliteTemplate, dataDir)
  }
  const adminToken = randomBase62(32)
  const upstreamKey = randomBase62(32)
  const upstream = await startFakeUpstream({ apiKey: upstreamKey, audioBytes: 16 * 1024 })
  const config: ServerConfig = {
    port: 0,
    host: "127.0.0.1",
    publicUrl: "http://127.0.0.1:0",
    dataDir,
    databaseUrl: baseDatabaseUrl === null ? null : withDatabase(baseDatabaseUrl, databaseName),
    redisUrl: process.env["REDIS_URL"] ?? null,
    adminToken,
    secretKey: randomBase62(48),
    requestsPerMinute: 10_000,
    generationTimeoutSeconds: 900,
    worker: "off",
    // A real HTTP fake of the upstream: creates are submitted to it, cheaply, and tasks stay
    // pending unless a test runs a worker. The engine has tests of its own.
    provider: "http",
    providerUrl: upstream.url,
    providerApiKey: upstreamKey,
    providerPollSeconds: 5,
    // Where a test runs the built-in engine, a take of eight seconds holds a bar or two of every
    // part at a tenth of a whole song's CPU (a 30 s take cost 2.3 s of CPU, an 8 s one about
    // 0.8 s); a test about a song's length or its later sections asks for more, or null.
    engineMaxSeconds: 8,
    providerTimeoutSeconds: 10,
    workerLeaseSeconds: 60,
    webhookRetryDelaysSeconds: defaultWebhookRetryDelaysSeconds,
    webhookAllowPrivate: false,
    logLevel: "error",
    metrics: "on",
    metricsToken: null,
    // Every answer the tests get is held to its schema, as production sends it unparsed (0109).
    checkAnswers: true,
    metricsPort: null,
    otlpEndpoint: null,
    drainDelaySeconds: 0,
    storageUrl: null,
    s3Endpoint: null,
    s3Region: null,
    awsAccessKeyId: null,
    awsSecretAccessKey: null,
    lyricsModelUrl: null,
    lyricsModel: null,
    lyricsModelKey: null,
    lyricsModelTimeoutSeconds: 60,
    c2paSigningCert: null,
    c2paSigningKey: null,
    ...overrides
  }
  // The public URL must name the real port, which is known only after listening: reserve it first.
  const probe = await listen(async (_req, res) => void res.end(), 0, config.host)
  const port = probe.port
  await probe.close()
  const finalConfig = { ...config, port, publicUrl: overrides.publicUrl ?? `http://127.0.0.1:${port}` }
  const runtime = await makeAppRuntime(finalConfig, { secretKey: finalConfig.secretKey ?? "" })
  const server = await listen(
    makeRequestHandler({
      runtime,
      publicUrl: finalConfig.publicUrl,
      adminToken: finalConfig.adminToken,
      logger: makeLogger(finalConfig.logLevel),
      metricsToken: finalConfig.metricsToken,
      checkAnswers: finalConfig.checkAnswers
    }),
    port,
    finalConfig.host
  )
  // The server runs in the test's own process: a test that holds the event loop for seconds (a
  // long comparison on a loaded machine) lets the server's idle timer and fetch's pool expire in
  // the same turn, and a request sent on the closing connection fails with ECONNRESET. Here only
  // the client closes idle connections (after its own 4 s), so that race cannot happen.
  server.server.keepAliveTimeout = 0
  const url = finalConfig.publicUrl
  return {
    url,
    adminToken,
    runtime,
    config: finalConfig,
    upstream,
    query: <A extends object>(text: string, ...params: ReadonlyArray<unknown>) =>
      runtime.runPromise(SqlClient.use((sql) => sql.unsafe<A>(text, [...params])).pipe(Effect.orDie)),
    admin: async (method, path, body) => {
      const response = await fetch(`${url}/admin/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await response.text()
      return { status: response.status, body: text === "" ? {} : (JSON.parse(text) as Json) }
    },
    close: async () => {
      await server.close()
      await runtime.dispose()
      if (baseDatabaseUrl !== null) {
        await runOn(
          baseDatabaseUrl,
          SqlClient.use((sql) => sql.unsafe(`drop database if exists ${databaseName} with (force)`))
        )
      }
      await upstream.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

export interface TestAccount {
  readonly id: string
  readonly key: string
  readonly keyId: string
}

/** An account of the given plan with one key (all scopes unless told otherwise). */
export const createAccount = async (
  server: TestServer,
  options: {
    readonly plan?: string
    readonly subscription?: number
    readonly onetime?: number
    readonly scopes?: ReadonlyArray<string>
    readonly concurrency_limit?: number
    readonly requests_per_minute?: number
    readonly expires_at?: string
  } = {}
): Promise<TestAccount> => {
  const account = await server.admin("POST", "/accounts", {
    email: `${randomBase62(10).toLowerCase()}@example.test`,
    plan: options.plan ?? "pro",
    subscription_credits: options.subscription ?? 1_000,
    onetime_credits: options.onetime ?? 0,
    ...(options.concurrency_limit === undefined ? {} : { concurrency_limit: options.concurrency_limit }),
    ...(options.requests_per_minute === undefined ? {} : { requests_per_minute: options.requests_per_minute })
  })
  if (account.status !== 201) throw new Error(`account: ${JSON.stringify(account.body)}`)
  const key = await server.admin("POST", `/accounts/${String(account.body["id"])}/keys`, {
    name: "test",
    scopes: options.scopes ?? ["profile", "music:generate"],
    ...(options.expires_at === undefined ? {} : { expires_at: options.expires_at })
  })
  if (key.status !== 201) throw new Error(`key: ${JSON.stringify(key.body)}`)
  return { id: String(account.body["id"]), key: String(key.body["key"]), keyId: String(key.body["id"]) }
}

export const api = async (
  server: TestServer,
  method: string,
  path: string,
  options: {
    readonly key?: string
    readonly body?: unknown
    readonly rawBody?: string
    readonly headers?: Record<string, string>
  } = {}
): Promise<{ status: number; headers: Headers; body: Json }> => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.key !== undefined) headers["authorization"] = `Bearer ${options.key}`
  let body: string | undefined
  if (options.rawBody !== undefined) body = options.rawBody
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body)
    headers["content-type"] ??= "application/json"
  }
  const response = await fetch(`${server.url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) })
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: text === "" ? {} : (JSON.parse(text) as Json) }
}

/** An account's credits in all, as its own key reads them (`GET /v1/me`). */
export const balanceOf = async (server: TestServer, account: Pick<TestAccount, "key">): Promise<number> =>
  (await api(server, "GET", "/api/v1/me", { key: account.key })).body.credits?.total as unknown as number

export const validSong = { style: "synthwave, 110 bpm", title: "Night Drive", lyrics: "[Verse]\nNeon lights" }

/**
 * Polls a task, an export or an upload at `path` until it leaves `pending`; an answer other than
 * 200 (a loaded machine's 503) is asked again.
 */
export const settledAt = async (server: TestServer, key: string, path: string, withinMs = 240_000): Promise<Json> => {
  const until = Date.now() + withinMs
  let res = await api(server, "GET", path, { key })
  while ((res.status !== 200 || String(res.body.status) === "pending") && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 250))
    res = await api(server, "GET", path, { key })
  }
  return res.body
}
