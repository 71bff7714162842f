/**
 * The overview's usage figures (`account.usage`): credits spent per day by model and song tool,
 * net of refunds on the day the work was asked for, and generations ready and failed, over the
 * last 30 UTC days; only the signed-in account's own ledger.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { daysEnding, foldUsage } from "@lyre/core/domain/usage"
import type { TestServer } from "../support/harness.ts"
import { createHolder, envelopeOf, startDashboardServer, trpc } from "../support/dashboard.ts"
import type { Holder, Session } from "../support/dashboard.ts"
import { writeLedger } from "../support/ledger.ts"

let server: TestServer
let signIn: (holder: Holder) => Promise<Session>
beforeAll(async () => {
  ;({ server, signIn } = await startDashboardServer())
})
afterAll(() => server?.close())

describe("daysEnding and foldUsage", () => {
  it("counts 30 UTC days ending today, oldest first", () => {
    const days = daysEnding(Date.parse("2026-03-02T23:59:00Z"))
    expect(days).toHaveLength(30)
    expect([days[0], days.at(-2), days.at(-1)]).toEqual(["2026-02-01", "2026-03-01", "2026-03-02"])
  })

  it("aligns each series with the days, stacks models before tools, and leaves out empty series and days outside", () => {
    const days = ["2026-01-01", "2026-01-02", "2026-01-03"]
    const usage = foldUsage(
      days,
      [
        { day: "2026-01-03", series: "stems", credits: 20 },
        { day: "2026-01-01", series: "echo", credits: 100 },
        { day: "2026-01-03", series: "echo", credits: 200 },
        { day: "2026-01-02", series: "wav", credits: 0 },
        { day: "2025-12-31", series: "aether", credits: 50 }
      ],
      [
        { day: "2026-01-02", status: "ready", count: 3 },
        { day: "2026-01-03", status: "failed", count: 1 }
      ]
    )
    expect(usage).toEqual({
      days,
      spent: [
        { series: "echo", kind: "model", credits: [100, 0, 200] },
        { series: "stems", kind: "tool", credits: [0, 0, 20] }
      ],
      generations: { ready: [0, 3, 0], failed: [0, 0, 1] }
    })
  })
})

describe("account.usage", () => {
  it("sums the ledger the test wrote, by day and series, refunds netted on the day of the request", async () => {
    const holder = await createHolder(server)
    await writeLedger(server, holder.id, [
      { daysAgo: 0, what: "aether", credits: 50, status: "ready" },
      { daysAgo: 0, what: "aether", credits: 50, status: "ready" },
      { daysAgo: 0, what: "stems", credits: 20, status: "ready" },
      { daysAgo: 2, what: "echo", credits: 100, status: "failed" },
      { daysAgo: 2, what: "extend", credits: 50, status: "ready" },
      { daysAgo: 5, what: "wav", credits: 5, status: "failed" },
      { daysAgo: 5, what: "timed_lyrics", credits: 5, status: "ready" },
      { daysAgo: 29, what: "nocturne", credits: 180, status: "ready" },
      { daysAgo: 31, what: "aether", credits: 50, status: "ready" }
    ])
    const session = await signIn(holder)
    const answer = await trpc(server, "query", "account.usage", undefined, { cookie: session.cookie })
    expect(answer.status).toBe(200)
    const usage = answer.body["result"]?.["data"] as unknown as ReturnType<typeof foldUsage>
    const days = daysEnding(Date.now())
    expect(usage.days).toEqual(days)
    const at = (daysAgo: number) => 29 - daysAgo
    const series = Object.fromEntries(usage.spent.map((s) => [s.series, s]))
    expect(Object.keys(series)).toEqual(["aether", "nocturne", "extend", "stems", "timed_lyrics"])
    expect(series["aether"]?.credits[at(0)]).toBe(100)
    expect(series["aether"]?.credits.reduce((a, b) => a + b, 0)).toBe(100)
    expect(series["nocturne"]?.credits[at(29)]).toBe(180)
    expect(series["extend"]).toMatchObject({ kind: "tool" })
    expect(series["extend"]?.credits[at(2)]).toBe(50)
    expect(series["stems"]?.credits[at(0)]).toBe(20)
    expect(series["timed_lyrics"]?.credits[at(5)]).toBe(5)
    // The failed echo generation and WAV export were refunded in full: nothing spent on them.
    expect(series["echo"]).toBeUndefined()
    expect(series["wav"]).toBeUndefined()
    // The ledger's source task (60 days ago) and the item 31 days ago are outside the window.
    expect(usage.generations.ready.reduce((a, b) => a + b, 0)).toBe(4)
    expect(usage.generations.ready[at(0)]).toBe(2)
    expect(usage.generations.failed[at(2)]).toBe(1)
    expect(usage.generations.failed.reduce((a, b) => a + b, 0)).toBe(1)

    // Another account sees nothing of it.
    const other = await createHolder(server)
    const theirs = await trpc(server, "query", "account.usage", undefined, { cookie: (await signIn(other)).cookie })
    expect(theirs.body["result"]?.["data"]?.["spent"]).toEqual([])
  })

  it("needs a signed-in session", async () => {
    const answer = await trpc(server, "query", "account.usage", undefined)
    expect(answer.status).toBe(401)
    expect(envelopeOf(answer.body)["type"]).toBe("authentication_error")
  })
})
