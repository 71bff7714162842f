/**
 * SIGTERM drains. Two `pnpm start` processes behind Debian's HAProxy (health checks on
 * `/readyz`), on a PostgreSQL cluster of the test's own, are restarted one after the other under
 * a steady load through the proxy: every request is answered 200 or 202 (none lost, none 5xx),
 * `/readyz` is 503 right after each signal, and each process exits 0 within 10 s of it (its
 * DRAIN_DELAY_SECONDS included). Then a `pnpm worker` holding leases on
 * tasks whose polls hang gets SIGTERM: it exits within 10 s and its leases are handed back, not
 * left to expire; so are the rows of a claim still waiting on the database when the signal came
 * (held behind a lock until the drain has begun), and hand-backs held behind row locks until
 * then still land before the pool closes. A hand-back the database refuses is named in the
 * drain's one line, and the worker exits 3.
 */
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { unreturnedMessage } from "@lyre/core"
import { leasesNotHandedBackExitCode } from "../../src/drain.ts"
import { haproxyPath } from "../../../../test/haproxy.ts"
import {
  createBody,
  describeAnswers,
  holdTransaction,
  loadAccount,
  queryOn,
  sleep,
  startServiceBed,
  steadyLoad,
  timed,
  timedCreate,
  waitReady
} from "../support/faults.ts"
import type { Answer, ServiceBed } from "../support/faults.ts"
import { freePort, spawnEntry } from "../support/processes.ts"
import type { Spawned } from "../support/processes.ts"

let bed: ServiceBed

/**
 * How long a process may take to start and take its leases. A `pnpm start` or `pnpm worker`
 * strips the types of some hundred modules as it starts: seconds on an idle machine, tens of
 * seconds on one shared by many test runs. The limits under test (each drain within 10 s,
 * `/readyz` 503 within 250 ms) are asserted as such; these only bound the waiting around them.
 */
const startupMillis = 60_000
/** A whole case: its processes' starts and stops beside what it asserts. */
const caseMillis = 150_000

beforeAll(async () => {
  if (!existsSync(haproxyPath)) {
    throw new Error(`HAProxy is not at ${haproxyPath}: the test command's global setup (test/haproxy.ts) installs it`)
  }
  bed = await startServiceBed("lyre-faults-drain-")
}, 60_000)
afterAll(async () => {
  await bed?.close()
})

/**
 * The proxy needs two failed checks 200 ms apart to stop sending to a draining process: a second
 * of DRAIN_DELAY_SECONDS covers that, so no connection meets a closed listener (one accepted by
 * the kernel but not yet by Node is reset when the listener closes, and HAProxy cannot retry a
 * request it has sent).
 */
const envFor = (port: number, worker: "inline" | "off" = "off") => ({
  ...bed.env(port, { worker }),
  DRAIN_DELAY_SECONDS: "1"
})

/** SIGTERM, and how long until the process is gone and with what code. */
const terminate = async (spawned: Spawned): Promise<{ readonly millis: number; readonly code: number | null }> => {
  const started = performance.now()
  const exited = new Promise<number | null>((resolve) => spawned.child.once("exit", (code) => resolve(code)))
  spawned.child.kill("SIGTERM")
  const code = await Promise.race([exited, sleep(15_000).then(() => -1)])
  return { millis: performance.now() - started, code }
}

interface Proxy {
  readonly child: ChildProcess
  /** Until HAProxy counts server `index` as up (its checks passed), or fails after `withinMs`. */
  readonly waitUp: (index: number, withinMs?: number) => Promise<void>
}

/** HAProxy in front of `servers`: checks `/readyz` every 200 ms, retries a refused connection on the other server. */
const startHaproxy = async (port: number, servers: ReadonlyArray<number>): Promise<Proxy> => {
  const statsPort = await freePort()
  const config = join(bed.dataDir, "haproxy.cfg")
  writeFileSync(
    config,
    [
      "global",
      "  maxconn 512",
      "defaults",
      "  mode http",
      "  timeout connect 1s",
      "  timeout client 30s",
      "  timeout server 30s",
      // A refused connection (a process not yet listening) is tried again on the other server.
      "  retries 3",
      "  option redispatch 1",
      "  retry-on conn-failure",
      // One request per server connection: nothing is ever sent on a connection the server is closing.
      "  option http-server-close",
      "frontend api",
      `  bind 127.0.0.1:${port}`,
      "  default_backend lyre",
      "backend lyre",
      "  option httpchk GET /readyz",
      "  http-check expect status 200",
      "  timeout check 2s",
      "  default-server inter 200ms fall 2 rise 2",
      ...servers.map((server, i) => `  server api${i} 127.0.0.1:${server} check`),
      "listen stats",
      `  bind 127.0.0.1:${statsPort}`,
      "  stats enable",
      "  stats uri /stats",
      ""
    ].join("\n")
  )
  const child = spawn(haproxyPath, ["-db", "-f", config], { stdio: ["ignore", "pipe", "pipe"] })
  let output = ""
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()))
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()))
  const deadline = Date.now() + 10_000
  while (
    !(await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (res) => res.status === 200,
      () => false
    ))
  ) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`haproxy did not start:\n${output}`)
    await sleep(100)
  }
  const waitUp = async (index: number, withinMs = 15_000) => {
    const until = Date.now() + withinMs
    for (;;) {
      const csv = await fetch(`http://127.0.0.1:${statsPort}/stats;csv`).then(
        (res) => res.text(),
        () => ""
      )
      const [header = "", ...rows] = csv.split("\n")
      const status = header.replace(/^# /, "").split(",").indexOf("status")
      const row = rows.map((line) => line.split(",")).find((cells) => cells[0] === "lyre" && cells[1] === `api${index}`)
      if (row?.[status] === "UP") return
      if (Date.now() > until) throw new Error(`haproxy never counted api${index} up:\n${csv}`)
      await sleep(50)
    }
  }
  return { child, waitUp }
}

describe("graceful drain", () => {
  it(
    "a rolling restart of two API processes behind HAProxy under load loses no request; each exits 0 within 10 s",
    async () => {
      const ports = [await freePort(), await freePort()]
      const apis: Array<Spawned> = ports.map((port) => spawnEntry("main", envFor(port)))
      let proxy: Proxy | null = null
      try {
        await Promise.all(ports.map((port) => waitReady(`http://127.0.0.1:${port}`, startupMillis)))
        const proxyPort = await freePort()
        proxy = await startHaproxy(proxyPort, ports)
        const base = `http://127.0.0.1:${proxyPort}`
        await proxy.waitUp(0)
        await proxy.waitUp(1)
        const account = await loadAccount(base, bed.adminToken)
        const headers = { authorization: `Bearer ${account.key}` }

        const answers: Array<Answer> = []
        let n = 0
        const load = steadyLoad(6, async () => {
          const i = n++
          answers.push(
            i % 2 === 0
              ? await timedCreate(base, headers, `drain-${i}`, `Drain ${i}`)
              : await timed("me", `${base}/api/v1/me`, { headers })
          )
          await sleep(10)
        })
        const drains: Array<{
          readonly millis: number
          readonly code: number | null
          readonly readyzAfterSignal: number
          readonly unreadyMillis: number
          readonly lagMillis: number
        }> = []
        await sleep(1_500)
        for (const [i, port] of ports.entries()) {
          const running = apis[i]
          if (running === undefined) continue
          const signalledAt = performance.now()
          const signalled = terminate(running)
          // At once (as soon as the process has taken the signal): not ready, while it still answers.
          // A process busy with the load takes the signal only when its event loop comes round,
          // and that lag shows in the round trip of its own /readyz answers: the flip is measured
          // against it.
          let readyz = await timed("readyz", `http://127.0.0.1:${port}/readyz`)
          let lag = readyz.millis
          while (readyz.status === 200 && performance.now() - signalledAt < 2_000) {
            await sleep(5)
            readyz = await timed("readyz", `http://127.0.0.1:${port}/readyz`)
            lag = Math.max(lag, readyz.millis)
          }
          const unready = performance.now() - signalledAt
          const drained = await signalled
          drains.push({ ...drained, readyzAfterSignal: readyz.status, unreadyMillis: unready, lagMillis: lag })
          const restarted = spawnEntry("main", envFor(port))
          apis[i] = restarted
          await waitReady(`http://127.0.0.1:${port}`, startupMillis)
          // The next one goes down only once the proxy sends here again and the new process has
          // served for a moment (a rollout's minimum ready time), as an operator's rollout waits.
          await proxy.waitUp(i)
          await sleep(1_500)
        }
        await sleep(1_000)
        await load.stop()

        process.stdout.write(
          `rolling restart: ${describeAnswers(answers)}; drains ${drains
            .map(
              (d) =>
                `${Math.round(d.millis)} ms (exit ${d.code}, unready after ${Math.round(d.unreadyMillis)} ms, /readyz round trip up to ${Math.round(d.lagMillis)} ms)`
            )
            .join(", ")}\n`
        )
        expect(answers.length).toBeGreaterThan(200)
        expect(
          answers
            .filter((a) => a.status !== 200 && a.status !== 202)
            .map((a) => `${a.label} ${a.status} ${a.body.slice(0, 200)}`)
        ).toEqual([])
        for (const drain of drains) {
          expect(drain.code).toBe(0)
          expect(drain.millis).toBeLessThan(10_000)
          expect(drain.readyzAfterSignal).toBe(503)
          expect(drain.unreadyMillis).toBeLessThan(250 + drain.lagMillis)
        }
      } finally {
        proxy?.child.kill("SIGTERM")
        await Promise.all(apis.map((api) => api.stop()))
      }
    },
    caseMillis
  )

  describe("a stopping worker's leases", () => {
    let apiPort = 0
    let api: Spawned | null = null
    let headers: Record<string, string> = {}
    const base = () => `http://127.0.0.1:${apiPort}`
    /** A `pnpm worker` whose polls never answer: it holds its tasks' leases for as long as it lives. */
    const workerEnv = () => ({
      ...envFor(apiPort, "inline"),
      WORKER_LEASE_SECONDS: "60",
      PROVIDER_TIMEOUT_SECONDS: "30"
    })

    beforeAll(async () => {
      apiPort = await freePort()
      api = spawnEntry("main", envFor(apiPort))
      await waitReady(base(), startupMillis)
      const account = await loadAccount(base(), bed.adminToken)
      headers = { authorization: `Bearer ${account.key}`, "content-type": "application/json" }
    }, caseMillis)
    afterAll(async () => {
      await api?.stop()
    })

    /**
     * `n` tasks whose polls hang, and no other task due: the tasks created before (the rolling
     * restart's, with no worker; an earlier case's, handed back) are set aside, so each worker here
     * holds exactly the case's own.
     */
    const hangingTasks = async (n: number): Promise<ReadonlyArray<string>> => {
      bed.upstream.control.setDefault({ poll: "hang", callbacks: "none" })
      await queryOn(bed.postgres.url, "update generation_tasks set next_poll_at = 'infinity' where status = 'pending'")
      const ids: Array<string> = []
      for (let i = 0; i < n; i++) {
        const res = await fetch(`${base()}/api/v1/music/generations`, {
          method: "POST",
          headers,
          body: createBody(`Held ${i}`)
        })
        expect(res.status).toBe(202)
        ids.push(String(((await res.json()) as { id: string }).id))
      }
      return ids
    }
    const count = (ids: ReadonlyArray<string>, where: string) =>
      queryOn<{ n: number }>(
        bed.postgres.url,
        `select count(*)::int as n from generation_tasks where id = any($1) and ${where}`,
        ids
      ).then(([row]) => row?.n ?? 0)
    const leased = (ids: ReadonlyArray<string>) => count(ids, "lease_owner is not null")
    /** Backends running a statement whose text contains each of `fragments` and that waits for a lock. */
    const waitingOnLock = (...fragments: ReadonlyArray<string>) =>
      queryOn<{ n: number }>(
        bed.postgres.url,
        `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and ${fragments.map((_, i) => `query like $${i + 1}`).join(" and ")}`,
        ...fragments.map((fragment) => `%${fragment}%`)
      ).then(([row]) => row?.n ?? 0)
    const until = async (what: string, check: () => Promise<boolean>, withinMs = 20_000) => {
      const deadline = Date.now() + withinMs
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error(`not within ${withinMs} ms: ${what}`)
        await sleep(50)
      }
    }
    /** A worker holding the lease of every one of `ids`. */
    const holdingWorker = async (ids: ReadonlyArray<string>): Promise<Spawned> => {
      const worker = spawnEntry("worker-main", workerEnv())
      await until("the worker holds every lease", async () => (await leased(ids)) === ids.length, startupMillis).catch(
        async (error: unknown) => {
          await worker.stop()
          throw error
        }
      )
      return worker
    }

    afterEach(() => {
      bed.upstream.control.reset()
    })

    it(
      "a worker stopped with SIGTERM hands its leases back and exits within 10 s",
      async () => {
        const ids = await hangingTasks(6)
        const worker = await holdingWorker(ids)
        try {
          expect(await leased(ids)).toBe(ids.length)

          const drained = await terminate(worker)
          process.stdout.write(`worker drain: ${Math.round(drained.millis)} ms (exit ${drained.code})\n`)
          expect(drained.millis).toBeLessThan(10_000)
          expect(drained.code).toBe(0)
          // Handed back, not left to the 60 s lease: another worker can take them at once.
          expect(await leased(ids)).toBe(0)
          expect(await count(ids, "status = 'pending'")).toBe(ids.length)
        } finally {
          await worker.stop()
        }
      },
      caseMillis
    )

    it(
      "a claim still in flight when the worker is stopped: the rows it leases are handed back too",
      async () => {
        const ids = await hangingTasks(6)
        // The worker's claim (an update) waits behind this lock, as a claim on a busy database waits for its answer.
        const lock = holdTransaction(bed.postgres.url, "lock table generation_tasks in share row exclusive mode")
        await lock.holding
        // At `info` it says `draining` as it takes the signal.
        const worker = spawnEntry("worker-main", { ...workerEnv(), LOG_LEVEL: "info" })
        try {
          await until(
            "the worker's claim waits on the lock",
            async () => (await waitingOnLock("generation_tasks", "skip locked")) > 0,
            startupMillis
          )
          const signalled = terminate(worker)
          await worker.waitFor("draining", 5_000)
          // The claim commits now, after the signal: its rows are leased whether or not the stopping worker reads its answer.
          await lock.end()
          const drained = await signalled
          // Whatever the worker did, the claim has landed before anything is counted.
          await until(
            "the claim has committed",
            async () => (await waitingOnLock("generation_tasks", "skip locked")) === 0
          )
          process.stdout.write(
            `worker drain with a claim in flight: ${Math.round(drained.millis)} ms (exit ${drained.code})\n`
          )
          expect(drained.millis).toBeLessThan(10_000)
          expect(drained.code).toBe(0)
          expect(await count(ids, "lease_owner is null and status = 'pending'")).toBe(ids.length)
        } finally {
          await lock.end()
          await worker.stop()
        }
      },
      caseMillis
    )

    it(
      "hand-backs still waiting when the drain has begun land before the pool closes",
      async () => {
        const ids = await hangingTasks(6)
        const worker = await holdingWorker(ids)
        // The rows locked: every release the stopping worker sends waits until this ends.
        const rows = holdTransaction(
          bed.postgres.url,
          "select id from generation_tasks where id = any($1) for update",
          ids
        )
        try {
          await rows.holding
          const signalled = terminate(worker)
          await until(
            "the worker's hand-backs wait on the rows",
            async () => (await waitingOnLock("lease_owner = null")) > 0
          )
          // Time for the drain to move on and close the pool under its hand-backs, were it to.
          await sleep(500)
          await rows.end()
          const drained = await signalled
          process.stdout.write(
            `worker drain with its hand-backs held: ${Math.round(drained.millis)} ms (exit ${drained.code})\n`
          )
          expect(drained.millis).toBeLessThan(10_000)
          expect(drained.code).toBe(0)
          expect(await leased(ids)).toBe(0)
          expect(await count(ids, "status = 'pending'")).toBe(ids.length)
        } finally {
          await rows.end()
          await worker.stop()
        }
      },
      caseMillis
    )

    it(
      "a hand-back that fails is named in the drain's one line, and the exit code says so",
      async () => {
        const ids = await hangingTasks(6)
        const worker = await holdingWorker(ids)
        // Every hand-back of a lease (its reason is `worker stopped`) is refused from now on.
        await queryOn(
          bed.postgres.url,
          `
        create function refuse_hand_back() returns trigger language plpgsql as $$
        begin raise exception 'hand-back refused by the test'; end $$`
        )
        await queryOn(
          bed.postgres.url,
          `
        create trigger refuse_hand_back before update on generation_tasks for each row
        when (old.lease_owner is not null and new.lease_owner is null and new.last_error = 'worker stopped')
        execute function refuse_hand_back()`
        )
        try {
          const drained = await terminate(worker)
          const lines = worker
            .output()
            .split("\n")
            .filter((line) => line.includes(unreturnedMessage))
          process.stdout.write(
            `worker drain with its hand-backs refused: ${Math.round(drained.millis)} ms (exit ${drained.code})\n${lines.join("\n")}\n`
          )
          expect(drained.millis).toBeLessThan(10_000)
          expect(drained.code).toBe(leasesNotHandedBackExitCode)
          expect(lines).toHaveLength(1)
          for (const id of ids) expect(lines[0]).toContain(id)
          // Still leased: they come back when the lease expires.
          expect(await leased(ids)).toBe(ids.length)
        } finally {
          await queryOn(bed.postgres.url, "drop trigger if exists refuse_hand_back on generation_tasks")
          await queryOn(bed.postgres.url, "drop function if exists refuse_hand_back()")
          await worker.stop()
        }
      },
      caseMillis
    )
  })
})
