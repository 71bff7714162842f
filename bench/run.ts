/**
 * `pnpm bench`: Lyre against a bare node:http baseline doing the same SQL on the same driver and
 * answering the same (bench/bare-server.ts), on PGlite (embedded default) and on PostgreSQL +
 * Redis (production), for GET /v1/me, GET of a task and POST create. The goal is on CPU per
 * request, the service process's (with PGlite the embedded database's work is in both
 * processes): Lyre's at most 1.2 times the bare handler's, reads and create alike, with its
 * libraries as published (record 0120).
 *
 * Both processes run side by side on the same data and take short turns under the same load,
 * many pairs of turns (paired.ts, decision 0111): on this virtual machine a process's CPU for
 * the same work moves by a third between one turn and the next, so a ratio is judged by the
 * median of its pairs, printed with their middle half (IQR) and the whole run's ratio. Each
 * endpoint is measured under two loads: `full speed`, BENCH_CONNECTIONS connections (default 32)
 * each sending its next request as its last is answered, then `steady`, requests evenly spaced at
 * BENCH_RATE a second, by default three quarters of what the slower side answered at full speed.
 * The ratio depends on the load. A lone request pays the wake-ups of its round trips, which both
 * sides pay alike (at 400 a second they were most of a request's CPU here); at full speed the
 * faster side batches more and pays less a request for its speed alone (decision 0104). The
 * steady load near saturation has neither bias (decision 0111), and the goals are judged there:
 * a handler known to cost 14-20 % more than the bare one (BENCH_SELF_CHECK_EXTRA) read 0.02-0.13
 * above that at full speed, where its rate was 9-17 % below the bare one's (decision 0116), so a
 * full-speed row prints its ratio and how far apart the rates were, not a verdict.
 *
 * BENCH_WARMUP (default 10) sets each side's warm-up per endpoint and load, in seconds, before any
 * turn is measured: V8 goes on compiling and optimising for 10-20 s of load in a process of
 * Lyre's size, on threads of its own whose CPU is the process's. BENCH_TURN_MS (default 1000)
 * sets a turn's length and BENCH_PAIRS (default 20) the pairs measured. DATABASE_URL / REDIS_URL
 * default to the machine's local servers; BENCH_MODES=pglite,postgres picks the modes and
 * BENCH_ENDPOINTS="POST create" (the names printed, comma-separated) the endpoints;
 * BENCH_EXTRAS=0 skips the other benchmarks, which run after these. BENCH_SELF_CHECK=1 puts a
 * second bare handler in Lyre's place: an A/A test, whose ratios say how far from 1 the measure
 * itself reads; BENCH_SELF_CHECK=in-lyre runs that handler inside a process running all of Lyre
 * (PostgreSQL only), which says what Lyre's process costs a request apart from its request path.
 * BENCH_SELF_CHECK_EXTRA=80, with BENCH_SELF_CHECK=1, has that second handler burn 80 µs of CPU on
 * every request: a handler known to cost that much more, so each load's ratio can be held to the
 * one it should read (printed beside it), and how far it departs is the measure's bias at that
 * load (decision 0116).
 * BENCH_LYRE_NODE_ARGS passes flags to Lyre's node and BENCH_LYRE_ENV settings to Lyre
 * (space-separated `NAME=value`: `METRICS=off`), to measure their effect paired.
 */
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { pairedCompare } from "./paired.ts"
import type { PairedResult } from "./paired.ts"
import { envFrom, nodeArgsFrom, repositoryRoot } from "./support.ts"
import { endpointsNamed, parseBenchMode, startBothSides } from "./service.ts"
import type { BenchMode, Endpoint } from "./service.ts"

const warmupSeconds = Number(process.env["BENCH_WARMUP"] ?? "10")
const turnMillis = Number(process.env["BENCH_TURN_MS"] ?? "1000")
const pairs = Number(process.env["BENCH_PAIRS"] ?? "20")
const connections = Number(process.env["BENCH_CONNECTIONS"] ?? "32")
const steadyRate = process.env["BENCH_RATE"] === undefined ? undefined : Number(process.env["BENCH_RATE"])
const modes = (process.env["BENCH_MODES"] ?? "pglite,postgres").split(",").map(parseBenchMode)
/** BENCH_ENDPOINTS: a comma-separated subset of the endpoints by their printed names ("POST create"), all unless set. */
const measured = endpointsNamed(process.env["BENCH_ENDPOINTS"])
/**
 * BENCH_SELF_CHECK=1: a second bare handler in Lyre's place, so a ratio's distance from 1 is the
 * measure's own; BENCH_SELF_CHECK=in-lyre: that handler inside a process running all of Lyre.
 */
const selfCheckSetting = process.env["BENCH_SELF_CHECK"]
const selfCheck = selfCheckSetting === "1" ? "alone" : selfCheckSetting === "in-lyre" ? "in-lyre" : undefined
if (selfCheckSetting !== undefined && selfCheck === undefined) {
  throw new Error(`BENCH_SELF_CHECK is 1 or in-lyre, not ${selfCheckSetting}`)
}
const extraMicros = Number(process.env["BENCH_SELF_CHECK_EXTRA"] ?? "0")
if (!(extraMicros >= 0) || (extraMicros > 0 && selfCheck !== "alone")) {
  throw new Error("BENCH_SELF_CHECK_EXTRA is a number of microseconds, with BENCH_SELF_CHECK=1")
}
const lyreNodeArgs = nodeArgsFrom(process.env["BENCH_LYRE_NODE_ARGS"])
const lyreEnv = envFrom(process.env["BENCH_LYRE_ENV"])
const keyCount = 32 // accounts, one key each

/** Unset, the steady load is this share of the slower side's requests a second at full speed. */
const steadyShare = 0.75

const benchMode = async (mode: BenchMode) => {
  const sides = await startBothSides(mode, keyCount, { selfCheck, extraMicros, lyreNodeArgs, lyreEnv })
  const measure = (endpoint: Endpoint, rate: number | undefined) =>
    pairedCompare(
      [
        { url: sides.lyre.url, pid: sides.lyre.child.pid },
        { url: sides.bare.url, pid: sides.bare.child.pid }
      ],
      sides.requests[endpoint],
      { rate, connections, turnMillis, pairs, warmSeconds: warmupSeconds }
    )
  try {
    const rows: Array<{ readonly load: string; readonly endpoint: Endpoint; readonly result: PairedResult }> = []
    for (const endpoint of measured) {
      // Full speed first: it says what rate both sides can take evenly spaced, below saturation.
      const fullSpeed = await measure(endpoint, undefined)
      const slower = Math.min(...fullSpeed.sides.map((side) => side.perSecond))
      const rate = steadyRate ?? Math.max(1, Math.round((slower * steadyShare) / 10) * 10)
      rows.push({ load: `steady ${rate}/s`, endpoint, result: await measure(endpoint, rate) })
      rows.push({ load: "full speed", endpoint, result: fullSpeed })
    }
    return rows
  } finally {
    await sides.close()
  }
}

const fmt = (n: number, digits = 0) => n.toFixed(digits).padStart(8)
/** Lyre's CPU per request as a multiple of the bare handler's, at most this. */
const goalOf = (_endpoint: Endpoint) => 1.2

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
  `Lyre API benchmark: ${pairs} pairs of ${turnMillis} ms turns per side, endpoint and load, after ${warmupSeconds} s of ` +
    `warm-up each; ${keyCount} keys; CPU is the service process's, per request\n` +
    roundTrips +
    "\n" +
    (selfCheck === undefined
      ? ""
      : `BENCH_SELF_CHECK=${selfCheckSetting}: both sides are the bare handler; the lyre columns are its twin's` +
        `${selfCheck === "in-lyre" ? ", inside a process running Lyre" : ""}` +
        `${extraMicros > 0 ? `, burning ${extraMicros} µs of CPU more a request (BENCH_SELF_CHECK_EXTRA)` : ""}\n`)
)
/**
 * What the twin burning BENCH_SELF_CHECK_EXTRA should read at a load. At the steady load, what
 * the burn's calibration says; it read 0.01-0.04 under that in every run (decision 0116), so at
 * full speed the extra the steady load measured is the reference: a ratio above it there is
 * the measure's own bias at full speed, which grows with the gap between the sides' rates.
 */
const knownExtra = (steady: boolean, bareMicros: number, steadyExtra: number | undefined): string =>
  steady || steadyExtra === undefined
    ? `should read ${((bareMicros + extraMicros) / bareMicros).toFixed(2)}`
    : `should read ${((bareMicros + steadyExtra) / bareMicros).toFixed(2)} (the steady load's ${steadyExtra.toFixed(0)} µs)`
/** The sorted ratios' value at fraction `at` of the way from the least to the greatest. */
const quantile = (sorted: ReadonlyArray<number>, at: number) =>
  sorted[Math.round(at * (sorted.length - 1))] ?? Number.NaN
for (const mode of modes) {
  const rows = await benchMode(mode)
  process.stdout.write(
    `\n${mode === "postgres" ? "PostgreSQL + Redis" : "PGlite (embedded default) + memory limits"}\n`
  )
  process.stdout.write(
    "endpoint       load            lyre CPU us/req  req/s | bare CPU us/req  req/s | CPU ratio, median of pairs (goal, steady)  IQR  whole run  errors\n"
  )
  /** The twin's extra µs a request as the steady load measured it, by endpoint (BENCH_SELF_CHECK_EXTRA). */
  const extraSeen = new Map<Endpoint, number>()
  for (const { load, endpoint, result } of rows) {
    const [a, b] = result.sides
    const median = quantile(result.ratios, 0.5)
    const steady = load.startsWith("steady")
    if (steady) extraSeen.set(endpoint, (median - 1) * b.micros)
    const goal = goalOf(endpoint)
    const verdict = steady
      ? `(<= ${goal.toFixed(2)}, ${median <= goal ? "met" : "NOT met"})`
      : `(rates ${(100 * (1 - Math.min(a.perSecond, b.perSecond) / Math.max(a.perSecond, b.perSecond))).toFixed(0)}% apart)`
    process.stdout.write(
      `${endpoint.padEnd(14)} ${load.padEnd(15)} ${fmt(a.micros)}  ${fmt(a.perSecond)} |  ${fmt(b.micros)}  ` +
        `${fmt(b.perSecond)} | ${median.toFixed(2).padStart(5)} ${verdict.padEnd(18)}` +
        `              ${quantile(result.ratios, 0.25).toFixed(2)}-${quantile(result.ratios, 0.75).toFixed(2)}  ` +
        `${(a.micros / b.micros).toFixed(2).padStart(5)}      ${a.errors}/${b.errors}` +
        (extraMicros > 0 ? `  known extra: ${knownExtra(steady, b.micros, extraSeen.get(endpoint))}` : "") +
        "\n"
    )
  }
}

const extras =
  process.env["BENCH_EXTRAS"] === "0"
    ? []
    : [
        "bench/worker-bench.ts",
        "bench/agents-bench.ts",
        "bench/a2a-bench.ts",
        "bench/webhooks-bench.ts",
        "bench/metrics-bench.ts",
        "bench/oauth-bench.ts",
        "packages/engine/bench/engine-bench.ts",
        "packages/engine/bench/sound-bench.ts",
        "bench/engine-e2e-bench.ts",
        "bench/first-audio-bench.ts",
        "bench/engine-tools-bench.ts",
        "bench/listen-bench.ts",
        "bench/listen-outside-bench.ts",
        "bench/content-credentials-bench.ts"
      ]
for (const extra of extras) {
  if (!existsSync(join(repositoryRoot, extra))) continue
  process.stdout.write(`\n== ${extra}\n`)
  await new Promise<void>((resolve) => {
    const child = spawn(process.execPath, [join(repositoryRoot, extra)], { cwd: repositoryRoot, stdio: "inherit" })
    child.once("exit", () => resolve())
  })
}
