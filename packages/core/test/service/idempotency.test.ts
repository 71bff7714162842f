/**
 * `Idempotency-Key` on create (docs/decisions/0008-idempotency.md), in the statement that
 * charges and claims the key: the same key and body within 24 hours answer the first answer and
 * charge once, however many arrive at once; another body is 400 `idempotency_key_reused`; a
 * refusal is not remembered; after 24 hours the key is free again. Time is a TestClock.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Ref } from "effect"
import { TestClock } from "effect/testing"
import { SqlClient } from "effect/sql/SqlClient"
import { Accounts, Generations } from "../../src/index.ts"
import { ProviderScript } from "../support/provider.ts"
import type { RouterAnswer } from "../support/router.ts"
import { createThroughRouter, statusAndCode } from "../support/router.ts"
import { coreServicesLayer, generateRequest, makeCaller } from "../support/services.ts"

const day = 24 * 60 * 60 * 1000

const balanceOf = (accountId: string) =>
  Effect.map(
    Accounts.use((accounts) => accounts.get(accountId)),
    (view) => view.credits.total
  )

const tasksOf = (accountId: string) =>
  SqlClient.use((sql) => sql<{ id: string }>`select id from generation_tasks where account_id = ${accountId}`)

const taskOf = (answer: RouterAnswer) => {
  assert.isTrue("task" in answer, `expected a task, got ${JSON.stringify(answer)}`)
  return "task" in answer ? answer.task : undefined
}

layer(coreServicesLayer, { timeout: "120 seconds", excludeTestServices: true })("Idempotency-Key on create", (it) => {
  it.effect("the same key and body answer the first task again, charged once", () =>
    Effect.gen(function* () {
      const caller = yield* makeCaller({ subscription: 500 })
      const send = createThroughRouter({ ...caller, body: generateRequest(), idempotencyKey: "k-same" })
      const first = yield* send
      const second = yield* send
      assert.deepStrictEqual(statusAndCode(first), [202, "accepted"])
      assert.isFalse("replayed" in first && first.replayed)
      assert.deepStrictEqual(statusAndCode(second), [202, "accepted"])
      assert.isTrue("replayed" in second && second.replayed)
      assert.deepStrictEqual(taskOf(second), taskOf(first))
      assert.strictEqual(yield* balanceOf(caller.accountId), 450)
      assert.strictEqual((yield* tasksOf(caller.accountId)).length, 1)
    })
  )

  it.effect("the body is compared after validation: an omitted default is the same request", () =>
    Effect.gen(function* () {
      const caller = yield* makeCaller({ subscription: 500 })
      const { model: _model, instrumental: _instrumental, ...withDefaultsLeftOut } = generateRequest("aether")
      const first = yield* createThroughRouter({ ...caller, body: withDefaultsLeftOut, idempotencyKey: "k-defaults" })
      const second = yield* createThroughRouter({
        ...caller,
        body: { ...withDefaultsLeftOut, model: "aether", instrumental: false },
        idempotencyKey: "k-defaults"
      })
      assert.strictEqual(taskOf(second)?.id, taskOf(first)?.id)
      assert.strictEqual(yield* balanceOf(caller.accountId), 450)
    })
  )

  it.effect("the same key with another body is 400 idempotency_key_reused and charges nothing", () =>
    Effect.gen(function* () {
      const caller = yield* makeCaller({ subscription: 500 })
      yield* createThroughRouter({ ...caller, body: generateRequest("aether", "One"), idempotencyKey: "k-reused" })
      const other = yield* createThroughRouter({
        ...caller,
        body: generateRequest("aether", "Another"),
        idempotencyKey: "k-reused"
      })
      assert.deepStrictEqual(statusAndCode(other), [400, "idempotency_key_reused"])
      assert.strictEqual(yield* balanceOf(caller.accountId), 450)
    })
  )

  it.effect("a key is the account's: another account's same key is its own request", () =>
    Effect.gen(function* () {
      const one = yield* makeCaller({ subscription: 500 })
      const two = yield* makeCaller({ subscription: 500 })
      const first = yield* createThroughRouter({ ...one, body: generateRequest(), idempotencyKey: "k-shared" })
      const second = yield* createThroughRouter({ ...two, body: generateRequest(), idempotencyKey: "k-shared" })
      assert.notStrictEqual(taskOf(second)?.id, taskOf(first)?.id)
      assert.deepStrictEqual([yield* balanceOf(one.accountId), yield* balanceOf(two.accountId)], [450, 450])
    })
  )

  it.effect("requests racing with one key make one task and charge once", () =>
    Effect.gen(function* () {
      const caller = yield* makeCaller({ subscription: 500 })
      const answers = yield* Effect.all(
        Array.from({ length: 5 }, () =>
          createThroughRouter({ ...caller, body: generateRequest(), idempotencyKey: "k-race" })
        ),
        { concurrency: "unbounded" }
      )
      const ids = new Set(answers.map((answer) => taskOf(answer)?.id))
      assert.strictEqual(ids.size, 1)
      assert.strictEqual(answers.filter((answer) => "replayed" in answer && !answer.replayed).length, 1)
      assert.strictEqual(yield* balanceOf(caller.accountId), 450)
      assert.strictEqual((yield* tasksOf(caller.accountId)).length, 1)
    })
  )

  it.effect("a refusal is not remembered: after a top-up the same key is charged and accepted", () =>
    Effect.gen(function* () {
      const caller = yield* makeCaller({ subscription: 20 })
      const send = createThroughRouter({ ...caller, body: generateRequest(), idempotencyKey: "k-topup" })
      assert.deepStrictEqual(statusAndCode(yield* send), [402, "insufficient_credits"])
      yield* Accounts.use((accounts) => accounts.changeCredits(caller.accountId, { onetime: 100 }))
      const accepted = yield* send
      assert.deepStrictEqual(statusAndCode(accepted), [202, "accepted"])
      assert.strictEqual(yield* balanceOf(caller.accountId), 70)
    })
  )

  it.effect("a provider's refusal at submission is the key's answer: the 500 again, not a second charge", () =>
    Effect.gen(function* () {
      const caller = yield* makeCaller({ subscription: 500 })
      const script = yield* ProviderScript
      yield* Ref.set(script.answer, {
        _tag: "Rejected",
        code: "provider_error",
        message: "upstream said no",
        countsTowardCircuit: false
      })
      const send = createThroughRouter({ ...caller, body: generateRequest(), idempotencyKey: "k-refused" })
      assert.deepStrictEqual(statusAndCode(yield* send), [500, "provider_error"])
      yield* Ref.set(script.answer, { _tag: "Accepted", providerTaskId: "up_2" })
      assert.deepStrictEqual(statusAndCode(yield* send), [500, "provider_error"])
      assert.strictEqual((yield* tasksOf(caller.accountId)).length, 1)
      assert.strictEqual(yield* balanceOf(caller.accountId), 500, "the refused task was refunded, once")
    })
  )

  it.effect("a key lives 24 hours: replayed until then, a new charge from then on", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.parse("2025-03-01T12:00:00.000Z"))
      const caller = yield* makeCaller({ subscription: 500 })
      const send = createThroughRouter({ ...caller, body: generateRequest(), idempotencyKey: "k-day" })
      const first = taskOf(yield* send)
      yield* TestClock.adjust(day - 1)
      const withinTheDay = yield* send
      assert.strictEqual(taskOf(withinTheDay)?.id, first?.id)
      assert.isTrue("replayed" in withinTheDay && withinTheDay.replayed)
      assert.strictEqual(yield* balanceOf(caller.accountId), 450)
      yield* TestClock.adjust(1)
      const afterTheDay = yield* send
      assert.notStrictEqual(taskOf(afterTheDay)?.id, first?.id)
      assert.strictEqual(yield* balanceOf(caller.accountId), 400)
      const again = yield* send
      assert.strictEqual(taskOf(again)?.id, taskOf(afterTheDay)?.id, "the new answer is held in its turn")
    }).pipe(Effect.provide(TestClock.layer()))
  )

  it.effect("a replay is the first answer even when the task has moved on since", () =>
    Effect.gen(function* () {
      const caller = yield* makeCaller({ subscription: 500 })
      const send = createThroughRouter({ ...caller, body: generateRequest(), idempotencyKey: "k-moved" })
      const first = taskOf(yield* send)
      yield* Generations.use((generations) => generations.markReady(first?.id ?? "", []))
      const replay = taskOf(yield* send)
      assert.deepStrictEqual(replay, first)
    })
  )
})
