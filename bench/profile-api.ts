/**
 * A developer's aid, not part of `pnpm bench`: runs one endpoint of the API benchmark against
 * `pnpm start` (PostgreSQL + Redis, or with PROFILE_MODE=pglite the embedded default),
 * optionally under `--cpu-prof`, and prints CPU time per request of the service, of this
 * process (load and fake upstream) and of PostgreSQL + Redis.
 *
 * PROFILE_ENDPOINT=me|task|create, PROFILE_SECONDS (default 8), PROFILE_WARM (seconds of load before, default 2), PROFILE_DIR (write CPU
 * profiles there), PROFILE_BARE=1 (measure bench/bare-server.ts instead), PROFILE_ROLES=1 (CPU
 * per PostgreSQL process role, HOT updates, transactions per request), PROFILE_EXPLAIN=3ms (log
 * the plans of statements slower than that through auto_explain, when the server has it),
 * PROFILE_RATE (requests per second, for profiles of two services under the same load),
 * PROFILE_INTERVAL (the profiler's sampling interval in microseconds), PROFILE_STRACE=1 (system calls per request of the service, counted by `strace -c`: socket
 * writes and reads are most of a request's CPU, so their count says where it goes),
 * PROFILE_NODE_ARGS (flags for the service's node, space-separated: `--max-semi-space-size=32`, say),
 * PROFILE_ENV (more of the service's environment, space-separated: `METRICS=off`, say),
 * PROFILE_PERF=1 (sample the service's main thread on CPU with Linux `perf` over the measured
 * run and print its user-space CPU per request by package and by function, PROFILE_PERF_PACKAGES of
 * the packages (default 16) and PROFILE_PERF_ROWS of the functions, default 24: on-cpu.ts says why this, not `--cpu-prof`, is the one to read for
 * where CPU goes), PROFILE_CALLGRIND=1 (run the measured service under Valgrind's callgrind and
 * print the instructions a request of each of its threads and the main thread's top
 * PROFILE_CALLGRIND_ROWS functions, default 30: a count that does not drift with the machine,
 * instructions.ts says what it leaves out; counted, the service runs a hundred times slower, so
 * the measured run sends one request at a time, PROFILE_RATE applying to the warm-up only, and
 * the warm-up, uncounted, wants a few hundred a second for a minute (PROFILE_WARM_RATE=300
 * PROFILE_WARM=60): code V8 has not yet optimized executes many more instructions;
 * PROFILE_CALLGRIND_INCLUSIVE=1 adds the JavaScript functions by all they executed, callees
 * included; PROFILE_CALLGRIND_CACHE=1 simulates the host's caches as well and prints the main
 * thread's misses a request and the functions that miss most (callgrind models no TLB;
 * PROFILE_CALLGRIND_LL=1048576,16,64 models a core's L2 as the last level, not the shared L3);
 * PROFILE_CALLGRIND_BRANCHES=1 the same for the branch predictor's mispredictions;
 * PROFILE_CALLGRIND_CALLERS=Builtins_KeyedLoadIC_Megamorphic, say, the callers of one
 * function by its instructions for each), PROFILE_ALLOC=1 (sample what the service allocates
 * over the measured run through its inspector, objects later collected included, and print the
 * bytes a request and PROFILE_ALLOC_ROWS allocating functions, default 30: allocations.ts;
 * PROFILE_ALLOC_SURVIVORS=1 counts only what outlived a young-generation collection, the objects
 * promoted into the old space, which are what grows it and what its collections then visit;
 * PROFILE_ALLOC_CALLERS=push, say, adds what called the allocations of one function, three
 * frames deep; PROFILE_ALLOC_INTERVAL, bytes between samples, default 512: sampling that often slows the
 * service several times over, so at a rate near its capacity a sparser sample, 16384, say, keeps
 * the load, and with it what is in flight at a collection, what it was unsampled).
 * Besides the totals it prints the service's CPU per request by thread: the main thread, V8's
 * workers (garbage collection, compiling) and libuv's pool; the main thread's in user space and
 * in the kernel (`usageOf`), and the process's minor page faults. V8's workers are where a run that
 * is not yet warm shows: GET of a task at 400 per second cost 0.106-0.145 ms of their CPU a
 * request after 8 s of load and 0.035 after 40 s, the main thread moving far less.
 * Profiles are read against the bare handler's at the same PROFILE_RATE: at full speed the
 * profiler's own cost per sample brings the two sides' CPU per request together.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { randomBase62 } from "@lyre/core"
import { startFakeUpstream } from "@lyre/fake-upstream"
import { makeLocalCredentials } from "../packages/provenance/src/index.ts"
import { perfAvailable, recordOnCpu } from "./on-cpu.ts"
import { sampleAllocations } from "./allocations.ts"
import {
  callersOf,
  callgrindAvailable,
  callgrindCommand,
  collectorInstructions,
  countInstructions,
  functionsOf,
  removeCount
} from "./instructions.ts"
import {
  cpuMillisOf,
  envFrom,
  freePort,
  loadPerConnection,
  nodeArgsFrom,
  postgresUrl,
  query,
  redisUrl,
  usageOf
} from "./support.ts"
import {
  adminOf,
  createAccountKeys,
  createTaskToRead,
  launchService,
  parseBenchMode,
  requestsOf,
  stopProcess,
  waitUntilServing
} from "./service.ts"

const endpoint = process.env["PROFILE_ENDPOINT"] ?? "create"
const seconds = Number(process.env["PROFILE_SECONDS"] ?? "8")
const profileDir = process.env["PROFILE_DIR"]
/** PROFILE_BARE=1: set up with Lyre, then measure bench/bare-server.ts on the same database. */
const bare = process.env["PROFILE_BARE"] === "1"
const onCpu = process.env["PROFILE_PERF"] === "1"
if (onCpu && !perfAvailable()) {
  process.stderr.write("profile-api: PROFILE_PERF=1 needs Linux perf (Debian's linux-perf)\n")
  process.exit(2)
}
const counted = process.env["PROFILE_CALLGRIND"] === "1"
const countedInclusive = process.env["PROFILE_CALLGRIND_INCLUSIVE"] === "1"
const cacheSim = process.env["PROFILE_CALLGRIND_CACHE"] === "1"
const branchSim = process.env["PROFILE_CALLGRIND_BRANCHES"] === "1"
/** PROFILE_ALLOC=1: the measured service's inspector port, for sampling what it allocates. */
const inspectorPort = process.env["PROFILE_ALLOC"] === "1" ? await freePort() : null
if (counted && !callgrindAvailable()) {
  process.stderr.write("profile-api: PROFILE_CALLGRIND=1 needs Valgrind (Debian's valgrind)\n")
  process.exit(2)
}
const databaseName = `lyre_prof_${randomBase62(10).toLowerCase()}`
/** PROFILE_MODE=pglite: the embedded database (in the service's own process) and limits in memory. */
const embedded = parseBenchMode(process.env["PROFILE_MODE"] ?? "postgres") === "pglite"
if (!embedded) await query(postgresUrl, `create database ${databaseName}`)
if (process.env["PROFILE_EXPLAIN"] && !embedded) {
  await query(postgresUrl, `alter database ${databaseName} set session_preload_libraries = 'auto_explain'`)
  await query(
    postgresUrl,
    `alter database ${databaseName} set auto_explain.log_min_duration = '${process.env["PROFILE_EXPLAIN"]}'`
  )
}
const databaseUrl = new URL(postgresUrl)
databaseUrl.pathname = `/${databaseName}`
const upstream = await startFakeUpstream({ apiKey: "k" })
upstream.control.setDefault({ callbacks: "none" })
const port = await freePort()
const url = `http://127.0.0.1:${port}`
const adminToken = randomBase62(32)
const dataDir = mkdtempSync(join(tmpdir(), "lyre-prof-"))
/** Production signs as the operator (decision 0131): a local pair stands in for the operator's. */
const productionSigner = async () => {
  const signer = await makeLocalCredentials()
  return { C2PA_SIGNING_CERT: signer.chainPem, C2PA_SIGNING_KEY: signer.keyPem }
}
const childEnv = {
  PORT: String(port),
  DATA_DIR: dataDir,
  ...(embedded ? {} : { DATABASE_URL: databaseUrl.toString(), REDIS_URL: redisUrl, ...(await productionSigner()) }),
  ADMIN_TOKEN: adminToken,
  SECRET_KEY: randomBase62(48),
  RATE_LIMIT_RPM: "100000000",
  WORKER: "off",
  PROVIDER: "http",
  PROVIDER_URL: upstream.url,
  PROVIDER_API_KEY: "k",
  LOG_LEVEL: "warn",
  ...envFrom(process.env["PROFILE_ENV"])
}
const callgrindOut = join(dataDir, "callgrind.out")
/** `measured`: the service whose figures are printed, under callgrind when PROFILE_CALLGRIND=1. */
const launch = (entry: string, measured = true) =>
  launchService({
    entry,
    env: childEnv,
    wrapper:
      counted && measured
        ? callgrindCommand(callgrindOut, { branchSim, cacheSim, lastLevel: process.env["PROFILE_CALLGRIND_LL"] })
        : [],
    nodeArgs: [
      ...nodeArgsFrom(process.env["PROFILE_NODE_ARGS"]),
      ...(onCpu || (counted && measured) ? ["--perf-basic-prof"] : []),
      ...(inspectorPort !== null && measured ? [`--inspect=127.0.0.1:${inspectorPort}`] : []),
      ...(profileDir
        ? [
            "--cpu-prof",
            `--cpu-prof-dir=${profileDir}`,
            `--cpu-prof-interval=${process.env["PROFILE_INTERVAL"] ?? "1000"}`
          ]
        : [])
    ]
  })
// Under callgrind the service that sets up (accounts, keys, a task) is not the one measured.
let child = launch("packages/server/src/main.ts", !counted)
await waitUntilServing(child, url, "/readyz")
const keys = await createAccountKeys(adminOf(url, adminToken), 32, ["music:generate"])
const taskId = await createTaskToRead(url, keys[0] ?? "")
const entry = bare
  ? "bench/bare-server.ts"
  : (process.env["PROFILE_ENTRY"] ?? (counted ? "packages/server/src/main.ts" : undefined))
if (entry !== undefined) {
  await stopProcess(child)
  child = launch(entry)
  // Under callgrind, on a machine busy with other work, a start took more than a minute.
  await waitUntilServing(child, url, "/api/v1/me", counted ? 600 : 60)
}
const requests = requestsOf(keys, taskId)
const requestFor =
  endpoint === "me" ? requests["GET /v1/me"] : endpoint === "task" ? requests["GET task"] : requests["POST create"]
const overallRate = process.env["PROFILE_RATE"] === undefined ? undefined : Number(process.env["PROFILE_RATE"])
/** PROFILE_WARM_RATE: the warm-up's own rate (under callgrind, one the uncounted service can answer). */
const warmRate = process.env["PROFILE_WARM_RATE"] === undefined ? overallRate : Number(process.env["PROFILE_WARM_RATE"])
const run = (duration: number, rate = overallRate) =>
  loadPerConnection(url, { connections: 32, duration, overallRate: rate }, requestFor)
/**
 * Counted, one request at a time as fast as it is answered: with none waiting behind another,
 * no request's objects outlive it into the next collection because of a queue, and the idle
 * service's part of each request's count stays small.
 */
const measure = (duration: number) =>
  counted ? loadPerConnection(url, { connections: 1, duration }, requestFor) : run(duration)
const cpu = () => cpuMillisOf(child.pid)
/** CPU ms of the service's threads by name: the main thread, V8's workers (GC, compilation), libuv's pool. */
const threadCpu = (): Record<string, number> => {
  const out: Record<string, number> = {}
  const pid = child.pid
  if (pid === undefined) return out
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = Number(tid) === pid ? "main" : readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim()
      out[name] = (out[name] ?? 0) + cpuMillisOf(pid, { thread: Number(tid) })
    } catch {
      // gone
    }
  }
  return out
}
/**
 * Without tracing, which would slow the service and change how requests batch: the process's
 * read and write system calls (/proc/PID/io), and how often its main thread went to sleep
 * waiting (voluntary context switches, about one an idle turn of the event loop).
 */
const systemCalls = () => {
  const pid = child.pid
  const field = (text: string, name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(text)?.[1] ?? "0")
  if (pid === undefined) return { reads: 0, writes: 0, sleeps: 0 }
  const io = readFileSync(`/proc/${pid}/io`, "utf8")
  const status = readFileSync(`/proc/${pid}/task/${pid}/status`, "utf8")
  return { reads: field(io, "syscr"), writes: field(io, "syscw"), sleeps: field(status, "voluntary_ctxt_switches") }
}
await run(Number(process.env["PROFILE_WARM"] ?? "2"), warmRate)
// What the service spends with no request at all (timers, background fibers), per second.
const idleBefore = cpu()
await new Promise((resolve) => setTimeout(resolve, 3_000))
process.stdout.write(`idle: service CPU ${((cpu() - idleBefore) / 3).toFixed(1)} ms/s\n`)
const counting = counted && child.pid !== undefined ? countInstructions(child.pid, callgrindOut) : null
/** Busy and idle jiffies of the whole machine, and CPU ms of every postgres and redis process. */
const machine = () => {
  const [, ...fields] = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "").split(/\s+/)
  const values = fields.map(Number)
  const idle = (values[3] ?? 0) + (values[4] ?? 0)
  const total = values.reduce((a, b) => a + b, 0)
  let db = 0
  const byRole: Record<string, number> = {}
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const comm = readFileSync(`/proc/${pid}/comm`, "utf8").trim()
      if (comm !== "postgres" && comm !== "redis-server") continue
      const used = cpuMillisOf(Number(pid))
      db += used
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ")
      const role = cmd.includes("autovacuum")
        ? "autovacuum"
        : cmd.includes(databaseName)
          ? "ours"
          : cmd.includes("redis")
            ? "redis"
            : (/postgres: 15\/main: ([a-z ]+?)( |$)/.exec(cmd)?.[1] ?? "other")
      byRole[role] = (byRole[role] ?? 0) + used
    } catch {
      // gone
    }
  }
  return { busy: total - idle, total, db, byRole }
}
const commits = async () =>
  (
    await query<{ n: number }>(
      postgresUrl,
      `select (xact_commit + xact_rollback)::float8 as n from pg_stat_database where datname = '${databaseName}'`
    )
  )[0]?.n ?? 0
const commitsBefore = await commits()
const machineBefore = machine()
const strace =
  process.env["PROFILE_STRACE"] === "1"
    ? spawn("strace", ["-c", "-f", "-p", String(child.pid)], { stdio: ["ignore", "ignore", "pipe"] })
    : null
const straceReport =
  strace === null
    ? null
    : new Promise<string>((resolve) => {
        let text = ""
        strace.stderr?.on("data", (chunk: Buffer) => (text += chunk.toString()))
        strace.once("exit", () => resolve(text))
      })
const recording = onCpu && child.pid !== undefined ? recordOnCpu(child.pid, join(dataDir, "service.perf.data")) : null
const allocations =
  inspectorPort === null
    ? null
    : await sampleAllocations(inspectorPort, Number(process.env["PROFILE_ALLOC_INTERVAL"] ?? "512"))
const before = cpu()
const threadsBefore = threadCpu()
const splitBefore = usageOf(child.pid, { mainThread: true })
const faultsBefore = usageOf(child.pid).minorFaults
const callsBefore = systemCalls()
const ownBefore = process.cpuUsage()
counting?.start()
const result = await measure(seconds)
await recording?.stop()
const allocated = await allocations?.stop(process.env["PROFILE_ALLOC_CALLERS"])
const threadCounts = counting?.stop() ?? []
if (strace !== null && straceReport !== null) {
  strace.kill("SIGINT")
  const report = await straceReport
  const perRequest = report.split("\n").flatMap((line) => {
    const fields = line.trim().split(/\s+/)
    const name = fields.at(-1) ?? ""
    const calls = Number(fields[3])
    return fields.length >= 5 && Number.isFinite(calls) && /^[a-z_0-9]+$/.test(name)
      ? [`${name} ${(calls / result.requests.total).toFixed(2)}`]
      : []
  })
  process.stdout.write(
    `system calls per request (strace slows the service; counts, not CPU): ${perRequest.join(", ")}\n`
  )
}
const used = cpu() - before
const threadsAfter = threadCpu()
const splitAfter = usageOf(child.pid, { mainThread: true })
const faultsAfter = usageOf(child.pid).minorFaults
const callsAfter = systemCalls()
const mainUsed = (threadsAfter["main"] ?? 0) - (threadsBefore["main"] ?? 0)
const own = process.cpuUsage(ownBefore)
const machineAfter = machine()
if (process.env["PROFILE_ROLES"]) {
  const dbUrl = databaseUrl.toString()
  const hot = await query<{ relname: string; upd: number; hot: number; dead: number }>(
    dbUrl,
    "select relname, n_tup_upd::int as upd, n_tup_hot_upd::int as hot, n_dead_tup::int as dead from pg_stat_user_tables where relname in ('accounts', 'credential_inflight', 'generation_tasks')"
  )
  process.stdout.write(
    `updates (hot, dead): ${hot.map((r) => `${r.relname} ${r.upd} (${r.hot}, ${r.dead})`).join(", ")}\n`
  )
  process.stdout.write(
    `transactions per request: ${(((await commits()) - commitsBefore) / result.requests.total).toFixed(2)}\n`
  )
  const roles = Object.keys({ ...machineBefore.byRole, ...machineAfter.byRole })
  const perRole = roles.map(
    (r) =>
      `${r} ${(((machineAfter.byRole[r] ?? 0) - (machineBefore.byRole[r] ?? 0)) / result.requests.total).toFixed(3)}`
  )
  process.stdout.write(`${perRole.join(", ")} ms/request\n`)
}
process.stdout.write(
  `${endpoint}: ${result.requests.average} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, errors ${result.non2xx + result.errors}; service CPU ${(used / result.requests.total).toFixed(3)} ms/request (main thread ${(mainUsed / result.requests.total).toFixed(3)}), load + upstream ${((own.user + own.system) / 1000 / result.requests.total).toFixed(3)} ms/request, postgres + redis ${((machineAfter.db - machineBefore.db) / result.requests.total).toFixed(3)} ms/request, machine busy ${(((machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)) * 100).toFixed(0)}%\n`
)
process.stdout.write(
  `service threads, ms/request: ${Object.keys(threadsAfter)
    .sort()
    .map(
      (name) =>
        `${name} ${(((threadsAfter[name] ?? 0) - (threadsBefore[name] ?? 0)) / result.requests.total).toFixed(3)}`
    )
    .join(", ")}; ` +
    `main thread user ${((splitAfter.userMillis - splitBefore.userMillis) / result.requests.total).toFixed(3)}, ` +
    `kernel ${((splitAfter.kernelMillis - splitBefore.kernelMillis) / result.requests.total).toFixed(3)}; ` +
    `minor page faults a request ${((faultsAfter - faultsBefore) / result.requests.total).toFixed(2)}\n`
)
{
  const per = (key: "reads" | "writes" | "sleeps") =>
    ((callsAfter[key] - callsBefore[key]) / result.requests.total).toFixed(2)
  process.stdout.write(
    `system calls a request: reads ${per("reads")}, writes ${per("writes")}; main thread's sleeps ${per("sleeps")}\n`
  )
}
/** A table's rows: each value, formatted, right-aligned before its name; the first `count`. */
const rowsOf = (list: ReadonlyArray<readonly [string, number]>, count: number, format: (value: number) => string) =>
  list
    .slice(0, count)
    .map(([name, value]) => `  ${format(value).padStart(7)}  ${name}\n`)
    .join("")
if (allocated !== undefined) {
  const requests = result.requests.total
  process.stdout.write(
    `allocated a request (sampled, objects later collected included): ${(allocated.total / requests / 1024).toFixed(1)} KB\n` +
      `by allocating function, bytes a request:\n` +
      rowsOf(allocated.byFunction, Number(process.env["PROFILE_ALLOC_ROWS"] ?? "30"), (bytes) =>
        (bytes / requests).toFixed(0)
      ) +
      (allocated.byCallers.length === 0
        ? ""
        : `${process.env["PROFILE_ALLOC_CALLERS"]}'s callers, nearest first, bytes a request:\n` +
          rowsOf(allocated.byCallers, 12, (bytes) => (bytes / requests).toFixed(0)))
  )
}
if (recording !== null && child.pid !== undefined) {
  const summary = recording.summarize(child.pid, result.requests.total)
  const rows = (list: ReadonlyArray<readonly [string, number]>, count: number) =>
    rowsOf(list, count, (micros) => micros.toFixed(2))
  process.stdout.write(
    `on CPU (perf), main thread in user space: ${summary.total.toFixed(1)} µs/request; the kernel's, the rest of its ` +
      `${((mainUsed * 1000) / result.requests.total).toFixed(1)}\nby package, µs/request:\n${rows(summary.byPackage, Number(process.env["PROFILE_PERF_PACKAGES"] ?? "16"))}` +
      `by function, µs/request:\n${rows(summary.byFunction, Number(process.env["PROFILE_PERF_ROWS"] ?? "24"))}`
  )
}
/**
 * What the main thread executes with no request (timers, the metrics' samplers), a second,
 * counted after the run: at the few requests a second callgrind allows, it would be a large
 * share of each request's count. V8's helper threads are not corrected: what they do just
 * after a load (compiling) is not what they do during it.
 */
const idleSeconds = 10
let idleEvents: Readonly<Record<string, number>> = {}
if (counting !== null) {
  counting.start()
  await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000))
  const idle = counting.stop()
  idleEvents = idle[0]?.events ?? {}
  for (const dump of idle) rmSync(dump.file, { force: true })
}
if (threadCounts.length > 0 && child.pid !== undefined) {
  const requests = result.requests.total
  const [main] = threadCounts
  const others = threadCounts.slice(1).reduce((total, count) => total + count.instructions, 0)
  /** One event of the main thread a request, what the idle thread counts in as long taken out. */
  const perRequest = (event: string) =>
    ((main?.events[event] ?? 0) - ((idleEvents[event] ?? 0) / idleSeconds) * seconds) / requests
  const mainPerRequest = perRequest("Ir")
  const functions = main === undefined ? [] : functionsOf(main, child.pid)
  // Inclusive, V8's call builtins and libuv's loop contain everything: only JavaScript says where.
  const inclusive =
    main === undefined || !countedInclusive
      ? []
      : functionsOf(main, child.pid, { inclusive: true }).filter(([name]) => /\S \S+\.[cm]?[jt]s:\d+$/.test(name))
  const callersFor = process.env["PROFILE_CALLGRIND_CALLERS"]
  const callers = main === undefined || callersFor === undefined ? [] : callersOf(main, child.pid, callersFor)
  // The simulated misses a request, the idle main thread's taken out, and the functions that miss most.
  const missEvents = [
    ...(cacheSim ? ["I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw"] : []),
    ...(branchSim ? ["Bc", "Bcm", "Bi", "Bim"] : [])
  ]
  const misses = missEvents.map((name) => `${name} ${perRequest(name).toFixed(1)}`).join(", ")
  const pid = child.pid
  const byMisses = [...(cacheSim ? ["ILmr", "DLmr", "DLmw", "D1mr"] : []), ...(branchSim ? ["Bim", "Bcm"] : [])]
  const missTables =
    main === undefined ? [] : byMisses.map((event) => [event, functionsOf(main, pid, { event })] as const)
  if (main !== undefined) removeCount(main, child.pid)
  const collector = collectorInstructions(functions) / requests
  const shown = Number(process.env["PROFILE_CALLGRIND_ROWS"] ?? "30")
  const thousands = (instructions: number) => `${(instructions / 1000).toFixed(1)}k`
  const table = (list: ReadonlyArray<readonly [string, number]>) =>
    rowsOf(list, shown, (instructions) => (instructions / requests / 1000).toFixed(2))
  process.stdout.write(
    `instructions a request (callgrind): main thread ${thousands(mainPerRequest)} with its idle ` +
      `${thousands((idleEvents["Ir"] ?? 0) / idleSeconds)} a second taken out, of which the garbage collector ${thousands(collector)}, the rest ` +
      `${thousands(mainPerRequest - collector)}; other threads ${thousands(others / requests)}\n` +
      (misses === "" ? "" : `main thread's simulated events a request: ${misses}\n`) +
      missTables
        .map(
          ([event, list]) =>
            `main thread's functions by ${event} a request:\n${rowsOf(list, 12, (n) => (n / requests).toFixed(2))}`
        )
        .join("") +
      `main thread's functions by their own instructions, thousands a request:\n${table(functions)}` +
      (inclusive.length === 0
        ? ""
        : `main thread's JavaScript functions by all they executed, thousands a request:\n${table(inclusive)}`) +
      (callers.length === 0
        ? ""
        : `${callersFor ?? ""}'s callers by its instructions for each, thousands a request:\n${table(callers)}`)
  )
}
await stopProcess(child)
await upstream.close()
if (!embedded) await query(postgresUrl, `drop database if exists ${databaseName} with (force)`)
rmSync(dataDir, { recursive: true, force: true })
