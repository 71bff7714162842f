/**
 * Redis on the request path, bounded. Every call the limiter and the deny-list make goes through
 * one gate per process: a call that fails, or two in a row that take longer than `timeoutMillis`,
 * mark Redis away (one slow answer on a busy host is not an outage, and calling it one made the
 * log say "unavailable" and "back" twice within a second), and while it is away the callers answer from their process-local fallbacks at once instead of
 * trying again; one call a `probeMillis` is let through to find out whether Redis is back. So a
 * request waits on Redis at most once, for at most `timeoutMillis`, even when two services
 * would each have asked it, and the first request after Redis returns finds it again.
 *
 * An outage is logged once when it begins and once when it ends, `lyre_redis_fallback` is 1
 * while it lasts, and `lyre_redis_fallback_total` counts the answers the fallbacks gave.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { Metrics } from "../observability/Metrics.ts"
import type { RedisFallbackUse } from "../observability/Metrics.ts"

export interface RedisGateOptions {
  /** Longest a call may take before its fallback answers (the client's own command time-out should match). */
  readonly timeoutMillis: number
  /** While Redis is away, how often one call tries it again. */
  readonly probeMillis: number
}

/** A call that outlived the gate's bound (its answer, if it comes, is dropped). */
class SlowRedis extends Error {
  constructor(millis: number) {
    super(`Redis took longer than ${millis} ms`)
  }
}

export const defaultRedisGateOptions: RedisGateOptions = { timeoutMillis: 150, probeMillis: 1_000 }

export class RedisGate extends Context.Service<
  RedisGate,
  {
    /** `call`'s answer, or `fallback`'s when Redis is away, failing or slower than the bound. */
    readonly run: <A>(use: RedisFallbackUse, call: () => Promise<A>, fallback: () => A) => Effect.Effect<A>
    /** Whether the last word on Redis was that it is away. */
    readonly away: () => boolean
    /** Calls `f` each time Redis answers again after being away, for as long as the layer lives. */
    readonly whenBack: (f: () => void) => void
  }
>()("lyre/core/platform/RedisGate") {
  static readonly layer = (options: RedisGateOptions = defaultRedisGateOptions) =>
    Layer.effect(RedisGate)(
      Effect.gen(function* () {
        const metrics = yield* Metrics
        let away = false
        /** While away: when the next call may try Redis. */
        let probeAt = 0
        let probing = false
        /** Calls in a row that outlived the bound while Redis was not marked away. */
        let slowInARow = 0
        const backListeners: Array<() => void> = []

        const wentAway = (error: unknown) =>
          Effect.suspend(() => {
            if (away) return Effect.void
            away = true
            metrics.redisFallback(true)
            return Effect.logWarning(
              "redis unavailable: limits and the deny-list answer from this process until it is back"
            ).pipe(Effect.annotateLogs({ error: error instanceof Error ? error.message : String(error) }))
          })
        const cameBack = Effect.suspend(() => {
          if (!away) return Effect.void
          away = false
          metrics.redisFallback(false)
          for (const f of backListeners) f()
          return Effect.logWarning("redis is back: limits and the deny-list are shared again")
        })

        /** The call under the bound; a late answer or a late failure is dropped, never unhandled. */
        const bounded = <A>(call: () => Promise<A>) =>
          Effect.callback<A, unknown>((resume) => {
            const timer = setTimeout(
              () => resume(Effect.fail(new SlowRedis(options.timeoutMillis))),
              options.timeoutMillis
            )
            let promise: Promise<A>
            try {
              promise = call()
            } catch (error) {
              clearTimeout(timer)
              resume(Effect.fail(error))
              return
            }
            promise.then(
              (value) => {
                clearTimeout(timer)
                resume(Effect.succeed(value))
              },
              (error: unknown) => {
                clearTimeout(timer)
                resume(Effect.fail(error))
              }
            )
          })

        const run = <A>(use: RedisFallbackUse, call: () => Promise<A>, fallback: () => A): Effect.Effect<A> =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => {
            const fellBack = Effect.sync(() => {
              metrics.redisFallbackAnswer(use)
              return fallback()
            })
            if (away && (probing || now < probeAt)) return fellBack
            const probe = away
            if (probe) probing = true
            return bounded(call).pipe(
              Effect.tap(() => {
                slowInARow = 0
                return cameBack
              }),
              Effect.catch((error) => {
                // Not yet away and only slow once: this call falls back, the next one tries again.
                if (!away && error instanceof SlowRedis && ++slowInARow < 2) return fellBack
                slowInARow = 0
                return Effect.andThen(
                  Effect.flatMap(Clock.currentTimeMillis, (failedAt) =>
                    Effect.andThen(
                      Effect.sync(() => {
                        probeAt = failedAt + options.probeMillis
                      }),
                      wentAway(error)
                    )
                  ),
                  fellBack
                )
              }),
              Effect.ensuring(
                Effect.sync(() => {
                  if (probe) probing = false
                })
              )
            )
          })

        return RedisGate.of({
          run,
          away: () => away,
          whenBack: (f) => {
            backListeners.push(f)
          }
        })
      })
    )
}
