import { Exit } from "effect"
import { describe, expect, it } from "vitest"
import { configFailureOf, loadConfigFrom } from "../support/config.ts"

describe("configuration", () => {
  it("has the embedded defaults with no configuration", async () => {
    const exit = await loadConfigFrom({})
    expect(Exit.isSuccess(exit)).toBe(true)
    if (Exit.isSuccess(exit)) {
      expect(exit.value).toMatchObject({
        port: 8080,
        host: "127.0.0.1",
        publicUrl: "http://127.0.0.1:8080",
        dataDir: ".data",
        databaseUrl: null,
        redisUrl: null,
        requestsPerMinute: 60,
        generationTimeoutSeconds: 900,
        worker: "inline",
        logLevel: "info"
      })
    }
  })

  it("reads every setting", async () => {
    const exit = await loadConfigFrom({
      PORT: "9000",
      HOST: "0.0.0.0",
      PUBLIC_URL: "https://lyre.example/",
      DATABASE_URL: "postgres://u@db/lyre",
      REDIS_URL: "redis://cache:6379",
      SECRET_KEY: "s".repeat(32),
      C2PA_SIGNING_CERT: "/etc/lyre/c2pa-chain.pem",
      C2PA_SIGNING_KEY: "/etc/lyre/c2pa-key.pem",
      ADMIN_TOKEN: "a".repeat(20),
      RATE_LIMIT_RPM: "120",
      GENERATION_TIMEOUT_SECONDS: "60",
      WORKER: "off",
      LOG_LEVEL: "warn"
    })
    expect(Exit.isSuccess(exit) && exit.value).toMatchObject({
      c2paSigningCert: "/etc/lyre/c2pa-chain.pem",
      c2paSigningKey: "/etc/lyre/c2pa-key.pem",
      port: 9000,
      publicUrl: "https://lyre.example",
      requestsPerMinute: 120,
      worker: "off",
      logLevel: "warn"
    })
  })

  const bad: ReadonlyArray<readonly [string, Record<string, string>, string]> = [
    ["a port that is not a number", { PORT: "eighty" }, "PORT"],
    ["a port out of range", { PORT: "70000" }, "PORT"],
    ["a zero rate limit", { RATE_LIMIT_RPM: "0" }, "RATE_LIMIT_RPM"],
    ["a fractional timeout", { GENERATION_TIMEOUT_SECONDS: "1.5" }, "GENERATION_TIMEOUT_SECONDS"],
    ["an unknown worker mode", { WORKER: "sometimes" }, "WORKER"],
    ["an unknown log level", { LOG_LEVEL: "loud" }, "LOG_LEVEL"],
    ["a database URL of another kind", { DATABASE_URL: "mysql://x", SECRET_KEY: "s".repeat(32) }, "DATABASE_URL"],
    ["a Redis URL of another kind", { REDIS_URL: "http://x" }, "REDIS_URL"],
    ["a short secret key", { SECRET_KEY: "short" }, "SECRET_KEY"],
    ["production without a secret key", { DATABASE_URL: "postgres://u@db/lyre" }, "SECRET_KEY"],
    [
      "production without a content credentials signer",
      { DATABASE_URL: "postgres://u@db/lyre", SECRET_KEY: "s".repeat(32) },
      "C2PA_SIGNING_CERT and C2PA_SIGNING_KEY are required when DATABASE_URL is set"
    ],
    ["a public URL that is not http", { PUBLIC_URL: "ftp://x" }, "PUBLIC_URL"]
  ]
  for (const [name, env, variable] of bad) {
    it(`refuses ${name}, naming ${variable}`, async () => {
      expect(await configFailureOf(env)).toContain(variable)
    })
  }
  describe("webhook settings", () => {
    it("default to the DESIGN.md schedule and refuse private receivers", async () => {
      const exit = await loadConfigFrom({})
      expect(Exit.isSuccess(exit) && exit.value).toMatchObject({
        webhookRetryDelaysSeconds: [60, 300, 1800, 7200, 18000, 36000, 36000],
        webhookAllowPrivate: false
      })
    })

    it("read WEBHOOK_RETRY_DELAYS and WEBHOOK_ALLOW_PRIVATE", async () => {
      const exit = await loadConfigFrom({ WEBHOOK_RETRY_DELAYS: "1, 2.5,30", WEBHOOK_ALLOW_PRIVATE: "true" })
      expect(Exit.isSuccess(exit) && exit.value).toMatchObject({
        webhookRetryDelaysSeconds: [1, 2.5, 30],
        webhookAllowPrivate: true
      })
    })

    it("name the variable when a delay is not a positive number", async () => {
      expect(await configFailureOf({ WEBHOOK_RETRY_DELAYS: "60,soon" })).toContain("WEBHOOK_RETRY_DELAYS")
      expect(await configFailureOf({ WEBHOOK_RETRY_DELAYS: "60,,300" })).toContain("WEBHOOK_RETRY_DELAYS")
      expect(await configFailureOf({ WEBHOOK_RETRY_DELAYS: "0" })).toContain("WEBHOOK_RETRY_DELAYS")
      expect(await configFailureOf({ WEBHOOK_ALLOW_PRIVATE: "maybe" })).toContain("WEBHOOK_ALLOW_PRIVATE")
    })
  })

  it("sends answers as rendered unless CHECK_ANSWERS holds them to their schemas, and names it when not a boolean", async () => {
    const defaults = await loadConfigFrom({})
    expect(Exit.isSuccess(defaults) && defaults.value.checkAnswers).toBe(false)
    const checked = await loadConfigFrom({ CHECK_ANSWERS: "true" })
    expect(Exit.isSuccess(checked) && checked.value.checkAnswers).toBe(true)
    expect(await configFailureOf({ CHECK_ANSWERS: "sometimes" })).toContain("CHECK_ANSWERS")
  })

  describe("operations settings", () => {
    it("read DRAIN_DELAY_SECONDS, 0 by default, and refuse one outside 0 to 5 naming it", async () => {
      const defaults = await loadConfigFrom({})
      expect(Exit.isSuccess(defaults) && defaults.value.drainDelaySeconds).toBe(0)
      const set = await loadConfigFrom({ DRAIN_DELAY_SECONDS: "1.5" })
      expect(Exit.isSuccess(set) && set.value.drainDelaySeconds).toBe(1.5)
      for (const bad of ["6", "-1", "soon"]) {
        expect(await configFailureOf({ DRAIN_DELAY_SECONDS: bad })).toContain("DRAIN_DELAY_SECONDS")
      }
    })

    it("read ENGINE_MAX_SECONDS, whole songs by default, and refuse one not above 0 naming it", async () => {
      const defaults = await loadConfigFrom({})
      expect(Exit.isSuccess(defaults) && defaults.value.engineMaxSeconds).toBe(null)
      const set = await loadConfigFrom({ ENGINE_MAX_SECONDS: "30" })
      expect(Exit.isSuccess(set) && set.value.engineMaxSeconds).toBe(30)
      for (const bad of ["0", "-5", "short"]) {
        expect(await configFailureOf({ ENGINE_MAX_SECONDS: bad })).toContain("ENGINE_MAX_SECONDS")
      }
    })

    it("default to metrics on, open on loopback, no extra port and no traces", async () => {
      const exit = await loadConfigFrom({})
      expect(Exit.isSuccess(exit) && exit.value).toMatchObject({
        metrics: "on",
        metricsToken: null,
        metricsPort: null,
        otlpEndpoint: null
      })
    })

    it("read METRICS, METRICS_TOKEN, METRICS_PORT and OTEL_EXPORTER_OTLP_ENDPOINT", async () => {
      const exit = await loadConfigFrom({
        METRICS: "off",
        METRICS_TOKEN: "m".repeat(24),
        METRICS_PORT: "9464",
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/"
      })
      expect(Exit.isSuccess(exit) && exit.value).toMatchObject({
        metrics: "off",
        metricsToken: "m".repeat(24),
        metricsPort: 9464,
        otlpEndpoint: "http://collector:4318"
      })
    })

    it("name the variable of a bad value", async () => {
      expect(await configFailureOf({ METRICS: "maybe" })).toContain("METRICS")
      expect(await configFailureOf({ METRICS_TOKEN: "short" })).toContain("METRICS_TOKEN")
      expect(await configFailureOf({ METRICS_PORT: "ninety" })).toContain("METRICS_PORT")
      expect(await configFailureOf({ METRICS_PORT: "70000" })).toContain("METRICS_PORT")
      expect(await configFailureOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toContain(
        "OTEL_EXPORTER_OTLP_ENDPOINT"
      )
      expect(await configFailureOf({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/?x=1" })).toContain(
        "OTEL_EXPORTER_OTLP_ENDPOINT"
      )
    })
  })
})
