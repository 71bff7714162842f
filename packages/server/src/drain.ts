import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Effect, Exit, Runtime } from "effect"
import { makeLeaseBook, unreturnedMessage } from "@lyre/core"
import type { LeaseBook } from "@lyre/core"
import { makeLogger } from "./log.ts"

/** The drain's hard limit after `SIGTERM`: within an orchestrator's usual 10 s grace period. */
export const drainLimitMillis = 9_500

/**
 * How long after the signal leases may still be handed back: what is left after that goes to
 * closing the pools and writing the line, inside the hard limit.
 */
export const handBackMillis = 9_000

/**
 * The exit code of a drain that finished in time but could not hand every lease back (its line
 * names them; they come back when their leases expire). 1 stays a failure to start, or a drain
 * cut at the hard limit.
 */
export const leasesNotHandedBackExitCode = 3

/** The drain's line naming what is still held, once (the layer's report may have written it already). */
const writeUnreturned = (leases: LeaseBook): void => {
  const unreturned = leases.unreturned()
  if (unreturned !== null && leases.markReported()) makeLogger("error").log("error", unreturnedMessage, unreturned)
}

/**
 * The drain's hard limit. A `SIGTERM` lets requests in flight finish (7 s at most), then stops
 * the worker, which hands its leases back (until `handBackMillis` after the signal), and closes
 * the pools; if any of that hangs (a database that stopped answering mid-drain), the process
 * still ends within 10 s of the signal, as an orchestrator's grace period expects, naming the
 * leases it still holds (they expire on their own).
 */
export const drainBound = (leases: LeaseBook, millis = drainLimitMillis): void => {
  const arm = () => {
    leases.drainBy(Date.now() + Math.min(handBackMillis, millis))
    setTimeout(() => {
      process.stderr.write(`lyre: the drain took longer than ${millis} ms; exiting\n`)
      writeUnreturned(leases)
      process.exit(1)
    }, millis).unref()
  }
  process.once("SIGTERM", arm)
  process.once("SIGINT", arm)
}

/**
 * Runs an entry point's `program` as the process, as `pnpm start` and `pnpm worker` both do: a
 * failure is one line on stderr after `name`, SIGTERM and SIGINT interrupt it within
 * `drainBound`, and a shutdown that completed its finalizers is a success (exit 0), unless it
 * could not hand back every lease it held (exit `leasesNotHandedBackExitCode`, the ids named in
 * one line). `program` is given the process's book of leases for its runtime.
 */
export const runDrained = <E>(name: string, program: (leases: LeaseBook) => Effect.Effect<unknown, E>): void => {
  const leases = makeLeaseBook()
  drainBound(leases)
  NodeRuntime.runMain(
    program(leases).pipe(
      Effect.tapError((error) =>
        Effect.sync(() => process.stderr.write(`${name}: ${error instanceof Error ? error.message : String(error)}\n`))
      )
    ),
    {
      disableErrorReporting: true,
      teardown: (exit, onExit) => {
        if (!(Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause))) return Runtime.defaultTeardown(exit, onExit)
        writeUnreturned(leases)
        onExit(leases.unreturned() === null ? 0 : leasesNotHandedBackExitCode)
      }
    }
  )
}
