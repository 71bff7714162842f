/**
 * A PostgreSQL outage, on a cluster of the test's own: `pnpm start` (API) and `pnpm worker`
 * under a steady load of creates and reads, with the database stopped (`pg_ctl stop -m fast`)
 * for 8 s and started again. Every answer is 200, 202 or a 503 `service_unavailable` with
 * `Retry-After`, each 503 within a second; `/readyz` is 503 while the database is away and 200
 * after, with no restart. A client that retries its create with the same `Idempotency-Key` gets
 * one task; every task ends `ready` soon after (none is left to its deadline), is charged once,
 * the ledger sums to the balance, and every task's webhook event reaches the receiver. Then the
 * exact moment the lost task met: the database stopped between the provider's accept
 * and its record.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  describeAnswers,
  loadAccount,
  queryOn,
  sleep,
  startAnswerLosingProxy,
  startServiceBed,
  steadyLoad,
  timed,
  timedCreate,
  waitReady
} from "../support/faults.ts"
import type { Answer, ServiceBed } from "../support/faults.ts"
import { adminCall, freePort, spawnEntry } from "../support/processes.ts"
import { startReceiver } from "../support/receiver.ts"
import type { Receiver } from "../support/receiver.ts"

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
    // A submission the upstream accepted while its record could not be written is kept by the
    // API process and recorded when the database answers (its callback, sent once, may have come
    // during the outage). The deadline is long enough that a task left to it stays pending
    // past the wait below, where it fails the test.
    const deadline = { GENERATION_TIMEOUT_SECONDS: "120" }
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
      await sleep(6_500)
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
      expect(
        answers.filter((a) => ![200, 202, 503].includes(a.status)).map((a) => `${a.label} ${a.status} ${a.body}`)
      ).toEqual([])
      expect(unavailable.length).toBeGreaterThan(10)
      for (const answer of unavailable) {
        expect(envelopeOf(answer.body)).toMatchObject({ type: "service_unavailable", code: "service_unavailable" })
        expect(Number(answer.retryAfter)).toBeGreaterThan(0)
        expect(answer.millis).toBeLessThan(1_000)
      }
      // Answers after the restart are good again, with no restart of the service.
      expect(answers.filter((a) => a.at > outage.startedAt + 1_000 && a.status !== 200 && a.status !== 202)).toEqual([])
      expect(readyz).toEqual([
        { phase: "during", status: 503 },
        { phase: "after", status: 200 }
      ])

      // Every task ends (the worker resumes), each charged once, the ledger explains the balance.
      const ids = [...created.values()]
      const ended = Date.now() + 30_000
      let open = ids.length
      while (open > 0 && Date.now() < ended) {
        const [row] = await queryOn<{ n: number }>(
          postgres.url,
          "select count(*)::int as n from generation_tasks where status = 'pending'"
        )
        open = row?.n ?? 0
        if (open > 0) await sleep(250)
      }
      process.stdout.write(
        `postgres outage: ${ids.length} tasks, ${open} pending ${Date.now() - outage.startedAt} ms after the restart\n`
      )
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
      const kept = (await (await fetch(`${base}/metrics`)).text()).match(/^lyre_kept_submissions_total\{.*$/gm) ?? []
      process.stdout.write(`postgres outage: kept submissions ${kept.join(", ") || "none"}\n`)
      expect(tasks.filter((t) => t.status !== "ready")).toEqual([])
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
        new Set(
          receiver.received.flatMap((r) => {
            const event = JSON.parse(r.rawBody) as { type: string; data: { task_id?: string } }
            return event.type === "job.completed" || event.type === "job.failed" ? [String(event.data.task_id)] : []
          })
        )
      const delivered = Date.now() + 20_000
      while (ids.some((id) => !endings().has(id)) && Date.now() < delivered) await sleep(250)
      expect(ids.filter((id) => !endings().has(id))).toEqual([])

      // Each process said once that the database was away, and once that it was back.
      for (const [name, process] of [
        ["api", api],
        ["worker", worker]
      ] as const) {
        const output = process.output()
        expect(output, name).not.toContain("unexpected failure")
        expect(output, name).not.toContain("unhandled")
      }
      const workerOutput = worker.output()
      expect(workerOutput.match(/(?<!(export|listen|lyrics) )worker: the database is out of reach/g)?.length).toBe(1)
      expect(workerOutput).toContain("worker: the database answers again")
      // The export poller shares the rule; it says so at most once (it may sleep through a short outage).
      expect(workerOutput.match(/export worker: the database is out of reach/g)?.length ?? 0).toBeLessThanOrEqual(1)
      // So does the worker that listens to uploads.
      expect(workerOutput.match(/listen worker: the database is out of reach/g)?.length ?? 0).toBeLessThanOrEqual(1)
      // And the lyrics worker.
      expect(workerOutput.match(/lyrics worker: the database is out of reach/g)?.length ?? 0).toBeLessThanOrEqual(1)
      expect(workerOutput.match(/webhooks: the database is out of reach/g)?.length).toBe(1)
      // The API process said at most once that it kept outcomes (none when no create met the stop).
      expect(api.output().match(/submissions: the database is out of reach/g)?.length ?? 0).toBeLessThanOrEqual(1)
    } finally {
      await Promise.all([api.stop(), worker.stop()])
    }
  }, 90_000)
})

/** Polls `check` until it answers true or `withinMs` passes; answers whether it did. */
const eventually = async (check: () => Promise<boolean> | boolean, withinMs: number): Promise<boolean> => {
  const deadline = Date.now() + withinMs
  while (Date.now() < deadline) {
    if (await check()) return true
    await sleep(100)
  }
  return check()
}

describe("PostgreSQL stopped between the provider's accept and its record", () => {
  it("the API process keeps the provider's answers (a generation, an extension, an export, a refusal) and records them when the database answers: ready within a minute, charged once, said once", async () => {
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const { postgres, upstream } = bed
    // The default deadline (15 minutes) and no callbacks: only the kept record can finish these.
    const api = spawnEntry("main", bed.env(port))
    const worker = spawnEntry("worker-main", bed.env(port))
    try {
      await waitReady(base)
      const account = await loadAccount(base, bed.adminToken)
      const headers = { authorization: `Bearer ${account.key}` }

      // A ready track to export: the song tools share the recorder.
      const source = await timedCreate(base, headers, "kept-source", "Kept source")
      expect(source.status).toBe(202)
      const sourceId = String((JSON.parse(source.body) as { id: string }).id)
      let trackId = ""
      expect(
        await eventually(async () => {
          const task = JSON.parse(
            (await timed("get", `${base}/api/v1/music/generations/${sourceId}`, { headers })).body
          ) as {
            status: string
            tracks: Array<{ id: string }>
          }
          trackId = task.tracks[0]?.id ?? ""
          return task.status === "ready"
        }, 30_000)
      ).toBe(true)

      // The upstream decides on all three at once and holds its answers until the database is stopped.
      let answer = (): void => undefined
      const held = new Promise<void>((resolve) => (answer = resolve))
      upstream.control.onTitle("Kept", { submit: { answerWhen: held }, callbacks: "none" })
      upstream.control.onTitle("Kept refused", { submit: { answerWhen: held, code: 500 } })
      upstream.control.onTitle("Kept extension", { submit: { answerWhen: held }, callbacks: "none" })
      upstream.control.onTrackOf("Kept source", "wav", { submit: { answerWhen: held }, callbacks: "none" })
      const creating = timedCreate(base, headers, "kept-task", "Kept")
      const refusing = timedCreate(base, headers, "kept-refused", "Kept refused")
      const extending = timed("extend", `${base}/api/v1/music/tracks/${trackId}/extensions`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json", "idempotency-key": "kept-extension" },
        body: JSON.stringify({ title: "Kept extension", continue_at: 30 })
      })
      const exporting = timed("export", `${base}/api/v1/music/tracks/${trackId}/exports`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json", "idempotency-key": "kept-export" },
        body: JSON.stringify({ format: "wav" })
      })
      expect(
        await eventually(
          () =>
            ["Kept", "Kept refused", "Kept extension"].every(
              (title) => upstream.control.submissionsFor(title).length === 1
            ) && upstream.control.toolRequestsFor("wav").length === 1,
          15_000
        )
      ).toBe(true)
      await postgres.stop()
      answer()
      const [created, exported, refused, extended] = await Promise.all([creating, exporting, refusing, extending])
      // Charged and accepted upstream: the answer is the 202, not a 503 inviting a second charge;
      // refused upstream: the 500 the refusal is, its refund to come.
      expect(
        [created.status, exported.status, extended.status],
        `${created.body} ${exported.body} ${extended.body}`
      ).toEqual([202, 202, 202])
      expect(refused.status, refused.body).toBe(500)
      expect(envelopeOf(refused.body)).toMatchObject({ type: "api_error", code: "provider_error" })
      const taskId = String((JSON.parse(created.body) as { id: string }).id)
      const exportId = String((JSON.parse(exported.body) as { id: string }).id)
      const extensionId = String((JSON.parse(extended.body) as { id: string }).id)
      await sleep(3_000)
      await postgres.start()
      const recovered = Date.now()

      const statusOf = async (table: "generation_tasks" | "exports", id: string) =>
        (
          await queryOn<{ status: string }>(postgres.url, `select status from ${table} where id = $1`, id).catch(
            () => []
          )
        )[0]?.status
      expect(
        await eventually(
          async () =>
            (await statusOf("generation_tasks", taskId)) === "ready" &&
            (await statusOf("generation_tasks", extensionId)) === "ready" &&
            (await statusOf("exports", exportId)) === "ready",
          60_000
        )
      ).toBe(true)
      process.stdout.write(`kept submissions: all ready ${Date.now() - recovered} ms after PostgreSQL started again\n`)
      expect(Date.now() - recovered).toBeLessThan(60_000)
      expect(upstream.control.submissionsFor("Kept")).toHaveLength(1)
      expect(upstream.control.submissionsFor("Kept extension")).toHaveLength(1)
      expect(upstream.control.toolRequestsFor("wav")).toHaveLength(1)
      // The refusal: failed and refunded by then, and the key now replays the 500, as without an outage.
      const [refusedTask] = await queryOn<{ id: string; status: string; error_code: string | null }>(
        postgres.url,
        "select id, status, error_code from generation_tasks where account_id = $1 and request->>'title' = 'Kept refused'",
        account.id
      )
      expect(refusedTask).toMatchObject({ status: "failed", error_code: "provider_error" })
      const replayed = await timedCreate(base, headers, "kept-refused", "Kept refused")
      expect([replayed.status, envelopeOf(replayed.body).code]).toEqual([500, "provider_error"])
      expect(upstream.control.submissionsFor("Kept refused")).toHaveLength(1)

      // Charged once each, only the refusal refunded; the ledger explains the balance.
      const entries = await queryOn<{ kind: string; work: string }>(
        postgres.url,
        "select kind, coalesce(task_id, export_id) as work from credit_ledger where account_id = $1 order by created_at",
        account.id
      )
      const refusedId = refusedTask?.id ?? ""
      expect(
        entries
          .filter((e) => [taskId, extensionId, exportId, refusedId].includes(e.work))
          .map((e) => `${e.kind} ${e.work}`)
          .sort()
      ).toEqual(
        [
          `debit ${exportId}`,
          `debit ${taskId}`,
          `debit ${extensionId}`,
          `debit ${refusedId}`,
          `refund ${refusedId}`
        ].sort()
      )
      const [books] = await queryOn<{ deltas: number; balance: number }>(
        postgres.url,
        `select (select sum(subscription_delta + onetime_delta) from credit_ledger where account_id = $1)::int as deltas,
                (select subscription_credits + onetime_credits from accounts where id = $1)::int as balance`,
        account.id
      )
      expect(books?.deltas).toBe(books?.balance)

      // Said once for the outage (not per outcome, not per round), and once when settled; counted.
      const output = api.output()
      expect(output.match(/submissions: the database is out of reach/g)).toHaveLength(1)
      expect(output.match(/submissions: every kept outcome is settled/g)).toHaveLength(1)
      const metrics = await (await fetch(`${base}/metrics`)).text()
      expect(metrics).toMatch(/^lyre_kept_submissions_total\{result="kept"\} 4$/m)
      expect(metrics).toMatch(/^lyre_kept_submissions_total\{result="recorded"\} 4$/m)
      expect(metrics).toMatch(/^lyre_kept_submissions 0$/m)
    } finally {
      upstream.control.reset()
      await Promise.all([api.stop(), worker.stop()])
    }
  }, 120_000)
})

describe("a charge that committed while its answer was lost", () => {
  it("is sent when the database answers if its call had a key (the retry replays the 202), else failed and refunded at once; never sent twice", async () => {
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const { postgres, upstream } = bed
    const proxy = await startAnswerLosingProxy(postgres)
    // Only the API process goes through the proxy; the worker reaches the database directly.
    const api = spawnEntry("main", { ...bed.env(port), DATABASE_URL: proxy.url })
    const worker = spawnEntry("worker-main", bed.env(port))
    try {
      await waitReady(base)
      const account = await loadAccount(base, bed.adminToken)
      const headers = { authorization: `Bearer ${account.key}` }
      const tasksTitled = (title: string) =>
        queryOn<{ id: string; status: string; error_code: string | null }>(
          postgres.url,
          "select id, status, error_code from generation_tasks where account_id = $1 and request->>'title' = $2",
          account.id,
          title
        )

      // With a key: 503, and the retry finds the committed task, which is sent once and finishes.
      const lostKeyed = proxy.loseAnswerTo("insert into generation_tasks")
      const first = await timedCreate(base, headers, "unsure-keyed", "Unsure keyed")
      await lostKeyed
      expect(first.status, first.body).toBe(503)
      const retried = await timedCreate(base, headers, "unsure-keyed", "Unsure keyed")
      expect(retried.status, retried.body).toBe(202)
      const keyedId = String((JSON.parse(retried.body) as { id: string }).id)
      expect(await eventually(async () => (await tasksTitled("Unsure keyed"))[0]?.status === "ready", 30_000)).toBe(
        true
      )
      expect((await tasksTitled("Unsure keyed")).map((t) => t.id)).toEqual([keyedId])
      expect(upstream.control.submissionsFor("Unsure keyed")).toHaveLength(1)

      // Without a key: nobody can find it, so it is failed and refunded at once, never sent.
      const lostKeyless = proxy.loseAnswerTo("insert into generation_tasks")
      const keyless = await timed("create", `${base}/api/v1/music/generations`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ style: "lo-fi piano", title: "Unsure keyless", instrumental: true })
      })
      await lostKeyless
      expect(keyless.status, keyless.body).toBe(503)
      expect(await eventually(async () => (await tasksTitled("Unsure keyless"))[0]?.status === "failed", 10_000)).toBe(
        true
      )
      const [undone] = await tasksTitled("Unsure keyless")
      expect(undone?.error_code).toBe("service_unavailable")
      expect(upstream.control.submissionsFor("Unsure keyless")).toHaveLength(0)

      const entries = await queryOn<{ kind: string; task_id: string }>(
        postgres.url,
        "select kind, task_id from credit_ledger where account_id = $1 and task_id is not null",
        account.id
      )
      expect(entries.map((e) => `${e.kind} ${e.task_id}`).sort()).toEqual(
        [`debit ${keyedId}`, `debit ${undone?.id}`, `refund ${undone?.id}`].sort()
      )
      const [books] = await queryOn<{ deltas: number; balance: number }>(
        postgres.url,
        `select (select sum(subscription_delta + onetime_delta) from credit_ledger where account_id = $1)::int as deltas,
                (select subscription_credits + onetime_credits from accounts where id = $1)::int as balance`,
        account.id
      )
      expect(books?.deltas).toBe(books?.balance)
      expect(api.output()).not.toContain("unexpected failure")
    } finally {
      await Promise.all([api.stop(), worker.stop()])
      await proxy.close()
    }
  }, 90_000)
})
