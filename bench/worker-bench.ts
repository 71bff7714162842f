/**
 * The worker's figures, on PostgreSQL + Redis (DATABASE_URL / REDIS_URL, defaulting to the
 * machine's local servers), with the fake upstream of `packages/fake-upstream` as the provider:
 *
 * 1. throughput: tasks per second from create to `ready`, the upstream answering at once
 *    (accept, callbacks text/first/complete straight away, record-info done at the first poll),
 *    files re-hosted included. Target: at least 300 per second.
 * 2. lag: from the upstream's `complete` callback to `ready`, with two 1 MB audio files to copy
 *    per task. Target: p99 under 250 ms.
 *
 * Throughput is measured three times: `pnpm start` with its inline worker; an API process
 * (WORKER=off) with a `pnpm worker` beside it; and the baseline of that pair, the bare handler
 * (`bare-server.ts`) with the bare worker (`bare-worker.ts`): the same statements, exchanges and
 * files a task, without Lyre's layers (decision 0119). The fake upstream and the load run in this
 * process; the service's CPU time per task is printed too, since on a shared two-core machine
 * it says more than the rate, with the CPU of PostgreSQL and Redis beside it (and the share of
 * the service's main thread, which bounds one process: its JavaScript runs on one core), and the
 * split run's CPU a task against the bare run's. One run after the other moves with the host, so
 * the ratio the worker is judged on comes after them: both up at once, taking turns under the same
 * load, the median of their pairs (`pairedAgainstBare`). WORKER_BENCH_TASKS (default 2000),
 * WORKER_BENCH_PAIRS (default 8, 0 skips the paired comparison), WORKER_BENCH_PAIR_TASKS (default
 * 400) and WORKER_BENCH_LAG_TASKS (default 200, 0 skips the lag run) size the runs;
 * WORKER_BENCH_MODES (`inline`, `split`, `bare`, default all three) picks the throughput runs.
 * WORKER_BENCH_ON_CPU=1 samples each service process on CPU during the measured run (perf,
 * decision 0106); WORKER_BENCH_CALLGRIND=1 counts the dedicated worker's instructions a task in
 * the split and bare runs (decision 0107), WORKER_BENCH_CALLGRIND_KEEP=1 keeping the dumps and
 * the perf map to read further.
 *
 * Beside each throughput figure is a baseline measured in the same run, just before it: the CPU
 * the kernel takes to create what a task stores (a directory and four files, written with the
 * storage's own synchronous calls) on the file system of the data directory. On this machine's
 * ext4 it swung within one morning from 0.05 to 0.55 ms per file created (0.02 ms on a tmpfs),
 * at its worst half the worker's CPU, so the service's CPU is also printed without it. TMPDIR
 * moves the data directories (and the baseline) to another file system.
 */
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync
} from "node:fs"
import { Agent, request as httpRequest } from "node:http"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { perfAvailable, recordOnCpu } from "./on-cpu.ts"
import {
  callgrindAvailable,
  callgrindCommand,
  collectorInstructions,
  countInstructions,
  functionsOf,
  removeCount
} from "./instructions.ts"
import type { ThreadCount } from "./instructions.ts"
import { cpuMillisOf, percentile, query, runOn } from "./support.ts"
import { startWorkerService } from "./worker-service.ts"
import type { WorkerMode, WorkerService } from "./worker-service.ts"
import { startFakeUpstream } from "@lyre/fake-upstream"
import type { FakeUpstream } from "@lyre/fake-upstream"

/** WORKER_BENCH_CALLGRIND=1: see `counted`; it also sizes the runs. */
const callgrindAsked = process.env["WORKER_BENCH_CALLGRIND"] === "1"
const throughputTasks = Number(process.env["WORKER_BENCH_TASKS"] ?? (callgrindAsked ? "300" : "2000"))
/**
 * Tasks run to the end before the throughput is measured (WORKER_BENCH_WARMUP_TASKS), so that
 * V8's compiling of the service is not counted as a task's CPU: without them, 1,000 tasks cost
 * 5.1-6.0 ms each and 4,000 tasks 4.6 ms.
 */
const warmupTasks = Number(process.env["WORKER_BENCH_WARMUP_TASKS"] ?? (callgrindAsked ? "500" : "1000"))
/** WORKER_BENCH_ON_CPU=1: each service process sampled on CPU by perf during the measured run (decision 0106). */
const onCpu = process.env["WORKER_BENCH_ON_CPU"] === "1" && perfAvailable()
/**
 * WORKER_BENCH_CALLGRIND=1: the dedicated worker under callgrind (decision 0107), counting only
 * the measured tasks: its instructions a task by thread and its functions, a figure that does not
 * drift with the host. Fewer tasks by default (500 warm-up, 300 measured): callgrind runs the
 * worker some fifty times slower.
 */
const counted = callgrindAsked && callgrindAvailable()
/** Where callgrind writes its dumps: a directory of its own, made only for a counted run. */
const callgrindDirectory = counted ? mkdtempSync(join(tmpdir(), "lyre-worker-callgrind-")) : ""
/** Each run's dumps under a name of its own: a later run's would overwrite some and leave others of the earlier's. */
const callgrindOutOf = (mode: WorkerMode) => join(callgrindDirectory, `${mode}.out`)
const lagTasks = Number(process.env["WORKER_BENCH_LAG_TASKS"] ?? "200")
const upstreamKey = "worker-bench-key"
/** Which throughput runs to make (WORKER_BENCH_MODES, default all three); 0 lag tasks skips the lag run. */
const modes = (process.env["WORKER_BENCH_MODES"] ?? "inline,split,bare").split(",")

const mapLimit = async <A>(items: number, limit: number, work: (index: number) => Promise<A>) => {
  const results: Array<A> = []
  let next = 0
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items) {
        const index = next++
        results[index] = await work(index)
      }
    })
  )
  return results
}

/**
 * CPU time of the machine's PostgreSQL and Redis processes, in ms: they share the two cores with
 * the service, so their cost per task belongs in the figures. Backends that exit between two
 * readings are not counted (the service's pool keeps its connections for the whole run).
 */
const databaseCpuMillis = (): number => {
  let sum = 0
  for (const entry of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(entry)) continue
    try {
      const comm = readFileSync(`/proc/${entry}/comm`, "utf8").trim()
      if (comm === "postgres" || comm === "redis-server") sum += cpuMillisOf(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return sum
}

/**
 * Databases and data directories of finished runs, removed once every run is over. Removing
 * thousands of files just before the next run is measured would charge it for them: on an ext4
 * without a journal (this machine's), creating a file scans past the inodes deleted in the
 * last minutes, which made the worker's file creation dominate its CPU in the second run.
 */
const leftovers: Array<() => Promise<void>> = []

/** A fresh database and the service against it (see `WorkerMode`), with the fake upstream as its provider. */
const startService = async (upstream: FakeUpstream, pollSeconds: number, mode: WorkerMode): Promise<WorkerService> => {
  const service = await startWorkerService(upstream, {
    mode,
    pollSeconds,
    upstreamKey,
    nodeArgs: [
      ...(process.env["WORKER_BENCH_PROFILE"] ? ["--cpu-prof", "--cpu-prof-dir=/tmp/lyre-worker-prof"] : []),
      ...(onCpu || counted ? ["--perf-basic-prof"] : [])
    ],
    workerWrapper: counted ? callgrindCommand(callgrindOutOf(mode)) : []
  })
  return { ...service, stop: () => service.stop().then(() => void leftovers.push(service.remove)) }
}

/** The load's connections, kept alive: node:http costs the load a fraction of what fetch does. */
const loadAgent = new Agent({ keepAlive: true, maxSockets: 64 })

const create = (service: WorkerService, index: number, title: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const body = JSON.stringify({ style: "synthwave, 110 bpm", title, lyrics: "[Verse]\nla la la" })
    const request = httpRequest(
      `${service.url}/api/v1/music/generations`,
      {
        method: "POST",
        agent: loadAgent,
        headers: {
          authorization: `Bearer ${service.keys[index % service.keys.length]}`,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body)
        }
      },
      (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("error", reject)
        response.on("end", () => {
          const answer = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id?: string }
          if (response.statusCode !== 202 || answer.id === undefined)
            reject(new Error(`create answered ${response.statusCode}`))
          else resolve(answer.id)
        })
      }
    )
    request.on("error", reject)
    request.end(body)
  })

/**
 * CPU ms per task of creating a task's stored files on the data directory's file system: a
 * directory, then two 64 KiB tracks and two small images, each written to a temporary name and
 * renamed into place, as the file storage does. Removed with the other leftovers, at the end.
 */
const fileCreationBaseline = (tasks = 300): number => {
  const root = mkdtempSync(join(tmpdir(), "lyre-fs-baseline-"))
  leftovers.push(() => Promise.resolve(rmSync(root, { recursive: true, force: true })))
  const sizes = [64 * 1024, 64 * 1024, 2 * 1024, 2 * 1024]
  const bytes = Buffer.alloc(64 * 1024, 1)
  const before = process.cpuUsage()
  for (let task = 0; task < tasks; task++) {
    const directory = join(root, `task-${task}`)
    mkdirSync(directory, { recursive: true })
    sizes.forEach((size, index) => {
      const path = join(directory, `file-${index}`)
      const fd = openSync(`${path}.tmp`, "w")
      writeSync(fd, bytes, 0, size)
      closeSync(fd)
      renameSync(`${path}.tmp`, path)
    })
  }
  const used = process.cpuUsage(before)
  return (used.user + used.system) / 1000 / tasks
}

/** Creates `count` tasks (64 at a time) and waits until every task of the service is past `pending`. */
const runToTheEnd = async (service: WorkerService, count: number, label: string) => {
  await mapLimit(count, 64, (index) => create(service, index, `${label} ${index}`))
  await runOn(
    service.databaseUrl,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const deadline = performance.now() + 300_000
      while (performance.now() < deadline) {
        const [row] = yield* sql<{
          n: number
        }>`select count(*)::int as n from generation_tasks where status = 'pending'`
        if ((row?.n ?? 0) === 0) return
        yield* Effect.sleep(20)
      }
      throw new Error(`${label}: tasks still pending after 300 s`)
    })
  )
}

const throughput = async (mode: WorkerMode) => {
  const split = mode !== "inline"
  const filesBaseline = fileCreationBaseline()
  const upstream = await startFakeUpstream({ apiKey: upstreamKey })
  const service = await startService(upstream, 5, mode)
  try {
    await runToTheEnd(service, warmupTasks, "Warm-up")
    const [warmedUp] = await query<{ n: number }>(
      service.databaseUrl,
      "select count(*)::int as n from generation_tasks where status = 'ready'"
    )
    const cpuBefore = service.cpuMillis()
    const eachBefore = service.cpuMillisEach()
    const usageBefore = service.usageEach()
    const mainBefore = service.mainThreadCpuMillisEach()
    const databaseBefore = databaseCpuMillis()
    const ownBefore = process.cpuUsage()
    const workerPid = service.pids[1] ?? 0
    const counting = counted && split ? countInstructions(workerPid, callgrindOutOf(mode)) : null
    counting?.start()
    const recordings = onCpu
      ? service.pids.map((pid, index) => recordOnCpu(pid, join(tmpdir(), `lyre-worker-on-cpu-${index}.data`)))
      : []
    const started = performance.now()
    // Counting runs alongside the load on one connection (a connection per count would fork a
    // backend every 50 ms, which the database CPU figure would then include).
    let created = started
    let databaseAfter = databaseBefore
    const [done] = await Promise.all([
      runOn(
        service.databaseUrl,
        Effect.gen(function* () {
          const sql = yield* SqlClient
          while (true) {
            const [row] = yield* sql<{
              n: number
            }>`select count(*)::int as n from generation_tasks where status <> 'pending'`
            const n = row?.n ?? 0
            if (n >= warmupTasks + throughputTasks || performance.now() - started > 300_000) {
              // Read while this connection's backend still counts among the database's processes.
              databaseAfter = databaseCpuMillis()
              return n
            }
            yield* Effect.sleep(50)
          }
        })
      ),
      mapLimit(throughputTasks, 64, (index) => create(service, index, `Throughput ${index}`)).then(() => {
        created = performance.now()
      })
    ])
    const finished = performance.now()
    for (const recording of recordings) await recording.stop()
    const instructions = counting === null ? null : instructionsOf(counting.stop(), workerPid, throughputTasks)
    const onCpuSummaries = recordings.map((recording, index) =>
      recording.summarize(service.pids[index] ?? 0, throughputTasks)
    )
    const databaseCpu = databaseAfter - databaseBefore
    const [ready] = await query<{ n: number }>(
      service.databaseUrl,
      "select count(*)::int as n from generation_tasks where status = 'ready'"
    )
    const perSecond = ((done - warmupTasks) / (finished - started)) * 1000
    return {
      cpuPerTask: (service.cpuMillis() - cpuBefore) / throughputTasks,
      cpuPerTaskEach: service
        .cpuMillisEach()
        .map((millis, index) => (millis - (eachBefore[index] ?? 0)) / throughputTasks),
      kernelShareEach: service.usageEach().map((usage, index) => {
        const before = usageBefore[index] ?? { userMillis: 0, kernelMillis: 0 }
        const kernel = usage.kernelMillis - before.kernelMillis
        return kernel / (kernel + usage.userMillis - before.userMillis)
      }),
      mainThreadPerTaskEach: service
        .mainThreadCpuMillisEach()
        .map((millis, index) => (millis - (mainBefore[index] ?? 0)) / throughputTasks),
      databaseCpuPerTask: databaseCpu / throughputTasks,
      benchCpuPerTask: (() => {
        const own = process.cpuUsage(ownBefore)
        return (own.user + own.system) / 1000 / throughputTasks
      })(),
      filesBaseline,
      onCpuSummaries,
      instructions,
      tasks: throughputTasks,
      ready: (ready?.n ?? 0) - (warmedUp?.n ?? 0),
      createSeconds: (created - started) / 1000,
      totalSeconds: (finished - started) / 1000,
      perSecond
    }
  } finally {
    await service.stop()
    await upstream.close()
  }
}

/** Tasks on each side in one turn of the paired comparison, and how many pairs of turns. */
const pairTasks = Number(process.env["WORKER_BENCH_PAIR_TASKS"] ?? "400")
const pairs = Number(process.env["WORKER_BENCH_PAIRS"] ?? "8")

/** CPU a task, in ms, of a whole service and of its worker. */
interface Figures {
  readonly service: number
  readonly worker: number
}

/**
 * The split service and its bare baseline at once, on one fake upstream, warmed up, then taking
 * turns of `pairTasks` tasks each (A B, then B A), as the API's comparison does (paired.ts): a
 * drift of the host falls on both sides of a pair alike, and the median of the pairs' ratios is
 * not moved by one bad turn. CPU a task of the whole service and of the worker, per pair.
 */
const pairedAgainstBare = async () => {
  const upstream = await startFakeUpstream({ apiKey: upstreamKey })
  const sides = [await startService(upstream, 5, "split"), await startService(upstream, 5, "bare")] as const
  try {
    for (const [index, side] of sides.entries()) await runToTheEnd(side, warmupTasks, `Warm-up ${index}`)
    const turn = async (side: WorkerService, label: string): Promise<Figures> => {
      const before = side.cpuMillisEach()
      await runToTheEnd(side, pairTasks, label)
      const after = side.cpuMillisEach().map((millis, index) => (millis - (before[index] ?? 0)) / pairTasks)
      return { service: after.reduce((sum, millis) => sum + millis, 0), worker: after[1] ?? 0 }
    }
    /** Each side's figures, turn by turn: [Lyre's, the bare pair's] for every pair. */
    const turns: Array<readonly [Figures, Figures]> = []
    for (let pair = 0; pair < pairs; pair++) {
      // A B, then B A: a drift within a pair falls on both sides alike over two pairs.
      if (pair % 2 === 0) {
        const lyre = await turn(sides[0], `Pair ${pair} Lyre`)
        turns.push([lyre, await turn(sides[1], `Pair ${pair} bare`)])
      } else {
        const bare = await turn(sides[1], `Pair ${pair} bare`)
        turns.push([await turn(sides[0], `Pair ${pair} Lyre`), bare])
      }
    }
    const ratios = turns.map(([lyre, bare]) => ({
      service: lyre.service / bare.service,
      worker: lyre.worker / bare.worker
    }))
    const mean = (side: 0 | 1): Figures => ({
      service: turns.reduce((sum, pair) => sum + pair[side].service, 0) / turns.length,
      worker: turns.reduce((sum, pair) => sum + pair[side].worker, 0) / turns.length
    })
    const figures = [mean(0), mean(1)] as const
    return { ratios, figures }
  } finally {
    for (const side of sides) await side.stop()
    await upstream.close()
  }
}

interface WorkerInstructions {
  readonly main: number
  readonly collector: number
  readonly others: number
  readonly functions: ReadonlyArray<readonly [string, number]>
}

/** The worker's counted instructions a task: its main thread, the collector's share of it, the other threads, and the main thread's functions. */
const instructionsOf = (dumps: ReadonlyArray<ThreadCount>, pid: number, tasks: number): WorkerInstructions => {
  const [main] = dumps
  const functions = main === undefined ? [] : functionsOf(main, pid)
  if (process.env["WORKER_BENCH_CALLGRIND_KEEP"] === "1")
    process.stdout.write(`  kept: ${dumps.map((dump) => dump.file).join(" ")} /tmp/perf-${pid}.map\n`)
  else for (const dump of dumps) removeCount(dump, pid)
  const collector = collectorInstructions(functions)
  return {
    main: (main?.instructions ?? 0) / tasks,
    collector: collector / tasks,
    others: dumps.slice(1).reduce((total, dump) => total + dump.instructions, 0) / tasks,
    functions: functions.map(([name, count]) => [name, count / tasks] as const)
  }
}

const lag = async () => {
  const upstream = await startFakeUpstream({ apiKey: upstreamKey, audioBytes: 1_000_000 })
  // Done at the first poll, but polls are a minute away: only the callback can make it ready now.
  upstream.control.setDefault({ callbacks: "none", pollsBeforeDone: 0 })
  const service = await startService(upstream, 60, "inline")
  try {
    const ids = await mapLimit(lagTasks, 8, (index) => create(service, index, `Lag ${index}`))
    const rows = await query<{ id: string; provider_task_id: string }>(
      service.databaseUrl,
      "select id, provider_task_id from generation_tasks"
    )
    const providerOf = new Map(rows.map((row) => [row.id, row.provider_task_id]))
    const sentAt = new Map<string, number>()
    // Callbacks at about 20 per second, as a busy upstream would send them.
    for (const id of ids) {
      sentAt.set(id, Date.now())
      void upstream.control.sendCallback(providerOf.get(id) ?? "", "complete")
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const deadline = Date.now() + 60_000
    let finished: ReadonlyArray<{ id: string; status: string; ready_at: number }> = []
    while (Date.now() < deadline) {
      finished = await query<{ id: string; status: string; ready_at: number }>(
        service.databaseUrl,
        "select id, status, (extract(epoch from updated_at) * 1000)::float8 as ready_at from generation_tasks where status <> 'pending'"
      )
      if (finished.length === ids.length) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const lags = finished.filter((row) => row.status === "ready").map((row) => row.ready_at - (sentAt.get(row.id) ?? 0))
    return { samples: lags.length, p50: percentile(lags, 50), p99: percentile(lags, 99), max: Math.max(...lags) }
  } finally {
    await service.stop()
    await upstream.close()
  }
}

try {
  process.stdout.write(
    `worker bench on ${cpus().length} cores, load average ${loadavg()
      .map((n) => n.toFixed(1))
      .join(" ")} before the runs\n`
  )
  const describe: Record<WorkerMode, string> = {
    inline: "pnpm start, inline worker",
    split: "API process + pnpm worker",
    bare: "the bare handler + the bare worker"
  }
  /** CPU a task of the split and bare runs' processes, and their workers' instructions, for their ratios. */
  const sides: Partial<
    Record<
      WorkerMode,
      {
        readonly service: number
        readonly api: number
        readonly worker: number
        readonly workerKernelShare: number
        readonly instructions: number | null
        /** The main thread's without the collector's: what moves least between runs of the same code. */
        readonly ownInstructions: number | null
      }
    >
  > = {}
  for (const mode of ["inline", "split", "bare"] as const) {
    if (!modes.includes(mode)) continue
    const split = mode !== "inline"
    const t = await throughput(mode)
    if (split) {
      sides[mode] = {
        service: t.cpuPerTask,
        api: t.cpuPerTaskEach[0] ?? 0,
        worker: t.cpuPerTaskEach[1] ?? 0,
        workerKernelShare: t.kernelShareEach[1] ?? 0,
        instructions: t.instructions === null ? null : t.instructions.main + t.instructions.others,
        ownInstructions: t.instructions === null ? null : t.instructions.main - t.instructions.collector
      }
    }
    process.stdout.write(
      `worker throughput (postgres, ${describe[mode]}, ` +
        `fake upstream answering at once): ${t.tasks} tasks, ${t.ready} ready; ` +
        `created in ${t.createSeconds.toFixed(1)} s, all terminal in ${t.totalSeconds.toFixed(1)} s: ` +
        `${t.perSecond.toFixed(0)} tasks/s create->ready (target >= 300, ratio ${(t.perSecond / 300).toFixed(2)}); ` +
        `CPU per task: service ${t.cpuPerTask.toFixed(2)} ms` +
        (split ? ` (API ${t.cpuPerTaskEach[0]?.toFixed(2)} + worker ${t.cpuPerTaskEach[1]?.toFixed(2)})` : "") +
        ` of which main thread${split ? "s" : ""} ${t.mainThreadPerTaskEach.map((millis) => millis.toFixed(2)).join(" + ")}` +
        `, fake upstream and load ${t.benchCpuPerTask.toFixed(1)} ms, ` +
        `PostgreSQL and Redis ${t.databaseCpuPerTask.toFixed(1)} ms\n` +
        `  baseline, same run: creating a task's directory and 4 files on the data directory's file system takes ` +
        `${t.filesBaseline.toFixed(2)} ms of CPU; the service's CPU per task without it: ` +
        `${(t.cpuPerTask - t.filesBaseline).toFixed(2)} ms (service CPU ${(t.cpuPerTask / t.filesBaseline).toFixed(1)}x the baseline)\n`
    )
    if (t.instructions !== null) {
      const i = t.instructions
      const thousands = (count: number) => `${(count / 1000).toFixed(1)}k`
      process.stdout.write(
        `  instructions a task of the worker (callgrind): main thread ${thousands(i.main)}, of which the garbage collector ` +
          `${thousands(i.collector)}, the rest ${thousands(i.main - i.collector)}; other threads ${thousands(i.others)}\n` +
          i.functions
            .slice(0, Number(process.env["WORKER_BENCH_CALLGRIND_ROWS"] ?? "40"))
            .map(([name, count]) => `    ${(count / 1000).toFixed(2).padStart(8)}k  ${name}`)
            .join("\n") +
          "\n"
      )
    }
    t.onCpuSummaries.forEach((summary, index) => {
      const rows = (entries: ReadonlyArray<readonly [string, number]>, count: number) =>
        entries
          .slice(0, count)
          .map(([name, micros]) => `    ${micros.toFixed(1).padStart(7)} µs  ${name}`)
          .join("\n")
      process.stdout.write(
        `  on CPU (perf, user space, main thread) of ${split ? ["the API", "the worker"][index] : "the service"}: ` +
          `${summary.total.toFixed(0)} µs a task\n  by package:\n${rows(summary.byPackage, 15)}\n  by function:\n${rows(summary.byFunction, 30)}\n`
      )
    })
  }
  const { split: lyre, bare } = sides
  if (lyre !== undefined && bare !== undefined) {
    const ratio = (a: number, b: number) => `${a.toFixed(2)} against ${b.toFixed(2)} ms, ratio ${(a / b).toFixed(2)}`
    process.stdout.write(
      `Lyre against its baseline, same run (split against bare), CPU a task: service ${ratio(lyre.service, bare.service)}; ` +
        `API ${ratio(lyre.api, bare.api)}; worker ${ratio(lyre.worker, bare.worker)} ` +
        `(in the kernel ${(lyre.workerKernelShare * 100).toFixed(0)} % and ${(bare.workerKernelShare * 100).toFixed(0)} %)` +
        (lyre.instructions !== null &&
        bare.instructions !== null &&
        lyre.ownInstructions !== null &&
        bare.ownInstructions !== null
          ? `; the worker's instructions a task on its main thread without the collector ${(lyre.ownInstructions / 1000).toFixed(0)}k ` +
            `against ${(bare.ownInstructions / 1000).toFixed(0)}k, ratio ${(lyre.ownInstructions / bare.ownInstructions).toFixed(2)}, ` +
            `on every thread ${(lyre.instructions / 1000).toFixed(0)}k against ${(bare.instructions / 1000).toFixed(0)}k, ` +
            `ratio ${(lyre.instructions / bare.instructions).toFixed(2)}`
          : "") +
        "\n"
    )
  }
  if (modes.includes("split") && modes.includes("bare") && pairs > 0 && !counted) {
    const { ratios, figures } = await pairedAgainstBare()
    const summary = (of: (ratio: { readonly service: number; readonly worker: number }) => number) => {
      const values = ratios.map(of)
      return `ratio ${percentile(values, 50).toFixed(2)} (IQR ${percentile(values, 25).toFixed(2)}-${percentile(values, 75).toFixed(2)})`
    }
    const [lyre, bare] = figures
    process.stdout.write(
      `Lyre against its baseline, paired (both up at once, ${pairs} pairs of turns of ${pairTasks} tasks, median of the pairs): ` +
        `service ${lyre?.service.toFixed(2)} against ${bare?.service.toFixed(2)} ms of CPU a task, ${summary((r) => r.service)}; ` +
        `worker ${lyre?.worker.toFixed(2)} against ${bare?.worker.toFixed(2)} ms, ${summary((r) => r.worker)}\n`
    )
  }
  const l = lagTasks > 0 ? await lag() : null
  if (l !== null) {
    process.stdout.write(
      `callback->ready lag (postgres, 2 x 1 MB audio per task): ${l.samples} samples, p50 ${l.p50.toFixed(0)} ms, ` +
        `p99 ${l.p99.toFixed(0)} ms, max ${l.max.toFixed(0)} ms (target p99 < 250 ms, ratio ${(l.p99 / 250).toFixed(2)})\n`
    )
  }
} finally {
  loadAgent.destroy()
  if (counted && process.env["WORKER_BENCH_CALLGRIND_KEEP"] !== "1")
    rmSync(callgrindDirectory, { recursive: true, force: true })
  for (const remove of leftovers) await remove()
}
