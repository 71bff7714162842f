/**
 * What the benchmark scripts share: SQL on a database by URL, free ports, percentiles, CPU time
 * of processes, and autocannon runs in which every connection keeps its own request. Starting
 * a Lyre service for a run is service.ts's.
 */
import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { parseEnv } from "node:util"
import { PgClient } from "@effect/sql-pg"
import autocannon from "autocannon"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export const repositoryRoot = join(import.meta.dirname, "..")
/** The server on which each PostgreSQL run creates its own database; the machine's local one unless set. */
export const postgresUrl = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"
export const redisUrl = process.env["REDIS_URL"] ?? "redis://127.0.0.1:6379"

export const runOn = <A>(url: string, program: Effect.Effect<A, unknown, SqlClient>) =>
  Effect.runPromise(
    Effect.scoped(Effect.provide(program, PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })))
  )

export const query = <A extends object>(url: string, text: string, ...params: ReadonlyArray<unknown>) =>
  runOn(
    url,
    SqlClient.use((sql) => sql.unsafe<A>(text, [...params]))
  )

export const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer()
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      probe.close(() => resolve(port))
    })
  })

export const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * What Linux /proc says a process has used so far: its CPU time in user space and in the kernel,
 * in ms, and its minor page faults. With `mainThread`, its main thread's alone (where
 * JavaScript runs), or with `thread` that thread's.
 * Zeros for a process that is gone. The kernel's total is exact; its split between user and
 * kernel is sampled at its tick, so only long runs say much of the split.
 */
export const usageOf = (
  pid: number | undefined,
  options: { readonly mainThread?: boolean; readonly thread?: number } = {}
): { readonly userMillis: number; readonly kernelMillis: number; readonly minorFaults: number } => {
  const gone = { userMillis: 0, kernelMillis: 0, minorFaults: 0 }
  if (pid === undefined) return gone
  // The fields after the command's closing parenthesis, the third field of stat(5) first.
  const fieldsOf = (path: string) => readFileSync(path, "utf8").split(") ")[1]?.split(" ") ?? []
  try {
    const thread = options.thread ?? (options.mainThread === true ? pid : undefined)
    const fields = fieldsOf(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`)
    // utime and stime count clock ticks, 100 a second.
    return {
      userMillis: Number(fields[11]) * 10,
      kernelMillis: Number(fields[12]) * 10,
      minorFaults: Number(fields[7])
    }
  } catch {
    return gone
  }
}

/** User plus kernel CPU time a process (or one of its threads, as `usageOf`) has used so far, in ms. */
export const cpuMillisOf = (
  pid: number | undefined,
  options: { readonly mainThread?: boolean; readonly thread?: number } = {}
): number => {
  const usage = usageOf(pid, options)
  return usage.userMillis + usage.kernelMillis
}

/**
 * The run time so far of every live thread of `pid`, in ns (0 for a process that is gone): the
 * same total as `cpuMillisOf`, read from `schedstat` to the nanosecond rather than in ticks of
 * 10 ms, for turns too short for ticks (paired.ts).
 */
export const cpuNanosOf = (pid: number | undefined): number => {
  if (pid === undefined) return 0
  let total = 0
  let threads: Array<string>
  try {
    threads = readdirSync(`/proc/${pid}/task`)
  } catch {
    return 0
  }
  for (const thread of threads) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, "utf8").split(" ")[0])
    } catch {
      // A thread that ended between the listing and the read: its time is in no later read either.
    }
  }
  return total
}

/** Flags for a node process from a setting's space-separated value (PROFILE_NODE_ARGS, BENCH_LYRE_NODE_ARGS). */
export const nodeArgsFrom = (setting: string | undefined): ReadonlyArray<string> =>
  (setting ?? "").split(" ").filter((arg) => arg !== "")

/** Environment variables from a setting's space-separated `NAME=value` pairs (PROFILE_ENV, BENCH_LYRE_ENV). */
export const envFrom = (setting: string | undefined): Readonly<Record<string, string>> => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(parseEnv((setting ?? "").replaceAll(" ", "\n")))) {
    if (value !== undefined) env[name] = value
  }
  return env
}

export interface BenchRequest {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly headers: Record<string, string>
  readonly body?: string
  /** A new body for every request, for a request that must not repeat (an A2A message's id). */
  readonly freshBody?: () => string
}

/**
 * An autocannon run in which connection i sends `requestFor(i)` over and over, as independent
 * clients would. A request list shared by all connections makes autocannon walk every
 * connection through it in lockstep, so all of them would queue on one account's row at a time.
 */
export const loadPerConnection = (
  url: string,
  options: {
    readonly connections: number
    readonly duration: number
    /** Requests per second of all connections together; absent, as fast as the service answers. */
    readonly overallRate?: number | undefined
    /** Sees every answer's body (to count errors a 200 carries, say). */
    readonly onBody?: (body: Buffer) => void
  },
  requestFor: (connection: number) => BenchRequest
) => {
  let next = 0
  const { onBody } = options
  return autocannon({
    url,
    connections: options.connections,
    duration: options.duration,
    ...(options.overallRate === undefined ? {} : { overallRate: options.overallRate }),
    setupClient: (client) => {
      const { freshBody, ...request } = requestFor(next++)
      client.setRequests([
        {
          ...request,
          headers: { ...request.headers },
          ...(freshBody === undefined
            ? {}
            : { setupRequest: (sent: autocannon.Request) => ({ ...sent, body: freshBody() }) })
        }
      ])
      if (onBody !== undefined) client.on("body", onBody)
    }
  })
}

/** Whether `command` runs here (`--version` answers): for the profiling aids' outside tools. */
export const commandAvailable = (command: string): boolean => {
  try {
    execFileSync(command, ["--version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}
