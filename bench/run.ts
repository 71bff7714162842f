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
import { existsSync } from "node:fs"
import { join } from "node:path"
import { loadPerConnection, repositoryRoot } from "./support.ts"
import { createAccountKeys, launchService, parseBenchMode, startApiOnlyProvider, startBenchService, stopProcess, waitUntilServing } from "./service.ts"
import type { BenchRequest } from "./support.ts"
import type { BenchMode } from "./service.ts"

const seconds = Number(process.env["BENCH_SECONDS"] ?? "8")
const connections = Number(process.env["BENCH_CONNECTIONS"] ?? "32")
const modes = (process.env["BENCH_MODES"] ?? "pglite,postgres").split(",").map(parseBenchMode)
const keyCount = 32 // accounts, one key each

interface Figures {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly errors: number
}

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

const benchMode = async (mode: BenchMode) => {
  // Both sides hand each task to an upstream that accepts at once and calls nothing back; the
  // worker is off, so what is measured is the API's own work.
  const provider = await startApiOnlyProvider()
  const lyre = await startBenchService({ mode, env: provider.env })
  const { url } = lyre
  try {
    const keys = await createAccountKeys(lyre.admin, keyCount, ["music:generate"])
    const task = await fetch(`${url}/api/v1/music/generations`, {
      method: "POST",
      headers: { authorization: `Bearer ${keys[0]}`, "content-type": "application/json" },
      body: JSON.stringify({ style: "ambient", title: "Probe", instrumental: true })
    }).then((r) => r.json() as Promise<{ id: string }>)
    const ours = await measure(url, keys, task.id)
    await stopProcess(lyre.child)
    // The same port, settings and data, so the baseline serves the keys and the task just made.
    const bare = launchService({ entry: "bench/bare-server.ts", env: lyre.env })
    try {
      await waitUntilServing(bare, url, "/api/v1/me")
      return { ours, baseline: await measure(url, keys, task.id) }
    } finally {
      await stopProcess(bare)
    }
  } finally {
    await lyre.close()
    await provider.close()
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

for (const extra of ["bench/agents-bench.ts", "bench/a2a-bench.ts", "bench/worker-bench.ts", "bench/webhooks-bench.ts", "bench/metrics-bench.ts", "bench/oauth-bench.ts", "packages/engine/bench/engine-bench.ts", "packages/engine/bench/sound-bench.ts", "bench/engine-e2e-bench.ts", "bench/engine-tools-bench.ts"]) {
  if (!existsSync(join(repositoryRoot, extra))) continue
  process.stdout.write(`\n== ${extra}\n`)
  await new Promise<void>((resolve) => {
    const child = spawn(process.execPath, [join(repositoryRoot, extra)], { cwd: repositoryRoot, stdio: "inherit" })
    child.once("exit", () => resolve())
  })
}
