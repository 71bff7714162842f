/**
 * `wait_for_generation`, `wait_for_export` (and `tasks/result`, with no time limit): polls a get procedure until
 * the task leaves `pending` or the time is up. Every poll is a procedure call and counts against the credential's requests per minute,
 * so polls thin out (1, 1, 2, 2, 3, then every 5 seconds): a two-minute wait costs 29 polls,
 * about 15 a minute of the 60 a credential has by default, and a song ready in ten seconds 7.
 */
import type { McpJob } from "./jobs.ts"
import type { Outcome } from "./procedures.ts"

export const pollDelaysSeconds: ReadonlyArray<number> = [1, 1, 2, 2, 3]
export const steadyPollSeconds = 5

const delayBefore = (poll: number): number => pollDelaysSeconds[poll] ?? steadyPollSeconds

/** Resolves after `ms`, or at once when the signal aborts. */
const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener("abort", done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener("abort", done)
  })

/**
 * Elapsed and total seconds (no total when the wait lasts until the task ends, `tasks/result`),
 * and the job as the last poll saw it.
 */
export type Progress = (elapsedSeconds: number, totalSeconds: number | undefined, job: McpJob) => Promise<void>

/** Polls `load` (one procedure call each time) for the job `id`. */
export const waitFor = async <J extends McpJob>(
  load: (id: string) => Promise<Outcome<J>>,
  id: string,
  timeoutSeconds: number,
  signal: AbortSignal,
  progress: Progress
): Promise<Outcome<J>> => {
  const started = performance.now()
  const deadline = started + timeoutSeconds * 1000
  let last: J | undefined
  for (let poll = 0; ; poll++) {
    const outcome = await load(id)
    if (outcome.ok) {
      last = outcome.value
      if (last.status !== "pending") return outcome
    } else if (last === undefined || outcome.error._tag !== "RpmExceeded") {
      return outcome
    }
    const remaining = deadline - performance.now()
    if (remaining <= 0) return { ok: true, value: last }
    const elapsed = (performance.now() - started) / 1000
    await progress(elapsed, Number.isFinite(timeoutSeconds) ? timeoutSeconds : undefined, last)
    // A poll refused for the rate limit waits as long as the limiter asks, within the deadline.
    const pause =
      outcome.ok || !("retryAfterSeconds" in outcome.error) ? delayBefore(poll) : outcome.error.retryAfterSeconds
    await sleep(Math.min(pause * 1000, remaining), signal)
    if (signal.aborted) return { ok: true, value: last }
  }
}
