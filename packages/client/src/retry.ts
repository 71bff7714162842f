/** When and how long to wait before trying a request again. */

/** `Retry-After` as seconds: an integer, or an HTTP date measured from `now`. */
export const parseRetryAfter = (value: string | null, now: number = Date.now()): number | undefined => {
  if (value === null) return undefined
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed)
  const date = Date.parse(trimmed)
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000))
}

/** Exponential back-off with full jitter: 0.5 s, 1 s, 2 s, ... capped at 8 s. */
export const backoffMs = (attempt: number, random: () => number = Math.random): number =>
  Math.round(Math.min(8_000, 500 * 2 ** attempt) * (0.5 + random() / 2))

/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort)
      resolve()
    }, ms)
    signal?.addEventListener("abort", onAbort, { once: true })
  })
