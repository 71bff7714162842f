/**
 * The guard's part of the check order: credential (401) and plan (403), as the credential store
 * answers them, then scope (403), then requests per minute (429). Each row makes its check fail
 * together with every later one and expects its own error. The credential store is a fake that
 * answers what the row says (its own order is tested on the real one, in
 * test/service/check-order.test.ts); the limiter is core's in-memory one, on a TestClock.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { ApiKeys } from "../../src/credentials/ApiKeys.ts"
import { Guard } from "../../src/credentials/Guard.ts"
import { CredentialRevoked, TierInsufficient } from "../../src/domain/errors.ts"
import type { AuthenticationError } from "../../src/domain/errors.ts"
import type { Plan } from "../../src/domain/models.ts"
import { principalOf } from "../../src/domain/principal.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { RateLimiter } from "../../src/platform/RateLimiter.ts"

type Answer = Principal | AuthenticationError | TierInsufficient

let callers = 0

/** A principal of its own (its own subject, so its own minute). */
const caller = (options: { readonly plan?: Plan; readonly scopes?: ReadonlyArray<string>; readonly rpm?: number }) =>
  principalOf(
    "acct_test",
    {
      plan: options.plan ?? "pro",
      subscription_credits: 0,
      onetime_credits: 0,
      concurrency_limit: null,
      requests_per_minute: options.rpm ?? 2
    },
    {
      scopes: options.scopes ?? ["profile", "music:generate"],
      credential: { kind: "api_key", keyId: "key_test", name: "test", expiresAt: null },
      subject: `key_${++callers}`
    },
    60
  )

const isPrincipal = (answer: Answer): answer is Principal => "accountId" in answer

/** A guard over a credential store that answers from a map, and core's in-memory limiter. */
const guardWith = (answers: ReadonlyMap<string, Answer>) =>
  Guard.layer.pipe(
    Layer.provide(
      Layer.succeed(ApiKeys)(
        ApiKeys.of({
          create: () => Effect.die(new Error("the guard makes no keys")),
          revoke: () => Effect.die(new Error("the guard revokes no keys")),
          authenticate: (authorization) => {
            const answer = authorization === undefined ? undefined : answers.get(authorization)
            if (answer === undefined) return Effect.die(new Error(`no answer for ${authorization}`))
            return isPrincipal(answer) ? Effect.succeed(answer) : Effect.fail(answer)
          }
        })
      )
    ),
    Layer.provideMerge(RateLimiter.layerMemory)
  )

/** Spends the principal's whole minute, so the rate check would refuse it. */
const exhaust = (principal: Principal) =>
  RateLimiter.use((limiter) =>
    Effect.repeat(limiter.hit(principal.subject, principal.requestsPerMinute), {
      times: principal.requestsPerMinute - 1
    })
  )

const outcomeTag = <A, E extends { readonly _tag: string }, R>(admission: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.result(admission), (result) => (result._tag === "Success" ? "Admitted" : result.failure._tag))

describe("Guard.admit: credential, plan, scope, requests per minute", () => {
  const noScope = caller({ scopes: ["profile"] })
  const withScope = caller({})
  const rows = [
    { first: "credential", answer: new CredentialRevoked({ message: "revoked" }), expected: "CredentialRevoked" },
    { first: "plan", answer: new TierInsufficient({ message: "basic" }), expected: "TierInsufficient" },
    { first: "scope", answer: noScope, expected: "InsufficientScope" },
    { first: "rpm", answer: withScope, expected: "RpmExceeded" }
  ] as const

  it.effect.each(rows)("$first fails with every later check: $expected", ({ answer, expected }) =>
    Effect.gen(function* () {
      // The later checks fail too: the principal behind each row lacks the scope and has spent its minute.
      yield* exhaust(noScope)
      yield* exhaust(withScope)
      const guard = yield* Guard
      assert.strictEqual(yield* outcomeTag(guard.admit("Bearer row", "music:generate")), expected)
    }).pipe(Effect.provide(guardWith(new Map([["Bearer row", answer]]))))
  )

  const threePerMinute = caller({ rpm: 3 })
  it.effect("with every check passing, the request is admitted with what is left of its minute", () =>
    Effect.gen(function* () {
      const guard = yield* Guard
      const admission = yield* guard.admit("Bearer ok", "music:generate")
      assert.strictEqual(admission.principal, threePerMinute)
      assert.deepStrictEqual([admission.rateLimit.limit, admission.rateLimit.remaining], [3, 2])
    }).pipe(Effect.provide(guardWith(new Map([["Bearer ok", threePerMinute]]))))
  )

  const onePerMinute = caller({ scopes: ["profile"], rpm: 1 })
  it.effect("a refused scope spends nothing of the minute", () =>
    Effect.gen(function* () {
      const guard = yield* Guard
      assert.strictEqual(yield* outcomeTag(guard.admit("Bearer p", "music:generate")), "InsufficientScope")
      const decision = yield* RateLimiter.use((limiter) => limiter.hit(onePerMinute.subject, 1))
      assert.isTrue(decision.allowed)
    }).pipe(Effect.provide(guardWith(new Map([["Bearer p", onePerMinute]]))))
  )
})

describe("Guard.admitPrincipal (a signed-in session): plan, scope, requests per minute", () => {
  it.effect.each([
    { first: "plan", plan: "basic", scopes: ["profile"], expected: "TierInsufficient" },
    { first: "scope", plan: "pro", scopes: ["profile"], expected: "InsufficientScope" },
    { first: "rpm", plan: "pro", scopes: ["music:generate"], expected: "RpmExceeded" }
  ] as const)("$first fails with every later check: $expected", ({ plan, scopes, expected }) =>
    Effect.gen(function* () {
      const principal = caller({ plan, scopes })
      yield* exhaust(principal)
      const guard = yield* Guard
      assert.strictEqual(yield* outcomeTag(guard.admitPrincipal(principal, "music:generate")), expected)
    }).pipe(Effect.provide(guardWith(new Map())))
  )
})

describe("requests per minute through the guard, on a TestClock", () => {
  const sixtyPerMinute = caller({ rpm: 60 })
  it.effect("the limit in any 60 seconds, then 429 with Retry-After until the oldest request leaves the window", () =>
    Effect.gen(function* () {
      const guard = yield* Guard
      for (let second = 0; second < 60; second++) {
        yield* guard.admit("Bearer minute", undefined)
        yield* TestClock.adjust("500 millis")
      }
      const refused = yield* Effect.flip(guard.admit("Bearer minute", undefined))
      assert.strictEqual(refused._tag, "RpmExceeded")
      assert.strictEqual(refused._tag === "RpmExceeded" ? refused.retryAfterSeconds : null, 30)
      yield* TestClock.adjust("30 seconds")
      const admitted = yield* guard.admit("Bearer minute", undefined)
      assert.strictEqual(admitted.principal, sixtyPerMinute)
    }).pipe(Effect.provide(guardWith(new Map([["Bearer minute", sixtyPerMinute]]))))
  )
})
