/**
 * The seed's money rules where they live, in the SQL of the charge, the refund and the balance
 * changes: each model's price is what a create debits; subscription credits go before one-time
 * credits; a failed task gives back what it took, to the buckets it came from, exactly once; and
 * `credits.low` fires when the balance crosses below the threshold, not on every change below it.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Accounts, Generations } from "../../src/index.ts"
import type { ModelName } from "../../src/index.ts"
import { coreServicesLayer, generateRequest, makeCaller, principalOf } from "../support/services.ts"

const failure = { code: "provider_error", message: "The provider could not generate this task." }

/** A caller's create of one task of `model`: the task. */
const createTask = (authorization: string, model: ModelName = "aether") =>
  Effect.gen(function* () {
    const principal = yield* principalOf(authorization)
    const created = yield* Generations.use((generations) =>
      generations.create(principal, generateRequest(model), undefined)
    )
    return created.body
  })

const bucketsOf = (accountId: string) =>
  Effect.map(
    Accounts.use((accounts) => accounts.get(accountId)),
    (view) => ({ subscription: view.credits.subscription, onetime: view.credits.onetime })
  )

const ledgerOf = (accountId: string) => Accounts.use((accounts) => accounts.ledger(accountId))

const lowEventsOf = (accountId: string) =>
  SqlClient.use(
    (sql) => sql<{
      payload: { threshold: number; balance: number; subscription_credits: number; onetime_credits: number }
    }>`
      select payload from outbox_events where account_id = ${accountId} and type = 'credits.low' order by seq`
  )

layer(coreServicesLayer, { timeout: "120 seconds", excludeTestServices: true })("credits", (it) => {
  describe("a create debits its model's price (the seed's pricing table)", () => {
    it.effect.each([
      { model: "aether", price: 50 },
      { model: "echo", price: 100 },
      { model: "nocturne", price: 180 }
    ] as const)("$model costs $price", ({ model, price }) =>
      Effect.gen(function* () {
        const caller = yield* makeCaller({ subscription: 1_000 })
        const task = yield* createTask(caller.authorization, model)
        assert.strictEqual(task.credits_used, price)
        assert.deepStrictEqual(yield* bucketsOf(caller.accountId), { subscription: 1_000 - price, onetime: 0 })
        const debit = (yield* ledgerOf(caller.accountId)).filter((entry) => entry.kind === "debit")
        assert.deepStrictEqual(
          debit.map((entry) => [entry.task_id, entry.subscription_delta, entry.onetime_delta]),
          [[task.id, -price, 0]]
        )
      })
    )
  })

  describe("subscription credits are spent before one-time credits", () => {
    it.effect.each([
      { model: "aether", before: [100, 100], after: [50, 100] },
      { model: "aether", before: [50, 100], after: [0, 100] },
      { model: "aether", before: [30, 100], after: [0, 80] },
      { model: "aether", before: [0, 100], after: [0, 50] },
      { model: "echo", before: [60, 60], after: [0, 20] },
      { model: "nocturne", before: [179, 1], after: [0, 0] }
    ] as const)("$model from $before leaves $after", ({ model, before, after }) =>
      Effect.gen(function* () {
        const caller = yield* makeCaller({ subscription: before[0], onetime: before[1] })
        const task = yield* createTask(caller.authorization, model)
        assert.deepStrictEqual(yield* bucketsOf(caller.accountId), { subscription: after[0], onetime: after[1] })
        const [debit] = (yield* ledgerOf(caller.accountId)).filter((entry) => entry.task_id === task.id)
        assert.deepStrictEqual(
          [debit?.subscription_delta, debit?.onetime_delta, debit?.subscription_after, debit?.onetime_after],
          [after[0] - before[0], after[1] - before[1], after[0], after[1]]
        )
      })
    )
  })

  describe("a failed task is refunded to the buckets it was taken from, exactly once", () => {
    it.effect("gives back each bucket's share, and says so on the task and in the ledger", () =>
      Effect.gen(function* () {
        const caller = yield* makeCaller({ subscription: 30, onetime: 100 })
        const task = yield* createTask(caller.authorization)
        assert.isTrue(yield* Generations.use((generations) => generations.markFailed(task.id, failure)))
        assert.deepStrictEqual(yield* bucketsOf(caller.accountId), { subscription: 30, onetime: 100 })
        const principal = yield* principalOf(caller.authorization)
        const failed = yield* Generations.use((generations) => generations.get(principal, task.id))
        assert.strictEqual(failed.status, "failed")
        assert.strictEqual(failed.credits_refunded, 50)
        const refunds = (yield* ledgerOf(caller.accountId)).filter((entry) => entry.kind === "refund")
        assert.deepStrictEqual(
          refunds.map((entry) => [entry.task_id, entry.subscription_delta, entry.onetime_delta]),
          [[task.id, 30, 20]]
        )
      })
    )

    it.effect("a second failure of the same task refunds nothing", () =>
      Effect.gen(function* () {
        const caller = yield* makeCaller({ subscription: 200 })
        const task = yield* createTask(caller.authorization)
        const generations = yield* Generations
        assert.isTrue(yield* generations.markFailed(task.id, failure))
        assert.isFalse(yield* generations.markFailed(task.id, failure))
        assert.deepStrictEqual(yield* bucketsOf(caller.accountId), { subscription: 200, onetime: 0 })
        assert.strictEqual((yield* ledgerOf(caller.accountId)).filter((entry) => entry.kind === "refund").length, 1)
      })
    )

    it.effect("failures racing on one task refund it once", () =>
      Effect.gen(function* () {
        const caller = yield* makeCaller({ subscription: 200 })
        const task = yield* createTask(caller.authorization)
        const generations = yield* Generations
        const applied = yield* Effect.all(
          Array.from({ length: 6 }, () => generations.markFailed(task.id, failure)),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(applied.filter(Boolean).length, 1)
        assert.deepStrictEqual(yield* bucketsOf(caller.accountId), { subscription: 200, onetime: 0 })
        assert.strictEqual((yield* ledgerOf(caller.accountId)).filter((entry) => entry.kind === "refund").length, 1)
      })
    )

    it.effect("a task that became ready is never refunded", () =>
      Effect.gen(function* () {
        const caller = yield* makeCaller({ subscription: 200 })
        const task = yield* createTask(caller.authorization)
        const generations = yield* Generations
        assert.isTrue(yield* generations.markReady(task.id, []))
        assert.isFalse(yield* generations.markFailed(task.id, failure))
        assert.deepStrictEqual(yield* bucketsOf(caller.accountId), { subscription: 150, onetime: 0 })
        assert.strictEqual((yield* ledgerOf(caller.accountId)).filter((entry) => entry.kind === "refund").length, 0)
      })
    )
  })

  describe("credits.low is edge-triggered", () => {
    it.effect("fires once as the balance crosses below the threshold, with the balance in its data", () =>
      Effect.gen(function* () {
        const caller = yield* makeCaller({ subscription: 120, onetime: 40, creditAlertThreshold: 100 })
        yield* createTask(caller.authorization)
        assert.strictEqual((yield* lowEventsOf(caller.accountId)).length, 0, "160 -> 110 stays above")
        yield* createTask(caller.authorization)
        const events = yield* lowEventsOf(caller.accountId)
        assert.deepStrictEqual(
          events.map((event) => event.payload),
          [{ threshold: 100, balance: 60, subscription_credits: 20, onetime_credits: 40 }]
        )
      })
    )

    it.effect("a balance landing exactly on the threshold has not crossed below it", () =>
      Effect.gen(function* () {
        const caller = yield* makeCaller({ subscription: 150, creditAlertThreshold: 100 })
        yield* createTask(caller.authorization)
        assert.strictEqual((yield* lowEventsOf(caller.accountId)).length, 0)
      })
    )

    it.effect("does not fire again on changes below the threshold, until the balance has been back up", () =>
      Effect.gen(function* () {
        const caller = yield* makeCaller({ subscription: 160, creditAlertThreshold: 100 })
        const accounts = yield* Accounts
        const steps = [
          ["debit 160 -> 110", createTask(caller.authorization), 0],
          ["debit 110 -> 60: crosses", createTask(caller.authorization), 1],
          ["grant 60 -> 70: still below", accounts.changeCredits(caller.accountId, { subscription: 10 }), 1],
          ["debit 70 -> 20: below again, not a crossing", createTask(caller.authorization), 1],
          [
            "grant 20 -> 100: back at the threshold, re-armed",
            accounts.changeCredits(caller.accountId, { onetime: 80 }),
            1
          ],
          ["debit 100 -> 50: crosses again", createTask(caller.authorization), 2],
          ["adjust 50 -> 10: below, not a crossing", accounts.changeCredits(caller.accountId, { onetime: -40 }), 2]
        ] as const
        for (const [step, change, fired] of steps) {
          yield* change
          assert.strictEqual((yield* lowEventsOf(caller.accountId)).length, fired, step)
        }
      })
    )

    it.effect("an account that starts below its threshold gets none from a debit: it never crossed", () =>
      Effect.gen(function* () {
        const caller = yield* makeCaller({ subscription: 90, creditAlertThreshold: 100 })
        yield* createTask(caller.authorization)
        assert.strictEqual((yield* lowEventsOf(caller.accountId)).length, 0)
      })
    )

    it.effect("a refund raises the balance and fires nothing; an adjustment that crosses fires", () =>
      Effect.gen(function* () {
        const caller = yield* makeCaller({ subscription: 170, creditAlertThreshold: 100 })
        const task = yield* createTask(caller.authorization, "aether")
        yield* Generations.use((generations) => generations.markFailed(task.id, failure))
        assert.strictEqual((yield* lowEventsOf(caller.accountId)).length, 0)
        yield* Accounts.use((accounts) => accounts.changeCredits(caller.accountId, { subscription: -80 }))
        assert.deepStrictEqual(
          (yield* lowEventsOf(caller.accountId)).map((event) => event.payload.balance),
          [90]
        )
      })
    )

    it.effect("debits racing across the threshold fire it once", () =>
      Effect.gen(function* () {
        const caller = yield* makeCaller({ subscription: 210, creditAlertThreshold: 100 })
        yield* Effect.all(
          Array.from({ length: 4 }, () => createTask(caller.authorization)),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(yield* bucketsOf(caller.accountId), { subscription: 10, onetime: 0 })
        assert.strictEqual((yield* lowEventsOf(caller.accountId)).length, 1)
      })
    )
  })
})
