/**
 * Instructions a request, counted by Valgrind's callgrind rather than timed. This machine's
 * speed drifts by more than the gaps being measured (decision 0107: the same pair's ratio went
 * from 1.24 to 1.74 within ten minutes), and it has no hardware counters for `perf stat`.
 * Callgrind counts every instruction each thread executes in user space, the same for the same
 * work whatever the host does, so two runs hours apart can be compared. What still moves it is
 * the garbage collector: a larger collection inside the counted run or not moved the main
 * thread's count by 15 %, so its share is printed apart (`isCollector`).
 *
 * The service runs under callgrind with counting off (`--instr-atstart=no`: it starts and warms
 * up at a few times its native cost, not a hundred), counting is switched on for the measured
 * run only, and one dump per thread is read. What it leaves out: the kernel's part of each system
 * call, and what a cache miss costs. It is a measure of the work a request's code does, the
 * part the request path can change; time stays the measure of the goals.
 *
 * JavaScript compiled by V8 has no symbols, so callgrind names it by address; with node's
 * `--perf-basic-prof` the addresses are looked up in /tmp/perf-PID.map to name the functions.
 */
import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { jsFrameOf, scriptName } from "./on-cpu.ts"
import { commandAvailable } from "./support.ts"

/** Whether Valgrind is installed (callgrind_annotate and callgrind_control come with it). */
export const callgrindAvailable = (): boolean => commandAvailable("valgrind")

/**
 * The command that runs node under callgrind, counting nothing until `start`; `out` names its
 * dumps. With `cacheSim`, callgrind also simulates a cache of the host's sizes and counts each
 * function's misses (I1mr, D1mr, D1mw: first level; ILmr, DLmr, DLmw: last level): the part of a
 * request's time that instructions do not show, as a model, not as this host measures it. With
 * `branchSim`, it models the branch predictor the same way: conditional branches (Bc) and
 * indirect ones (Bi, calls and jumps through a register, as an interpreter's dispatch makes)
 * and their mispredictions (Bcm, Bim), each of which costs a modern core some 15-20 cycles.
 */
export const callgrindCommand = (
  out: string,
  {
    branchSim = false,
    cacheSim = false,
    lastLevel
  }: {
    readonly branchSim?: boolean
    readonly cacheSim?: boolean
    /** The modelled last level as `size,associativity,line` (`1048576,16,64`: a core's L2 here), not the host's L3. */
    readonly lastLevel?: string | undefined
  } = {}
): ReadonlyArray<string> => [
  "valgrind",
  ...(cacheSim ? ["--cache-sim=yes"] : []),
  ...(cacheSim && lastLevel !== undefined ? [`--LL=${lastLevel}`] : []),
  ...(branchSim ? ["--branch-sim=yes"] : []),
  "--tool=callgrind",
  "--quiet",
  // V8 writes code and runs it: without this Valgrind would run stale translations.
  "--smc-check=all-non-file",
  "--instr-atstart=no",
  "--separate-threads=yes",
  `--callgrind-out-file=${out}`
]

export interface ThreadCount {
  /** 1 is the main thread; the others are V8's helpers (compiling, marking) and libuv's pool. */
  readonly thread: number
  readonly instructions: number
  /** Every event the dump counted, by name: `Ir` (the instructions), and the misses with `cacheSim` or `branchSim`. */
  readonly events: Readonly<Record<string, number>>
  readonly file: string
}

export interface Counting {
  /** Switches counting on in the running process `pid`. */
  readonly start: () => void
  /** Switches it off and writes one dump per thread: the instructions each thread executed meanwhile. */
  readonly stop: () => ReadonlyArray<ThreadCount>
}

const control = (...args: ReadonlyArray<string>) => execFileSync("callgrind_control", args, { stdio: "ignore" })

/** Counting for `pid`, started under `callgrindCommand(out)`; each stop is one more dump ("part"). */
export const countInstructions = (pid: number, out: string): Counting => {
  let part = 0
  return {
    start: () => control("-i", "on", String(pid)),
    stop: () => {
      control("-d", String(pid))
      control("-i", "off", String(pid))
      part++
      // The dump is `${out}.1-01` for the main thread, `-02`... for the others, then `.2-01`...
      const prefix = `${basename(out)}.${part}-`
      return readdirSync(dirname(out))
        .filter((file) => file.startsWith(prefix))
        .map((file) => {
          const path = join(dirname(out), file)
          const text = readFileSync(path, "utf8")
          const names = (/^events: (.*)$/m.exec(text)?.[1] ?? "Ir").trim().split(/\s+/)
          const totals = (/^totals: (.*)$/m.exec(text)?.[1] ?? "").trim().split(/\s+/).map(Number)
          const events = Object.fromEntries(names.map((name, index) => [name, totals[index] ?? 0]))
          return { thread: Number(file.slice(prefix.length)), instructions: events["Ir"] ?? 0, events, file: path }
        })
        .sort((a, b) => a.thread - b.thread)
    }
  }
}

interface CodeRange {
  readonly start: number
  readonly end: number
  readonly name: string
}

/** /tmp/perf-PID.map's code ranges, later entries first (a range V8 reused names its newest code). */
const codeRangesOf = (pid: number): ReadonlyArray<CodeRange> => {
  const path = `/tmp/perf-${pid}.map`
  if (!existsSync(path)) return []
  return readFileSync(path, "utf8")
    .split("\n")
    .flatMap((line) => {
      const match = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line)
      if (match === null) return []
      const start = Number.parseInt(match[1] ?? "", 16)
      return [{ start, end: start + Number.parseInt(match[2] ?? "", 16), name: match[3] ?? "" }]
    })
    .reverse()
}

/**
 * A dump's function name as read: JavaScript (an address) by the perf map's ranges, a C++
 * symbol without its return type and arguments. `'2` marks a recursion's second level: the
 * same function.
 */
const nameOf = (raw: string, ranges: ReadonlyArray<CodeRange>): string => {
  const name = raw.replace(/'\d+$/, "")
  if (/^0x[0-9a-f]+$/i.test(name)) {
    const address = Number.parseInt(name, 16)
    const range = ranges.find((candidate) => address >= candidate.start && address < candidate.end)
    return range === undefined ? "(JavaScript, not in the map)" : jsName(range.name)
  }
  return (name.replace(/\(.*$/, "").split(" ").pop() ?? name).replaceAll("v8::internal::", "v8::")
}

/** `JS:*'name file:///.../x.ts:12:3` as `name packages/core/src/x.ts:12`. */
const jsName = (perfName: string): string => {
  const js = jsFrameOf(perfName)
  return js === null ? perfName : `${js.name} ${scriptName(js.url)}${js.line === undefined ? "" : `:${js.line}`}`
}

/**
 * The functions of one thread's dump by their own instructions (what they called not
 * included), or with `inclusive` by all they executed, most first: V8's builtins and node's C++
 * by symbol, JavaScript by the perf map of `pid` when node wrote one. Inclusive counts find the
 * caller that an expensive builtin works for; a function that recurses (or reached again
 * through a callback) counts its nested calls again, so they do not add up.
 */
export const functionsOf = (
  dump: ThreadCount,
  pid: number,
  { inclusive = false, event = "Ir" }: { readonly inclusive?: boolean; readonly event?: string } = {}
): ReadonlyArray<readonly [string, number]> => {
  const text = execFileSync(
    "callgrind_annotate",
    [`--inclusive=${inclusive ? "yes" : "no"}`, `--show=${event}`, `--sort=${event}`, "--threshold=100", dump.file],
    {
      maxBuffer: 1 << 28,
      stdio: ["ignore", "pipe", "ignore"]
    }
  ).toString()
  const ranges = codeRangesOf(pid)
  const byName = new Map<string, number>()
  for (const line of text.split("\n")) {
    const match = /^\s*([\d,]+) \([ \d.]+%\)\s+\S*?:(.*?)(?: \[.*\])?$/.exec(line)
    if (match === null || line.includes("PROGRAM TOTALS")) continue
    const instructions = Number((match[1] ?? "").replaceAll(",", ""))
    const name = nameOf((match[2] ?? "").trim(), ranges)
    byName.set(name, (byName.get(name) ?? 0) + instructions)
  }
  return [...byName].sort((a, b) => b[1] - a[1])
}

/**
 * Who calls `symbol` (a builtin such as `Builtins_KeyedLoadIC_Megamorphic`, whose own count
 * does not say for whom it works): its callers by the instructions it executed for each, most
 * first, named as `functionsOf` names them.
 */
export const callersOf = (dump: ThreadCount, pid: number, symbol: string): ReadonlyArray<readonly [string, number]> => {
  const text = execFileSync(
    "callgrind_annotate",
    ["--tree=caller", "--inclusive=no", "--show=Ir", "--sort=Ir", "--threshold=100", dump.file],
    {
      maxBuffer: 1 << 28,
      stdio: ["ignore", "pipe", "ignore"]
    }
  ).toString()
  const ranges = codeRangesOf(pid)
  const byName = new Map<string, number>()
  // A block is the callers' lines (`< file:caller`), then the function's own line (`* file:fn`).
  let block: Array<string> = []
  for (const line of text.split("\n")) {
    if (/^\s*[\d,]+ \([ \d.]+%\)\s+<\s/.test(line)) {
      block.push(line)
      continue
    }
    if (/\s\*\s/.test(line) && line.includes(symbol)) {
      for (const caller of block) {
        const match = /^\s*([\d,]+) \([ \d.]+%\)\s+<\s+\S*?:(.*?)(?: \([\d,]+x\))?(?: \[.*\])?$/.exec(caller)
        if (match === null) continue
        const name = nameOf((match[2] ?? "").trim(), ranges)
        byName.set(name, (byName.get(name) ?? 0) + Number((match[1] ?? "").replaceAll(",", "")))
      }
    }
    block = []
  }
  return [...byName].sort((a, b) => b[1] - a[1])
}

/** Removes a dump and the perf map that named its JavaScript, once `functionsOf` has read them. */
export const removeCount = (dump: ThreadCount, pid: number): void => {
  rmSync(dump.file, { force: true })
  rmSync(`/tmp/perf-${pid}.map`, { force: true })
}

/**
 * Whether a function is V8's garbage collector at work (scavenges, marking, compaction, and what
 * they visit): by name, so roughly. A major collection falling inside a counted run or not moved
 * the main thread's count by 15 % between runs of the same code; without the collector's share
 * the count says what the request's own code executed.
 */
export const isCollector = (name: string): boolean =>
  name.startsWith("v8::") &&
  /Scaveng|Mark|Sweep|Evacuat|Heap::|IteratePointers|Compact|Ephemeron|Migrated|PointersUpdating/.test(name)

/** The instructions of a thread's functions (`functionsOf`) that were the collector's. */
export const collectorInstructions = (functions: ReadonlyArray<readonly [string, number]>): number =>
  functions.reduce((total, [name, instructions]) => total + (isCollector(name) ? instructions : 0), 0)
