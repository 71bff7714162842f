/**
 * The per-minute limit's script on a `redis-server` of the test's own: sent by its SHA1
 * (EVALSHA), whole only when Redis lacks it, at first and again after the script cache is
 * flushed (as a restart does), and the window is the same one throughout, never the fallback's.
 */
import { Effect, Layer, ManagedRuntime } from "effect"
import { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Metrics, noopMetrics, RateLimiter, RedisGate } from "@lyre/core"
import { redisLayer } from "../../src/app.ts"
import { startOwnRedis } from "../support/faults.ts"
import type { OwnRedis } from "../support/faults.ts"

let redis: OwnRedis
beforeAll(async () => {
  redis = await startOwnRedis()
})
afterAll(async () => {
  await redis?.close()
})

/** Calls of `command` Redis has counted since its start (INFO commandstats). */
const callsOf = async (client: Redis, command: string): Promise<number> => {
  const stats = await client.info("commandstats")
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? "0")
}

describe("the rate limiter's script", () => {
  it("is sent whole only when Redis lacks it, and counts in one window throughout", async () => {
    let fallbackAnswers = 0
    const metrics = Layer.succeed(Metrics)({ ...noopMetrics, redisFallbackAnswer: () => void fallbackAnswers++ })
    const runtime = ManagedRuntime.make(
      Layer.unwrap(Effect.map(redisLayer(redis.url), (client) => RateLimiter.layerRedis(client))).pipe(
        Layer.provide(RedisGate.layer()),
        Layer.provide(metrics)
      )
    )
    const admin = new Redis(redis.url)
    try {
      const hit = () => runtime.runPromise(RateLimiter.use((limiter) => limiter.hit("key_script", 10)))
      expect((await hit()).remaining).toBe(9)
      expect((await hit()).remaining).toBe(8)
      expect(await callsOf(admin, "eval")).toBe(1)
      await admin.script("FLUSH")
      expect((await hit()).remaining).toBe(7)
      expect((await hit()).remaining).toBe(6)
      expect(await callsOf(admin, "eval")).toBe(2)
      expect(await callsOf(admin, "evalsha")).toBe(4)
      expect(fallbackAnswers).toBe(0)
    } finally {
      admin.disconnect()
      await runtime.dispose()
    }
  })
})
