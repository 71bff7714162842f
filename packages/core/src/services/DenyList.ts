/**
 * Revoked access tokens by `jti` (RFC 7009), kept until the token would have expired anyway.
 * In Redis when `REDIS_URL` is set, so a revocation is refused at once by every API process; in
 * this process's memory otherwise (the embedded default is one process).
 */
import { Clock, Context, Effect, Layer } from "effect"

/**
 * What the Redis deny-list needs of a client: `set` with an absolute expiry and `exists`, as
 * ioredis's `Redis` has them. Named structurally so that core's declarations need no Redis client.
 */
export interface RedisKeyValue {
  readonly set: (key: string, value: string, mode: "PXAT", unixTimeMillis: number) => Promise<unknown>
  readonly exists: (key: string) => Promise<number>
}

export class DenyList extends Context.Service<DenyList, {
  /** Denies `jti` until `expiresAtMillis` (the token's own `exp`). */
  readonly add: (jti: string, expiresAtMillis: number) => Effect.Effect<void>
  readonly has: (jti: string) => Effect.Effect<boolean>
}>()("lyre/core/services/DenyList") {
  static readonly layerMemory = Layer.sync(DenyList)(() => {
    const denied = new Map<string, number>()
    const sweep = (now: number) => {
      for (const [jti, until] of denied) if (until <= now) denied.delete(jti)
    }
    return DenyList.of({
      add: (jti, expiresAtMillis) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          sweep(now)
          if (expiresAtMillis > now) denied.set(jti, expiresAtMillis)
        }),
      has: (jti) =>
        denied.size === 0
          ? Effect.succeed(false)
          : Effect.map(Clock.currentTimeMillis, (now) => (denied.get(jti) ?? 0) > now)
    })
  })

  static readonly layerRedis = (redis: RedisKeyValue, keyPrefix = "lyre:deny:") =>
    Layer.succeed(DenyList)(DenyList.of({
      add: (jti, expiresAtMillis) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          expiresAtMillis <= now
            ? Effect.void
            : Effect.promise(() => redis.set(keyPrefix + jti, "1", "PXAT", expiresAtMillis)).pipe(Effect.asVoid)),
      has: (jti) => Effect.promise(() => redis.exists(keyPrefix + jti)).pipe(Effect.map((n) => n > 0))
    }))
}
