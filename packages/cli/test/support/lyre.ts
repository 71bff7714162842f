/**
 * Runs `lyre` as a user would, with a home and config directory of its own: in the test's own
 * process through the CLI's `run(argv, io)` (what `main.ts` calls with the process's argv,
 * environment and streams), or as a process of its own (`spawnLyre`), which one smoke test does.
 *
 * In the test's process a run sees only the environment it is given, as a spawned one would;
 * the config file's place (env-paths reads `HOME` and `XDG_CONFIG_HOME` from the process) and the
 * working directory are the home's for the length of the run, and runs take turns so that no two
 * see each other's.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PassThrough, Readable, Writable } from "node:stream"
import { run } from "../../src/program.ts"

const main = join(import.meta.dirname, "../../src/main.ts")

export interface LyreRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export interface RunOptions {
  readonly env?: Record<string, string>
  readonly input?: string | Buffer
  readonly cwd?: string
  /** Called with standard error so far, each time more arrives. */
  readonly onStderr?: (soFar: string) => void
}

export interface LyreHome {
  readonly home: string
  readonly configDir: string
  /** Runs `lyre args...` in this process; `env` adds variables, `input` is piped to standard input. */
  run(args: ReadonlyArray<string>, options?: RunOptions): Promise<LyreRun>
  /** The same as a process of its own: `node src/main.ts args...`. */
  spawn(args: ReadonlyArray<string>, options?: RunOptions): Promise<LyreRun>
  remove(): void
}

/** Nothing from the test's own environment that the CLI reads leaks in. */
const environment = (home: string, configDir: string, options: RunOptions): Record<string, string> => ({
  PATH: process.env["PATH"] ?? "",
  HOME: home,
  XDG_CONFIG_HOME: configDir,
  ...options.env
})

const spawnLyre = (args: ReadonlyArray<string>, env: Record<string, string>, cwd: string, options: RunOptions) =>
  new Promise<LyreRun>((resolve, reject) => {
    const child = spawn(process.execPath, [main, ...args], { env, cwd, stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString()
      options.onStderr?.(stderr)
    })
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(options.input ?? "")
  })

/** A stream that keeps what is written to it, as the text a process would print. */
const collector = (onText: (soFar: string) => void = () => {}) => {
  let text = ""
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      text += chunk.toString()
      onText(text)
      done()
    }
  })
  return { stream, text: () => text }
}

/** The process-wide settings a run borrows, put back when it ends. */
const borrowed = ["HOME", "XDG_CONFIG_HOME"] as const
let turns: Promise<unknown> = Promise.resolve()

const runInProcess = (args: ReadonlyArray<string>, env: Record<string, string>, cwd: string, options: RunOptions) => {
  const turn = turns.then(async (): Promise<LyreRun> => {
    const before = { cwd: process.cwd(), env: borrowed.map((name) => [name, process.env[name]] as const) }
    for (const name of borrowed) process.env[name] = env[name]
    process.chdir(cwd)
    const stdout = collector()
    const stderr = collector(options.onStderr)
    const stdin = new PassThrough()
    Readable.from([Buffer.from(options.input ?? "")]).pipe(stdin)
    try {
      const code = await run([process.execPath, main, ...args], {
        env,
        // The CLI asks only what a Writable and a Readable answer (`write`, `isTTY`, `columns`).
        stdout: stdout.stream as NodeJS.WriteStream,
        stderr: stderr.stream as NodeJS.WriteStream,
        stdin: stdin as unknown as NodeJS.ReadStream
      })
      return { code, stdout: stdout.text(), stderr: stderr.text() }
    } finally {
      process.chdir(before.cwd)
      for (const [name, value] of before.env) {
        if (value === undefined) delete process.env[name]
        else process.env[name] = value
      }
    }
  })
  turns = turn.catch(() => undefined)
  return turn
}

export const lyreHome = (): LyreHome => {
  const home = mkdtempSync(join(tmpdir(), "lyre-cli-"))
  const configDir = join(home, "xdg")
  return {
    home,
    configDir,
    run: (args, options = {}) =>
      runInProcess(args, environment(home, configDir, options), options.cwd ?? home, options),
    spawn: (args, options = {}) => spawnLyre(args, environment(home, configDir, options), options.cwd ?? home, options),
    remove: () => rmSync(home, { recursive: true, force: true })
  }
}
