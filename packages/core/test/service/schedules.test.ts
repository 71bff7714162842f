/**
 * What happens on a schedule, on a TestClock over the real statements: `key.expiring` once per
 * key when it first has 24 hours or less to live (at creation too, never for a revoked key), and
 * a failed webhook delivery tried again after 1 m, 5 m, 30 m, 2 h, 5 h, 10 h and 10 h, then dead.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { TestClock } from "effect/testing"
import { SqlClient } from "effect/sql/SqlClient"
import { ApiKeys, Webhooks } from "../../src/index.ts"
import { coreServicesLayer, makeCaller } from "../support/services.ts"

const hour = 60 * 60 * 1000
const start = Date.parse("2025-06-01T00:00:00.000Z")

const expiringEventsOf = (keyId: string) =>
  SqlClient.use(
    (sql) => sql<{ payload: { api_key_id: string; days_until_expiry: number; expires_at: string } }>`
      select payload from outbox_events where type = 'key.expiring' and payload->>'api_key_id' = ${keyId}`
  )

const sweep = Webhooks.use((webhooks) => webhooks.sweepExpiringKeys)

layer(coreServicesLayer, { timeout: "120 seconds", excludeTestServices: true })("schedules", (it) => {
  describe("key.expiring", () => {
    it.effect("goes out once, when the key first has 24 hours left", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(start)
        const caller = yield* makeCaller({ keyExpiresAt: new Date(start + 30 * hour) })
        yield* sweep
        yield* TestClock.adjust(6 * hour - 1)
        yield* sweep
        assert.strictEqual((yield* expiringEventsOf(caller.keyId)).length, 0, "25 hours less a millisecond left")
        yield* TestClock.adjust(1)
        yield* sweep
        assert.deepStrictEqual(
          (yield* expiringEventsOf(caller.keyId)).map((event) => [
            event.payload.days_until_expiry,
            event.payload.expires_at
          ]),
          [[1, new Date(start + 30 * hour).toISOString()]]
        )
        yield* TestClock.adjust(12 * hour)
        yield* sweep
        assert.strictEqual((yield* expiringEventsOf(caller.keyId)).length, 1, "once per key")
      }).pipe(Effect.provide(TestClock.layer()))
    )

    it.effect("goes out at creation for a key made with less than a day to live, and not again", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(start)
        const caller = yield* makeCaller({ keyExpiresAt: new Date(start + 12 * hour) })
        assert.strictEqual((yield* expiringEventsOf(caller.keyId)).length, 1)
        yield* TestClock.adjust(hour)
        yield* sweep
        assert.strictEqual((yield* expiringEventsOf(caller.keyId)).length, 1)
      }).pipe(Effect.provide(TestClock.layer()))
    )

    it.effect("never goes out for a revoked key, nor for one without an expiry", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(start)
        const revoked = yield* makeCaller({ keyExpiresAt: new Date(start + 30 * hour) })
        const lasting = yield* makeCaller({})
        yield* ApiKeys.use((apiKeys) => apiKeys.revoke(revoked.keyId))
        yield* TestClock.adjust(10 * hour)
        yield* sweep
        assert.strictEqual((yield* expiringEventsOf(revoked.keyId)).length, 0)
        assert.strictEqual((yield* expiringEventsOf(lasting.keyId)).length, 0)
      }).pipe(Effect.provide(TestClock.layer()))
    )
  })

  describe("webhook retries", () => {
    it.effect("a failing delivery is tried again after 1 m, 5 m, 30 m, 2 h, 5 h, 10 h, 10 h, then is dead", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(start)
        const caller = yield* makeCaller({})
        const webhooks = yield* Webhooks
        // A documentation address: registered, never sent to (the test records each attempt itself).
        const endpoint = yield* webhooks.createEndpoint(caller.accountId, { url: "https://203.0.113.9/hooks" })
        yield* webhooks.ping(endpoint.id)
        const failed = { ok: false, statusCode: 500, latencyMs: 3, responseSnippet: "", error: null }
        for (const delaySeconds of [60, 300, 1_800, 7_200, 18_000, 36_000, 36_000]) {
          const [due] = yield* webhooks.claim("worker", 60, 10)
          assert.isDefined(due)
          if (due === undefined) return
          yield* webhooks.record("worker", [
            { delivery: due, attemptedAt: yield* Clock.currentTimeMillis, result: failed }
          ])
          yield* TestClock.adjust(delaySeconds * 1000 - 1)
          assert.strictEqual((yield* webhooks.claim("worker", 60, 10)).length, 0, `not before ${delaySeconds} s`)
          yield* TestClock.adjust(1)
        }
        const [last] = yield* webhooks.claim("worker", 60, 10)
        assert.isDefined(last)
        if (last === undefined) return
        yield* webhooks.record("worker", [{ delivery: last, attemptedAt: 0, result: failed }])
        const [delivery] = yield* webhooks.deliveries(endpoint.id)
        assert.deepStrictEqual([delivery?.status, delivery?.attempts, delivery?.next_attempt_at], ["dead", 8, null])
        yield* TestClock.adjust(30 * 24 * hour)
        assert.strictEqual((yield* webhooks.claim("worker", 60, 10)).length, 0)
      }).pipe(Effect.provide(TestClock.layer()))
    )
  })
})
