/**
 * Revoked access tokens by `jti` (RFC 7009), kept until the token would have expired anyway.
 * In Redis when `REDIS_URL` is set, so a revocation is refused at once by every API process; in
 * this process's memory otherwise (the embedded default is one process).
 *
 * With Redis, each process also keeps a mirror of the list: a revocation is written to Redis and
 * published on a channel every process listens to, and a process that has subscribed and loaded
 * the list answers from its mirror, not with a Redis round trip per request (which cost a
 * quarter of a token request's throughput). Redis publishes to every subscriber before it
 * answers the revoker, so the mirror has the `jti` before the revocation's answer reaches
 * anyone. While a process's subscription is down or its list not yet loaded, it asks Redis.
 *
 * While Redis is away (see RedisGate) a process answers from its mirror: every token revoked
 * before the outage stays refused. A revocation made during the outage is refused by this
 * process at once and kept; it is written and published when the subscription is live again,
 * and from then on every process refuses it.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { RedisGate } from "../platform/RedisGate.ts"

/**
 * What the Redis deny-list needs of a client, as ioredis's `Redis` has them. Named structurally
 * so that core's declarations need no Redis client.
 */
export interface RedisKeyValue {
  readonly set: (key: string, value: string, mode: "PXAT", unixTimeMillis: number) => Promise<unknown>
  readonly exists: (key: string) => Promise<number>
  readonly publish: (channel: string, message: string) => Promise<number>
  readonly scan: (
    cursor: string,
    match: "MATCH",
    pattern: string,
    count: "COUNT",
    howMany: number
  ) => Promise<[cursor: string, elements: Array<string>]>
  readonly mget: (keys: Array<string>) => Promise<Array<string | null>>
}

/**
 * The revocations channel as a subscription on a connection of its own (a subscribed Redis
 * connection can send nothing else). `onLive(true)` once subscribed (and again after every
 * reconnection), `onLive(false)` when the connection drops; answers a function that stops it.
 */
export interface DenyFeed {
  readonly listen: (
    channel: string,
    handlers: { readonly onMessage: (message: string) => void; readonly onLive: (live: boolean) => void }
  ) => () => void
}

/** A denied `jti` and when its token expires: the message published and the value stored. */
const encode = (jti: string, expiresAtMillis: number) => `${expiresAtMillis} ${jti}`
const decode = (message: string): readonly [string, number] | undefined => {
  const space = message.indexOf(" ")
  const until = Number(message.slice(0, space))
  return space > 0 && Number.isFinite(until) ? [message.slice(space + 1), until] : undefined
}

/** Denied `jti`s and their expiry, swept of expired ones as they are written. */
const makeDenied = () => {
  const denied = new Map<string, number>()
  const hasAt = (jti: string, now: number): boolean => (denied.get(jti) ?? 0) > now
  return {
    /** Several at once (a list loaded from Redis) with one sweep, not one per entry. */
    addAll: (entries: Iterable<readonly [jti: string, until: number]>, now: number) => {
      for (const [known, knownUntil] of denied) if (knownUntil <= now) denied.delete(known)
      for (const [jti, until] of entries) if (until > now) denied.set(jti, until)
    },
    has: (jti: string): Effect.Effect<boolean> =>
      denied.size === 0 ? Effect.succeed(false) : Effect.map(Clock.currentTimeMillis, (now) => hasAt(jti, now)),
    hasAt,
    /** Those still in force at `now`. */
    live: (now: number): Array<readonly [jti: string, until: number]> => [...denied].filter(([, until]) => until > now)
  }
}

export class DenyList extends Context.Service<
  DenyList,
  {
    /** Denies `jti` until `expiresAtMillis` (the token's own `exp`). */
    readonly add: (jti: string, expiresAtMillis: number) => Effect.Effect<void>
    readonly has: (jti: string) => Effect.Effect<boolean>
  }
>()("lyre/core/credentials/DenyList") {
  static readonly layerMemory = Layer.sync(DenyList)(() => {
    const denied = makeDenied()
    return DenyList.of({
      add: (jti, expiresAtMillis) =>
        Effect.map(Clock.currentTimeMillis, (now) => denied.addAll([[jti, expiresAtMillis]], now)),
      has: denied.has
    })
  })

  /** Without a feed, every check asks Redis; with one, the mirror answers once it is live. */
  static readonly layerRedis = (redis: RedisKeyValue, feed?: DenyFeed, keyPrefix = "lyre:deny:") =>
    Layer.effect(DenyList)(
      Effect.gen(function* () {
        const gate = yield* RedisGate
        const channel = `${keyPrefix}revoked`
        const mirror = makeDenied()
        // A revocation is never taken back: what the mirror holds is refused whatever Redis says,
        // for a Redis restarted empty answers "not revoked" until the mirrors have written it again.
        const askRedis = (jti: string) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            mirror.hasAt(jti, now)
              ? Effect.succeed(true)
              : gate.run(
                  "deny_list",
                  () => redis.exists(keyPrefix + jti).then((n) => n > 0),
                  () => false
                )
          )
        /** Revocations Redis has not stored yet (made while it was away), by `jti`. */
        const unsent = new Map<string, number>()
        const send = async (jti: string, expiresAtMillis: number) => {
          // Stored first, so a process that loads the list after this misses nothing; then told.
          await redis.set(keyPrefix + jti, String(expiresAtMillis), "PXAT", expiresAtMillis)
          await redis.publish(channel, encode(jti, expiresAtMillis))
          unsent.delete(jti)
        }
        const sendUnsent = async () => {
          const now = Date.now()
          for (const [jti, until] of unsent) {
            if (until <= now) unsent.delete(jti)
            else await send(jti, until)
          }
        }
        // A hung Redis comes back without the subscription ever dropping: send on the gate's word too.
        gate.whenBack(() => {
          sendUnsent().catch(() => undefined)
        })
        let live = false
        // Bumped by every change of the subscription, so a load that a reconnection overtook is dropped.
        let epoch = 0

        /**
         * Every stored revocation into the mirror (the subscription already catches new ones), and
         * back into Redis every one the mirror holds that Redis lost (a restart without persistence),
         * so the processes that started after it refuse them too.
         */
        const load = async () => {
          const stored = new Set<string>()
          let cursor = "0"
          do {
            const [next, keys] = await redis.scan(cursor, "MATCH", `${keyPrefix}*`, "COUNT", 1_000)
            cursor = next
            const denied = keys.filter((key) => key !== channel)
            const values = denied.length === 0 ? [] : await redis.mget(denied)
            const now = Date.now()
            for (const key of denied) stored.add(key.slice(keyPrefix.length))
            mirror.addAll(
              values.map((value, i) => {
                const until = Number(value)
                // A value this code did not write: keep it for an access token's whole life.
                return [
                  (denied[i] ?? "").slice(keyPrefix.length),
                  Number.isFinite(until) ? until : now + 3_600_000
                ] as const
              }),
              now
            )
          } while (cursor !== "0")
          for (const [jti, until] of mirror.live(Date.now())) if (!stored.has(jti)) await send(jti, until)
        }

        if (feed !== undefined) {
          yield* Effect.acquireRelease(
            Effect.sync(() =>
              feed.listen(channel, {
                onMessage: (message) => {
                  const parsed = decode(message)
                  if (parsed !== undefined) mirror.addAll([parsed], Date.now())
                },
                onLive: (up) => {
                  const mine = ++epoch
                  live = false
                  if (!up) return
                  // The subscription can be back before the command connection is (they reconnect
                  // apart): a catch-up that fails is tried again until it holds or the feed changes.
                  const catchUp = (wait: number): void => {
                    if (epoch !== mine) return
                    sendUnsent()
                      .then(load)
                      .then(
                        () => {
                          if (epoch === mine) live = true
                        },
                        () => {
                          if (epoch !== mine) return
                          const retry = setTimeout(() => catchUp(Math.min(wait * 2, 5_000)), wait)
                          retry.unref()
                        }
                      )
                  }
                  catchUp(250)
                }
              })
            ),
            (stop) =>
              Effect.sync(() => {
                // A pending catch-up sees a changed epoch and stops.
                epoch++
                stop()
              })
          )
        }

        return DenyList.of({
          add: (jti, expiresAtMillis) =>
            Effect.flatMap(Clock.currentTimeMillis, (now) => {
              if (expiresAtMillis <= now) return Effect.void
              mirror.addAll([[jti, expiresAtMillis]], now)
              unsent.set(jti, expiresAtMillis)
              return gate.run(
                "deny_list",
                () => send(jti, expiresAtMillis),
                () => undefined
              )
            }),
          has: (jti) => (live ? mirror.has(jti) : askRedis(jti))
        })
      })
    )
}
