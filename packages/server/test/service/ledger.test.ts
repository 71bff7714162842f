import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Generations } from "@lyre/core"
import { api, createAccount, startTestServer, validSong } from "../support/harness.ts"
import type { TestServer } from "../support/harness.ts"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

const markFailed = (taskId: string) =>
  server.runtime.runPromise(
    Generations.use((g) => g.markFailed(taskId, { code: "provider_error", message: "upstream said no" }))
  )
const markReady = (taskId: string) => server.runtime.runPromise(Generations.use((g) => g.markReady(taskId, [])))
const credits = async (accountId: string) => (await server.admin("GET", `/accounts/${accountId}`)).body.credits

describe("the task state machine and the ledger", () => {
  it("pending -> failed refunds to the buckets debited, exactly once", async () => {
    const account = await createAccount(server, { subscription: 30, onetime: 100 })
    const task = await api(server, "POST", "/api/v1/music/generations", { key: account.key, body: validSong })
    expect(await credits(account.id)).toEqual({ subscription: 0, onetime: 80, total: 80 })
    const id = String(task.body.id)
    const results = await Promise.all([markFailed(id), markFailed(id), markFailed(id)])
    expect(results.filter(Boolean)).toHaveLength(1)
    expect(await credits(account.id)).toEqual({ subscription: 30, onetime: 100, total: 130 })
    const failed = await api(server, "GET", `/api/v1/music/generations/${id}`, { key: account.key })
    expect(failed.body).toMatchObject({
      status: "failed",
      credits_used: 50,
      credits_refunded: 50,
      error: { code: "provider_error", message: "upstream said no" },
      tracks: []
    })
    expect(await markReady(id)).toBe(false)
    const [sums] = await server.query<{ s: number; o: number; refunds: number }>(
      `select sum(subscription_delta)::int as s, sum(onetime_delta)::int as o,
              count(*) filter (where kind = 'refund')::int as refunds
       from credit_ledger where account_id = $1`,
      account.id
    )
    expect(sums).toEqual({ s: 30, o: 100, refunds: 1 })
  })

  it("pending -> ready once; a ready task is never failed or refunded", async () => {
    const account = await createAccount(server)
    const task = await api(server, "POST", "/api/v1/music/generations", { key: account.key, body: validSong })
    const id = String(task.body.id)
    expect(await markReady(id)).toBe(true)
    expect(await markReady(id)).toBe(false)
    expect(await markFailed(id)).toBe(false)
    expect((await credits(account.id))?.total).toBe(950)
    const ready = await api(server, "GET", `/api/v1/music/generations/${id}`, { key: account.key })
    expect(ready.body.status).toBe("ready")
    expect(ready.body.credits_refunded).toBe(0)
  })

  it("a finished task frees its concurrency slot", async () => {
    const account = await createAccount(server, { concurrency_limit: 1 })
    const first = await api(server, "POST", "/api/v1/music/generations", { key: account.key, body: validSong })
    expect((await api(server, "POST", "/api/v1/music/generations", { key: account.key, body: validSong })).status).toBe(
      429
    )
    await markReady(String(first.body.id))
    expect((await api(server, "POST", "/api/v1/music/generations", { key: account.key, body: validSong })).status).toBe(
      202
    )
  })

  it("the ledger explains the balance after every change", async () => {
    const account = await createAccount(server, { subscription: 120, onetime: 90 })
    const a = await api(server, "POST", "/api/v1/music/generations", {
      key: account.key,
      body: { ...validSong, model: "echo" }
    })
    await api(server, "POST", "/api/v1/music/generations", { key: account.key, body: validSong })
    await markFailed(String(a.body.id))
    await server.admin("POST", `/accounts/${account.id}/credits`, { subscription: -10 })
    const rows = await server.query<{ s: number; o: number; sa: number; oa: number }>(
      `select subscription_delta as s, onetime_delta as o, subscription_after as sa, onetime_after as oa
       from credit_ledger where account_id = $1 order by seq`,
      account.id
    )
    let subscription = 0
    let onetime = 0
    for (const row of rows) {
      subscription += row.s
      onetime += row.o
      expect([row.sa, row.oa]).toEqual([subscription, onetime])
    }
    const view = await credits(account.id)
    expect([view?.subscription, view?.onetime]).toEqual([subscription, onetime])
  })
})
