/**
 * `pnpm bench`: Lyre against a bare node:http baseline doing the same SQL on the same driver,
 * on PGlite (embedded default) and on PostgreSQL + Redis (production), for GET /v1/me, GET of a
 * task and POST create. The goal is on CPU per request, the service process's (with PGlite the
 * embedded database's work is in both processes): throughput on a shared machine swings with
 * the other load, CPU time per request much less. Both processes run side by side on the same
 * data and take turns under the same load, a few short turns each, so a change in the
 * machine's load meets both alike. Prints, for each side, CPU microseconds per request and
 * requests per second, and Lyre's CPU as a multiple of the bare handler's (goal: at most 1.15
 * for reads, 1.10 for create); then runs the other benchmarks when present.
 *
 * BENCH_WARMUP (default 15) sets each side's warm-up per endpoint, in seconds, before any turn is
 * measured: V8 goes on compiling and optimising for 10-20 s of load in a process of Lyre's size,
 * on threads of its own whose CPU is the process's. After 2 s, Lyre's GET /v1/me cost 0.347 ms
 * of CPU a request against 0.262 for the bare handler (1.32); after 20 s, 0.277 against 0.246
 * (1.13), the main thread's share moving far less (0.257 to 0.237) than the rest (0.090 to 0.040).
 * BENCH_SECONDS (default 3) sets each turn's length, BENCH_ROUNDS (default 3) the turns each
 * side takes per endpoint; DATABASE_URL / REDIS_URL default to the machine's local servers;
 * BENCH_MODES=pglite,postgres picks the modes; BENCH_EXTRAS=0 skips the other benchmarks.
 * BENCH_RATE (requests per second, unset: as fast as each side answers) offers both sides the
 * same load: at full speed the faster side batches more (socket writes, pipelined statements
 * and Redis commands) and so pays less CPU per request for its speed alone.
 * Beside each ratio, the ratio of each round (one turn of each side) as a median and a range:
 * on this two-core guest a ratio moved by 0.1-0.3 between runs of the same code (decision 0099),
 * more than the goals' margins, and the range says how far one run can be trusted.
 */
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { cpuMillisOf, loadPerConnection, repositoryRoot } from "./support.ts"
import { endpoints, parseBenchMode, startBothSides } from "./service.ts"
import type { BenchRequest } from "./support.ts"
import type { BenchMode, BenchSide, Endpoint } from "./service.ts"

const warmupSeconds = Number(process.env["BENCH_WARMUP"] ?? "15")
const seconds = Number(process.env["BENCH_SECONDS"] ?? "3")
const rounds = Number(process.env["BENCH_ROUNDS"] ?? "3")
const connections = Number(process.env["BENCH_CONNECTIONS"] ?? "32")
const overallRate = process.env["BENCH_RATE"] === undefined ? undefined : Number(process.env["BENCH_RATE"])
const modes = (process.env["BENCH_MODES"] ?? "pglite,postgres").split(",").map(parseBenchMode)
const keyCount = 32 // accounts, one key each

interface Figures {
  readonly rps: number
  /** The service process's user + system CPU time per request, in microseconds. */
  readonly cpuMicros: number
  readonly errors: number
}

/**
 * Lyre's CPU per request over the bare handler's in each round (the two turns next to each
 * other), sorted: their spread is the measure's own, which on a shared machine can exceed the
 * goal's margin, so a ratio is printed with it.
 */
type RoundRatios = ReadonlyArray<number>

/** Both sides under the same load, in turns (the order alternating), their figures summed over the turns. */
const compare = async (sides: readonly [BenchSide, BenchSide], requestFor: (connection: number) => BenchRequest) => {
  const run = (side: BenchSide, duration: number) => loadPerConnection(side.url, { connections, duration, overallRate }, requestFor)
  // A warm-up first, so neither side is measured while V8 is still compiling it (BENCH_WARMUP).
  for (const side of sides) await run(side, warmupSeconds)
  const totals = sides.map(() => ({ cpuMillis: 0, requests: 0, seconds: 0, errors: 0 }))
  const ratios: Array<number> = []
  for (let round = 0; round < rounds; round++) {
    const perRequest = [0, 0]
    for (const index of round % 2 === 0 ? [0, 1] : [1, 0]) {
      const side = sides[index] as BenchSide
      const total = totals[index] as (typeof totals)[number]
      const before = cpuMillisOf(side.child.pid)
      const result = await run(side, seconds)
      const used = cpuMillisOf(side.child.pid) - before
      total.cpuMillis += used
      total.requests += result.requests.total
      total.seconds += result.duration
      total.errors += result.non2xx + result.errors + result.timeouts
      perRequest[index] = used / Math.max(1, result.requests.total)
    }
    ratios.push((perRequest[0] ?? 0) / Math.max(1e-9, perRequest[1] ?? 0))
  }
  const figures = totals.map((total): Figures => ({
    rps: total.requests / Math.max(1, total.seconds),
    cpuMicros: (total.cpuMillis * 1000) / Math.max(1, total.requests),
    errors: total.errors
  }))
  return { figures, ratios: ratios.sort((a, b) => a - b) }
}

const benchMode = async (mode: BenchMode) => {
  const sides = await startBothSides(mode, keyCount)
  try {
    const figures = {} as Record<Endpoint, { readonly ours: Figures; readonly bare: Figures; readonly ratios: RoundRatios }>
    for (const endpoint of endpoints) {
      const compared = await compare([sides.lyre, sides.bare], sides.requests[endpoint])
      const [a, b] = compared.figures
      figures[endpoint] = { ours: a as Figures, bare: b as Figures, ratios: compared.ratios }
    }
    return figures
  } finally {
    await sides.close()
  }
}

const fmt = (n: number, digits = 0) => n.toFixed(digits).padStart(8)
/** Lyre's CPU per request as a multiple of the bare handler's, at most this. */
const goalOf = (endpoint: Endpoint) => (endpoint === "POST create" ? 1.1 : 1.15)

/**
 * What each side waits on per request, the same for both (the bare handler runs Lyre's
 * statements and its rate limiter): the CPU compared is the work around the same round trips.
 */
const roundTrips = [
  "round trips per request, the same on both sides: GET /v1/me 1 statement, GET task 2, POST create 3 and the upstream's POST;",
  "  each also one rate-limit call to Redis (PGlite: counted in memory, no round trip). Lyre alone also records a key's",
  "  last use, one statement at most once a minute per key."
].join("\n")

process.stdout.write(
  `Lyre API benchmark: ${connections} connections${overallRate === undefined ? "" : ` offering ${overallRate} requests/s`}, ${rounds} turns of ${seconds} s per side and endpoint, ${keyCount} keys; ` +
    "CPU is the service process's, per request\n" + roundTrips + "\n"
)
for (const mode of modes) {
  const figures = await benchMode(mode)
  process.stdout.write(`\n${mode === "postgres" ? "PostgreSQL + Redis" : "PGlite (embedded default) + memory limits"}\n`)
  process.stdout.write(
    "endpoint        lyre CPU us/req  req/s | bare CPU us/req  req/s | CPU ratio (goal)        errors | rounds' ratios, median (range)\n"
  )
  for (const endpoint of endpoints) {
    const { ours: a, bare: b, ratios } = figures[endpoint]
    const ratio = a.cpuMicros / b.cpuMicros
    const goal = goalOf(endpoint)
    const median = ratios[Math.floor((ratios.length - 1) / 2)] ?? ratio
    process.stdout.write(
      `${endpoint.padEnd(14)}  ${fmt(a.cpuMicros)}  ${fmt(a.rps)} |  ${fmt(b.cpuMicros)}  ${fmt(b.rps)} | ` +
        `${ratio.toFixed(2).padStart(5)} (<= ${goal.toFixed(2)}, ${ratio <= goal ? "met" : "NOT met"})  ${a.errors}/${b.errors}` +
        ` | ${median.toFixed(2)} (${(ratios[0] ?? ratio).toFixed(2)}-${(ratios[ratios.length - 1] ?? ratio).toFixed(2)})\n`
    )
  }
}

const extras = process.env["BENCH_EXTRAS"] === "0" ? [] : [
  "bench/worker-bench.ts",
  "bench/agents-bench.ts",
  "bench/a2a-bench.ts",
  "bench/webhooks-bench.ts",
  "bench/metrics-bench.ts",
  "bench/oauth-bench.ts",
  "packages/engine/bench/engine-bench.ts",
  "packages/engine/bench/sound-bench.ts",
  "bench/engine-e2e-bench.ts",
  "bench/engine-tools-bench.ts",
  "bench/listen-bench.ts"
]
for (const extra of extras) {
  if (!existsSync(join(repositoryRoot, extra))) continue
  process.stdout.write(`\n== ${extra}\n`)
  await new Promise<void>((resolve) => {
    const child = spawn(process.execPath, [join(repositoryRoot, extra)], { cwd: repositoryRoot, stdio: "inherit" })
    child.once("exit", () => resolve())
  })
}
