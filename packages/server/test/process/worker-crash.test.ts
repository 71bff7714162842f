/**
 * The crash test: kill -9 the processes working on 200 tasks in flight, start new ones, and
 * every task still ends terminal, none is submitted twice (the fake upstream records every
 * submission), every failed task is refunded exactly once, and the ledger sums to the balances.
 *
 * On PostgreSQL (DATABASE_URL) the API runs in this process and two `pnpm worker` processes
 * are killed and replaced by two new ones. On the embedded default (PGlite, one process owns
 * the database) the `pnpm start` process with its inline worker is killed and restarted on the
 * same DATA_DIR.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PGlite } from "@electric-sql/pglite"
import { startFakeUpstream } from "@lyre/fake-upstream"
import type { FakeUpstream } from "@lyre/fake-upstream"
import { randomBase62 } from "@lyre/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectBooksBalanced, waitUntilTerminal } from "../support/books.ts"
import { api, backend, createAccount, startTestServer, validSong } from "../support/harness.ts"
import type { TestAccount, TestServer } from "../support/harness.ts"
import { adminCall, freePort, mapLimit, spawnEntry } from "../support/processes.ts"
import type { Spawned } from "../support/processes.ts"
import { signingEnv } from "../support/signing.ts"

const apiKey = "crash-test-key"
const TASKS = 200
let upstream: FakeUpstream

beforeAll(async () => {
  upstream = await startFakeUpstream({ apiKey, audioBytes: 16 * 1024 })
  // Slow enough that the tasks are still in flight when the processes die: three polls each.
  upstream.control.setDefault({ pollsBeforeDone: 3, callbacks: "none" })
})
afterAll(() => upstream?.close())

/** Every fifth task fails upstream, so refunds are part of what must survive the crash. */
const songs = Array.from({ length: TASKS }, (_, i) => {
  const title = `Crash ${i} ${randomBase62(6)}`
  return { ...validSong, title, failing: i % 5 === 0 }
})

const describeTitles = () => {
  for (const song of songs) {
    if (song.failing)
      upstream.control.onTitle(song.title, { pollsBeforeDone: 3, callbacks: "none", outcome: "GENERATE_AUDIO_FAILED" })
  }
}

const expectSubmittedOnce = () => {
  const counts = new Map<string, number>()
  for (const submission of upstream.control.submissions) {
    if (submission.title !== null) counts.set(submission.title, (counts.get(submission.title) ?? 0) + 1)
  }
  expect(songs.filter((song) => (counts.get(song.title) ?? 0) !== 1).map((song) => song.title)).toEqual([])
}

const providerEnv = (): Record<string, string> => ({
  PROVIDER: "http",
  PROVIDER_URL: upstream.url,
  PROVIDER_API_KEY: apiKey,
  PROVIDER_POLL_SECONDS: "0.3",
  WORKER_LEASE_SECONDS: "2",
  LOG_LEVEL: "info"
})

/** PostgreSQL: the API here, two `pnpm worker` processes killed, two new ones started. */
const onPostgres = {
  name: "postgres: kill -9 two pnpm worker processes with 200 tasks in flight; two new ones finish everything",
  run: async () => {
    describeTitles()
    const server: TestServer = await startTestServer({
      provider: "http",
      providerUrl: upstream.url,
      providerApiKey: apiKey,
      providerPollSeconds: 0.3,
      worker: "off"
    })
    const workers: Array<Spawned> = []
    try {
      const env = {
        ...providerEnv(),
        DATABASE_URL: String(server.config.databaseUrl),
        SECRET_KEY: String(server.config.secretKey),
        ...(await signingEnv()),
        DATA_DIR: server.config.dataDir,
        PUBLIC_URL: server.url,
        WORKER: "inline"
      }
      const startWorker = async () => {
        const worker = spawnEntry("worker-main", env)
        workers.push(worker)
        await worker.waitFor("worker starting")
        return worker
      }
      const first = await Promise.all([startWorker(), startWorker()])
      const accounts: Array<TestAccount> = await Promise.all(
        Array.from({ length: 4 }, () => createAccount(server, { subscription: 5_000, concurrency_limit: 200 }))
      )
      const created = await mapLimit(songs, 16, (song, i) =>
        api(server, "POST", "/api/v1/music/generations", {
          key: accounts[i % accounts.length]?.key ?? "",
          body: { style: song.style, title: song.title, lyrics: song.lyrics }
        })
      )
      expect(created.every((res) => res.status === 202)).toBe(true)
      // Kill them mid-work: once they have polled a good share of the tasks, well before all are done.
      const workedOn = async () =>
        (await server.query<{ n: number }>("select count(*)::int as n from generation_tasks where attempts > 0"))[0]
          ?.n ?? 0
      const until = Date.now() + 30_000
      while ((await workedOn()) < TASKS / 4 && Date.now() < until)
        await new Promise((resolve) => setTimeout(resolve, 20))
      await Promise.all(first.map((worker) => worker.crash()))
      const [state] = await server.query<{ pending: number; leased: number; polled: number }>(`
          select count(*) filter (where status = 'pending')::int as pending,
                 count(*) filter (where status = 'pending' and lease_owner is not null)::int as leased,
                 count(*) filter (where attempts > 0)::int as polled
          from generation_tasks`)
      process.stdout.write(
        `crash test: killed 2 workers with ${state?.pending} of ${TASKS} tasks pending ` +
          `(${state?.leased} leased by the dead workers, ${state?.polled} polled at least once)\n`
      )
      expect(state?.pending).toBeGreaterThan(TASKS / 2)
      expect(state?.polled).toBeGreaterThanOrEqual(TASKS / 4)
      await Promise.all([startWorker(), startWorker()])
      expect(await waitUntilTerminal(server.query, 60_000)).toBe(0)
      const counts = await expectBooksBalanced(server.query, TASKS)
      expect(counts["failed"]).toBe(TASKS / 5)
      expectSubmittedOnce()
    } finally {
      await Promise.all(workers.map((worker) => worker.stop()))
      await server.close()
    }
  }
}

/** The embedded default: one process owns PGlite, so the whole `pnpm start` is killed and restarted. */
const onPglite = {
  name: "embedded: kill -9 the pnpm start process (inline worker) with 200 tasks in flight; a restart finishes everything",
  run: async () => {
    describeTitles()
    const dataDir = mkdtempSync(join(tmpdir(), "lyre-crash-"))
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    const adminToken = randomBase62(32)
    const env = {
      ...providerEnv(),
      PORT: String(port),
      DATA_DIR: dataDir,
      ADMIN_TOKEN: adminToken,
      RATE_LIMIT_RPM: "100000",
      WORKER: "inline",
      // Creating 200 tasks on PGlite takes seconds: slower polls keep them all in flight meanwhile.
      PROVIDER_POLL_SECONDS: "1",
      // A submission cut off by the kill can only be reconciled by its deadline.
      GENERATION_TIMEOUT_SECONDS: "20"
    }
    const processes: Array<Spawned> = []
    const start = async () => {
      const service = spawnEntry("main", env)
      processes.push(service)
      await service.waitFor('"msg":"listening"')
      return service
    }
    try {
      const first = await start()
      const admin = (path: string, body: unknown) => adminCall(url, adminToken, "POST", path, body)
      const keys = await Promise.all(
        Array.from({ length: 4 }, async (_, i) => {
          const account = await admin("/accounts", {
            email: `crash${i}@example.test`,
            plan: "pro",
            subscription_credits: 5_000,
            concurrency_limit: 200
          })
          const key = await admin(`/accounts/${String(account["id"])}/keys`, {
            name: "crash",
            scopes: ["music:generate"]
          })
          return String(key["key"])
        })
      )
      const created = await mapLimit(songs, 16, async (song, i) => {
        const response = await fetch(`${url}/api/v1/music/generations`, {
          method: "POST",
          headers: { authorization: `Bearer ${keys[i % keys.length]}`, "content-type": "application/json" },
          body: JSON.stringify({ style: song.style, title: song.title, lyrics: song.lyrics })
        })
        await response.arrayBuffer()
        return response.status
      })
      expect(created.every((status) => status === 202)).toBe(true)
      // Kill it mid-work: once its worker has polled the upstream a good number of times.
      const until = Date.now() + 30_000
      while (upstream.control.polls.length < TASKS / 4 && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      await first.crash()
      process.stdout.write(`crash test: killed the service after ${upstream.control.polls.length} polls\n`)
      await start()
      const deadline = Date.now() + 60_000
      let pending = TASKS
      while (pending > 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 500))
        const page = await Promise.all(
          keys.map(async (key) => {
            let count = 0
            let after: string | undefined
            while (true) {
              const res = await fetch(
                `${url}/api/v1/music/generations?limit=100${after === undefined ? "" : `&starting_after=${after}`}`,
                { headers: { authorization: `Bearer ${key}` } }
              )
              const body = (await res.json()) as { data: Array<{ id: string; status: string }>; has_more: boolean }
              count += body.data.filter((task) => task.status === "pending").length
              if (!body.has_more) return count
              after = body.data.at(-1)?.id
            }
          })
        )
        pending = page.reduce((a, b) => a + b, 0)
      }
      expect(pending).toBe(0)
      await Promise.all(processes.map((service) => service.stop()))
      const db = await PGlite.create(join(dataDir, "pglite"))
      try {
        const query = async <A extends object>(text: string, ...params: ReadonlyArray<unknown>) =>
          (await db.query<A>(text, [...params])).rows
        // The embedded default's bootstrap account has no tasks; the four accounts have them all.
        const counts = await expectBooksBalanced(query, TASKS)
        expect(counts["failed"]).toBeGreaterThanOrEqual(TASKS / 5)
      } finally {
        await db.close()
      }
      expectSubmittedOnce()
    } finally {
      await Promise.all(processes.map((service) => service.stop()))
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

describe("the crash test", () => {
  const variant = backend.database === "postgres" ? onPostgres : onPglite
  it(variant.name, { timeout: 120_000 }, variant.run)
})
