import { describe, expect, it } from "vitest"
import { Cause, Effect, Layer, ManagedRuntime } from "effect"
import { ConnectionError, SqlError, SqlSyntaxError, UnknownError } from "effect/sql/SqlError"
import {
  causeIsDatabaseUnavailable,
  databaseUnavailable,
  isDatabaseUnavailable,
  Metrics,
  noopMetrics,
  RateLimiter,
  RedisGate,
  renderError,
  runToResult
} from "../../src/index.ts"
import type { RedisScripting } from "../../src/index.ts"

const sqlError = (reason: SqlError["reason"]) => new SqlError({ reason })
const props = (cause: unknown) => ({ cause, message: "PgConnection: Query failed", operation: "query" })

describe("a lost database is told from a fault", () => {
  it("a connection refused, lost or timed out, and a server going away (57P01-03), are outages", () => {
    expect(isDatabaseUnavailable(sqlError(new ConnectionError(props(new Error("connect ECONNREFUSED")))))).toBe(true)
    for (const code of ["57P01", "57P02", "57P03"]) {
      expect(
        isDatabaseUnavailable(sqlError(new UnknownError(props(Object.assign(new Error("terminating"), { code })))))
      ).toBe(true)
    }
  })

  it("anything else is not: a syntax error, another SQLSTATE, a plain Error", () => {
    expect(
      isDatabaseUnavailable(sqlError(new SqlSyntaxError(props(Object.assign(new Error("syntax"), { code: "42601" })))))
    ).toBe(false)
    expect(
      isDatabaseUnavailable(sqlError(new UnknownError(props(Object.assign(new Error("overflow"), { code: "22003" })))))
    ).toBe(false)
    expect(isDatabaseUnavailable(new Error("connect ECONNREFUSED"))).toBe(false)
  })

  it("is found in a cause as a defect or a failure", () => {
    const lost = sqlError(new ConnectionError(props(new Error("closed"))))
    expect(causeIsDatabaseUnavailable(Cause.die(lost))).toBe(true)
    expect(causeIsDatabaseUnavailable(Cause.fail(lost))).toBe(true)
    expect(causeIsDatabaseUnavailable(Cause.die(new Error("bug")))).toBe(false)
  })

  it("answers 503 service_unavailable with Retry-After where a defect would be a 500", async () => {
    const runtime = ManagedRuntime.make(Layer.empty)
    const lost = await runToResult(runtime, Effect.die(sqlError(new ConnectionError(props(new Error("closed"))))))
    const bug = await runToResult(runtime, Effect.die(new Error("bug")))
    await runtime.dispose()
    expect(lost.ok ? null : renderError(lost.error)).toEqual(renderError(databaseUnavailable()))
    expect(renderError(databaseUnavailable())).toMatchObject({
      status: 503,
      body: { error: { type: "service_unavailable", code: "service_unavailable", retry_after_seconds: 2 } },
      headers: { "retry-after": "2" }
    })
    expect(bug.ok ? null : bug.error._tag).toBe("InternalError")
  })
})

describe("RedisGate: Redis on the request path, bounded", () => {
  // Durations are read as causes, not as budgets: a bound that must be waited for is measured
  // from below (a timer never fires early), and "at once" is a gate whose bound is a minute, so
  // a call that waited for it would time the test out instead of racing a loaded machine.
  const gateRuntime = (counts: { active: boolean; answers: number }, timeoutMillis = 50) =>
    ManagedRuntime.make(
      RedisGate.layer({ timeoutMillis, probeMillis: 200 }).pipe(
        Layer.provide(
          Layer.succeed(Metrics)({
            ...noopMetrics,
            redisFallback: (active) => {
              counts.active = active
            },
            redisFallbackAnswer: () => {
              counts.answers++
            }
          })
        )
      )
    )

  it("a hung call is answered by the fallback at the bound; two in a row mark Redis away, and then it is not asked until the probe", async () => {
    const counts = { active: false, answers: 0 }
    const runtime = gateRuntime(counts)
    const gate = await runtime.runPromise(RedisGate.use(Effect.succeed))
    let calls = 0
    const hung = () => {
      calls++
      return new Promise<string>(() => undefined)
    }
    for (const answers of [1, 2]) {
      const started = performance.now()
      expect(await runtime.runPromise(gate.run("rate_limit", hung, () => "local"))).toBe("local")
      expect(performance.now() - started).toBeGreaterThanOrEqual(45)
      // One slow answer is not an outage yet; the second in a row is.
      expect(counts).toEqual({ active: answers === 2, answers })
    }
    // Away: answered without asking Redis (a call to `hung` would have waited for the bound).
    expect(await runtime.runPromise(gate.run("deny_list", hung, () => "mirror"))).toBe("mirror")
    expect(calls).toBe(2)
    // After the probe interval one call tries again, and an answer ends the outage.
    await new Promise((resolve) => setTimeout(resolve, 220))
    let back = 0
    gate.whenBack(() => back++)
    expect(
      await runtime.runPromise(
        gate.run(
          "rate_limit",
          () => Promise.resolve("redis"),
          () => "local"
        )
      )
    ).toBe("redis")
    expect(counts.active).toBe(false)
    expect(back).toBe(1)
    expect(gate.away()).toBe(false)
    await runtime.dispose()
  })

  it("one slow answer on a busy host, followed by a quick one, is no outage: nothing logged, the gauge stays 0", async () => {
    const counts = { active: false, answers: 0 }
    const runtime = gateRuntime(counts)
    const gate = await runtime.runPromise(RedisGate.use(Effect.succeed))
    const late = () => new Promise<string>((resolve) => setTimeout(() => resolve("late"), 80))
    for (let i = 0; i < 3; i++) {
      expect(await runtime.runPromise(gate.run("rate_limit", late, () => "local"))).toBe("local")
      expect(
        await runtime.runPromise(
          gate.run(
            "rate_limit",
            () => Promise.resolve("redis"),
            () => "local"
          )
        )
      ).toBe("redis")
    }
    expect(counts).toEqual({ active: false, answers: 3 })
    expect(gate.away()).toBe(false)
    await runtime.dispose()
  })

  it("a refused call (no offline queue) is answered by the fallback at once", async () => {
    const counts = { active: false, answers: 0 }
    const runtime = gateRuntime(counts, 60_000)
    const gate = await runtime.runPromise(RedisGate.use(Effect.succeed))
    const refused = () => Promise.reject(new Error("Stream isn't writeable and enableOfflineQueue options is false"))
    expect(await runtime.runPromise(gate.run("rate_limit", refused, () => 7))).toBe(7)
    expect(gate.away()).toBe(true)
    await runtime.dispose()
  })

  it("the Redis limiter counts in the process's own window while Redis is away", async () => {
    const failing: RedisScripting = { eval: () => Promise.reject(new Error("connection is closed")) }
    const runtime = ManagedRuntime.make(RateLimiter.layerRedis(failing).pipe(Layer.provide(RedisGate.layer())))
    const decisions = []
    for (let i = 0; i < 3; i++)
      decisions.push((await runtime.runPromise(RateLimiter.use((limiter) => limiter.hit("key_x", 2)))).allowed)
    expect(decisions).toEqual([true, true, false])
    await runtime.dispose()
  })
})
