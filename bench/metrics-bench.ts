/**
 * The cost of metrics: GET /api/v1/me on the service with `METRICS=on` (the default: the request
 * histogram, every counter) beside the same service with `METRICS=off` (every metric a no-op),
 * both running, each with its own data and 32 keys, loaded in turn in rounds of 2 s. Prints
 * requests per second and the service's CPU time per request, and the ratio of on to off (goal:
 * at least 95% of the throughput).
 *
 * BENCH_SECONDS (default 8) per side; BENCH_MODES=pglite,postgres as in bench/run.ts.
 */
import type { ChildProcess } from "node:child_process"
import { cpuMillisOf, loadPerConnection } from "./support.ts"
import { createAccountKeys, parseBenchMode, startApiOnlyProvider, startBenchService } from "./service.ts"
import type { BenchMode } from "./service.ts"

const seconds = Number(process.env["BENCH_SECONDS"] ?? "8")
const connections = Number(process.env["BENCH_CONNECTIONS"] ?? "32")
/** Each side is measured for BENCH_SECONDS in all, in rounds of two seconds. */
const roundSeconds = 2
const rounds = Math.max(1, Math.round(seconds / roundSeconds))
const modes = (process.env["BENCH_MODES"] ?? "pglite,postgres").split(",").map(parseBenchMode)
const keyCount = 32

interface Figures {
  readonly rps: number
  readonly cpuMicrosPerRequest: number
  readonly errors: number
}

const measure = async (
  child: ChildProcess,
  url: string,
  keys: ReadonlyArray<string>,
  duration: number
): Promise<Figures> => {
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

/** Figures of several runs as one: requests and CPU summed, so the rate is over all of them. */
const combine = (runs: ReadonlyArray<Figures & { readonly requests: number }>): Figures => {
  const requests = runs.reduce((sum, run) => sum + run.requests, 0)
  const cpuMicros = runs.reduce((sum, run) => sum + run.cpuMicrosPerRequest * run.requests, 0)
  return {
    rps: runs.reduce((sum, run) => sum + run.rps, 0) / runs.length,
    cpuMicrosPerRequest: requests === 0 ? 0 : cpuMicros / requests,
    errors: runs.reduce((sum, run) => sum + run.errors, 0)
  }
}

/**
 * Both services stay up and are loaded in turn, in short rounds (off, on, off, on, ...), each
 * alone on the machine while measured: a drift of the machine or of the growing tables falls
 * on both sides alike, and neither competes with the other for the two cores (loading both at
 * once let the scheduler favour one by 10% either way from run to run).
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
    await measure(off.child, off.url, off.keys, 2)
    await measure(on.child, on.url, on.keys, 2)
    const offRuns: Array<Figures & { readonly requests: number }> = []
    const onRuns: Array<Figures & { readonly requests: number }> = []
    for (let round = 0; round < rounds; round++) {
      for (const [side, runs] of [
        [off, offRuns],
        [on, onRuns]
      ] as const) {
        const figures = await measure(side.child, side.url, side.keys, roundSeconds)
        runs.push({ ...figures, requests: figures.rps * roundSeconds })
      }
    }
    return { off: combine(offRuns), on: combine(onRuns) }
  } finally {
    for (const side of sides) await side.close()
    await provider.close()
  }
}

const fmt = (n: number, digits = 0) => n.toFixed(digits).padStart(8)

process.stdout.write(
  `Metrics cost, GET /api/v1/me: ${connections} connections, the two sides in turn, ${rounds} rounds of ${roundSeconds} s each\n`
)
for (const mode of modes) {
  const { on, off } = await benchMode(mode)
  const ratio = on.rps / off.rps
  process.stdout.write(
    `\n${mode === "postgres" ? "PostgreSQL + Redis" : "PGlite (embedded default) + memory limits"}\n`
  )
  process.stdout.write("metrics   req/s   CPU us/req  errors\n")
  process.stdout.write(`off    ${fmt(off.rps)}   ${fmt(off.cpuMicrosPerRequest, 1)}  ${off.errors}\n`)
  process.stdout.write(`on     ${fmt(on.rps)}   ${fmt(on.cpuMicrosPerRequest, 1)}  ${on.errors}\n`)
  process.stdout.write(
    `ratio on/off: ${(ratio * 100).toFixed(1)}% of the throughput (goal >= 95%: ${ratio >= 0.95 ? "met" : "NOT met"}), ` +
      `${((on.cpuMicrosPerRequest / off.cpuMicrosPerRequest) * 100).toFixed(1)}% of the CPU per request\n`
  )
}
