/**
 * `first`, doubled `steps` times, and at most `max`: how every wait that backs off grows (the
 * sign-in throttle, a task's polls, a lost database, an idle loop's rest), in one place.
 */
export const doubled = (first: number, max: number, steps: number): number => Math.min(max, first * 2 ** steps)
