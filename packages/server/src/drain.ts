import { NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Exit, Runtime } from "effect"

/**
 * The drain's hard limit. A `SIGTERM` lets requests in flight finish (7 s at most), then stops
 * the worker (which hands its leases back) and closes the pools; if any of that hangs (a
 * database that stopped answering mid-drain), the process still ends within 10 s of the signal,
 * as an orchestrator's grace period expects, and its leases expire on their own.
 */
export const drainBound = (millis = 9_500): void => {
  const arm = () => {
    setTimeout(() => {
      process.stderr.write(`lyre: the drain took longer than ${millis} ms; exiting\n`)
      process.exit(1)
    }, millis).unref()
  }
  process.once("SIGTERM", arm)
  process.once("SIGINT", arm)
}

/**
 * Runs an entry point's `program` as the process, as `pnpm start` and `pnpm worker` both do: a
 * failure is one line on stderr after `name`, SIGTERM and SIGINT interrupt it within
 * `drainBound`, and a shutdown that completed its finalizers is a success (exit 0).
 */
export const runDrained = <E>(name: string, program: Effect.Effect<unknown, E>): void => {
  drainBound()
  NodeRuntime.runMain(program.pipe(
    Effect.tapError((error) =>
      Effect.sync(() => process.stderr.write(`${name}: ${error instanceof Error ? error.message : String(error)}\n`))
    )
  ), {
    disableErrorReporting: true,
    teardown: (exit, onExit) =>
      Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)
  })
}
