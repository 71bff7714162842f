/**
 * The cost of metrics: GET /api/v1/me on the service with `METRICS=on` (the default: the request
 * histogram, every counter) beside the same service with `METRICS=off` (every metric a no-op),
 * both running and loaded at the same time, each with its own data and 32 keys. Prints requests
 * per second and the service's CPU time per request, and the ratio of on to off (goal: at least
 * 95% of the throughput).
 *
 * BENCH_SECONDS (default 8) per run; BENCH_MODES=pglite,postgres as in bench/run.ts.
 */
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlClient } from "effect/sql/SqlClient"
import { randomBase62 } from "@lyre/core"
import { startFakeUpstream } from "@lyre/fake-upstream"
import { cpuMillisOf, freePort, loadPerConnection, runOn } from "./support.ts"

const root = join(import.meta.dirname, "..")
const seconds = Number(process.env["BENCH_SECONDS"] ?? "8")
const connections = Number(process.env["BENCH_CONNECTIONS"] ?? "32")
const postgresUrl = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"
const redisUrl = process.env["REDIS_URL"] ?? "redis://127.0.0.1:6379"
const modes = (process.env["BENCH_MODES"] ?? "pglite,postgres").split(",")
const keyCount = 32

const start = async (env: Record<string, string>, port: number): Promise<ChildProcess> => {
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

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
  })

const admin = async (url: string, token: string, path: string, body: unknown) => {
  const response = await fetch(`${url}/admin/v1${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return (await response.json()) as Record<string, string>
}

interface Figures {
  readonly rps: number
  readonly cpuMicrosPerRequest: number
  readonly errors: number
}

const measure = async (child: ChildProcess, url: string, keys: ReadonlyArray<string>, duration: number): Promise<Figures> => {
  const cpuBefore = cpuMillisOf(child.pid)
  const result = await loadPerConnection(url, { connections, duration }, (i) => ({
    method: "GET",
    path: "/api/v1/me",
    headers: { authorization: `Bearer ${keys[i % keys.length] ?? ""}` }
  }))
  const cpu = cpuMillisOf(child.pid) - cpuBefore
  return {
    rps: result.requests.average,
    cpuMicrosPerRequest: result.requests.total === 0 ? 0 : (cpu * 1000) / result.requests.total,
    errors: result.non2xx + result.errors + result.timeouts
  }
}

type Side = "on" | "off"

/** One service: its own data (PGlite directory or PostgreSQL database), port and keys. */
const startSide = async (mode: string, metrics: Side, upstreamUrl: string, upstreamKey: string) => {
  const dataDir = mkdtempSync(join(tmpdir(), "lyre-metrics-bench-"))
  const databaseName = `lyre_bench_${randomBase62(10).toLowerCase()}`
  const adminToken = randomBase62(32)
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    ADMIN_TOKEN: adminToken,
    SECRET_KEY: randomBase62(48),
    RATE_LIMIT_RPM: "100000000",
    WORKER: "off",
    PROVIDER: "http",
    PROVIDER_URL: upstreamUrl,
    PROVIDER_API_KEY: upstreamKey,
    METRICS: metrics
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
  const child = await start(env, port)
  const keys: Array<string> = []
  for (let i = 0; i < keyCount; i++) {
    const account = await admin(url, adminToken, "/accounts", { email: `metrics-${i}@example.test`, plan: "ultra" })
    const key = await admin(url, adminToken, `/accounts/${account["id"]}/keys`, { name: `bench-${i}`, scopes: ["profile"] })
    keys.push(key["key"] ?? "")
  }
  return {
    child,
    url,
    keys,
    close: async () => {
      await stop(child)
      rmSync(dataDir, { recursive: true, force: true })
      if (mode === "postgres") {
        await runOn(postgresUrl, SqlClient.use((sql) => sql.unsafe(`drop database if exists ${databaseName} with (force)`)))
      }
    }
  }
}

/**
 * Both services run at once, each loaded by its own connections at the same time: on a machine
 * shared with other work, whatever else runs weighs on both sides alike, which runs one after
 * the other cannot promise.
 */
const benchMode = async (mode: string) => {
  const upstreamKey = randomBase62(32)
  const upstream = await startFakeUpstream({ apiKey: upstreamKey })
  const sides: Array<Awaited<ReturnType<typeof startSide>>> = []
  try {
    const off = await startSide(mode, "off", upstream.url, upstreamKey)
    sides.push(off)
    const on = await startSide(mode, "on", upstream.url, upstreamKey)
    sides.push(on)
    // A short warm-up, so neither side is measured while its JIT is still cold.
    await Promise.all([measure(off.child, off.url, off.keys, 2), measure(on.child, on.url, on.keys, 2)])
    const [offFigures, onFigures] = await Promise.all([
      measure(off.child, off.url, off.keys, seconds),
      measure(on.child, on.url, on.keys, seconds)
    ])
    return { off: offFigures, on: onFigures }
  } finally {
    for (const side of sides) await side.close()
    await upstream.close()
  }
}

const fmt = (n: number, digits = 0) => n.toFixed(digits).padStart(8)

process.stdout.write(`Metrics cost, GET /api/v1/me: ${connections} connections per side, both sides at once for ${seconds} s\n`)
for (const mode of modes) {
  const { on, off } = await benchMode(mode)
  const ratio = on.rps / off.rps
  process.stdout.write(`\n${mode === "postgres" ? "PostgreSQL + Redis" : "PGlite (embedded default) + memory limits"}\n`)
  process.stdout.write("metrics   req/s   CPU us/req  errors\n")
  process.stdout.write(`off    ${fmt(off.rps)}   ${fmt(off.cpuMicrosPerRequest, 1)}  ${off.errors}\n`)
  process.stdout.write(`on     ${fmt(on.rps)}   ${fmt(on.cpuMicrosPerRequest, 1)}  ${on.errors}\n`)
  process.stdout.write(
    `ratio on/off: ${(ratio * 100).toFixed(1)}% of the throughput (goal >= 95%: ${ratio >= 0.95 ? "met" : "NOT met"}), ` +
      `${((on.cpuMicrosPerRequest / off.cpuMicrosPerRequest) * 100).toFixed(1)}% of the CPU per request\n`
  )
}
