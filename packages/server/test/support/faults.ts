/**
 * Databases a fault test owns: its own `redis-server` and its own PostgreSQL cluster (`initdb`
 * and `pg_ctl` from the machine's PostgreSQL binaries), on free loopback ports in a temporary
 * directory, which the test may kill, stop and start again. A binary that is missing is an
 * error that says what to install: these tests never skip. Around them, what every fault test
 * sets up the same way: service processes on that cluster and a fake upstream (`startServiceBed`),
 * an account with room for a load, and the load itself.
 */
import { execFile, spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { connect, createServer } from "node:net"
import type { Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { startFakeUpstream } from "@lyre/fake-upstream"
import type { FakeUpstream } from "@lyre/fake-upstream"
import { adminCall, freePort } from "./processes.ts"
import { signingEnv } from "./signing.ts"

const run = promisify(execFile)

const missing = (what: string, how: string): never => {
  throw new Error(`The fault tests need ${what}, and this machine has none: ${how}. They do not skip.`)
}

const onPath = (name: string): string | undefined =>
  (process.env["PATH"] ?? "")
    .split(":")
    .map((dir) => join(dir, name))
    .find((path) => existsSync(path))

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export interface OwnRedis {
  readonly url: string
  readonly port: number
  /** kill -9: every connection drops at once. */
  readonly kill: () => Promise<void>
  /** SIGSTOP: connections stay open and nothing answers (a hung server). `resume` is SIGCONT. */
  readonly freeze: () => void
  readonly resume: () => void
  /** Starts it again on the same port (empty: nothing is persisted). */
  readonly start: () => Promise<void>
  readonly close: () => Promise<void>
}

/** A `redis-server` of the test's own, without persistence, on a free loopback port. */
export const startOwnRedis = async (): Promise<OwnRedis> => {
  const binary = onPath("redis-server") ?? missing("redis-server", "apt-get install -y redis-server")
  const port = await freePort()
  let child: ChildProcess | null = null
  const start = async () => {
    const started = spawn(binary, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    child = started
    let output = ""
    started.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()))
    const deadline = Date.now() + 10_000
    while (!output.includes("Ready to accept connections")) {
      if (started.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server did not start:\n${output}`)
      await sleep(20)
    }
  }
  const kill = async () => {
    const running = child
    child = null
    if (running === null || running.exitCode !== null) return
    const exited = new Promise((resolve) => running.once("exit", resolve))
    running.kill("SIGKILL")
    await exited
  }
  await start()
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill,
    freeze: () => child?.kill("SIGSTOP"),
    resume: () => child?.kill("SIGCONT"),
    start,
    close: kill
  }
}

export interface OwnPostgres {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` */
  readonly url: string
  /** A URL for database `name` on this cluster. */
  readonly urlOf: (name: string) => string
  /** `pg_ctl stop -m fast`: sessions are ended (57P01), new connections refused until `start`. */
  readonly stop: () => Promise<void>
  readonly start: () => Promise<void>
  readonly close: () => Promise<void>
}

/** The newest PostgreSQL under /usr/lib/postgresql, or wherever `initdb` is on the PATH. */
const postgresBin = (): string => {
  const root = "/usr/lib/postgresql"
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : []
  const newest = versions[0]
  if (newest !== undefined) return join(root, newest, "bin")
  const initdb = onPath("initdb") ?? missing("PostgreSQL's initdb and pg_ctl", "apt-get install -y postgresql")
  return initdb.slice(0, -"/initdb".length)
}

/**
 * initdb refuses to run as root, so as root the cluster belongs to the `postgres` user (through
 * `runuser`); as anyone else, to them.
 */
const asOwner = (command: string, args: ReadonlyArray<string>) => {
  if (process.getuid?.() !== 0) return { file: command, args: [...args] }
  const runuser =
    onPath("runuser") ?? missing("runuser (to run initdb as a non-root user)", "apt-get install -y util-linux")
  return { file: runuser, args: ["-u", "postgres", "--", command, ...args] }
}

const ownerIds = async (): Promise<{ uid: number; gid: number } | null> => {
  if (process.getuid?.() !== 0) return null
  const { stdout: uid } = await run("id", ["-u", "postgres"]).catch(() =>
    missing(
      "a `postgres` user to own the test cluster (initdb refuses root)",
      "apt-get install -y postgresql, or run the tests as a non-root user"
    )
  )
  const { stdout: gid } = await run("id", ["-g", "postgres"])
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) }
}

/** A PostgreSQL cluster of the test's own: trust auth, no fsync, loopback only, a free port. */
export const startOwnPostgres = async (): Promise<OwnPostgres> => {
  const bin = postgresBin()
  const dir = mkdtempSync(join(tmpdir(), "lyre-pg-"))
  const owner = await ownerIds()
  if (owner !== null) chownSync(dir, owner.uid, owner.gid)
  const data = join(dir, "data")
  const exec = async (command: string, args: ReadonlyArray<string>) => {
    const { file, args: full } = asOwner(join(bin, command), args)
    await run(file, full, { timeout: 60_000 })
  }
  await exec("initdb", ["-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"])
  const port = await freePort()
  const options =
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off ` +
    "-c full_page_writes=off -c max_connections=200 -c shared_buffers=32MB"
  const start = () => exec("pg_ctl", ["start", "-D", data, "-w", "-t", "30", "-l", join(dir, "log"), "-o", options])
  const stop = () => exec("pg_ctl", ["stop", "-D", data, "-m", "fast", "-w", "-t", "30"])
  await start()
  const urlOf = (name: string) => `postgres://postgres@127.0.0.1:${port}/${name}`
  return {
    url: urlOf("postgres"),
    urlOf,
    stop,
    start,
    close: async () => {
      await exec("pg_ctl", ["stop", "-D", data, "-m", "immediate", "-w", "-t", "30"]).catch(() => undefined)
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** One answer under load: when it was sent, what it was, how long it took. */
export interface Answer {
  readonly at: number
  readonly label: string
  readonly status: number
  readonly millis: number
  readonly retryAfter: string | null
  readonly body: string
}

/** Sends one request and notes its answer (status 0 for a connection that failed). */
export const timed = async (label: string, url: string, init: RequestInit = {}): Promise<Answer> => {
  const at = Date.now()
  const started = performance.now()
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(15_000) })
    const body = await res.text()
    return {
      at,
      label,
      status: res.status,
      millis: performance.now() - started,
      retryAfter: res.headers.get("retry-after"),
      body
    }
  } catch (error) {
    const cause = error instanceof Error && error.cause !== undefined ? ` (${String(error.cause)})` : ""
    return {
      at,
      label,
      status: 0,
      millis: performance.now() - started,
      retryAfter: null,
      body: `${String(error)}${cause}`
    }
  }
}

/** A load running in the background until `stop`. */
export interface Load {
  /** Ends every loop after the request it is on, and waits for them. */
  readonly stop: () => Promise<void>
}

/**
 * `workers` loops sending `next(worker)` until the load is stopped: a bounded, steady load.
 * `stopping` says whether it has been, for a loop that retries.
 */
export const steadyLoad = (workers: number, next: (worker: number, stopping: () => boolean) => Promise<void>): Load => {
  let stopped = false
  const stopping = () => stopped
  const running = Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      while (!stopped) await next(worker, stopping)
    })
  )
  return {
    stop: async () => {
      stopped = true
      await running
    }
  }
}

/** A create through `timed` (label "create"), under `idempotencyKey`. */
export const timedCreate = (
  base: string,
  headers: Record<string, string>,
  idempotencyKey: string,
  title: string
): Promise<Answer> =>
  timed("create", `${base}/api/v1/music/generations`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json", "idempotency-key": idempotencyKey },
    body: createBody(title)
  })

/** Summary of a set of answers for the test's output: count, statuses, slowest. */
export const describeAnswers = (answers: ReadonlyArray<Answer>): string => {
  const statuses = new Map<number, number>()
  for (const answer of answers) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
  const slowest = answers.reduce((max, answer) => Math.max(max, answer.millis), 0)
  return `${answers.length} answers (${[...statuses].map(([status, n]) => `${status}: ${n}`).join(", ")}), slowest ${Math.round(slowest)} ms`
}

/**
 * A PostgreSQL cluster, a fake upstream and a `DATA_DIR` of the test's own, and the environment
 * of `pnpm start` and `pnpm worker` processes on them, which share its admin token and secret key.
 */
export interface ServiceBed {
  readonly postgres: OwnPostgres
  readonly upstream: FakeUpstream
  readonly adminToken: string
  readonly dataDir: string
  /** The environment of a process listening on `port`; without `redisUrl`, no Redis. */
  readonly env: (
    port: number,
    options?: { readonly redisUrl?: string; readonly worker?: "inline" | "off" }
  ) => Record<string, string>
  readonly close: () => Promise<void>
}

export const startServiceBed = async (dataDirPrefix: string): Promise<ServiceBed> => {
  const providerApiKey = randomBytes(16).toString("hex")
  const adminToken = randomBytes(16).toString("hex")
  const secretKey = randomBytes(32).toString("hex")
  const dataDir = mkdtempSync(join(tmpdir(), dataDirPrefix))
  const [postgres, upstream, signing] = await Promise.all([
    startOwnPostgres(),
    startFakeUpstream({ apiKey: providerApiKey, audioBytes: 4096 }),
    signingEnv()
  ])
  return {
    postgres,
    upstream,
    adminToken,
    dataDir,
    env: (port, options = {}) => ({
      PORT: String(port),
      HOST: "127.0.0.1",
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      DATABASE_URL: postgres.url,
      // Empty is unset: without a Redis of the test's own, in-memory limits, whatever the runner's environment says.
      REDIS_URL: options.redisUrl ?? "",
      PROVIDER: "http",
      PROVIDER_URL: upstream.url,
      PROVIDER_API_KEY: providerApiKey,
      PROVIDER_POLL_SECONDS: "0.2",
      WORKER_LEASE_SECONDS: "2",
      ADMIN_TOKEN: adminToken,
      SECRET_KEY: secretKey,
      ...signing,
      WORKER: options.worker ?? "off",
      WEBHOOK_ALLOW_PRIVATE: "true",
      WEBHOOK_RETRY_DELAYS: "1,1,1,1,1",
      RATE_LIMIT_RPM: "100000",
      DATA_DIR: dataDir,
      LOG_LEVEL: "warn",
      CHECK_ANSWERS: "true"
    }),
    close: async () => {
      await upstream.close()
      await postgres.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

/** A Pro account with room for a load (credits, no concurrency ceiling to speak of) and a key. */
export const loadAccount = async (
  base: string,
  token: string
): Promise<{ readonly id: string; readonly key: string }> => {
  const account = await adminCall(base, token, "POST", "/accounts", {
    email: `faults-${Math.random().toString(36).slice(2)}@example.test`,
    plan: "pro",
    subscription_credits: 10_000_000,
    concurrency_limit: 100_000,
    requests_per_minute: 100_000
  })
  const key = await adminCall(base, token, "POST", `/accounts/${String(account["id"])}/keys`, {
    name: "faults",
    scopes: ["profile", "music:generate"]
  })
  return { id: String(account["id"]), key: String(key["key"]) }
}

/** A create's body: instrumental, so no lyrics are needed. */
export const createBody = (title: string): string => JSON.stringify({ style: "lo-fi piano", title, instrumental: true })

/** Until `/readyz` answers 200 (the process is up and its database reachable). */
export const waitReady = async (base: string, withinMs = 60_000): Promise<void> => {
  const deadline = Date.now() + withinMs
  while (Date.now() < deadline) {
    const ready = await fetch(`${base}/readyz`).then(
      (res) => res.status === 200,
      () => false
    )
    if (ready) return
    await sleep(100)
  }
  throw new Error(`${base} did not become ready within ${withinMs} ms`)
}

/** Runs one SQL statement on `url` over a connection of its own. */
export const queryOn = <A extends object>(
  url: string,
  text: string,
  ...params: ReadonlyArray<unknown>
): Promise<ReadonlyArray<A>> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.provide(
        SqlClient.use((sql) => sql.unsafe<A>(text, params)),
        PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })
      )
    )
  )

/**
 * A TCP proxy in front of a PostgreSQL cluster that can lose one answer: armed with a piece of
 * SQL, it lets the statement carrying it through, swallows what the server answers on that
 * connection until the server is ready for the next query (so the statement's implicit
 * transaction has committed), then cuts the connection. The client sees its connection lost with
 * its statement in flight: a commit whose answer was lost, as a network cut or a crash between
 * a commit and its answer leaves it.
 */
export interface AnswerLosingProxy {
  /** `postgres://postgres@127.0.0.1:PORT/postgres`, through the proxy. */
  readonly url: string
  /** Resolves once a statement carrying `text` committed and its connection was cut. */
  readonly loseAnswerTo: (text: string) => Promise<void>
  readonly close: () => Promise<void>
}

/** ReadyForQuery: `Z`, length 5, then the transaction status byte. */
const readyForQuery = Buffer.from([0x5a, 0, 0, 0, 5])

export const startAnswerLosingProxy = async (postgres: OwnPostgres): Promise<AnswerLosingProxy> => {
  const target = new URL(postgres.url)
  let armed: { readonly text: string; readonly cut: () => void } | null = null
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), "127.0.0.1")
    sockets.add(client)
    sockets.add(upstream)
    let losing: (() => void) | null = null
    client.on("data", (chunk: Buffer) => {
      if (armed !== null && losing === null && chunk.includes(armed.text)) {
        losing = armed.cut
        armed = null
      }
      upstream.write(chunk)
    })
    upstream.on("data", (chunk: Buffer) => {
      if (losing === null) {
        client.write(chunk)
        return
      }
      if (!chunk.includes(readyForQuery)) return
      const cut = losing
      client.destroy()
      upstream.destroy()
      cut()
    })
    const end = () => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    client.on("error", end).on("close", end)
    upstream.on("error", end).on("close", end)
  })
  const port = await freePort()
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  return {
    url: `postgres://postgres@127.0.0.1:${port}${target.pathname}`,
    loseAnswerTo: (text) => new Promise<void>((resolve) => (armed = { text, cut: resolve })),
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

export interface HeldTransaction {
  /** Resolves once `text` has run: whatever it locked stays locked until `end`. */
  readonly holding: Promise<void>
  /** Commits the transaction, releasing its locks. */
  readonly end: () => Promise<void>
}

/** Runs `text` in a transaction of its own and keeps the transaction open (and its locks held) until `end`. */
export const holdTransaction = (url: string, text: string, ...params: ReadonlyArray<unknown>): HeldTransaction => {
  let ran = (): void => undefined
  const holding = new Promise<void>((resolve) => (ran = resolve))
  let release = (): void => undefined
  const released = new Promise<void>((resolve) => (release = resolve))
  const finished = Effect.runPromise(
    Effect.scoped(
      Effect.provide(
        SqlClient.use((sql) =>
          sql.withTransaction(
            Effect.gen(function* () {
              yield* sql.unsafe(text, params)
              ran()
              yield* Effect.promise(() => released)
            })
          )
        ),
        PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })
      )
    )
  )
  return {
    holding: Promise.race([
      holding,
      finished.then(() => Promise.reject(new Error(`${text} ended before it was held`)))
    ]),
    end: async () => {
      release()
      await finished
    }
  }
}
