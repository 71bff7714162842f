/**
 * Redis outages, on a `redis-server` of the test's own. In one process: a hung Redis (SIGSTOP)
 * and a killed one hold no limiter or deny-list call past 250 ms, a token revoked before the
 * outage stays refused, the per-minute limit still limits (in the process's window), and when
 * Redis is back the calls go to it again, a revocation made during the outage included, and one
 * made before it is written back to a Redis that restarted empty. Then
 * `pnpm start` under a steady load with its Redis hung for 2 s, then killed for 4 s: no answer
 * but 200/202, none held by Redis, one log line each way per outage, the fallback gauge up while
 * it lasts, and the service on the new Redis afterwards without a restart.
 */
import { randomBytes } from "node:crypto"
import { Effect, Layer, ManagedRuntime } from "effect"
import { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DenyList, Metrics, noopMetrics, RateLimiter, RedisGate } from "@lyre/core"
import type { RedisFallbackUse } from "@lyre/core"
import { denyFeedOf, redisLayer } from "../../src/app.ts"
import {
  describeAnswers,
  loadAccount,
  sleep,
  startOwnRedis,
  startServiceBed,
  steadyLoad,
  timed,
  timedCreate,
  waitReady
} from "../support/faults.ts"
import type { Answer, OwnRedis, ServiceBed } from "../support/faults.ts"
import { freePort, spawnEntry } from "../support/processes.ts"

let redis: OwnRedis
beforeAll(async () => {
  redis = await startOwnRedis()
})
afterAll(async () => {
  await redis?.close()
})

/** The limiter and the deny-list as the service builds them, on the service's own Redis clients. */
const limitsOn = (url: string) => {
  const fallback = { active: false, answers: new Map<RedisFallbackUse, number>() }
  const metrics = Layer.succeed(Metrics)({
    ...noopMetrics,
    redisFallback: (active) => {
      fallback.active = active
    },
    redisFallbackAnswer: (use) => {
      fallback.answers.set(use, (fallback.answers.get(use) ?? 0) + 1)
    }
  })
  const layer = Layer.unwrap(
    Effect.gen(function* () {
      const client = yield* redisLayer(url)
      const subscriber = yield* redisLayer(url, { autoPipelining: false })
      return Layer.mergeAll(RateLimiter.layerRedis(client), DenyList.layerRedis(client, denyFeedOf(subscriber)))
    })
  ).pipe(Layer.provide(RedisGate.layer()), Layer.provide(metrics))
  const runtime = ManagedRuntime.make(layer)
  const timedRun = async <A>(program: Effect.Effect<A, never, RateLimiter | DenyList>) => {
    const started = performance.now()
    const value = await runtime.runPromise(program)
    return { value, millis: performance.now() - started }
  }
  return {
    fallback,
    hit: (subject: string, limit: number) => timedRun(RateLimiter.use((limiter) => limiter.hit(subject, limit))),
    has: (jti: string) => timedRun(DenyList.use((list) => list.has(jti))),
    add: (jti: string) => timedRun(DenyList.use((list) => list.add(jti, Date.now() + 600_000))),
    dispose: () => runtime.dispose()
  }
}

describe("Redis away, in one process", () => {
  it("a hung or killed Redis holds no call past 250 ms, revoked tokens stay refused, and Redis is used again once back", async () => {
    const limits = limitsOn(redis.url)
    const probe = new Redis(redis.url, { maxRetriesPerRequest: 0, retryStrategy: () => 100 })
    probe.on("error", () => undefined)
    try {
      const subject = `faults-${randomBytes(4).toString("hex")}`
      const revoked = `jti-${randomBytes(6).toString("hex")}`
      await limits.add(revoked)
      expect((await limits.hit(subject, 1_000)).value.allowed).toBe(true)
      expect(await probe.zcard(`lyre:rpm:${subject}`)).toBe(1)

      // Hung: connections open, nothing answers.
      redis.freeze()
      const slowest = { hit: 0, has: 0 }
      const local = `local-${randomBytes(4).toString("hex")}`
      const decisions: Array<boolean> = []
      for (let i = 0; i < 4; i++) {
        const hit = await limits.hit(local, 3)
        decisions.push(hit.value.allowed)
        slowest.hit = Math.max(slowest.hit, hit.millis)
        const has = await limits.has(revoked)
        expect(has.value).toBe(true)
        slowest.has = Math.max(slowest.has, has.millis)
      }
      // The process's own window still limits: 3 a minute, the fourth refused.
      expect(decisions).toEqual([true, true, true, false])
      const whileHung = `jti-${randomBytes(6).toString("hex")}`
      const addedWhileHung = await limits.add(whileHung)
      slowest.has = Math.max(slowest.has, addedWhileHung.millis)
      expect((await limits.has(whileHung)).value).toBe(true)
      expect(limits.fallback.active).toBe(true)
      expect(limits.fallback.answers.get("rate_limit")).toBeGreaterThanOrEqual(3)
      process.stdout.write(
        `redis hung: slowest limiter call ${Math.round(slowest.hit)} ms, deny-list ${Math.round(slowest.has)} ms\n`
      )
      expect(slowest.hit).toBeLessThan(250)
      expect(slowest.has).toBeLessThan(250)

      // Back: within the gate's probe interval the limiter counts in Redis again.
      redis.resume()
      const back = Date.now() + 5_000
      while ((await probe.zcard(`lyre:rpm:${subject}`)) < 2 && Date.now() < back) {
        await limits.hit(subject, 1_000)
        await sleep(100)
      }
      expect(await probe.zcard(`lyre:rpm:${subject}`)).toBeGreaterThanOrEqual(2)
      expect(limits.fallback.active).toBe(false)
      // The revocation made while it hung reaches Redis, so every process refuses it.
      const sent = Date.now() + 3_000
      while ((await probe.exists(`lyre:deny:${whileHung}`)) === 0 && Date.now() < sent) await sleep(50)
      expect(await probe.exists(`lyre:deny:${whileHung}`)).toBe(1)

      // Killed: every call refused at once by the client, answered by the fallbacks.
      await redis.kill()
      const during = `jti-${randomBytes(6).toString("hex")}`
      const added = await limits.add(during)
      expect(added.millis).toBeLessThan(250)
      for (const jti of [revoked, during]) {
        const has = await limits.has(jti)
        expect(has.value).toBe(true)
        expect(has.millis).toBeLessThan(250)
      }
      const hit = await limits.hit(subject, 1_000)
      expect(hit.value.allowed).toBe(true)
      expect(hit.millis).toBeLessThan(250)

      // Started again, empty: the revocation made meanwhile reaches it, and the limiter counts there.
      await redis.start()
      const again = Date.now() + 5_000
      while (
        ((await probe.exists(`lyre:deny:${during}`).catch(() => 0)) === 0 ||
          (await probe.zcard(`lyre:rpm:${subject}`).catch(() => 0)) === 0) &&
        Date.now() < again
      ) {
        await limits.hit(subject, 1_000)
        await sleep(100)
      }
      expect(await probe.exists(`lyre:deny:${during}`)).toBe(1)
      expect(await probe.zcard(`lyre:rpm:${subject}`)).toBeGreaterThanOrEqual(1)
      // The revocation from before the outage, which the empty Redis lost: refused at once from
      // the mirror, and written back to Redis once the process has loaded the list again.
      expect((await limits.has(revoked)).value).toBe(true)
      const rewritten = Date.now() + 5_000
      while ((await probe.exists(`lyre:deny:${revoked}`)) === 0 && Date.now() < rewritten) await sleep(50)
      expect(await probe.exists(`lyre:deny:${revoked}`)).toBe(1)
    } finally {
      redis.resume()
      probe.disconnect()
      await limits.dispose()
    }
  })
})

describe("Redis away at start", () => {
  it("the process starts without it (two seconds' wait at most), answers from its fallbacks, and finds it when it comes", async () => {
    await redis.kill()
    const started = performance.now()
    const limits = limitsOn(redis.url)
    const subject = `late-${randomBytes(4).toString("hex")}`
    try {
      const first = await limits.hit(subject, 1_000)
      expect(first.value.allowed).toBe(true)
      expect(performance.now() - started).toBeLessThan(3_000)
      expect(limits.fallback.active).toBe(true)
      await redis.start()
      const probe = new Redis(redis.url)
      try {
        const deadline = Date.now() + 5_000
        while ((await probe.zcard(`lyre:rpm:${subject}`)) === 0 && Date.now() < deadline) {
          await limits.hit(subject, 1_000)
          await sleep(100)
        }
        expect(await probe.zcard(`lyre:rpm:${subject}`)).toBeGreaterThan(0)
        expect(limits.fallback.active).toBe(false)
      } finally {
        probe.disconnect()
      }
    } finally {
      await limits.dispose()
    }
  })
})

describe("Redis killed under load", () => {
  let bed: ServiceBed
  beforeAll(async () => {
    bed = await startServiceBed("lyre-faults-redis-")
  }, 60_000)
  afterAll(async () => {
    await bed?.close()
  })

  it("pnpm start answers every request without waiting on Redis, says so once per outage, and uses Redis again when it is back", async () => {
    const port = await freePort()
    const service = spawnEntry("main", bed.env(port, { redisUrl: redis.url }))
    const base = `http://127.0.0.1:${port}`
    try {
      await waitReady(base)
      const account = await loadAccount(base, bed.adminToken)
      const headers = { authorization: `Bearer ${account.key}` }
      // Warm: the first requests of a process compile its paths, which is not Redis's doing.
      for (let i = 0; i < 30; i++) await timed("warm", `${base}/api/v1/me`, { headers })
      const answers: Array<Answer> = []
      const timeline = { frozenAt: 0, resumedAt: 0, killedAt: 0, startedAt: 0 }
      const fallbackGauge: Array<string> = []
      let n = 0
      const load = steadyLoad(6, async (worker) => {
        const i = n++
        answers.push(
          i % 3 === 0
            ? await timedCreate(base, headers, `redis-${i}`, `Redis ${i}`)
            : await timed("me", `${base}/api/v1/me`, { headers })
        )
        await sleep(15 + worker)
      })
      await sleep(2_000)
      // Hung first (SIGSTOP: connections open, nothing answers), then back, then killed.
      timeline.frozenAt = Date.now()
      redis.freeze()
      await sleep(2_000)
      redis.resume()
      timeline.resumedAt = Date.now()
      await sleep(1_500)
      timeline.killedAt = Date.now()
      await redis.kill()
      await sleep(2_000)
      fallbackGauge.push(await fetch(`${base}/metrics`).then((res) => res.text()))
      await sleep(2_000)
      timeline.startedAt = Date.now()
      await redis.start()
      await sleep(2_500)
      await load.stop()
      fallbackGauge.push(await fetch(`${base}/metrics`).then((res) => res.text()))

      const before = answers.filter((a) => a.at < timeline.frozenAt)
      const hung = answers.filter((a) => a.at >= timeline.frozenAt && a.at < timeline.resumedAt + 1_000)
      const during = answers.filter((a) => a.at >= timeline.killedAt && a.at < timeline.startedAt + 1_000)
      const after = answers.filter((a) => a.at >= timeline.startedAt + 1_000)
      process.stdout.write(
        `redis load: before ${describeAnswers(before)}; hung ${describeAnswers(hung)}; killed ${describeAnswers(during)}; ` +
          `after ${describeAnswers(after)}\n`
      )
      expect(hung.length).toBeGreaterThan(30)
      expect(during.length).toBeGreaterThan(30)
      expect(
        answers.filter((a) => a.status !== 200 && a.status !== 202).map((a) => `${a.label} ${a.status} ${a.body}`)
      ).toEqual([])
      // Nothing is held for Redis: the slowest answer of each outage is within 250 ms of the
      // slowest before them (the machine's own noise, measured).
      const slowest = (some: ReadonlyArray<Answer>) => some.reduce((max, a) => Math.max(max, a.millis), 0)
      expect(slowest(hung)).toBeLessThan(slowest(before) + 250)
      expect(slowest(during)).toBeLessThan(slowest(before) + 250)

      expect(fallbackGauge[0]).toMatch(/^lyre_redis_fallback 1$/m)
      expect(fallbackGauge[0]).toMatch(/^lyre_redis_fallback_total\{use="rate_limit"\} [1-9]/m)
      expect(fallbackGauge[1]).toMatch(/^lyre_redis_fallback 0$/m)
      const output = service.output()
      // Once per outage, each way.
      expect(output.match(/redis unavailable/g)?.length).toBe(2)
      expect(output.match(/redis is back/g)?.length).toBe(2)
      expect(output).not.toMatch(/"level":"error"/i)

      // Recovery without a restart: the new Redis holds the credential's window.
      const probe = new Redis(redis.url)
      try {
        const keys = await probe.keys("lyre:rpm:*")
        expect(keys.length).toBeGreaterThan(0)
      } finally {
        probe.disconnect()
      }
    } finally {
      await service.stop()
    }
  }, 60_000)
})
