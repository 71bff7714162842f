/**
 * Scale-out: two API processes and three worker processes on one PostgreSQL and one Redis
 * process 1,000 tasks (callbacks only, polling only, duplicate callbacks, failures), and no task
 * is transitioned twice, submitted twice or refunded twice.
 *
 * Separate processes need a database they can all reach, so without DATABASE_URL the test says
 * why and runs the smaller embedded variant instead: one process, PGlite, the inline worker,
 * 200 tasks, the same checks.
 */
import { randomBase62 } from "@lyre/core"
import { startFakeUpstream } from "@lyre/fake-upstream"
import { UPSTREAM_SOCKETS_PER_ORIGIN } from "@lyre/worker"
import type { Behaviour, FakeUpstream } from "@lyre/fake-upstream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectBooksBalanced, waitUntilTerminal } from "../support/books.ts"
import { backend, createAccount, startTestServer, validSong } from "../support/harness.ts"
import type { TestServer } from "../support/harness.ts"
import { freePort, mapLimit, spawnEntry } from "../support/processes.ts"
import type { Spawned } from "../support/processes.ts"
import { signingEnv } from "../support/signing.ts"

const apiKey = "scale-test-key"
let upstream: FakeUpstream

beforeAll(async () => {
  upstream = await startFakeUpstream({ apiKey, audioBytes: 8 * 1024 })
})
afterAll(() => upstream?.close())

/** Four kinds of task, in turn; every tenth fails upstream. */
const behaviourOf = (i: number): Behaviour => {
  const outcome = i % 10 === 0 ? ("GENERATE_AUDIO_FAILED" as const) : ("SUCCESS" as const)
  switch (i % 4) {
    case 0:
      return { outcome, pollsBeforeDone: Infinity }
    case 1:
      return { outcome, callbacks: "none", pollsBeforeDone: 1 }
    case 2:
      return { outcome, callbackCopies: 2 }
    default:
      return { outcome, callbacks: "none" }
  }
}

const makeSongs = (count: number) =>
  Array.from({ length: count }, (_, i) => {
    const title = `Scale ${i} ${randomBase62(6)}`
    upstream.control.onTitle(title, behaviourOf(i))
    return { style: validSong.style, title, lyrics: validSong.lyrics }
  })

const expectSubmittedOnce = (songs: ReadonlyArray<{ readonly title: string }>) => {
  const counts = new Map<string, number>()
  for (const submission of upstream.control.submissions) {
    if (submission.title !== null) counts.set(submission.title, (counts.get(submission.title) ?? 0) + 1)
  }
  expect(songs.filter((song) => counts.get(song.title) !== 1).length).toBe(0)
}

const createAll = async (urls: ReadonlyArray<string>, keys: ReadonlyArray<string>, songs: ReadonlyArray<unknown>) => {
  const statuses = await mapLimit(songs, 32, async (song, i) => {
    const response = await fetch(`${urls[i % urls.length]}/api/v1/music/generations`, {
      method: "POST",
      headers: { authorization: `Bearer ${keys[i % keys.length]}`, "content-type": "application/json" },
      body: JSON.stringify(song)
    })
    const text = await response.text()
    return response.status === 202 ? "202" : `${response.status} ${text}`
  })
  expect(statuses.filter((status) => status !== "202")).toEqual([])
}

/** What the upstream saw of the tasks a wait left pending, when it left any. */
const reportLeftBehind = async (query: TestServer["query"], pending: number) => {
  if (pending > 0) {
    const rows = await query<{ title: string }>(
      "select request->>'title' as title from generation_tasks where status = 'pending'"
    )
    const titles = new Set(rows.map((row) => row.title))
    const seen = upstream.control.submissions.filter(
      (submission) => submission.title !== null && titles.has(submission.title)
    )
    process.stdout.write(
      `the upstream's record of them: ${JSON.stringify(seen.map(({ body: _body, ...rest }) => rest))}\n`
    )
  }
  return pending
}

const onPostgres = {
  name: "2 API processes and 3 worker processes on one PostgreSQL and Redis: 1,000 tasks, no double transition",
  run: async () => {
    const TASKS = 1_000
    const songs = makeSongs(TASKS)
    const setup: TestServer = await startTestServer({
      provider: "http",
      providerUrl: upstream.url,
      providerApiKey: apiKey,
      worker: "off"
    })
    const processes: Array<Spawned> = []
    try {
      const common = {
        DATABASE_URL: String(setup.config.databaseUrl),
        ...(setup.config.redisUrl === null ? {} : { REDIS_URL: setup.config.redisUrl }),
        SECRET_KEY: String(setup.config.secretKey),
        ...(await signingEnv()),
        DATA_DIR: setup.config.dataDir,
        PROVIDER: "http",
        PROVIDER_URL: upstream.url,
        PROVIDER_API_KEY: apiKey,
        PROVIDER_POLL_SECONDS: "0.3",
        // The fake upstream shares this test's process, and a Node server busy with kept-alive
        // requests accepts new connections about one per turn of its loop: on a loaded two-core
        // machine a new connection waited up to 8 s to be accepted (docs/decisions/0103-*). A
        // submission past the default 10 s is unknown by design (0012) and, for the tasks here
        // that get no callback, waits for its 15-minute deadline: not what this test is about.
        PROVIDER_TIMEOUT_SECONDS: "30",
        WORKER_LEASE_SECONDS: "10",
        RATE_LIMIT_RPM: "100000",
        LOG_LEVEL: "warn"
      }
      const urls: Array<string> = []
      for (let i = 0; i < 2; i++) {
        const port = await freePort()
        const url = `http://127.0.0.1:${port}`
        const api = spawnEntry("main", { ...common, PORT: String(port), PUBLIC_URL: url, WORKER: "off" })
        processes.push(api)
        urls.push(url)
      }
      const workers = Array.from({ length: 3 }, () =>
        spawnEntry("worker-main", { ...common, PUBLIC_URL: urls[0] ?? "" })
      )
      processes.push(...workers)
      await Promise.all(
        urls.map(async (url) => {
          const deadline = Date.now() + 60_000
          while (Date.now() < deadline) {
            const ready = await fetch(`${url}/readyz`).then(
              (res) => res.ok,
              () => false
            )
            if (ready) return
            await new Promise((resolve) => setTimeout(resolve, 100))
          }
          throw new Error(`API at ${url} did not become ready`)
        })
      )
      const keys = await Promise.all(
        Array.from(
          { length: 10 },
          async () =>
            (
              await createAccount(setup, {
                subscription: 10_000,
                concurrency_limit: TASKS,
                requests_per_minute: 100_000
              })
            ).key
        )
      )
      const started = Date.now()
      await createAll(urls, keys, songs)
      expect(await waitUntilTerminal(setup.query, 90_000).then((n) => reportLeftBehind(setup.query, n))).toBe(0)
      process.stdout.write(
        `scale test: ${TASKS} tasks through 2 API and 3 worker processes in ${Date.now() - started} ms, ` +
          `at most ${upstream.control.mostConnections()} connections to the upstream at once\n`
      )
      // Each process's connections to one origin are bounded, so five processes stay inside the
      // upstream's accept queue (511), past which the kernel drops connects (0103).
      expect(upstream.control.mostConnections()).toBeLessThanOrEqual(processes.length * UPSTREAM_SOCKETS_PER_ORIGIN)
      const counts = await expectBooksBalanced(setup.query, TASKS)
      expect(counts["failed"]).toBe(TASKS / 10)
      expectSubmittedOnce(songs)
    } finally {
      await Promise.all(processes.map((spawned) => spawned.stop()))
      await setup.close()
    }
  }
}

const onPglite = {
  name: "embedded variant (no DATABASE_URL): one process with its inline worker, 200 tasks, no double transition",
  run: async () => {
    process.stdout.write(
      "scale test: DATABASE_URL is not set, and separate API and worker processes need a database they can all " +
        "reach (PGlite belongs to one process); running the embedded variant with 200 tasks instead\n"
    )
    const TASKS = 200
    const songs = makeSongs(TASKS)
    const server = await startTestServer({
      provider: "http",
      providerUrl: upstream.url,
      providerApiKey: apiKey,
      providerPollSeconds: 0.3,
      worker: "inline"
    })
    try {
      const keys = await Promise.all(
        Array.from(
          { length: 4 },
          async () => (await createAccount(server, { subscription: 10_000, concurrency_limit: TASKS })).key
        )
      )
      await createAll([server.url], keys, songs)
      expect(await waitUntilTerminal(server.query, 60_000)).toBe(0)
      const counts = await expectBooksBalanced(server.query, TASKS)
      expect(counts["failed"]).toBe(TASKS / 10)
      expectSubmittedOnce(songs)
    } finally {
      await server.close()
    }
  }
}

describe("scale-out", () => {
  const variant = backend.database === "postgres" ? onPostgres : onPglite
  it(variant.name, { timeout: 180_000 }, variant.run)
})
