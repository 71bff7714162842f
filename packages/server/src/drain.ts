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
