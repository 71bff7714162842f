/**
 * The seed's price table and plan rules as core's pure tables hold them, a test per row: the
 * credits a model costs, who may use the API at all, and the default limits by plan. What a
 * create actually debits is tested in the charge's SQL (test/service/credits.test.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { requireAccessTier } from "../../src/domain/access.ts"
import {
  defaultConcurrencyLimit,
  defaultRequestsPerMinute,
  planAllowsAccess,
  priceOf
} from "../../src/domain/pricing.ts"

describe("model pricing (credits per generation request)", () => {
  it.effect.each([
    { model: "aether", credits: 50 },
    { model: "echo", credits: 100 },
    { model: "nocturne", credits: 180 }
  ] as const)("$model costs $credits", ({ model, credits }) =>
    Effect.sync(() => assert.strictEqual(priceOf[model], credits))
  )

  it.effect("no other model has a price", () =>
    Effect.sync(() => assert.sameMembers(Object.keys(priceOf), ["aether", "echo", "nocturne"]))
  )
})

describe("access requires the Pro plan or higher, checked on every request", () => {
  it.effect.each([
    { plan: "free", allowed: false },
    { plan: "basic", allowed: false },
    { plan: "pro", allowed: true },
    { plan: "ultra", allowed: true }
  ] as const)("$plan: allowed $allowed", ({ plan, allowed }) =>
    Effect.gen(function* () {
      assert.strictEqual(planAllowsAccess(plan), allowed)
      const checked = yield* Effect.result(requireAccessTier(plan))
      assert.strictEqual(checked._tag === "Success", allowed)
      if (checked._tag === "Failure") assert.strictEqual(checked.failure._tag, "TierInsufficient")
    })
  )
})

describe("limits by plan", () => {
  it.effect.each([
    { plan: "pro", concurrent: 10 },
    { plan: "ultra", concurrent: 20 }
  ] as const)("$plan: $concurrent generations in flight per key", ({ plan, concurrent }) =>
    Effect.sync(() => assert.strictEqual(defaultConcurrencyLimit(plan), concurrent))
  )

  it.effect("60 requests per minute per key", () => Effect.sync(() => assert.strictEqual(defaultRequestsPerMinute, 60)))
})
