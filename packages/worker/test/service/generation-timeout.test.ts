/**
 * A task still pending at its deadline (GENERATION_TIMEOUT_SECONDS after its creation) fails
 * with `generation_timeout` and is refunded, by the task worker's sweep; not a millisecond
 * sooner, and never a task that finished in time. On a TestClock, over core's services and the
 * real statements (core's test support builds them on a database of this file's own).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Accounts, ContentCredentials, Generations, Leases, makeLeaseBook } from "@lyre/core"
import {
  coreServicesLayer,
  generateRequest,
  makeCaller,
  principalOf,
  testSettings
} from "../../../core/test/support/services.ts"
import { Storage } from "../../src/storage/Storage.ts"
import { TaskWorker } from "../../src/TaskWorker.ts"
import { Wakeup } from "../../src/Wakeup.ts"

/** A directory for the storage the worker is built with; the sweep keeps nothing in it. */
const scratchStorage = Layer.unwrap(
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "lyre-timeout-"))),
      (directory) => Effect.sync(() => rmSync(directory, { recursive: true, force: true }))
    ),
    Storage.layerFiles
  )
)

const workerLayer = TaskWorker.layer({
  workerId: "timeout-test",
  leaseSeconds: 60,
  pollSeconds: testSettings.providerPollSeconds,
  publicUrl: testSettings.publicUrl
}).pipe(
  Layer.provide(
    Layer.mergeAll(
      scratchStorage,
      Wakeup.layerLocal,
      Leases.layer(makeLeaseBook()),
      ContentCredentials.layerEphemeral()
    )
  ),
  Layer.provideMerge(coreServicesLayer)
)

const timeoutMillis = testSettings.generationTimeoutSeconds * 1000

const created = Effect.gen(function* () {
  const caller = yield* makeCaller({ subscription: 200 })
  const principal = yield* principalOf(caller.authorization)
  const outcome = yield* Generations.use((generations) => generations.create(principal, generateRequest(), undefined))
  return { caller, principal, task: outcome.body }
})

const sweep = TaskWorker.use((worker) => worker.sweep)

layer(workerLayer, { timeout: "120 seconds", excludeTestServices: true })("generation_timeout", (it) => {
  it.effect("fails a task still pending at its deadline, with its refund, and not a millisecond sooner", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.parse("2025-07-01T00:00:00.000Z"))
      const { caller, principal, task } = yield* created
      yield* TestClock.adjust(timeoutMillis - 1)
      assert.strictEqual(yield* sweep, 0)
      const generations = yield* Generations
      assert.strictEqual((yield* generations.get(principal, task.id)).status, "pending")
      yield* TestClock.adjust(1)
      assert.strictEqual(yield* sweep, 1)
      const failed = yield* generations.get(principal, task.id)
      assert.deepStrictEqual(
        [failed.status, failed.error?.code, failed.credits_refunded],
        ["failed", "generation_timeout", 50]
      )
      const account = yield* Accounts.use((accounts) => accounts.get(caller.accountId))
      assert.strictEqual(account.credits.total, 200)
      assert.strictEqual(yield* sweep, 0, "once")
    }).pipe(Effect.provide(TestClock.layer()))
  )

  it.effect("leaves alone a task that finished before its deadline", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.parse("2025-07-02T00:00:00.000Z"))
      const { principal, task } = yield* created
      const generations = yield* Generations
      yield* generations.markReady(task.id, [])
      yield* TestClock.adjust(timeoutMillis * 2)
      assert.strictEqual(yield* sweep, 0)
      assert.strictEqual((yield* generations.get(principal, task.id)).status, "ready")
    }).pipe(Effect.provide(TestClock.layer()))
  )
})
