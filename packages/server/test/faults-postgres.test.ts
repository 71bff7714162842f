/**
 * A PostgreSQL outage, on a cluster of the test's own: `pnpm start` (API) and `pnpm worker`
 * under a steady load of creates and reads, with the database stopped (`pg_ctl stop -m fast`)
 * for 4 s and started again. Every answer is 200, 202 or a 503 `service_unavailable` with
 * `Retry-After`, each 503 within a second; `/readyz` is 503 while the database is away and 200
 * after, with no restart. A client that retries its create with the same `Idempotency-Key` gets
 * one task; every task ends, is charged once, the ledger sums to the balance, and every task's
 * webhook event reaches the receiver.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { describeAnswers, loadAccount, queryOn, sleep, startServiceBed, steadyLoad, timed, timedCreate, waitReady } from "./support/faults.ts"
import type { Answer, ServiceBed } from "./support/faults.ts"
import { adminCall, freePort, spawnEntry } from "./support/processes.ts"
import { startReceiver } from "./support/receiver.ts"
import type { Receiver } from "./support/receiver.ts"

let bed: ServiceBed
let receiver: Receiver

beforeAll(async () => {
  ;[bed, receiver] = await Promise.all([startServiceBed("lyre-faults-pg-"), startReceiver()])
}, 60_000)
afterAll(async () => {
  await receiver?.close()
  await bed?.close()
})

const envelopeOf = (body: string): { type?: string; code?: string; retry_after_seconds?: number } => {
  try {
    const parsed = JSON.parse(body) as { error?: { type?: string; code?: string; retry_after_seconds?: number } }
    return parsed.error ?? {}
  } catch {
    return {}
  }
}

describe("PostgreSQL stopped under load", () => {
  it("answers 503 with Retry-After within a second, /readyz 503, and recovers by itself: nothing lost or charged twice", async () => {
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const postgres = bed.postgres
    // A submission the upstream accepted while its record could not be written is settled by the
    // task's callback; one that came during the outage is gone (the fake sends each once), so
    // such a task ends at its deadline, failed and refunded: 15 s here, not 15 minutes.
    const deadline = { GENERATION_TIMEOUT_SECONDS: "15" }
    const api = spawnEntry("main", { ...bed.env(port), ...deadline })
    const worker = spawnEntry("worker-main", { ...bed.env(port), ...deadline })
    try {
      await waitReady(base)
      const account = await loadAccount(base, bed.adminToken)
      await adminCall(base, bed.adminToken, "POST", `/accounts/${account.id}/webhook-endpoints`, { url: receiver.url })
      const headers = { authorization: `Bearer ${account.key}` }

      const answers: Array<Answer> = []
      const readyz: Array<{ readonly phase: string; readonly status: number }> = []
      /** Idempotency key -> the task its create made. */
      const created = new Map<string, string>()
      let next = 0
      const load = steadyLoad(6, async (loop, stopping) => {
        if (loop % 2 === 1) {
          answers.push(await timed("me", `${base}/api/v1/me`, { headers }))
          await sleep(20)
          return
        }
        // A careful client: the same key until the create is answered 202.
        const key = `pg-${next++}`
        for (;;) {
          const answer = await timedCreate(base, headers, key, `Outage ${key}`)
          answers.push(answer)
          if (answer.status === 202) {
            created.set(key, String((JSON.parse(answer.body) as { id: string }).id))
            break
          }
          if (answer.status !== 503 || stopping()) break
          await sleep(200)
        }
        await sleep(20)
      })
      const outage = { stoppedAt: 0, startedAt: 0 }
      await sleep(2_000)
      outage.stoppedAt = Date.now()
      await postgres.stop()
      await sleep(1_500)
      readyz.push({ phase: "during", status: (await timed("readyz", `${base}/readyz`)).status })
      await sleep(2_500)
      await postgres.start()
      outage.startedAt = Date.now()
      await sleep(2_500)
      await load.stop()
      readyz.push({ phase: "after", status: (await timed("readyz", `${base}/readyz`)).status })

      const unavailable = answers.filter((a) => a.status === 503)
      process.stdout.write(
        `postgres load: ${describeAnswers(answers)}; ${created.size} tasks created; ` +
          `slowest 503 ${Math.round(unavailable.reduce((max, a) => Math.max(max, a.millis), 0))} ms\n`
      )
      expect(answers.filter((a) => ![200, 202, 503].includes(a.status)).map((a) => `${a.label} ${a.status} ${a.body}`)).toEqual([])
      expect(unavailable.length).toBeGreaterThan(10)
      for (const answer of unavailable) {
        expect(envelopeOf(answer.body)).toMatchObject({ type: "service_unavailable", code: "service_unavailable" })
        expect(Number(answer.retryAfter)).toBeGreaterThan(0)
        expect(answer.millis).toBeLessThan(1_000)
      }
      // Answers after the restart are good again, with no restart of the service.
      expect(answers.filter((a) => a.at > outage.startedAt + 1_000 && a.status !== 200 && a.status !== 202)).toEqual([])
      expect(readyz).toEqual([{ phase: "during", status: 503 }, { phase: "after", status: 200 }])

      // Every task ends (the worker resumes), each charged once, the ledger explains the balance.
      const ids = [...created.values()]
      const ended = Date.now() + 30_000
      let open = ids.length
      while (open > 0 && Date.now() < ended) {
        const [row] = await queryOn<{ n: number }>(postgres.url, "select count(*)::int as n from generation_tasks where status = 'pending'")
        open = row?.n ?? 0
        if (open > 0) await sleep(250)
      }
      expect(open).toBe(0)
      const tasks = await queryOn<{ id: string; status: string; error_code: string | null }>(
        postgres.url,
        "select id, status, error_code from generation_tasks where account_id = $1",
        account.id
      )
      process.stdout.write(
        `postgres outage: ${tasks.filter((t) => t.status === "ready").length} ready, ` +
          `${tasks.filter((t) => t.error_code === "generation_timeout").length} failed at their deadline\n`
      )
      // One task per key: the retries of a key found its first answer, never a second task.
      expect(tasks.map((t) => t.id).sort()).toEqual([...ids].sort())
      const [charges] = await queryOn<{ debits: number; tasks: number }>(
        postgres.url,
        `select count(*) filter (where kind = 'debit')::int as debits, count(distinct task_id)::int as tasks
         from credit_ledger where account_id = $1`,
        account.id
      )
      expect(charges).toEqual({ debits: ids.length, tasks: ids.length })
      const [books] = await queryOn<{ deltas: number; balance: number }>(
        postgres.url,
        `select (select sum(subscription_delta + onetime_delta) from credit_ledger where account_id = $1)::int as deltas,
                (select subscription_credits + onetime_credits from accounts where id = $1)::int as balance`,
        account.id
      )
      expect(books?.deltas).toBe(books?.balance)

      // No webhook event lost: every task's ending reached the receiver.
      const endings = (): Set<string> =>
        new Set(receiver.received.flatMap((r) => {
          const event = JSON.parse(r.rawBody) as { type: string; data: { task_id?: string } }
          return event.type === "job.completed" || event.type === "job.failed" ? [String(event.data.task_id)] : []
        }))
      const delivered = Date.now() + 20_000
      while (ids.some((id) => !endings().has(id)) && Date.now() < delivered) await sleep(250)
      expect(ids.filter((id) => !endings().has(id))).toEqual([])

      // Each process said once that the database was away, and once that it was back.
      for (const [name, process] of [["api", api], ["worker", worker]] as const) {
        const output = process.output()
        expect(output, name).not.toContain("unexpected failure")
        expect(output, name).not.toContain("unhandled")
      }
      const workerOutput = worker.output()
      expect(workerOutput.match(/(?<!export )worker: the database is out of reach/g)?.length).toBe(1)
      expect(workerOutput).toContain("worker: the database answers again")
      // The export poller shares the rule; it says so at most once (it may sleep through a short outage).
      expect(workerOutput.match(/export worker: the database is out of reach/g)?.length ?? 0).toBeLessThanOrEqual(1)
      expect(workerOutput.match(/webhooks: the database is out of reach/g)?.length).toBe(1)
    } finally {
      await Promise.all([api.stop(), worker.stop()])
    }
  }, 75_000)
})
