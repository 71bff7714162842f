/** Runs `lyre` as a process, as a user would, with a home and config directory of its own. */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const main = join(import.meta.dirname, "../../src/main.ts")

export interface LyreRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export interface LyreHome {
  readonly home: string
  readonly configDir: string
  /** Runs `lyre args...`; `env` adds variables, `input` is piped to standard input. */
  run(
    args: ReadonlyArray<string>,
    options?: {
      readonly env?: Record<string, string>
      readonly input?: string | Buffer
      readonly cwd?: string
      /** Called with standard error so far, each time more arrives. */
      readonly onStderr?: (soFar: string) => void
    }
  ): Promise<LyreRun>
  remove(): void
}

export const lyreHome = (): LyreHome => {
  const home = mkdtempSync(join(tmpdir(), "lyre-cli-"))
  const configDir = join(home, "xdg")
  return {
    home,
    configDir,
    run: (args, options = {}) =>
      new Promise((resolve, reject) => {
        // Nothing from the test's own environment that the CLI reads leaks in.
        const env: Record<string, string> = {
          PATH: process.env["PATH"] ?? "",
          HOME: home,
          XDG_CONFIG_HOME: configDir,
          ...options.env
        }
        const child = spawn(process.execPath, [main, ...args], {
          env,
          cwd: options.cwd ?? home,
          stdio: ["pipe", "pipe", "pipe"]
        })
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
      }),
    remove: () => rmSync(home, { recursive: true, force: true })
  }
}
