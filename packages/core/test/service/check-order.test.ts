/**
 * The check order of a create (docs/decisions/0002-check-order-and-unreadable-bodies.md):
 * credential (401) -> plan (403) -> scope (403) -> requests per minute (429) -> body (400) ->
 * model (503) -> concurrency (429) -> credits (402). Each row makes its check fail together with
 * every later one, and expects its own answer: an earlier check never lets a later one speak.
 * Called through core's router (`createCaller`), the way every surface calls it, with no server.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Accounts, ApiKeys, Generations, InvalidJson, Models, RateLimiter } from "../../src/index.ts"
import type { ValidationError } from "../../src/index.ts"
import { createThroughRouter, statusAndCode } from "../support/router.ts"
import { coreServicesLayer, generateRequest, makeCaller, principalOf } from "../support/services.ts"

const checks = ["credential", "plan", "scope", "rpm", "body", "model", "concurrency", "credits"] as const
type Check = (typeof checks)[number]

/** What each check answers when it is the first to fail. */
const answers: { readonly [C in Check]: readonly [number, string] } = {
  credential: [401, "credential_revoked"],
  plan: [403, "tier_insufficient"],
  scope: [403, "insufficient_scope"],
  rpm: [429, "rpm_exceeded"],
  body: [400, "invalid_parameter"],
  model: [503, "model_unavailable"],
  concurrency: [429, "concurrent_limit_exceeded"],
  credits: [402, "insufficient_credits"]
}

const model = "echo"
const validBody = generateRequest(model)
const invalidBody = { ...validBody, style: "" }

/**
 * A caller for whom exactly the checks in `failing` fail. It starts as a Pro account with enough
 * for one `echo` and room for one task in flight; a task made first takes both when concurrency
 * must fail, and the rest is taken away afterwards (plan, scope, rate, model, key).
 */
const callerFailing = (failing: ReadonlySet<Check>) =>
  Effect.gen(function* () {
    const caller = yield* makeCaller({
      subscription: failing.has("concurrency") ? 100 : 0,
      concurrencyLimit: 1,
      requestsPerMinute: 1,
      scopes: failing.has("scope") ? ["profile"] : ["profile", "music:generate"]
    })
    yield* Models.use((models) => models.setAvailability(model, { available: true }))
    if (failing.has("concurrency")) {
      const principal = yield* principalOf(caller.authorization)
      yield* Generations.use((generations) => generations.create(principal, validBody, undefined))
    }
    if (failing.has("model")) yield* Models.use((models) => models.setAvailability(model, { available: false }))
    if (failing.has("rpm")) yield* RateLimiter.use((limiter) => limiter.hit(caller.keyId, 1))
    if (failing.has("plan")) yield* Accounts.use((accounts) => accounts.update(caller.accountId, { plan: "basic" }))
    if (failing.has("credential")) yield* ApiKeys.use((apiKeys) => apiKeys.revoke(caller.keyId))
    return caller
  })

const create = (authorization: string, body: unknown, bodyError?: ValidationError) =>
  Effect.map(createThroughRouter({ authorization, body, bodyError }), statusAndCode)

const rows = checks.map((check, index) => ({ check, failing: new Set(checks.slice(index)) }))

layer(coreServicesLayer, { timeout: "120 seconds", excludeTestServices: true })("check order of a create", (it) => {
  it.effect("with every check passing, the create is accepted", () =>
    Effect.gen(function* () {
      const caller = yield* callerFailing(new Set())
      yield* Accounts.use((accounts) => accounts.changeCredits(caller.accountId, { subscription: 100 }))
      assert.deepStrictEqual(yield* create(caller.authorization, validBody), [202, "accepted"])
    })
  )

  it.effect.each(rows)("$check fails with every later check: the $check check answers", ({ check, failing }) =>
    Effect.gen(function* () {
      const caller = yield* callerFailing(failing)
      const body = failing.has("body") ? invalidBody : validBody
      assert.deepStrictEqual(yield* create(caller.authorization, body), answers[check])
    })
  )

  // An unreadable body travels with the call and is judged at the body stage, after the guard.
  it.effect.each(rows.filter((row) => row.failing.has("body")))(
    "$check fails with every later check and an unreadable body: the $check check answers",
    ({ check, failing }) =>
      Effect.gen(function* () {
        const caller = yield* callerFailing(failing)
        const unreadable = new InvalidJson({ message: "The request body is not valid JSON." })
        const expected = check === "body" ? [400, "invalid_json"] : answers[check]
        assert.deepStrictEqual(yield* create(caller.authorization, undefined, unreadable), expected)
      })
  )
})
