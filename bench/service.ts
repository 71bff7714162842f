/**
 * A Lyre service for one benchmark run: data of its own (a temporary directory, in postgres
 * mode a fresh database and Redis), a free port, its admin API, and removal of all of it.
 */
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { randomBase62 } from "@lyre/core"
import { startFakeUpstream } from "@lyre/fake-upstream"
import { makeLocalCredentials } from "../packages/provenance/src/index.ts"
import { freePort, postgresUrl, query, redisUrl, repositoryRoot, sleep } from "./support.ts"
import type { BenchRequest } from "./support.ts"

/** `postgres`: PostgreSQL + Redis, the production shape; `pglite`: the embedded default, limits in memory. */
export type BenchMode = "postgres" | "pglite"

/** A mode named in a script's switch; a misspelt one would otherwise run as PGlite under the wrong heading. */
export const parseBenchMode = (name: string): BenchMode => {
  if (name === "postgres" || name === "pglite") return name
  throw new Error(`unknown benchmark mode "${name}": postgres or pglite`)
}

export type Admin = (path: string, body: unknown) => Promise<Record<string, string>>

/** POSTs to the admin API of the service at `url`. */
export const adminOf =
  (url: string, adminToken: string): Admin =>
  async (path, body) => {
    const response = await fetch(`${url}/admin/v1${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    return (await response.json()) as Record<string, string>
  }

/**
 * One key per Ultra account, as many clients would have: each account's balance row is its own
 * lock. Credits and concurrency are ample enough that no run is ever refused for them.
 */
export const createAccountKeys = async (
  admin: Admin,
  count: number,
  scopes: ReadonlyArray<string>,
  prefix = "bench"
) => {
  const keys: Array<string> = []
  for (let i = 0; i < count; i++) {
    const account = await admin("/accounts", {
      email: `${prefix}-${i}@example.test`,
      plan: "ultra",
      subscription_credits: 2_000_000_000,
      concurrency_limit: 1_000_000
    })
    keys.push((await admin(`/accounts/${account["id"]}/keys`, { name: `${prefix}-${i}`, scopes }))["key"] ?? "")
  }
  return keys
}

/** The API benchmark's three endpoints: the names `pnpm bench` prints. */
export const endpoints = ["GET /v1/me", "GET task", "POST create"] as const
export type Endpoint = (typeof endpoints)[number]

/** The endpoints a comma-separated list names (BENCH_ENDPOINTS), in the benchmark's order; all when unset. */
export const endpointsNamed = (list: string | undefined): ReadonlyArray<Endpoint> => {
  if (list === undefined || list.trim() === "") return endpoints
  const names = list.split(",").map((name) => name.trim())
  const unknown = names.filter((name) => !endpoints.some((endpoint) => endpoint === name))
  if (unknown.length > 0)
    throw new Error(`unknown endpoints ${unknown.join(", ")}; the names are ${endpoints.join(", ")}`)
  return endpoints.filter((endpoint) => names.includes(endpoint))
}

/** Creates the one task that GET of a task reads, owned by `key`; returns its id. */
export const createTaskToRead = async (url: string, key: string): Promise<string> => {
  const response = await fetch(`${url}/api/v1/music/generations`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ style: "ambient", title: "Probe", instrumental: true })
  })
  return ((await response.json()) as { id: string }).id
}

/**
 * Each endpoint's request for connection i: its own key (one per account, round robin), except
 * GET of a task, whose one task belongs to the first key.
 */
export const requestsOf = (
  keys: ReadonlyArray<string>,
  taskId: string
): Record<Endpoint, (connection: number) => BenchRequest> => {
  const auth = (key: string) => ({ authorization: `Bearer ${key}` })
  const keyFor = (connection: number) => keys[connection % keys.length] ?? ""
  const body = JSON.stringify({ style: "synthwave, 110 bpm", title: "Bench", lyrics: "[Verse]\nla la la" })
  return {
    "GET /v1/me": (i) => ({ method: "GET", path: "/api/v1/me", headers: auth(keyFor(i)) }),
    "GET task": () => ({ method: "GET", path: `/api/v1/music/generations/${taskId}`, headers: auth(keyFor(0)) }),
    "POST create": (i) => ({
      method: "POST",
      path: "/api/v1/music/generations",
      headers: { ...auth(keyFor(i)), "content-type": "application/json" },
      body
    })
  }
}

/**
 * The provider of a service whose worker is off: a fake upstream that accepts every task at once
 * and never calls back, so what is measured is the API's own work. `env` is the service's side.
 */
export const startApiOnlyProvider = async () => {
  const apiKey = randomBase62(32)
  const upstream = await startFakeUpstream({ apiKey })
  upstream.control.setDefault({ callbacks: "none" })
  return {
    env: { WORKER: "off", PROVIDER: "http", PROVIDER_URL: upstream.url, PROVIDER_API_KEY: apiKey },
    close: () => upstream.close()
  }
}

export interface BenchData {
  readonly url: string
  readonly port: number
  readonly adminToken: string
  /** On PGlite the database lives in DATA_DIR. */
  readonly databaseUrl: string | undefined
  /** What every benchmark's service runs with: its data, port, secrets and no rate limit to speak of. */
  readonly env: Readonly<Record<string, string>>
  /** Drops the database and removes the data directory; the processes using them must be gone. */
  readonly remove: () => Promise<void>
}

/** A data directory, in postgres mode a fresh database too, and a free port, for one service. */
export const prepareBenchData = async (mode: BenchMode): Promise<BenchData> => {
  const dataDir = mkdtempSync(join(tmpdir(), "lyre-bench-"))
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const adminToken = randomBase62(32)
  const env: Record<string, string> = {
    PORT: String(port),
    PUBLIC_URL: url,
    DATA_DIR: dataDir,
    ADMIN_TOKEN: adminToken,
    SECRET_KEY: randomBase62(48),
    RATE_LIMIT_RPM: "100000000",
    LOG_LEVEL: "warn"
  }
  const databaseName = `lyre_bench_${randomBase62(10).toLowerCase()}`
  let databaseUrl: string | undefined
  if (mode === "postgres") {
    await query(postgresUrl, `create database ${databaseName}`)
    const database = new URL(postgresUrl)
    database.pathname = `/${databaseName}`
    databaseUrl = database.toString()
    env["DATABASE_URL"] = databaseUrl
    env["REDIS_URL"] = redisUrl
    // Production signs as the operator (decision 0131): a local pair stands in for the operator's.
    const signer = await makeLocalCredentials()
    env["C2PA_SIGNING_CERT"] = signer.chainPem
    env["C2PA_SIGNING_KEY"] = signer.keyPem
  }
  return {
    url,
    port,
    adminToken,
    databaseUrl,
    env,
    remove: async () => {
      if (databaseUrl !== undefined) await query(postgresUrl, `drop database if exists ${databaseName} with (force)`)
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

export interface LaunchOptions {
  /** Relative to the repository root. */
  readonly entry?: string
  readonly env: Readonly<Record<string, string>>
  /** For node itself, before the entry: `--cpu-prof` and its directory, say. */
  readonly nodeArgs?: ReadonlyArray<string>
  /** A command that runs node, before it: Valgrind and its options (instructions.ts), say. */
  readonly wrapper?: ReadonlyArray<string>
}

/**
 * The flags `pnpm start` and `pnpm worker` give node before their entry (package.json's
 * scripts), so that the benches run the service as its scripts do; any other entry (the bare
 * handler) gets none.
 */
export const scriptFlagsOf = (entry: string): ReadonlyArray<string> => {
  const { scripts = {} } = JSON.parse(readFileSync(join(repositoryRoot, "package.json"), "utf8")) as {
    readonly scripts?: Readonly<Record<string, string>>
  }
  const script = Object.values(scripts).find((command) => command.startsWith("node ") && command.endsWith(` ${entry}`))
  return script === undefined ? [] : script.split(" ").slice(1, -1)
}

/**
 * Starts `entry` (the service's `pnpm start` unless told) with this process's environment under
 * `env`. DATABASE_URL and REDIS_URL come from `env` alone: inherited ones would turn a PGlite
 * run into one on the machine's servers. The service's standard output is dropped unless
 * BENCH_SERVICE_STDOUT=1 (to read what node prints there, `--trace-gc` say).
 */
export const launchService = ({
  entry = "packages/server/src/main.ts",
  env,
  nodeArgs = [],
  wrapper = []
}: LaunchOptions): ChildProcess => {
  const { DATABASE_URL: _database, REDIS_URL: _redis, ...inherited } = process.env
  const [command = process.execPath, ...args] = [
    ...wrapper,
    process.execPath,
    ...scriptFlagsOf(entry),
    ...nodeArgs,
    join(repositoryRoot, entry)
  ]
  return spawn(command, args, {
    cwd: repositoryRoot,
    env: { ...inherited, ...env },
    stdio: ["ignore", process.env["BENCH_SERVICE_STDOUT"] === "1" ? "inherit" : "ignore", "inherit"]
  })
}

/**
 * Waits until `path` answers with anything below 500: `/readyz` answers 503 until the database
 * (and Redis) can be reached, and the bare server answers 401 to any request without a key.
 */
export const waitUntilServing = (child: ChildProcess, url: string, path: string, seconds = 60) =>
  waitUntilAnswering(url, path, () => child.exitCode, seconds)

/**
 * Until `path` answers below 500 (for /readyz: ready), for at most `seconds` (a minute unless
 * said); `exitCode` says the service has died (absent for a service in this process).
 */
export const waitUntilAnswering = async (
  url: string,
  path: string,
  exitCode: () => number | null = () => null,
  seconds = 60
) => {
  const deadline = Date.now() + seconds * 1000
  for (;;) {
    const code = exitCode()
    if (code !== null) throw new Error(`the service exited with ${code}`)
    if (Date.now() > deadline) throw new Error("the service did not start")
    if (
      await fetch(`${url}${path}`).then(
        (response) => response.status < 500,
        () => false
      )
    )
      return
    await sleep(100)
  }
}

/** SIGTERM, then the exit; at once for a process already gone. */
export const stopProcess = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
  })

export interface BenchServiceOptions {
  readonly mode: BenchMode
  /** The script's own settings (WORKER, PROVIDER, METRICS, ...), over the shared ones. */
  readonly env?: Readonly<Record<string, string>>
  readonly entry?: string
  readonly nodeArgs?: ReadonlyArray<string>
  /** `/readyz` (the default) waits for the database as well, `/healthz` for the listener alone. */
  readonly ready?: "/healthz" | "/readyz"
}

export interface BenchService extends Omit<BenchData, "remove"> {
  readonly child: ChildProcess
  readonly admin: Admin
  /** Stops the service, then drops its database and removes its data directory. */
  readonly close: () => Promise<void>
}

/** A Lyre service on data of its own, answering at `url`. */
export const startBenchService = async (options: BenchServiceOptions): Promise<BenchService> => {
  const { remove, ...data } = await prepareBenchData(options.mode)
  const env = { ...data.env, ...options.env }
  const child = launchService({ env, entry: options.entry, nodeArgs: options.nodeArgs })
  const close = async () => {
    await stopProcess(child)
    await remove()
  }
  try {
    await waitUntilServing(child, data.url, options.ready ?? "/readyz")
  } catch (error) {
    await close()
    throw error
  }
  return { ...data, env, child, admin: adminOf(data.url, data.adminToken), close }
}

/**
 * What an answer is, apart from its values: its status, the names of its headers (but those
 * Node adds to every answer), and its body's fields in order with each value's kind. The
 * baseline must answer each request with Lyre's shape (decision 0111): a smaller answer would
 * charge Lyre for the interface's headers and fields, which are not its layers.
 */
export const answerShape = (status: number, headers: Iterable<[string, string]>, body: string): string => {
  const nodeAdds = new Set(["connection", "date", "keep-alive", "transfer-encoding"])
  const names = [...headers]
    .map(([name]) => name.toLowerCase())
    .filter((name) => !nodeAdds.has(name))
    .sort()
  const shapeOf = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(shapeOf)
    if (value !== null && typeof value === "object") {
      return Object.entries(value).map(([key, field]) => [key, shapeOf(field)])
    }
    return value === null ? "null" : typeof value
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    parsed = body
  }
  return JSON.stringify({ status, headers: names, body: shapeOf(parsed) })
}

/**
 * Sends each endpoint's request once to both sides and fails, naming the endpoint and both
 * shapes, when their answers differ in shape (`answerShape`).
 */
const requireSameAnswers = async (
  lyreUrl: string,
  bareUrl: string,
  requests: Record<Endpoint, (connection: number) => BenchRequest>
) => {
  const shapeAt = async (url: string, request: BenchRequest) => {
    const response = await fetch(`${url}${request.path}`, {
      method: request.method,
      headers: request.headers,
      body: request.body
    })
    return answerShape(response.status, response.headers, await response.text())
  }
  for (const endpoint of endpoints) {
    const request = requests[endpoint](0)
    const [lyre, bare] = [await shapeAt(lyreUrl, request), await shapeAt(bareUrl, request)]
    if (lyre !== bare) {
      throw new Error(
        `the bare handler's answer to ${endpoint} is not shaped as Lyre's:\n  Lyre ${lyre}\n  bare ${bare}`
      )
    }
  }
}

/** One side of a comparison: where it answers, and its process, whose CPU is read. */
export interface BenchSide {
  readonly url: string
  readonly child: ChildProcess
}

export interface BothSides {
  readonly lyre: BenchSide
  readonly bare: BenchSide
  /** Each endpoint's request, the same for both sides (`requestsOf`). */
  readonly requests: Record<Endpoint, (connection: number) => BenchRequest>
  /** Stops both and removes their data. */
  readonly close: () => Promise<void>
}

/**
 * Lyre and the bare handler (bench/bare-server.ts) on the same data: `keyCount` accounts with a
 * key each and the one task GET of a task reads, both handing tasks to an upstream that accepts
 * at once and calls nothing back (the worker off, so what is measured is the API's own work).
 * Before it hands them over it requires the two to answer each endpoint in the same shape.
 * `selfCheck`: a second bare handler takes Lyre's place: `alone`, in a process of its own (an
 * A/A test of the measure), or `in-lyre`, inside a process that runs the whole of Lyre too
 * (bench/bare-in-lyre.ts, PostgreSQL only), whose ratio is what being Lyre's process costs the
 * same request, apart from Lyre's request path; `extraMicros`, with `alone`, has that twin burn so
 * many microseconds of CPU on every request, a known extra (decision 0116). `lyreNodeArgs`: flags
 * for Lyre's node, to measure a flag's effect paired.
 */
export const startBothSides = async (
  mode: BenchMode,
  keyCount: number,
  options: {
    readonly selfCheck?: "alone" | "in-lyre"
    readonly extraMicros?: number
    readonly lyreNodeArgs?: ReadonlyArray<string>
    readonly lyreEnv?: Readonly<Record<string, string>>
  } = {}
): Promise<BothSides> => {
  if (options.selfCheck === "in-lyre" && mode === "pglite") throw new Error("in-lyre: PostgreSQL only")
  const lyreNodeArgs = options.lyreNodeArgs ?? []
  const provider = await startApiOnlyProvider()
  const lyre = await startBenchService({ mode, env: { ...provider.env, ...options.lyreEnv }, nodeArgs: lyreNodeArgs })
  const copyDirs = [`${lyre.env["DATA_DIR"] ?? ""}-bare`, `${lyre.env["DATA_DIR"] ?? ""}-bare-twin`]
  let ours = lyre.child
  const bares: Array<ChildProcess> = []
  const close = async () => {
    for (const bare of bares) await stopProcess(bare)
    await stopProcess(ours)
    await lyre.close()
    await provider.close()
    for (const dir of copyDirs) rmSync(dir, { recursive: true, force: true })
  }
  /** A bare handler on the keys and the task Lyre made: on PGlite on a copy of its data, `copyDir`. */
  const startBare = async (
    copyDir: string,
    { entry = "bench/bare-server.ts", extraMicros = 0 }: { readonly entry?: string; readonly extraMicros?: number } = {}
  ) => {
    const bareEnv: Record<string, string> = {
      ...lyre.env,
      PORT: String(await freePort()),
      BARE_EXTRA_MICROS: String(extraMicros)
    }
    if (mode === "pglite") {
      cpSync(lyre.env["DATA_DIR"] ?? "", copyDir, { recursive: true })
      bareEnv["DATA_DIR"] = copyDir
    }
    const bare = launchService({ entry, env: bareEnv })
    bares.push(bare)
    const url = `http://127.0.0.1:${bareEnv["PORT"]}`
    await waitUntilServing(bare, url, "/api/v1/me")
    return { url, child: bare }
  }
  try {
    const keys = await createAccountKeys(lyre.admin, keyCount, ["music:generate"])
    const taskId = await createTaskToRead(lyre.url, keys[0] ?? "")
    // One PGlite directory serves one process: each bare handler gets a copy of the keys and the task.
    if (mode === "pglite" || options.selfCheck !== undefined) await stopProcess(lyre.child)
    const bare = await startBare(copyDirs[0] ?? "")
    const requests = requestsOf(keys, taskId)
    if (options.selfCheck !== undefined) {
      // bare-in-lyre opens its port once its own Lyre has served each endpoint for a few seconds.
      const twin = await startBare(
        copyDirs[1] ?? "",
        options.selfCheck === "in-lyre" ? { entry: "bench/bare-in-lyre.ts" } : { extraMicros: options.extraMicros ?? 0 }
      )
      await requireSameAnswers(twin.url, bare.url, requests)
      return { lyre: twin, bare, requests, close }
    }
    if (mode === "pglite") {
      ours = launchService({ env: lyre.env, nodeArgs: lyreNodeArgs })
      await waitUntilServing(ours, lyre.url, "/readyz")
    }
    await requireSameAnswers(lyre.url, bare.url, requests)
    return { lyre: { url: lyre.url, child: ours }, bare, requests, close }
  } catch (error) {
    await close()
    throw error
  }
}
