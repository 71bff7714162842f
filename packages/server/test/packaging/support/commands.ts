/** Running the package managers and compilers the packaging tests drive, and keeping what they print. */
import { execFile } from "node:child_process"
import { accessSync, constants } from "node:fs"
import { delimiter, join } from "node:path"

export interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** The environment without what a package manager's script runner adds, so a command reads only its own settings. */
export const cleanEnv: Readonly<Record<string, string | undefined>> = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !/^p?npm_/i.test(name))
)

export const run = (
  command: string,
  args: ReadonlyArray<string>,
  cwd: string,
  env: Readonly<Record<string, string | undefined>> = cleanEnv
): Promise<Run> =>
  new Promise((resolve) => {
    execFile(command, [...args], { cwd, env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
      resolve({ code, stdout, stderr })
    })
  })

export const succeed = async (
  command: string,
  args: ReadonlyArray<string>,
  cwd: string,
  env?: Readonly<Record<string, string | undefined>>
): Promise<string> => {
  const result = await run(command, args, cwd, env)
  if (result.code !== 0)
    throw new Error(`${command} ${args.join(" ")} exited ${result.code}:\n${result.stdout}\n${result.stderr}`)
  return result.stdout
}

const onPath = (name: string): string | undefined =>
  (process.env["PATH"] ?? "")
    .split(delimiter)
    .map((dir) => join(dir, name))
    .find((file) => {
      try {
        accessSync(file, constants.X_OK)
        return true
      } catch {
        return false
      }
    })

/**
 * pnpm as a command and its first arguments: the one running the suite (`pnpm test`), else the
 * one on PATH (`pnpm exec vitest`), else the README's `npx -y pnpm@10`, which may ask the registry
 * which 10.x is newest. The one that installed the workspace is the one that knows its store.
 */
export const pnpm = (): readonly [string, ReadonlyArray<string>] => {
  const execPath = process.env["npm_execpath"]
  if (execPath !== undefined && /pnpm/.test(execPath)) return [process.execPath, [execPath]]
  const installed = onPath("pnpm")
  return installed === undefined ? ["npx", ["-y", "pnpm@10"]] : [installed, []]
}
