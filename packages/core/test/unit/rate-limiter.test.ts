import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { RateLimiter } from "../../src/index.ts"

describe("RateLimiter (memory): a sliding window of 60 seconds", () => {
  it.effect("allows `limit` in any 60 s, then refuses until the oldest leaves the window", () =>
    Effect.gen(function* () {
      const limiter = yield* RateLimiter
      for (let i = 0; i < 3; i++) {
        const decision = yield* limiter.hit("key_a", 3)
        expect(decision.allowed).toBe(true)
        expect(decision.remaining).toBe(2 - i)
        yield* TestClock.adjust("10 seconds")
      }
      const refused = yield* limiter.hit("key_a", 3)
      expect(refused.allowed).toBe(false)
      expect(refused.remaining).toBe(0)
      // The first request was at t=0; now is t=30: 30 s to wait.
      expect(refused.retryAfterSeconds).toBe(30)
      expect(refused.resetAtSeconds).toBe(60)
      yield* TestClock.adjust("30 seconds")
      expect((yield* limiter.hit("key_a", 3)).allowed).toBe(true)
      expect((yield* limiter.hit("key_a", 3)).allowed).toBe(false)
    }).pipe(Effect.provide(RateLimiter.layerMemory))
  )

  it.effect("holds at a window boundary where a fixed window would let twice the limit through", () =>
    Effect.gen(function* () {
      const limiter = yield* RateLimiter
      yield* TestClock.adjust("59 seconds")
      for (let i = 0; i < 5; i++) expect((yield* limiter.hit("key_b", 5)).allowed).toBe(true)
      yield* TestClock.adjust("2 seconds")
      expect((yield* limiter.hit("key_b", 5)).allowed).toBe(false)
    }).pipe(Effect.provide(RateLimiter.layerMemory))
  )

  it.effect("counts each subject apart, and refused requests do not count", () =>
    Effect.gen(function* () {
      const limiter = yield* RateLimiter
      expect((yield* limiter.hit("key_c", 1)).allowed).toBe(true)
      expect((yield* limiter.hit("key_c", 1)).allowed).toBe(false)
      expect((yield* limiter.hit("key_d", 1)).allowed).toBe(true)
      yield* TestClock.adjust("60 seconds")
      expect((yield* limiter.hit("key_c", 1)).allowed).toBe(true)
    }).pipe(Effect.provide(RateLimiter.layerMemory))
  )

  it.effect("a busy subject counts the same after its expired entries are cut from the log", () =>
    Effect.gen(function* () {
      const limiter = yield* RateLimiter
      for (let i = 0; i < 2000; i++) expect((yield* limiter.hit("key_busy", 3000)).allowed).toBe(true)
      yield* TestClock.adjust("30 seconds")
      for (let i = 0; i < 1000; i++) expect((yield* limiter.hit("key_busy", 3000)).allowed).toBe(true)
      expect((yield* limiter.hit("key_busy", 3000)).allowed).toBe(false)
      // t=61: the first 2000 have left the window, more than enough to cut the log.
      yield* TestClock.adjust("31 seconds")
      const after = yield* limiter.hit("key_busy", 3000)
      expect(after.allowed).toBe(true)
      expect(after.remaining).toBe(1999)
      expect(after.resetAtSeconds).toBe(90)
      for (let i = 0; i < 1999; i++) expect((yield* limiter.hit("key_busy", 3000)).allowed).toBe(true)
      const refused = yield* limiter.hit("key_busy", 3000)
      expect(refused.allowed).toBe(false)
      expect(refused.retryAfterSeconds).toBe(29)
    }).pipe(Effect.provide(RateLimiter.layerMemory))
  )
})
