/**
 * The deny-list of revoked access tokens on a real Redis, as two API processes hold it: a
 * revocation written by one is denied by the other at once, from its mirror (no Redis round
 * trip) once its subscription is live, and by asking Redis while it is not. Skipped without
 * REDIS_URL (the memory list is one process's, and the OAuth tests cover it).
 */
import { type Effect, Layer, ManagedRuntime } from "effect"
import { Redis } from "ioredis"
import { afterAll, describe, expect, it } from "vitest"
import { DenyList, randomBase62, RedisGate } from "@lyre/core"
import type { RedisKeyValue } from "@lyre/core"
import { denyFeedOf } from "../../src/app.ts"

const redisUrl = process.env["REDIS_URL"]
const prefix = `lyre:test:deny:${randomBase62(8)}:`
const clients: Array<Redis> = []
const runtimes: Array<ManagedRuntime.ManagedRuntime<DenyList, never>> = []

afterAll(async () => {
  for (const runtime of runtimes) await runtime.dispose()
  for (const client of clients) await client.quit()
})

/** One process's deny-list, with a count of the EXISTS questions it sends Redis. */
const openProcess = () => {
  const client = new Redis(redisUrl ?? "")
  // Reconnects 300 ms after a drop: the window in which the test sees the mirror down.
  const subscriber = new Redis(redisUrl ?? "", { retryStrategy: () => 300 })
  clients.push(client, subscriber)
  const asked = { exists: 0 }
  const counted: RedisKeyValue = {
    set: (key, value, mode, at) => client.set(key, value, mode, at),
    exists: (key) => {
      asked.exists++
      return client.exists(key)
    },
    publish: (channel, message) => client.publish(channel, message),
    scan: (cursor, match, pattern, count, howMany) => client.scan(cursor, match, pattern, count, howMany),
    mget: (keys) => client.mget(keys)
  }
  const runtime = ManagedRuntime.make(
    DenyList.layerRedis(counted, denyFeedOf(subscriber), prefix).pipe(Layer.provide(RedisGate.layer()))
  )
  runtimes.push(runtime)
  const run = <A>(program: (list: DenyList["Service"]) => Effect.Effect<A>) => runtime.runPromise(DenyList.use(program))
  return {
    asked,
    subscriber,
    roundTrip: () => client.ping(),
    add: (jti: string, expiresAtMillis: number) => run((list) => list.add(jti, expiresAtMillis)),
    has: (jti: string) => run((list) => list.has(jti)),
    /** Until a check is answered without asking Redis: the mirror is live. */
    live: async () => {
      for (let i = 0; i < 200; i++) {
        const before = asked.exists
        await run((list) => list.has("probe"))
        if (asked.exists === before) return
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      throw new Error("the mirror never went live")
    }
  }
}

describe.skipIf(redisUrl === undefined)("the deny-list on Redis, across processes", () => {
  const inAMinute = () => Date.now() + 60_000

  it("loads what was revoked before it started, then denies from its mirror without asking Redis", async () => {
    const first = openProcess()
    await first.add("before", inAMinute())
    await first.add("expired", Date.now() - 1)
    const second = openProcess()
    await second.live()
    const asked = second.asked.exists
    expect(await second.has("before")).toBe(true)
    expect(await second.has("expired")).toBe(false)
    expect(await second.has("never")).toBe(false)
    expect(second.asked.exists).toBe(asked)
  })

  it("denies a revocation made by another process at once", async () => {
    const revoker = openProcess()
    const other = openProcess()
    await Promise.all([revoker.live(), other.live()])
    for (let i = 0; i < 50; i++) {
      const jti = `gnt_x.${randomBase62(12)}`
      await revoker.add(jti, inAMinute())
      // What asks the other process next reaches it over the network, after the revocation's
      // answer: modelled by a round trip through Redis, which sent the message before that.
      await other.roundTrip()
      expect(await other.has(jti)).toBe(true)
    }
  })

  it("asks Redis while its subscription is down, and answers from the mirror again once back", async () => {
    const revoker = openProcess()
    const other = openProcess()
    await other.live()
    // The subscription's connection drops (ioredis reconnects it 300 ms later).
    const closed = new Promise((resolve) => other.subscriber.once("close", resolve))
    other.subscriber.disconnect(true)
    await closed
    const jti = `gnt_y.${randomBase62(12)}`
    await revoker.add(jti, inAMinute())
    const asked = other.asked.exists
    expect(await other.has(jti)).toBe(true)
    expect(other.asked.exists).toBe(asked + 1)
    await other.live()
    expect(await other.has(jti)).toBe(true)
  })
})
