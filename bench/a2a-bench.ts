/**
 * A2A `message/send` per second beside REST create, on one service and one database: the same
 * generation request (aether, 50 credits) over both surfaces, each connection with its own key.
 * The ratio is the adapter's cost: JSON-RPC parsing, the SDK's dispatch, and the Task rendering.
 * Goal: A2A at least 70% of REST.
 *
 * A2A_BENCH_MODE=postgres (default; DATABASE_URL / REDIS_URL default to the local servers) or
 * pglite; BENCH_SECONDS (default 8) and BENCH_CONNECTIONS (default 32) as in run.ts.
 */
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import autocannon from "autocannon"
import { SqlClient } from "effect/sql/SqlClient"
import { randomBase62 } from "@lyre/core"
import { startFakeUpstream } from "@lyre/fake-upstream"
import { freePort, runOn } from "./support.ts"
import type { BenchRequest } from "./support.ts"

const root = join(import.meta.dirname, "..")
const seconds = Number(process.env["BENCH_SECONDS"] ?? "8")
const connections = Number(process.env["BENCH_CONNECTIONS"] ?? "32")
const mode = process.env["A2A_BENCH_MODE"] ?? "postgres"
const postgresUrl = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"
const redisUrl = process.env["REDIS_URL"] ?? "redis://127.0.0.1:6379"
const keyCount = 32

const song = { style: "synthwave, 110 bpm", title: "Bench", lyrics: "[Verse]\nla la la" }

const startService = async (env: Record<string, string>, port: number): Promise<ChildProcess> => {
  const child = spawn(process.execPath, [join(root, "packages/server/src/main.ts")], {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), LOG_LEVEL: "warn" },
    stdio: ["ignore", "ignore", "inherit"]
  })
  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}`)
    if (Date.now() > deadline) throw new Error("the service did not start")
    if (await fetch(`http://127.0.0.1:${port}/healthz`).then(() => true, () => false)) return child
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

interface Figures {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  /** Non-2xx answers, transport errors, and (A2A) JSON-RPC error bodies. */
  readonly errors: number
}

/** Like `loadPerConnection`, and it also counts 200 answers whose body is a JSON-RPC error. */
const load = async (url: string, duration: number, requestFor: (connection: number) => BenchRequest): Promise<Figures> => {
  let next = 0
  let errorBodies = 0
  const result = await autocannon({
    url,
    connections,
    duration,
    setupClient: (client) => {
      const request = requestFor(next++)
      client.setRequests([{ ...request, headers: { ...request.headers } }])
      client.on("body", (body: Buffer) => {
        // A JSON-RPC error object; a task's own `"error":null` is not one.
        if (body.includes('"error":{"code"')) errorBodies++
      })
    }
  })
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors + result.timeouts + errorBodies
  }
}

const admin = async (url: string, token: string, path: string, body: unknown) => {
  const response = await fetch(`${url}/admin/v1${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return (await response.json()) as Record<string, string>
}

const dataDir = mkdtempSync(join(tmpdir(), "lyre-a2a-bench-"))
const databaseName = `lyre_a2a_bench_${randomBase62(10).toLowerCase()}`
const adminToken = randomBase62(32)
const upstreamKey = randomBase62(32)
const upstream = await startFakeUpstream({ apiKey: upstreamKey })
upstream.control.setDefault({ callbacks: "none" })
const env: Record<string, string> = {
  DATA_DIR: dataDir,
  ADMIN_TOKEN: adminToken,
  SECRET_KEY: randomBase62(48),
  RATE_LIMIT_RPM: "100000000",
  WORKER: "off",
  PROVIDER: "http",
  PROVIDER_URL: upstream.url,
  PROVIDER_API_KEY: upstreamKey
}
if (mode === "postgres") {
  await runOn(postgresUrl, SqlClient.use((sql) => sql.unsafe(`create database ${databaseName}`)))
  const url = new URL(postgresUrl)
  url.pathname = `/${databaseName}`
  env["DATABASE_URL"] = url.toString()
  env["REDIS_URL"] = redisUrl
}
const port = await freePort()
const url = `http://127.0.0.1:${port}`
let service: ChildProcess | undefined
try {
  service = await startService(env, port)
  const keys: Array<string> = []
  for (let i = 0; i < keyCount; i++) {
    const account = await admin(url, adminToken, "/accounts", {
      email: `a2a-bench-${i}@example.test`,
      plan: "ultra",
      subscription_credits: 2_000_000_000,
      concurrency_limit: 1_000_000
    })
    const key = await admin(url, adminToken, `/accounts/${account["id"]}/keys`, { name: `bench-${i}`, scopes: ["music:generate"] })
    keys.push(key["key"] ?? "")
  }
  const auth = (connection: number) => ({
    authorization: `Bearer ${keys[connection % keys.length] ?? ""}`,
    "content-type": "application/json"
  })
  const rest = (connection: number): BenchRequest => ({
    method: "POST",
    path: "/api/v1/music/generations",
    headers: auth(connection),
    body: JSON.stringify(song)
  })
  const a2a = (connection: number): BenchRequest => ({
    method: "POST",
    path: "/a2a",
    headers: auth(connection),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: connection,
      method: "message/send",
      params: { message: { kind: "message", role: "user", messageId: `bench-${connection}`, parts: [{ kind: "data", data: song }] } }
    })
  })
  // Warm both paths, then measure them in turns (REST, A2A, A2A, REST), so neither is always
  // the one that runs on the larger table or the busier machine.
  await load(url, 2, rest)
  await load(url, 2, a2a)
  const half = Math.max(1, Math.round(seconds / 2))
  const restFirst = await load(url, half, rest)
  const a2aFirst = await load(url, half, a2a)
  const a2aSecond = await load(url, half, a2a)
  const restSecond = await load(url, half, rest)
  const mean = (a: Figures, b: Figures): Figures => ({
    rps: (a.rps + b.rps) / 2,
    p50: (a.p50 + b.p50) / 2,
    p99: Math.max(a.p99, b.p99),
    errors: a.errors + b.errors
  })
  const restFigures = mean(restFirst, restSecond)
  const a2aFigures = mean(a2aFirst, a2aSecond)
  const ratio = a2aFigures.rps / restFigures.rps
  const fmt = (n: number, digits = 0) => n.toFixed(digits).padStart(8)
  process.stdout.write(
    `A2A message/send beside REST create: ${mode === "postgres" ? "PostgreSQL + Redis" : "PGlite + memory limits"}, ` +
      `${connections} connections, ${seconds} s per run, ${keyCount} keys\n`
  )
  process.stdout.write("surface                 req/s   p50 ms   p99 ms  errors\n")
  for (const [name, f] of [["REST create", restFigures], ["A2A message/send", a2aFigures]] as const) {
    process.stdout.write(`${name.padEnd(18)} ${fmt(f.rps)} ${fmt(f.p50, 1)} ${fmt(f.p99, 1)}  ${f.errors}\n`)
  }
  process.stdout.write(`ratio A2A / REST: ${(ratio * 100).toFixed(0)}% (goal >= 70%: ${ratio >= 0.7 ? "met" : "NOT met"})\n`)
} finally {
  if (service !== undefined && service.exitCode === null) {
    const exited = new Promise((resolve) => service?.once("exit", resolve))
    service.kill("SIGTERM")
    await exited
  }
  await upstream.close()
  rmSync(dataDir, { recursive: true, force: true })
  if (mode === "postgres") {
    await runOn(postgresUrl, SqlClient.use((sql) => sql.unsafe(`drop database if exists ${databaseName} with (force)`)))
  }
}
