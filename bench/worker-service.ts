/**
 * The service as the worker benchmark runs it, on a fresh PostgreSQL database with the fake
 * upstream as its provider, in one of three shapes (`WorkerMode`). Shared by `worker-bench.ts`
 * and the test that holds the worker's baseline to Lyre's worker (bench-baseline.test.ts).
 */
import type { ChildProcess } from "node:child_process"
import type { FakeUpstream } from "@lyre/fake-upstream"
import { cpuMillisOf, freePort, usageOf } from "./support.ts"
import {
  adminOf,
  createAccountKeys,
  launchService,
  prepareBenchData,
  scriptFlagsOf,
  stopProcess,
  waitUntilServing
} from "./service.ts"

/**
 * `inline`: `pnpm start`; `split`: an API process (WORKER=off) and a `pnpm worker`; `bare`: the
 * baseline of that pair, the bare handler (`bare-server.ts`) and the bare worker
 * (`bare-worker.ts`), with the same statements, exchanges and files a task (decision 0119).
 */
export type WorkerMode = "inline" | "split" | "bare"

export interface WorkerService {
  /** The measured processes: the API (or the bare handler) first, then the worker if apart. */
  readonly pids: ReadonlyArray<number>
  readonly cpuMillis: () => number
  /** Main threads only, per process in launch order. */
  readonly mainThreadCpuMillisEach: () => ReadonlyArray<number>
  /** Per process, in launch order (the API first). */
  readonly cpuMillisEach: () => ReadonlyArray<number>
  /** Per process, its CPU time in user space and in the kernel so far (sampled at the clock's tick). */
  readonly usageEach: () => ReadonlyArray<{ readonly userMillis: number; readonly kernelMillis: number }>
  /** Where creates go. */
  readonly url: string
  readonly databaseUrl: string
  /** The data directory: stored files are under `files/`. */
  readonly dataDir: string
  readonly keys: ReadonlyArray<string>
  /** Stops every process. */
  readonly stop: () => Promise<void>
  /** Drops the database and the data directory, once stopped. */
  readonly remove: () => Promise<void>
}

export interface WorkerServiceOptions {
  readonly mode: WorkerMode
  /** `PROVIDER_POLL_SECONDS`. */
  readonly pollSeconds: number
  /** The fake upstream's API key. */
  readonly upstreamKey: string
  /** Accounts made, one key each (default 64). */
  readonly keyCount?: number
  /** Node flags for every measured process, beside those of its script. */
  readonly nodeArgs?: ReadonlyArray<string>
  /** A command the dedicated worker (Lyre's or the bare one) runs under: callgrind's. */
  readonly workerWrapper?: ReadonlyArray<string>
}

export const startWorkerService = async (
  upstream: FakeUpstream,
  options: WorkerServiceOptions
): Promise<WorkerService> => {
  const { mode, nodeArgs = [], workerWrapper = [] } = options
  const data = await prepareBenchData("postgres")
  const env = {
    ...data.env,
    PROVIDER: "http",
    PROVIDER_URL: upstream.url,
    PROVIDER_API_KEY: options.upstreamKey,
    PROVIDER_POLL_SECONDS: String(options.pollSeconds)
  }
  const launch = (
    entry: string,
    extra: Record<string, string>,
    wrapper: ReadonlyArray<string> = [],
    flags = nodeArgs
  ) => launchService({ entry, env: { ...env, ...extra }, nodeArgs: flags, wrapper })
  const workerEntry = "packages/server/src/worker-main.ts"
  // The API and the worker at once: a worker answers no readiness probe, so it gets the API's
  // start-up and the making of the accounts to be up before the load begins. In the bare run
  // Lyre's API only makes the schema and the accounts, then idles uncounted while the bare
  // handler takes the load; the bare worker runs with the node flags of `pnpm worker`, so that
  // the two workers differ only in their code.
  const lyre = launch("packages/server/src/main.ts", { WORKER: mode === "inline" ? "inline" : "off" })
  const children: Array<ChildProcess> =
    mode === "inline" ? [lyre] : mode === "split" ? [lyre, launch(workerEntry, {}, workerWrapper)] : []
  const stop = () => Promise.all([...new Set([lyre, ...children])].map(stopProcess)).then(() => undefined)
  try {
    await waitUntilServing(lyre, data.url, "/readyz")
    const keys = await createAccountKeys(adminOf(data.url, data.adminToken), options.keyCount ?? 64, ["music:generate"])
    let url = data.url
    if (mode === "bare") {
      const port = await freePort()
      url = `http://127.0.0.1:${port}`
      children.push(launch("bench/bare-server.ts", { PORT: String(port), PUBLIC_URL: url }))
      children.push(
        launch("bench/bare-worker.ts", { PUBLIC_URL: url }, workerWrapper, [...scriptFlagsOf(workerEntry), ...nodeArgs])
      )
      await waitUntilServing(children[0] as ChildProcess, url, "/api/v1/me")
    }
    return {
      url,
      databaseUrl: data.databaseUrl ?? "",
      dataDir: data.env["DATA_DIR"] ?? "",
      keys,
      pids: children.map((proc) => proc.pid ?? 0),
      cpuMillis: () => children.reduce((sum, proc) => sum + cpuMillisOf(proc.pid), 0),
      cpuMillisEach: () => children.map((proc) => cpuMillisOf(proc.pid)),
      mainThreadCpuMillisEach: () => children.map((proc) => cpuMillisOf(proc.pid, { mainThread: true })),
      usageEach: () => children.map((proc) => usageOf(proc.pid)),
      stop,
      remove: data.remove
    }
  } catch (cause) {
    await stop()
    await data.remove()
    throw cause
  }
}
