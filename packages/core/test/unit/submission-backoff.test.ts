/**
 * A submission outcome the database did not take is tried again with growing waits (doubled
 * after each refused round, up to a cap, and back to the first once a round goes through), and
 * given up at its work's deadline, which the deadline sweep settles instead. On a TestClock, so
 * each wait is checked to the millisecond with no real time passing.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Layer, Logger } from "effect"
import { TestClock } from "effect/testing"
import { ConnectionError, SqlError } from "effect/sql/SqlError"
import { SubmissionBacklog } from "../../src/generation/SubmissionBacklog.ts"
import type { BacklogPolicy } from "../../src/generation/SubmissionBacklog.ts"

const policy: BacklogPolicy = { maxKept: 10, retryMillis: 250, maxRetryMillis: 2_000, lastRoundMillis: 100 }

/** A lost PostgreSQL, as the client reports it. */
const lost = new SqlError({
  reason: new ConnectionError({ cause: new Error("connect ECONNREFUSED"), message: "lost", operation: "connect" })
})

/** A database that is a flag, and the times (TestClock millis) at which a record was tried. */
const makeDatabase = () => {
  const state = { up: false, tries: [] as Array<number>, recorded: 0 }
  const record: Effect.Effect<void> = Effect.gen(function* () {
    state.tries.push(yield* Clock.currentTimeMillis)
    if (!state.up) return yield* Effect.die(lost)
    state.recorded++
  })
  return { state, record }
}

/** Moves the clock by `millis`, and lets the backlog's fiber run what came due. */
const advance = (millis: number) =>
  TestClock.adjust(millis).pipe(Effect.andThen(Effect.repeat(Effect.yieldNow, { times: 20 })))

const backlog = SubmissionBacklog.layer(policy).pipe(Layer.provide(Logger.layer([])))

describe("SubmissionBacklog's retries", () => {
  it.effect(
    "wait 250 ms, then twice as long after each refused round, up to 2 s; 250 ms again after one goes through",
    () =>
      Effect.gen(function* () {
        const database = makeDatabase()
        const kept = yield* SubmissionBacklog
        yield* kept.keep({ noun: "task", id: "gen_a", until: 60_000, record: database.record })
        yield* advance(0)
        // Each wait, less a millisecond, tries nothing; the millisecond after it tries once.
        for (const wait of [250, 500, 1_000, 2_000, 2_000]) {
          const before = database.state.tries.length
          yield* advance(wait - 1)
          assert.strictEqual(database.state.tries.length, before, `nothing before ${wait} ms`)
          yield* advance(1)
          assert.strictEqual(database.state.tries.length, before + 1, `one try after ${wait} ms`)
        }
        assert.deepStrictEqual(database.state.tries, [250, 750, 1_750, 3_750, 5_750])
        database.state.up = true
        yield* advance(2_000)
        assert.strictEqual(database.state.recorded, 1)
        assert.strictEqual(yield* kept.size, 0)
        database.state.up = false
        yield* kept.keep({ noun: "task", id: "gen_b", until: 60_000, record: database.record })
        yield* advance(250)
        assert.strictEqual(database.state.tries.at(-1), 8_000, "the first wait again once a round went through")
      }).pipe(Effect.provide(backlog))
  )

  it.effect("an outcome still unrecorded at its work's deadline is let go, not tried again", () =>
    Effect.gen(function* () {
      const database = makeDatabase()
      const kept = yield* SubmissionBacklog
      yield* kept.keep({ noun: "task", id: "gen_c", until: 1_000, record: database.record })
      yield* advance(0)
      yield* advance(750)
      assert.deepStrictEqual(database.state.tries, [250, 750])
      yield* advance(1_000)
      assert.deepStrictEqual(database.state.tries, [250, 750])
      assert.strictEqual(yield* kept.size, 0)
    }).pipe(Effect.provide(backlog))
  )
})
