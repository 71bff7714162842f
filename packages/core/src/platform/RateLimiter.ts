/**
 * Requests per minute as a sliding window: at most `limit` accepted requests in any 60 seconds.
 * Effect's own RateLimiter knows fixed windows and token buckets, neither of which holds that
 * guarantee, so the window is a log of accepted request times: a ring per subject in memory,
 * a sorted set updated by one atomic script in Redis (with a window in memory while Redis is away).
 */
import { createHash } from "node:crypto"
import { Clock, Context, Effect, Layer } from "effect"
import { randomBase62 } from "../domain/ids.ts"
import { RedisGate } from "./RedisGate.ts"

export const windowMillis = 60_000

export interface RateLimitDecision {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  /** Unix seconds at which the oldest counted request leaves the window. */
  readonly resetAtSeconds: number
  /** Whole seconds until a request would be accepted again (0 when allowed). */
  readonly retryAfterSeconds: number
}

/**
 * What the Redis limiter needs of a client: the `eval` (and `evalsha`) of an ioredis `Redis`.
 * Named structurally so that core's declarations need no Redis client installed.
 */
export interface RedisScripting {
  readonly eval: (script: string, numKeys: number, ...args: Array<string | number>) => Promise<unknown>
  /**
   * With it, a call names the script by its SHA1 and sends it whole only when Redis lacks it
   * (NOSCRIPT: a restart or SCRIPT FLUSH): not ~700 bytes to write and parse on every request.
   */
  readonly evalsha?: (sha1: string, numKeys: number, ...args: Array<string | number>) => Promise<unknown>
}

const isNoScript = (error: unknown): boolean => error instanceof Error && error.message.startsWith("NOSCRIPT")

/** Runs `script` by its SHA1 when the client can, falling back to the whole script once Redis has lost it. */
const scriptRunner = (redis: RedisScripting, script: string) => {
  const evalsha = redis.evalsha
  if (evalsha === undefined)
    return (numKeys: number, ...args: Array<string | number>) => redis.eval(script, numKeys, ...args)
  const sha1 = createHash("sha1").update(script).digest("hex")
  return (numKeys: number, ...args: Array<string | number>) =>
    evalsha
      .call(redis, sha1, numKeys, ...args)
      .catch((error: unknown) => (isNoScript(error) ? redis.eval(script, numKeys, ...args) : Promise.reject(error)))
}

/**
 * One subject's accepted request times, oldest first, from `head` on. Entries that leave the
 * window move `head` forward; the array is cut only once most of it is behind `head`, so a hit
 * costs the same however busy the subject: removing from the front of an array moves all the
 * rest (about 4 µs a hit for a subject at 800 requests per second, a minute of them kept).
 */
interface WindowLog {
  times: Array<number>
  head: number
}

/** Below this many expired entries the array is not worth cutting. */
const compactAfter = 1024

/** Sliding windows in this process's memory: a log of accepted request times per subject. */
const makeWindows = () => {
  const logs = new Map<string, WindowLog>()
  return (subject: string, limit: number, now: number): RateLimitDecision => {
    let log = logs.get(subject)
    if (log === undefined) {
      log = { times: [], head: 0 }
      logs.set(subject, log)
    }
    // Drop what has left the window; the log is in time order and never longer than limit.
    const { times } = log
    while (log.head < times.length && (times[log.head] ?? 0) <= now - windowMillis) log.head++
    if (log.head > compactAfter && log.head * 2 > times.length) {
      log.times = times.slice(log.head)
      log.head = 0
    }
    const allowed = log.times.length - log.head < limit
    if (allowed) log.times.push(now)
    const count = log.times.length - log.head
    if (count === 0) logs.delete(subject)
    return decide(allowed, limit, count, log.times[log.head] ?? now, now)
  }
}

export class RateLimiter extends Context.Service<
  RateLimiter,
  {
    readonly hit: (subject: string, limit: number) => Effect.Effect<RateLimitDecision>
  }
>()("lyre/core/platform/RateLimiter") {
  static readonly layerMemory = Layer.sync(RateLimiter)(() => {
    const windows = makeWindows()
    return RateLimiter.of({
      hit: (subject, limit) => Effect.map(Clock.currentTimeMillis, (now) => windows(subject, limit, now))
    })
  })

  /**
   * The window in Redis, shared by every process. While Redis is away (see RedisGate) each
   * process counts in a window of its own instead: a request is never refused or held up for
   * Redis, at the price of each process allowing the limit by itself during the outage.
   */
  static readonly layerRedis = (redis: RedisScripting, keyPrefix = "lyre:rpm:") =>
    Layer.effect(RateLimiter)(
      Effect.gen(function* () {
        const gate = yield* RedisGate
        const windows = makeWindows()
        const slidingWindow = scriptRunner(redis, slidingWindowScript)
        return RateLimiter.of({
          hit: (subject, limit) =>
            Effect.flatMap(Clock.currentTimeMillis, (now) =>
              gate.run(
                "rate_limit",
                async () => {
                  const member = randomBase62(12)
                  const reply = await slidingWindow(1, keyPrefix + subject, windowMillis, limit, member)
                  const [allowed, count, oldest, redisNow] = reply as [number, number, number, number]
                  return decide(allowed === 1, limit, count, oldest, redisNow)
                },
                () => windows(subject, limit, now)
              )
            )
        })
      })
    )
}

const decide = (allowed: boolean, limit: number, count: number, oldest: number, now: number): RateLimitDecision => {
  const resetAt = oldest + windowMillis
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - count),
    resetAtSeconds: Math.ceil(resetAt / 1000),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((resetAt - now) / 1000))
  }
}

/**
 * KEYS[1] the subject's log; ARGV window ms, limit, a unique member. The clock is Redis's own,
 * so every API process counts against the same time.
 */
export const slidingWindowScript = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local allowed = 0
if count < limit then
  redis.call('ZADD', KEYS[1], now, now .. '-' .. ARGV[3])
  count = count + 1
  allowed = 1
end
redis.call('PEXPIRE', KEYS[1], window)
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local first = now
if oldest[2] then first = tonumber(oldest[2]) end
return {allowed, count, first, now}
`
