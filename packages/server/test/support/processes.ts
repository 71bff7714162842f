/**
 * Real service processes for the worker's multi-process tests: `pnpm start` and `pnpm worker`
 * entry points spawned with their own environment, killable with SIGKILL like a crash, and the
 * admin calls that set up their accounts.
 */
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { createServer } from "node:net"
import { join } from "node:path"

export const repositoryRoot = join(import.meta.dirname, "../../../..")

const isFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = createServer()
    probe.once("error", () => resolve(false))
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)))
  })

/**
 * A free port below Linux's ephemeral range (32768 and up). A port the kernel handed out for
 * `listen(0)` is an ephemeral one, which a busy machine may reuse as the source port of an
 * outgoing connection before the service restarted on it binds again.
 */
export const freePort = async (): Promise<number> => {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000)
    if (await isFree(port)) return port
  }
}

export interface Spawned {
  readonly child: ChildProcess
  readonly output: () => string
  /** Waits until the output contains `text` (or the process exits, or time runs out). */
  readonly waitFor: (text: string, withinMs?: number) => Promise<void>
  /** kill -9: no finalizers, no graceful anything. */
  readonly crash: () => Promise<void>
  readonly stop: () => Promise<void>
}

const baseEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith("VITEST") && name !== "NODE_OPTIONS") env[name] = value
  }
  return env
}

export const spawnEntry = (entry: "main" | "worker-main", env: Record<string, string>): Spawned => {
  const child = spawn(process.execPath, [`packages/server/src/${entry}.ts`], {
    cwd: repositoryRoot,
    // Answers held to their schemas, as in-process test servers hold them (0109).
    env: { ...baseEnv(), CHECK_ANSWERS: "true", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()))
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  return {
    child,
    output: () => output,
    waitFor: async (text, withinMs = 60_000) => {
      const deadline = Date.now() + withinMs
      while (!output.includes(text)) {
        if (Date.now() > deadline || child.exitCode !== null || child.signalCode !== null) {
          throw new Error(`${entry} did not print ${text}:\n${output}`)
        }
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    },
    crash: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
      await exited
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))])
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
      await exited
    }
  }
}

/** A JSON call to the admin API; throws unless it answers `expect`. */
export const adminCall = async (
  base: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  expect = [200, 201, 204]
): Promise<Record<string, unknown>> => {
  const res = await fetch(`${base}/admin/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await res.text()
  if (!expect.includes(res.status)) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return text === "" ? {} : (JSON.parse(text) as Record<string, unknown>)
}

/** Runs `work` over `items` with at most `limit` at once. */
export const mapLimit = async <A, B>(
  items: ReadonlyArray<A>,
  limit: number,
  work: (item: A, index: number) => Promise<B>
) => {
  const results: Array<B> = new Array(items.length)
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++
        results[index] = await work(items[index] as A, index)
      }
    })
  )
  return results
}
