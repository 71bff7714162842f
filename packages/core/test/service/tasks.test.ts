/**
 * The task state machine of the seed (`pending` -> `ready` or `failed`, nothing out of either),
 * the slot a pending task holds against the concurrency limit, and the rules that hang on time:
 * a task's deadline, a key's expiry, a model's provider circuit. Transitions are the conditional
 * statements of Generations; time is a TestClock where a rule reads it.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Exit, Ref } from "effect"
import { TestClock } from "effect/testing"
import { SqlClient } from "effect/sql/SqlClient"
import { Circuits, Generations, randomBase62 } from "../../src/index.ts"
import type { FinishedTrack, GenerationTask, ModelName, Principal } from "../../src/index.ts"
import { ProviderScript } from "../support/provider.ts"
import { coreServicesLayer, generateRequest, makeCaller, principalOf, testSettings } from "../support/services.ts"

const failure = { code: "provider_error", message: "The provider could not generate this task." }

const finishedTracks = (): ReadonlyArray<FinishedTrack> =>
  [0, 1].map((index) => ({
    track: {
      id: `trk_${randomBase62(24)}`,
      audio_url: `http://lyre.test/files/${index}.mp3`,
      duration: 30,
      title: "Morning",
      lyrics: "la la la",
      image_url: null,
      tags: "lo-fi",
      index
    },
    providerTrackId: `up_track_${index}`
  }))

const create = (principal: Principal, model: ModelName = "aether") =>
  Effect.map(
    Generations.use((generations) => generations.create(principal, generateRequest(model), undefined)),
    (created) => created.body
  )

/** A task and its principal, from a fresh caller. */
const pendingTask = Effect.gen(function* () {
  const caller = yield* makeCaller({ subscription: 1_000 })
  const principal = yield* principalOf(caller.authorization)
  return { caller, principal, task: yield* create(principal) }
})

const eventsOf = (taskId: string) =>
  SqlClient.use(
    (sql) => sql<{ type: string }>`
      select type from outbox_events where payload->>'task_id' = ${taskId} order by seq`
  )

const refundsOf = (taskId: string) =>
  SqlClient.use(
    (sql) => sql<{ id: string }>`select id from credit_ledger where task_id = ${taskId} and kind = 'refund'`
  )

const pendingSlotOf = (subject: string) =>
  SqlClient.use((sql) => sql<{ pending: number }>`select pending from credential_inflight where subject = ${subject}`)

const triggers = {
  complete: (taskId: string) => Generations.use((generations) => generations.markReady(taskId, finishedTracks())),
  fail: (taskId: string) => Generations.use((generations) => generations.markFailed(taskId, failure))
} as const
type Trigger = keyof typeof triggers

layer(coreServicesLayer, { timeout: "120 seconds", excludeTestServices: true })("generation tasks", (it) => {
  describe("the state machine", () => {
    it.effect("a create answers a complete task, pending, charged, with no error and no tracks", () =>
      Effect.gen(function* () {
        const { task } = yield* pendingTask
        assert.deepStrictEqual(
          [task.status, task.model, task.credits_used, task.credits_refunded, task.error, task.tracks],
          ["pending", "aether", 50, 0, null, []]
        )
      })
    )

    it.effect.each([
      { from: "pending", trigger: "complete", applied: true, to: "ready", events: ["job.completed"], refunds: 0 },
      { from: "pending", trigger: "fail", applied: true, to: "failed", events: ["job.failed"], refunds: 1 },
      { from: "ready", trigger: "complete", applied: false, to: "ready", events: ["job.completed"], refunds: 0 },
      { from: "ready", trigger: "fail", applied: false, to: "ready", events: ["job.completed"], refunds: 0 },
      { from: "failed", trigger: "complete", applied: false, to: "failed", events: ["job.failed"], refunds: 1 },
      { from: "failed", trigger: "fail", applied: false, to: "failed", events: ["job.failed"], refunds: 1 }
    ] as const)("$from, then $trigger: $to", ({ from, trigger, applied, to, events, refunds }) =>
      Effect.gen(function* () {
        const { principal, task } = yield* pendingTask
        if (from !== "pending") yield* triggers[from === "ready" ? "complete" : "fail"](task.id)
        assert.strictEqual(yield* triggers[trigger as Trigger](task.id), applied)
        const after: GenerationTask = yield* Generations.use((generations) => generations.get(principal, task.id))
        assert.strictEqual(after.status, to)
        assert.deepStrictEqual(
          (yield* eventsOf(task.id)).map((event) => event.type),
          [...events]
        )
        assert.strictEqual((yield* refundsOf(task.id)).length, refunds)
        assert.strictEqual(after.tracks.length, to === "ready" ? 2 : 0)
        assert.strictEqual(after.credits_refunded, to === "failed" ? 50 : 0)
        assert.deepStrictEqual(after.error, to === "failed" ? { code: failure.code, message: failure.message } : null)
      })
    )

    it.effect("a provider's refusal at submission fails the task with its refund and job.failed, and answers 500", () =>
      Effect.gen(function* () {
        const caller = yield* makeCaller({ subscription: 1_000 })
        const principal = yield* principalOf(caller.authorization)
        const script = yield* ProviderScript
        yield* Ref.set(script.answer, {
          _tag: "Rejected",
          code: "provider_error",
          message: "upstream said no",
          countsTowardCircuit: false
        })
        const exit = yield* Effect.exit(create(principal))
        yield* Ref.set(script.answer, { _tag: "Accepted", providerTaskId: "up_1" })
        assert.isTrue(Exit.isFailure(exit))
        const sql = yield* SqlClient
        const [row] = yield* sql<{ id: string; status: string; credits_refunded: number }>`
          select id, status, credits_refunded from generation_tasks where account_id = ${caller.accountId}`
        assert.deepStrictEqual([row?.status, row?.credits_refunded], ["failed", 50])
        assert.deepStrictEqual(
          (yield* eventsOf(row?.id ?? "")).map((event) => event.type),
          ["job.failed"]
        )
        assert.deepStrictEqual(
          (yield* pendingSlotOf(caller.keyId)).map((slot) => slot.pending),
          [0]
        )
      })
    )
  })

  describe("a pending task holds one of its credential's concurrent slots until it leaves pending", () => {
    it.effect("the limit refuses one more, and each way out of pending gives the slot back once", () =>
      Effect.gen(function* () {
        const caller = yield* makeCaller({ subscription: 1_000, concurrencyLimit: 2 })
        const principal = yield* principalOf(caller.authorization)
        const first = yield* create(principal)
        const second = yield* create(principal)
        const refused = yield* Effect.flip(create(principal))
        assert.strictEqual(refused._tag, "ConcurrentLimitExceeded")
        assert.isTrue(yield* triggers.complete(first.id))
        assert.isFalse(yield* triggers.complete(first.id))
        assert.isFalse(yield* triggers.fail(first.id))
        assert.deepStrictEqual(
          (yield* pendingSlotOf(caller.keyId)).map((slot) => slot.pending),
          [1]
        )
        const third = yield* create(principal)
        assert.strictEqual((yield* Effect.flip(create(principal)))._tag, "ConcurrentLimitExceeded")
        assert.isTrue(yield* triggers.fail(second.id))
        assert.isFalse(yield* triggers.fail(second.id))
        yield* create(principal)
        yield* triggers.fail(third.id)
        assert.deepStrictEqual(
          (yield* pendingSlotOf(caller.keyId)).map((slot) => slot.pending),
          [1]
        )
      })
    )

    it.effect("slots are per key: another key of the account has its own", () =>
      Effect.gen(function* () {
        const caller = yield* makeCaller({ subscription: 1_000, concurrencyLimit: 1 })
        const principal = yield* principalOf(caller.authorization)
        yield* create(principal)
        assert.strictEqual((yield* Effect.flip(create(principal)))._tag, "ConcurrentLimitExceeded")
        const other = yield* makeCaller({ subscription: 1_000, concurrencyLimit: 1 })
        yield* create(yield* principalOf(other.authorization))
      })
    )
  })

  describe("time", () => {
    it.effect("a task's deadline is GENERATION_TIMEOUT_SECONDS after its creation", () =>
      Effect.gen(function* () {
        const created = Date.parse("2025-05-01T08:00:00.000Z")
        yield* TestClock.setTime(created)
        const { task } = yield* pendingTask
        const sql = yield* SqlClient
        const [row] = yield* sql<{ deadline_at: Date; created_at: Date }>`
          select deadline_at, created_at from generation_tasks where id = ${task.id}`
        assert.strictEqual(row?.created_at.getTime(), created)
        assert.strictEqual(row?.deadline_at.getTime(), created + testSettings.generationTimeoutSeconds * 1000)
        assert.strictEqual(testSettings.generationTimeoutSeconds, 900)
      }).pipe(Effect.provide(TestClock.layer()))
    )

    it.effect("a key is refused as expired from its expiry on, and not a millisecond before", () =>
      Effect.gen(function* () {
        const start = Date.parse("2025-05-01T08:00:00.000Z")
        yield* TestClock.setTime(start)
        const caller = yield* makeCaller({ keyExpiresAt: new Date(start + 60 * 60 * 1000) })
        yield* TestClock.adjust("59 minutes")
        yield* principalOf(caller.authorization)
        yield* TestClock.adjust(60 * 1000 - 1)
        yield* principalOf(caller.authorization)
        yield* TestClock.adjust(1)
        const refused = yield* Effect.flip(principalOf(caller.authorization))
        assert.strictEqual(refused._tag, "CredentialExpired")
      }).pipe(Effect.provide(TestClock.layer()))
    )

    it.effect("five provider failures within a minute close the model for 60 seconds, without a charge", () =>
      Effect.gen(function* () {
        // Long before the other tests' real time, so the circuit left open here is closed for them.
        yield* TestClock.setTime(Date.parse("2001-01-01T00:00:00.000Z"))
        const caller = yield* makeCaller({ subscription: 1_000 })
        const principal = yield* principalOf(caller.authorization)
        const circuits = yield* Circuits
        for (let failure = 1; failure <= 4; failure++) {
          assert.isFalse(yield* circuits.recordFailure("nocturne"))
          yield* TestClock.adjust("10 seconds")
        }
        yield* create(principal, "nocturne")
        assert.isTrue(yield* circuits.recordFailure("nocturne"))
        const refused = yield* Effect.flip(create(principal, "nocturne"))
        assert.strictEqual(refused._tag, "ModelUnavailable")
        assert.strictEqual(refused._tag === "ModelUnavailable" ? refused.retryAfterSeconds : null, 60)
        yield* TestClock.adjust("59 seconds")
        assert.strictEqual((yield* Effect.flip(create(principal, "nocturne")))._tag, "ModelUnavailable")
        yield* TestClock.adjust("1 second")
        yield* create(principal, "nocturne")
        assert.strictEqual(
          (yield* Generations.use((generations) =>
            generations.list(principal, { limit: 10, startingAfter: undefined })
          )).data.length,
          2,
          "the refused creates charged nothing and made no task"
        )
      }).pipe(Effect.provide(TestClock.layer()))
    )

    it.effect("failures spread over more than a minute do not open the circuit", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.parse("2001-02-01T00:00:00.000Z"))
        const circuits = yield* Circuits
        for (let failure = 1; failure <= 8; failure++) {
          assert.isFalse(yield* circuits.recordFailure("nocturne"), `failure ${failure}`)
          yield* TestClock.adjust("16 seconds")
        }
      }).pipe(Effect.provide(TestClock.layer()))
    )
  })
})
