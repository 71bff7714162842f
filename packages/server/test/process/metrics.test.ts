/**
 * `/metrics` end to end: a server with its worker inline against the fake upstream, a task that
 * becomes ready, one the upstream refuses, one that stays pending, webhooks to a receiver that
 * acknowledges and one that fails, then a scrape parsed as Prometheus text. Also the guard (token,
 * loopback), `METRICS=off`, and the lone listener a worker serves on `METRICS_PORT`.
 */
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Metrics, priceOf, RouteNotFound } from "@lyre/core"
import { startFakeUpstream } from "@lyre/fake-upstream"
import type { FakeUpstream } from "@lyre/fake-upstream"
import { metricsAccess } from "../../src/http/metricsEndpoint.ts"
import { makeRouteLabeller } from "../../src/http/routeTemplate.ts"
import { metricsListenerLayer } from "../../src/metricsListener.ts"
import { api, backend, createAccount, startTestServer, validSong } from "../support/harness.ts"
import type { TestAccount, TestServer } from "../support/harness.ts"
import { freePort, spawnEntry } from "../support/processes.ts"
import { parseMetrics, scrape, sumOf } from "../support/prometheus.ts"
import { startReceiver } from "../support/receiver.ts"
import type { Receiver } from "../support/receiver.ts"
import { signingEnv } from "../support/signing.ts"

const apiKey = "metrics-test-key"
let upstream: FakeUpstream
let live: TestServer
let account: TestAccount
let acknowledging: Receiver
let failing: Receiver

beforeAll(async () => {
  upstream = await startFakeUpstream({ apiKey, audioBytes: 8 * 1024 })
  ;[acknowledging, failing] = await Promise.all([startReceiver(), startReceiver()])
  failing.answer = () => ({ kind: "status", status: 500 })
  live = await startTestServer({
    provider: "http",
    providerUrl: upstream.url,
    providerApiKey: apiKey,
    worker: "inline",
    providerPollSeconds: 0.2,
    webhookAllowPrivate: true,
    // One retry, far away: a failed attempt stays in the backlog for the scrape to see.
    webhookRetryDelaysSeconds: [600]
  })
  account = await createAccount(live, { subscription: 1_000 })
})
afterAll(async () => {
  await live?.close()
  await Promise.all([acknowledging?.close(), failing?.close(), upstream?.close()])
})

const songBehaving = (title: string, behaviour: Parameters<FakeUpstream["control"]["onTitle"]>[1]) => {
  upstream.control.onTitle(title, behaviour)
  return { ...validSong, title }
}

const settled = async (id: string) => {
  const until = Date.now() + 15_000
  while (Date.now() < until) {
    const res = await api(live, "GET", `/api/v1/music/generations/${id}`, { key: account.key })
    if (String(res.body.status) !== "pending") return String(res.body.status)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return "pending"
}

describe("GET /metrics after a create, a failure and webhook deliveries", () => {
  let families: ReturnType<typeof parseMetrics>
  let contentType: string | null

  beforeAll(async () => {
    const endpoint = async (url: string) => {
      const res = await live.admin("POST", `/accounts/${account.id}/webhook-endpoints`, {
        url,
        events: ["job.completed", "job.failed"]
      })
      expect(res.status).toBe(201)
    }
    await endpoint(acknowledging.url)
    await endpoint(failing.url)

    const ready = await api(live, "POST", "/api/v1/music/generations", {
      key: account.key,
      body: songBehaving("Metrics ready", {})
    })
    expect(ready.status).toBe(202)
    const refused = await api(live, "POST", "/api/v1/music/generations", {
      key: account.key,
      body: songBehaving("Metrics refused", { submit: { code: 400, msg: "bad request" } })
    })
    expect(refused.status).toBe(500)
    const waiting = await api(live, "POST", "/api/v1/music/generations", {
      key: account.key,
      body: songBehaving("Metrics waiting", { pollsBeforeDone: Infinity, callbacks: "none" })
    })
    expect(waiting.status).toBe(202)
    // Five maintenance refusals in a minute open nocturne's circuit.
    for (let i = 0; i < 5; i++) {
      const res = await api(live, "POST", "/api/v1/music/generations", {
        key: account.key,
        body: {
          ...songBehaving(`Metrics maintenance ${i}`, { submit: { code: 455, msg: "maintenance" } }),
          model: "nocturne"
        }
      })
      expect(res.status).toBe(500)
    }
    expect(await settled(String(ready.body.id))).toBe("ready")
    expect(
      (await api(live, "GET", "/api/v1/music/generations/gen_doesnotexist000000000000", { key: account.key })).status
    ).toBe(404)
    // The seven events (one job.completed, six job.failed) reach the acknowledging receiver; the
    // failing one answers 500 to each.
    await acknowledging.waitFor((received) => received.length >= 7, 15_000)
    await failing.waitFor((received) => received.length >= 7, 15_000)
    // The attempts are recorded in batches after they finish.
    await new Promise((resolve) => setTimeout(resolve, 500))

    const scraped = await scrape(live.url)
    expect(scraped.status).toBe(200)
    contentType = scraped.contentType
    families = parseMetrics(scraped.text)
  }, 60_000)

  it("answers the Prometheus text format", () => {
    expect(contentType).toContain("text/plain")
    expect(families.get("lyre_http_request_duration_seconds")?.type).toBe("HISTOGRAM")
  })

  it("counts tasks created, ready and failed by model and error code, and the credits moved", () => {
    expect(sumOf(families, "lyre_tasks_created_total", { model: "aether" })).toBe(3)
    expect(sumOf(families, "lyre_tasks_ready_total", { model: "aether" })).toBe(1)
    expect(sumOf(families, "lyre_tasks_failed_total", { model: "aether", code: "provider_error" })).toBe(1)
    expect(sumOf(families, "lyre_tasks_failed_total", { model: "nocturne", code: "provider_error" })).toBe(5)
    expect(sumOf(families, "lyre_credits_refunded_total", { model: "nocturne" })).toBe(5 * priceOf.nocturne)
    expect(sumOf(families, "lyre_credits_debited_total", { model: "aether" })).toBe(3 * priceOf.aether)
    expect(sumOf(families, "lyre_credits_refunded_total", { model: "aether" })).toBe(priceOf.aether)
  })

  it("reads the pending count and the oldest pending age from the database", () => {
    expect(sumOf(families, "lyre_tasks_pending")).toBe(1)
    expect(sumOf(families, "lyre_tasks_pending_oldest_age_seconds")).toBeGreaterThanOrEqual(0)
    expect(sumOf(families, "lyre_tasks_pending_oldest_age_seconds")).toBeLessThan(120)
  })

  it("measures provider calls by call and result, callbacks and re-hosting", () => {
    expect(sumOf(families, "lyre_provider_call_duration_seconds", { call: "submit", result: "accepted" })).toBe(2)
    expect(sumOf(families, "lyre_provider_call_duration_seconds", { call: "submit", result: "rejected" })).toBe(6)
    expect(
      sumOf(families, "lyre_provider_call_duration_seconds", { call: "record-info", result: "succeeded" })
    ).toBeGreaterThanOrEqual(1)
    expect(sumOf(families, "lyre_provider_callbacks_total")).toBeGreaterThanOrEqual(1)
    expect(sumOf(families, "lyre_rehost_bytes_total", { kind: "audio" })).toBeGreaterThanOrEqual(2 * 8 * 1024)
    expect(sumOf(families, "lyre_rehost_duration_seconds", { kind: "audio" })).toBe(2)
    expect(sumOf(families, "lyre_provider_circuit_open", { model: "aether" })).toBe(0)
    expect(sumOf(families, "lyre_provider_circuit_open", { model: "nocturne" })).toBe(1)
    expect(sumOf(families, "lyre_provider_circuit_opened_total", { model: "nocturne" })).toBe(1)
  })

  it("counts webhook attempts by outcome and reads the backlog", () => {
    expect(sumOf(families, "lyre_webhook_attempt_duration_seconds", { outcome: "succeeded" })).toBe(7)
    expect(sumOf(families, "lyre_webhook_attempt_duration_seconds", { outcome: "retrying" })).toBe(7)
    expect(sumOf(families, "lyre_webhook_backlog")).toBe(7)
  })

  it("labels HTTP requests by surface and route template, never a raw id", () => {
    const samples = families.get("lyre_http_request_duration_seconds")?.metrics ?? []
    const routes = samples.map((sample) => sample.labels?.["route"] ?? "")
    expect(routes).toContain("/api/v1/music/generations/{id}")
    expect(routes.filter((route) => /gen_|acct_|whe_|key_|token=/.test(route))).toEqual([])
    expect(
      sumOf(families, "lyre_http_request_duration_seconds", {
        surface: "rest",
        route: "/api/v1/music/generations",
        method: "POST",
        status: "500"
      })
    ).toBe(6)
    expect(
      sumOf(families, "lyre_http_request_duration_seconds", {
        surface: "rest",
        route: "/api/v1/music/generations/{id}",
        status: "404"
      })
    ).toBe(1)
    expect(
      sumOf(families, "lyre_http_request_duration_seconds", {
        surface: "admin",
        route: "/admin/v1/accounts/{id}/webhook-endpoints",
        status: "201"
      })
    ).toBe(2)
  })

  it("includes the process's default metrics", () => {
    expect(families.has("process_cpu_user_seconds_total")).toBe(true)
    expect(families.has("nodejs_eventloop_lag_seconds")).toBe(true)
  })
})

describe("route templates", () => {
  it("keep the service's words and turn everything else into {id}", () => {
    const routeOf = makeRouteLabeller()
    expect(routeOf("/api/v1/me")).toEqual({ surface: "rest", route: "/api/v1/me" })
    expect(routeOf("/api/v1/music/generations/gen_abc")).toEqual({
      surface: "rest",
      route: "/api/v1/music/generations/{id}"
    })
    expect(routeOf("/admin/v1/webhook-deliveries/dlv_x/attempts").route).toBe(
      "/admin/v1/webhook-deliveries/{id}/attempts"
    )
    expect(routeOf("/internal/provider/callback/gen_x")).toEqual({
      surface: "callback",
      route: "/internal/provider/callback/{id}"
    })
    expect(routeOf("/trpc/generations.create")).toEqual({ surface: "trpc", route: "/trpc/generations.create" })
    expect(routeOf("/trpc/me,generations.get").route).toBe("/trpc/{batch}")
    expect(routeOf("/trpc/anything").route).toBe("/trpc/*")
    expect(routeOf("/files/gen_x/0.mp3")).toEqual({ surface: "files", route: "/files/*" })
    expect(routeOf("/.well-known/oauth-protected-resource").surface).toBe("discovery")
    expect(routeOf("/mcp")).toEqual({ surface: "mcp", route: "/mcp" })
    expect(routeOf("/.well-known/mcp/server-card.json").route).toBe("/.well-known/mcp/server-card.json")
    expect(routeOf("/a2a")).toEqual({ surface: "a2a", route: "/a2a" })
    expect(routeOf("/.well-known/oauth-protected-resource/a2a").route).toBe("/.well-known/oauth-protected-resource/a2a")
    expect(routeOf("/oauth/token")).toEqual({ surface: "oauth", route: "/oauth/token" })
    expect(routeOf("/signin")).toEqual({ surface: "session", route: "/signin" })
    expect(routeOf("/admin/v1/oauth-clients/ext_app").route).toBe("/admin/v1/oauth-clients/{id}")
    expect(routeOf("/admin/v1/accounts/acct_x/password").route).toBe("/admin/v1/accounts/{id}/password")
    expect(routeOf("/api/v1/music/tracks/trk_x/extensions").route).toBe("/api/v1/music/tracks/{id}/extensions")
    expect(routeOf("/api/v1/music/tracks/trk_x/exports").route).toBe("/api/v1/music/tracks/{id}/exports")
    expect(routeOf("/api/v1/music/exports/exp_x").route).toBe("/api/v1/music/exports/{id}")
    expect(routeOf("/admin/v1/accounts/acct_x/exports").route).toBe("/admin/v1/accounts/{id}/exports")
    expect(routeOf("/wp-login.php")).toEqual({ surface: "other", route: "/*" })
    expect(routeOf("/admin/v1/a/b/c/d/e/f/g/h").route).toBe("/admin/v1/{id}/{id}/{id}/{id}/*")
  })
})

describe("who may scrape", () => {
  it("without METRICS_TOKEN: loopback peers only; others are told the route does not exist", () => {
    expect(metricsAccess(null, "127.0.0.1", undefined)).toBeNull()
    expect(metricsAccess(null, "::1", undefined)).toBeNull()
    expect(metricsAccess(null, "::ffff:127.0.0.1", undefined)).toBeNull()
    expect(metricsAccess(null, "10.1.2.3", undefined)).toBeInstanceOf(RouteNotFound)
    expect(metricsAccess(null, "::ffff:192.168.0.9", "Bearer anything")).toBeInstanceOf(RouteNotFound)
  })

  it("with METRICS_TOKEN: the bearer of the token, from anywhere", () => {
    const token = "t".repeat(24)
    expect(metricsAccess(token, "10.1.2.3", `Bearer ${token}`)).toBeNull()
    expect(metricsAccess(token, "127.0.0.1", undefined)?._tag).toBe("MissingCredential")
    expect(metricsAccess(token, "127.0.0.1", "Bearer wrong")?._tag).toBe("InvalidCredential")
  })

  it("answers 401 in the envelope without the token, 200 with it", { timeout: 90_000 }, async () => {
    const token = "metrics-token-0123456789"
    const guarded = await startTestServer({ metricsToken: token })
    try {
      const missing = await scrape(guarded.url)
      expect(missing.status).toBe(401)
      expect(JSON.parse(missing.text)).toMatchObject({
        error: { type: "authentication_error", code: "missing_credential" }
      })
      expect((await scrape(guarded.url, { authorization: "Bearer not-the-token-at-all" })).status).toBe(401)
      const allowed = await scrape(guarded.url, { authorization: `Bearer ${token}` })
      expect(allowed.status).toBe(200)
      expect(parseMetrics(allowed.text).has("lyre_tasks_pending")).toBe(true)
    } finally {
      await guarded.close()
    }
  })

  it("METRICS=off: no /metrics at all", { timeout: 90_000 }, async () => {
    const off = await startTestServer({ metrics: "off" })
    try {
      const res = await scrape(off.url)
      expect(res.status).toBe(404)
      expect(JSON.parse(res.text)).toMatchObject({ error: { code: "route_not_found" } })
    } finally {
      await off.close()
    }
  })
})

describe("a worker's METRICS_PORT", () => {
  const onPostgres = async () => {
    // A real `pnpm worker` on the test server's database, scraped on its own port.
    const server = await startTestServer()
    const port = await freePort()
    const worker = spawnEntry("worker-main", {
      DATABASE_URL: server.config.databaseUrl ?? "",
      SECRET_KEY: server.config.secretKey ?? "",
      ...(await signingEnv()),
      PROVIDER: "http",
      PROVIDER_URL: upstream.url,
      PROVIDER_API_KEY: apiKey,
      METRICS_PORT: String(port),
      LOG_LEVEL: "info"
    })
    try {
      await worker.waitFor("metrics listening")
      const scraped = await scrape(`http://127.0.0.1:${port}`)
      expect(scraped.status).toBe(200)
      const families = parseMetrics(scraped.text)
      expect(families.has("lyre_webhook_backlog")).toBe(true)
      expect(families.has("process_cpu_user_seconds_total")).toBe(true)
    } finally {
      await worker.stop()
      await server.close()
    }
  }
  // PGlite belongs to one process, so `pnpm worker` needs PostgreSQL; the listener it runs is
  // the same layer, served here from the test server's registry.
  const onPglite = async () => {
    const port = await freePort()
    const metrics = live.runtime.runSync(Metrics)
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          yield* Layer.build(
            metricsListenerLayer({ port, host: "127.0.0.1", token: null }).pipe(
              Layer.provide(Layer.succeed(Metrics)(metrics))
            )
          )
          const scraped = yield* Effect.promise(() => scrape(`http://127.0.0.1:${port}`))
          expect(scraped.status).toBe(200)
          expect(parseMetrics(scraped.text).has("lyre_tasks_created_total")).toBe(true)
          const other = yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/api/v1/me`))
          expect(other.status).toBe(404)
        })
      )
    )
  }
  const variant = backend.database === "postgres" ? onPostgres : onPglite
  it(`serves /metrics alone (${backend.database})`, { timeout: 90_000 }, variant)
})
