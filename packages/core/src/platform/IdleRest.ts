/**
 * How long a polling loop rests after a look that found nothing: `firstMillis` after a look that
 * found work, doubling with each empty look up to `maxMillis`.
 *
 * A signal ends a rest at once (a callback, a new event, a freed slot), so the rest bounds only
 * how late work that nobody signalled is found: work due by the clock (a poll, a retry) or
 * written by another process. Resting a fixed 100-250 ms, an idle `pnpm start` ran about 35
 * statements a second in its embedded database, 55 ms of CPU a second with nobody using it.
 */
import { doubled } from "../domain/backoff.ts"

export interface IdleRest {
  /** After a look that found work: the next empty look rests `firstMillis`. */
  readonly reset: () => void
  /** After an empty look: the rest to take now (each one twice the last, up to `maxMillis`). */
  readonly next: () => number
}

/** The longest rest of an idle loop unless told otherwise: work nobody signalled waits at most this. */
export const defaultMaxIdleMillis = 1_000

/** `maxMillis` absent (an option left unset): `defaultMaxIdleMillis`. */
export const makeIdleRest = (firstMillis: number, maxMillis: number = defaultMaxIdleMillis): IdleRest => {
  const ceiling = Math.max(firstMillis, maxMillis)
  /** Empty looks since the last that found work; past the ceiling more of them change nothing. */
  let empty = 0
  return {
    reset: () => {
      empty = 0
    },
    next: () => {
      const rest = doubled(firstMillis, ceiling, empty)
      if (rest < ceiling) empty++
      return rest
    }
  }
}
