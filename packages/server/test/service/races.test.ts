import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectBooksBalanced, waitUntilTerminal } from "../support/books.ts"
import { api, backend, createAccount, startTestServer, validSong } from "../support/harness.ts"
import type { TestServer } from "../support/harness.ts"

let server: TestServer
/** Its worker finishes tasks as fast as the fake upstream answers, while creates keep coming. */
let finishing: TestServer
beforeAll(async () => {
  ;[server, finishing] = await Promise.all([
    startTestServer(),
    startTestServer({ worker: "inline", providerPollSeconds: 0.05 })
  ])
})
afterAll(() => Promise.all([server?.close(), finishing?.close()]))

describe(`races (${backend.database})`, () => {
  it("200 concurrent creates on an account that can afford exactly 7 leave 7 tasks, a zero balance and an exact ledger", async () => {
    const account = await createAccount(server, { subscription: 200, onetime: 150, concurrency_limit: 1_000 })
    const answers = await Promise.all(
      Array.from({ length: 200 }, () =>
        api(server, "POST", "/api/v1/music/generations", { key: account.key, body: validSong })
      )
    )
    const statuses = answers.map((a) => a.status)
    expect(statuses.filter((s) => s === 202)).toHaveLength(7)
    expect(statuses.filter((s) => s === 402)).toHaveLength(193)
    const view = await server.admin("GET", `/accounts/${account.id}`)
    expect(view.body.credits).toEqual({ subscription: 0, onetime: 0, total: 0 })
    const [tasks] = await server.query<{ n: number }>(
      "select count(*)::int as n from generation_tasks where account_id = $1",
      account.id
    )
    expect(tasks?.n).toBe(7)
    const [sums] = await server.query<{ s: number; o: number; debits: number }>(
      `select sum(subscription_delta)::int as s, sum(onetime_delta)::int as o,
              count(*) filter (where kind = 'debit')::int as debits
       from credit_ledger where account_id = $1`,
      account.id
    )
    expect(sums).toEqual({ s: 0, o: 0, debits: 7 })
  })

  it("50 concurrent creates on a key with concurrency 10 leave exactly 10 pending", async () => {
    const account = await createAccount(server, { subscription: 100_000, concurrency_limit: 10 })
    const answers = await Promise.all(
      Array.from({ length: 50 }, () =>
        api(server, "POST", "/api/v1/music/generations", { key: account.key, body: validSong })
      )
    )
    expect(answers.filter((a) => a.status === 202)).toHaveLength(10)
    expect(
      answers.filter((a) => a.status === 429 && String(a.body.error?.code) === "concurrent_limit_exceeded")
    ).toHaveLength(40)
    const [pending] = await server.query<{ n: number }>(
      "select count(*)::int as n from generation_tasks where account_id = $1 and status = 'pending'",
      account.id
    )
    expect(pending?.n).toBe(10)
    expect((await server.admin("GET", `/accounts/${account.id}`)).body.credits?.total).toBe(100_000 - 500)
  })

  it("creates racing the completions of the same credential's tasks all succeed and all finish: no deadlock", {
    timeout: 60_000
  }, async () => {
    const account = await createAccount(finishing, { subscription: 1_000_000, concurrency_limit: 1_000 })
    let next = 0
    const statuses: Array<number> = []
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < 240) {
          next++
          statuses.push(
            (await api(finishing, "POST", "/api/v1/music/generations", { key: account.key, body: validSong })).status
          )
        }
      })
    )
    expect(statuses.filter((status) => status !== 202)).toEqual([])
    expect(await waitUntilTerminal(finishing.query, 40_000)).toBe(0)
    const counts = await expectBooksBalanced(finishing.query, statuses.length)
    expect(counts["ready"]).toBe(statuses.length)
  })
})
