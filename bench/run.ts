/**
 * `pnpm bench`: Lyre against a bare node:http baseline doing the same SQL on the same driver,
 * on PGlite (embedded default) and on PostgreSQL + Redis (production), for GET /v1/me, GET of a
 * task and POST create. Prints requests per second, p50/p99 latency and the ratio to the
 * baseline; then runs the other packages' benchmarks when present.
 *
 * BENCH_SECONDS (default 8) sets each run's length; DATABASE_URL / REDIS_URL default to the
 * machine's local servers; BENCH_MODES=pglite,postgres picks the modes.
 */
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlClient } from "effect/sql/SqlClient"
import { randomBase62 } from "@lyre/core"
import { loadPerConnection, runOn } from "./support.ts"
import type { BenchRequest } from "./support.ts"
import { startFakeUpstream } from "@lyre/fake-upstream"

const root = join(import.meta.dirname, "..")
const seconds = Number(process.env["BENCH_SECONDS"] ?? "8")
const connections = Number(process.env["BENCH_CONNECTIONS"] ?? "32")
const postgresUrl = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"
const redisUrl = process.env["REDIS_URL"] ?? "redis://127.0.0.1:6379"
const modes = (process.env["BENCH_MODES"] ?? "pglite,postgres").split(",")
const keyCount = 32 // accounts, one key each

interface Figures {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly errors: number
}

const startProcess = async (file: string, env: Record<string, string>, port: number): Promise<ChildProcess> => {
  const child = spawn(process.execPath, [join(root, file)], {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), LOG_LEVEL: "warn" },
    stdio: ["ignore", "ignore", "inherit"]
  })
  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${file} exited with ${child.exitCode}`)
    if (Date.now() > deadline) throw new Error(`${file} did not start`)
    const up = await fetch(`http://127.0.0.1:${port}/api/v1/me`).then(() => true, () => false)
    if (up) return child
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

const stopProcess = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
  })

const load = async (url: string, requestFor: (connection: number) => BenchRequest): Promise<Figures> => {
  const run = (duration: number) => loadPerConnection(url, { connections, duration }, requestFor)
  // A short warm-up first, so neither side is measured while its JIT is still cold.
  await run(2)
  const result = await run(seconds)
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors + result.timeouts
  }
}

const admin = async (url: string, token: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${url}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return (await response.json()) as Record<string, string>
}

const endpoints = ["GET /v1/me", "GET task", "POST create"] as const
type Endpoint = (typeof endpoints)[number]

const measure = async (url: string, keys: ReadonlyArray<string>, taskId: string): Promise<Record<Endpoint, Figures>> => {
  const auth = (key: string) => ({ authorization: `Bearer ${key}` })
  const keyFor = (connection: number) => keys[connection % keys.length] ?? ""
  const me = await load(url, (i) => ({ method: "GET", path: "/api/v1/me", headers: auth(keyFor(i)) }))
  const task = await load(url, () => ({ method: "GET", path: `/api/v1/music/generations/${taskId}`, headers: auth(keyFor(0)) }))
  const body = JSON.stringify({ style: "synthwave, 110 bpm", title: "Bench", lyrics: "[Verse]\nla la la" })
  const create = await load(url, (i) => ({
    method: "POST",
    path: "/api/v1/music/generations",
    headers: { ...auth(keyFor(i)), "content-type": "application/json" },
    body
  }))
  return { "GET /v1/me": me, "GET task": task, "POST create": create }
}

const benchMode = async (mode: string) => {
  const dataDir = mkdtempSync(join(tmpdir(), "lyre-bench-"))
  const databaseName = `lyre_bench_${randomBase62(10).toLowerCase()}`
  const adminToken = randomBase62(32)
  const secretKey = randomBase62(48)
  // Both sides hand each task to an upstream that accepts at once and calls nothing back; the
  // worker is off, so what is measured is the API's own work.
  const upstreamKey = randomBase62(32)
  const upstream = await startFakeUpstream({ apiKey: upstreamKey })
  upstream.control.setDefault({ callbacks: "none" })
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    ADMIN_TOKEN: adminToken,
    SECRET_KEY: secretKey,
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
  const port = 18_000 + Math.floor(Math.random() * 1_000)
  const url = `http://127.0.0.1:${port}`
  try {
    const lyre = await startProcess("packages/server/src/main.ts", env, port)
    // One key per account, as many clients would be: each account's balance row is its own lock.
    const keys: Array<string> = []
    for (let i = 0; i < keyCount; i++) {
      const account = await admin(url, adminToken, "POST", "/accounts", {
        email: `bench-${i}@example.test`,
        plan: "ultra",
        subscription_credits: 2_000_000_000,
        concurrency_limit: 1_000_000
      })
      const key = await admin(url, adminToken, "POST", `/accounts/${account["id"]}/keys`, { name: `bench-${i}`, scopes: ["music:generate"] })
      keys.push(key["key"] ?? "")
    }
    const task = await fetch(`${url}/api/v1/music/generations`, {
      method: "POST",
      headers: { authorization: `Bearer ${keys[0]}`, "content-type": "application/json" },
      body: JSON.stringify({ style: "ambient", title: "Probe", instrumental: true })
    }).then((r) => r.json() as Promise<{ id: string }>)
    const ours = await measure(url, keys, task.id)
    await stopProcess(lyre)
    const bare = await startProcess("bench/bare-server.ts", env, port)
    const baseline = await measure(url, keys, task.id)
    await stopProcess(bare)
    return { ours, baseline }
  } finally {
    await upstream.close()
    rmSync(dataDir, { recursive: true, force: true })
    if (mode === "postgres") {
      await runOn(postgresUrl, SqlClient.use((sql) => sql.unsafe(`drop database if exists ${databaseName} with (force)`)))
    }
  }
}

const fmt = (n: number, digits = 0) => n.toFixed(digits).padStart(8)

process.stdout.write(`Lyre API benchmark: ${connections} connections, ${seconds} s per run, ${keyCount} keys\n`)
for (const mode of modes) {
  const { ours, baseline } = await benchMode(mode)
  process.stdout.write(`\n${mode === "postgres" ? "PostgreSQL + Redis" : "PGlite (embedded default) + memory limits"}\n`)
  process.stdout.write("endpoint        lyre req/s   p50 ms   p99 ms | bare req/s   p50 ms   p99 ms | ratio  errors\n")
  for (const endpoint of endpoints) {
    const a = ours[endpoint]
    const b = baseline[endpoint]
    const ratio = a.rps / b.rps
    process.stdout.write(
      `${endpoint.padEnd(14)} ${fmt(a.rps)}   ${fmt(a.p50, 1)} ${fmt(a.p99, 1)} |   ${fmt(b.rps)} ${fmt(b.p50, 1)} ${fmt(b.p99, 1)} | ${(ratio * 100).toFixed(0).padStart(4)}%  ${a.errors}/${b.errors}\n`
    )
    if (mode === "postgres") {
      const target = endpoint === "POST create" ? 1_000 : 4_000
      process.stdout.write(
        `  target: >= ${target} req/s (${a.rps >= target ? "met" : "NOT met"}), >= 70% of bare (${ratio >= 0.7 ? "met" : "NOT met"})\n`
      )
    }
  }
}

for (const extra of ["bench/agents-bench.ts", "bench/a2a-bench.ts", "bench/worker-bench.ts", "bench/webhooks-bench.ts", "bench/metrics-bench.ts", "bench/oauth-bench.ts", "packages/engine/bench/engine-bench.ts", "bench/engine-e2e-bench.ts"]) {
  if (!existsSync(join(root, extra))) continue
  process.stdout.write(`\n== ${extra}\n`)
  await new Promise<void>((resolve) => {
    const child = spawn(process.execPath, [join(root, extra)], { cwd: root, stdio: "inherit" })
    child.once("exit", () => resolve())
  })
}
