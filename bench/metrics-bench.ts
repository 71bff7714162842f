/**
 * The cost of metrics: GET /api/v1/me on the service with `METRICS=on` (the default: the request
 * histogram, every counter) beside the same service with `METRICS=off` (every metric a no-op),
 * both running and loaded at the same time, each with its own data and 32 keys. Prints requests
 * per second and the service's CPU time per request, and the ratio of on to off (goal: at least
 * 95% of the throughput).
 *
 * BENCH_SECONDS (default 8) per run; BENCH_MODES=pglite,postgres as in bench/run.ts.
 */
import type { ChildProcess } from "node:child_process"
import { cpuMillisOf, loadPerConnection } from "./support.ts"
import { createAccountKeys, parseBenchMode, startApiOnlyProvider, startBenchService } from "./service.ts"
import type { BenchMode } from "./service.ts"

const seconds = Number(process.env["BENCH_SECONDS"] ?? "8")
const connections = Number(process.env["BENCH_CONNECTIONS"] ?? "32")
const modes = (process.env["BENCH_MODES"] ?? "pglite,postgres").split(",").map(parseBenchMode)
const keyCount = 32

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
const startSide = async (mode: BenchMode, metrics: Side, providerEnv: Readonly<Record<string, string>>) => {
  const service = await startBenchService({ mode, env: { ...providerEnv, METRICS: metrics }, ready: "/healthz" })
  try {
    return { ...service, keys: await createAccountKeys(service.admin, keyCount, ["profile"]) }
  } catch (error) {
    await service.close()
    throw error
  }
}

/**
 * Both services run at once, each loaded by its own connections at the same time: on a machine
 * shared with other work, whatever else runs weighs on both sides alike, which runs one after
 * the other cannot promise.
 */
const benchMode = async (mode: BenchMode) => {
  const provider = await startApiOnlyProvider()
  const sides: Array<Awaited<ReturnType<typeof startSide>>> = []
  try {
    const off = await startSide(mode, "off", provider.env)
    sides.push(off)
    const on = await startSide(mode, "on", provider.env)
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
    await provider.close()
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
