/**
 * Where a process's CPU goes, sampled by Linux `perf` on CPU time rather than by V8's profiler
 * (decision 0106). V8's `--cpu-prof` samples by wall clock: on two shared cores, the time a
 * process waits descheduled is charged to whatever it was running, most to the code after a
 * socket write that wakes PostgreSQL. `perf record -e cpu-clock:u` samples only while the
 * thread runs in user space, and `--perf-basic-prof` (node writes /tmp/perf-PID.map) names the
 * JavaScript frames. Kernel time is not sampled (perf_event_paranoid 2 allows user space only);
 * it is the thread's /proc CPU less these samples.
 *
 * A sample is charged to its innermost JavaScript frame (V8's builtins, the garbage collector's
 * work on the thread and native code called from JavaScript go to their caller), and by that
 * frame's package: so "effect", "node:streams" or "packages/core" say whose code the CPU was
 * spent in, however V8 inlined it.
 */
import type { ChildProcess } from "node:child_process"
import { execFileSync, spawn } from "node:child_process"
import { rmSync } from "node:fs"
import { commandAvailable } from "./support.ts"

/** Samples a second: not a multiple of the kernel's tick, so as not to beat with it. */
export const samplesPerSecond = 1999

/**
 * A frame's script with the package store's path and the repository's left out:
 * `effect/dist/internal/effect.js`, `packages/core/src/...`, `bench/...`, `node:events`.
 */
export const scriptName = (url: string): string =>
  url
    .replace(/.*node_modules\/\.pnpm\/[^/]+\/node_modules\//, "")
    .replace(/^(file:\/\/)?\/.*?\/(packages|bench)\//, "$2/")

/** A frame as V8's profilers (CPU and sampling heap) give it. */
export interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
}

/** A profiler frame's function and place, with the package store's path left out. */
export const placeOf = (frame: CallFrame): string => {
  const url = scriptName(frame.url)
  const name = frame.functionName || "(anonymous)"
  return url === "" ? name : `${name} ${url}:${frame.lineNumber + 1}`
}

/** The package of a frame's script: a registry package's name, `packages/<name>`, `bench` or `node:<module>`. */
export const packageOfScript = (url: string): string => {
  const name = scriptName(url)
  if (name.startsWith("node:")) return name.replace(/^node:(internal\/)?([^/:]+).*$/, "node:$2")
  if (name.startsWith("/") || name.startsWith("file:")) return name
  const parts = name.split("/")
  return (name.startsWith("@") || name.startsWith("packages/") ? parts.slice(0, 2) : parts.slice(0, 1)).join("/")
}

/**
 * A JavaScript frame as `--perf-basic-prof` names it: `JS:*'name file:///...:line:column` (an
 * ES module), `JS:*'name /path/...` (CommonJS) or `JS:^name node:internal/...`.
 */
const jsFrame = /JS:[*~^+]?'?(\S*) ((?:file:\/\/|node:|\/)\S+?)(?::(\d+))?(?::\d+)?$/

/** A JavaScript frame's function name (`(anonymous)` when it has none), script and line; null for any other frame. */
export const jsFrameOf = (
  text: string
): { readonly name: string; readonly url: string; readonly line: string | undefined } | null => {
  const match = jsFrame.exec(text)
  if (match === null) return null
  const [, name = "", url = "", line] = match
  return { name: name === "" ? "(anonymous)" : name, url, line }
}

export interface Recording {
  /** Stops sampling; resolves once perf has written its file. */
  readonly stop: () => Promise<void>
  /** Samples of `thread` by package and by function, in µs per request; deletes the recording. */
  readonly summarize: (thread: number, requests: number) => OnCpuSummary
}

export interface OnCpuSummary {
  /** All of the thread's user-space CPU, µs per request. */
  readonly total: number
  readonly byPackage: ReadonlyArray<readonly [string, number]>
  readonly byFunction: ReadonlyArray<readonly [string, number]>
}

/** Whether this machine lets us sample our own processes (perf installed, user-space events allowed). */
export const perfAvailable = (): boolean => commandAvailable("perf")

/** Starts sampling `pid` (a node started with `--perf-basic-prof`) into `file`. */
export const recordOnCpu = (pid: number, file: string): Recording => {
  const perf: ChildProcess = spawn(
    "perf",
    ["record", "-e", "cpu-clock:u", "-F", String(samplesPerSecond), "-g", "-p", String(pid), "-o", file],
    { stdio: ["ignore", "ignore", "pipe"] }
  )
  let errors = ""
  perf.stderr?.on("data", (chunk: Buffer) => (errors += chunk.toString()))
  const exited = new Promise<void>((resolve) => perf.once("exit", () => resolve()))
  return {
    stop: async () => {
      perf.kill("SIGINT")
      await exited
      if (perf.exitCode !== 0 && perf.exitCode !== null) throw new Error(`perf record failed: ${errors}`)
    },
    summarize: (thread, requests) => {
      const script = execFileSync("perf", ["script", "-i", file, "--tid", String(thread), "-F", "ip,sym"], {
        maxBuffer: 1 << 30,
        stdio: ["ignore", "pipe", "ignore"]
      }).toString()
      rmSync(file, { force: true })
      rmSync(`/tmp/perf-${thread}.map`, { force: true })
      return summarizeStacks(script, requests)
    }
  }
}

const sortedMicros = (counts: Map<string, number>, micros: number) =>
  [...counts].sort((a, b) => b[1] - a[1]).map(([name, count]) => [name, count * micros] as const)

/** `perf script -F ip,sym` output (stacks innermost first, blank-line separated) summarized per request. */
export const summarizeStacks = (script: string, requests: number): OnCpuSummary => {
  const micros = 1_000_000 / samplesPerSecond / requests
  const byPackage = new Map<string, number>()
  const byFunction = new Map<string, number>()
  let samples = 0
  for (const stack of script.split(/\n\s*\n/)) {
    const frames = stack
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "")
    if (frames.length === 0) continue
    samples++
    let pkg = "(no JavaScript frame)"
    let fn = pkg
    for (const frame of frames) {
      const js = jsFrameOf(frame)
      if (js === null) continue
      pkg = packageOfScript(js.url)
      const place = `${js.url.split("/").pop() ?? ""}${js.line === undefined ? "" : `:${js.line}`}`
      fn = `${js.name} ${pkg === js.url ? place : `${pkg} ${place}`}`
      break
    }
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + 1)
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + 1)
  }
  return {
    total: samples * micros,
    byPackage: sortedMicros(byPackage, micros),
    byFunction: sortedMicros(byFunction, micros)
  }
}
