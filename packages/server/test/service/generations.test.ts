import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { stillPending } from "@lyre/core"
import { api, createAccount, startTestServer, validSong } from "../support/harness.ts"
import type { Json, TestServer } from "../support/harness.ts"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

const create = (key: string, body: unknown = validSong, headers: Record<string, string> = {}) =>
  api(server, "POST", "/api/v1/music/generations", { key, body, headers })

const balanceOf = async (accountId: string) => (await server.admin("GET", `/accounts/${accountId}`)).body.credits
const tasksOf = async (accountId: string) =>
  (
    await server.query<{ n: number }>(
      "select count(*)::int as n from generation_tasks where account_id = $1",
      accountId
    )
  )[0]?.n

describe("POST /v1/music/generations", () => {
  it("202: a complete pending task, charged at once", async () => {
    const account = await createAccount(server, { subscription: 1_000 })
    const res = await create(account.key)
    expect(res.status).toBe(202)
    expect(res.body).toEqual({
      id: expect.stringMatching(/^gen_[0-9A-Za-z]{24}$/),
      status: "pending",
      model: "aether",
      created_at: expect.any(String),
      updated_at: expect.any(String),
      credits_used: 50,
      credits_refunded: 0,
      error: null,
      tracks: [],
      previews: []
    })
    expect(new Date(String(res.body.created_at)).toISOString()).toBe(res.body.created_at)
    expect(await balanceOf(account.id)).toEqual({ subscription: 950, onetime: 0, total: 950 })
  })

  it("charges 50 / 100 / 180 by model, subscription credits before one-time", async () => {
    const account = await createAccount(server, { subscription: 120, onetime: 300 })
    expect((await create(account.key, { ...validSong, model: "echo" })).body.credits_used).toBe(100)
    expect(await balanceOf(account.id)).toEqual({ subscription: 20, onetime: 300, total: 320 })
    expect((await create(account.key, { ...validSong, model: "nocturne" })).body.credits_used).toBe(180)
    expect(await balanceOf(account.id)).toEqual({ subscription: 0, onetime: 140, total: 140 })
    expect((await create(account.key, { ...validSong, model: "aether" })).body.credits_used).toBe(50)
    expect(await balanceOf(account.id)).toEqual({ subscription: 0, onetime: 90, total: 90 })
    const ledger = (await server.admin("GET", `/accounts/${account.id}/ledger`)).body.data as unknown as Array<Json>
    expect(ledger.map((e) => [e.kind, e.subscription_delta, e.onetime_delta])).toEqual([
      ["grant", 120, 300],
      ["debit", -100, 0],
      ["debit", -20, -160],
      ["debit", 0, -50]
    ])
  })

  it("an instrumental needs no lyrics", async () => {
    const account = await createAccount(server)
    const res = await create(account.key, { style: "ambient", title: "Drift", instrumental: true })
    expect(res.status).toBe(202)
  })

  describe("400 invalid_request_error, and nothing is charged or stored", () => {
    const cases: ReadonlyArray<readonly [string, unknown, string, string | undefined]> = [
      ["missing style", { title: "t", lyrics: "l" }, "missing_parameter", "style"],
      ["title too long", { ...validSong, title: "t".repeat(201) }, "invalid_parameter", "title"],
      ["lyrics required for a vocal song", { style: "s", title: "t" }, "missing_parameter", "lyrics"],
      ["whitespace lyrics", { ...validSong, lyrics: "   " }, "invalid_parameter", "lyrics"],
      ["unknown property", { ...validSong, bpm: 120 }, "unknown_parameter", "bpm"],
      [
        "aether-only on echo",
        { ...validSong, model: "echo", style_weight: 0.2 },
        "parameter_not_supported_for_model",
        "style_weight"
      ],
      ["unknown model", { ...validSong, model: "v5" }, "invalid_parameter", "model"],
      ["weight out of range", { ...validSong, audio_weight: 2 }, "invalid_parameter", "audio_weight"],
      ["not an object", [1, 2], "invalid_parameter", undefined]
    ]
    for (const [name, body, code, param] of cases) {
      it(name, async () => {
        const account = await createAccount(server)
        const res = await create(account.key, body)
        expect(res.status).toBe(400)
        const expected: Record<string, unknown> = { type: "invalid_request_error", code, message: expect.any(String) }
        if (param !== undefined) expected["param"] = param
        expect(res.body).toEqual({ error: expected })
        expect(await balanceOf(account.id)).toEqual({ subscription: 1_000, onetime: 0, total: 1_000 })
        expect(await tasksOf(account.id)).toBe(0)
      })
    }

    it("malformed JSON: invalid_json", async () => {
      const account = await createAccount(server)
      const res = await api(server, "POST", "/api/v1/music/generations", {
        key: account.key,
        rawBody: '{"style": "x",',
        headers: { "content-type": "application/json" }
      })
      expect(res.status).toBe(400)
      expect(res.body).toEqual({
        error: { type: "invalid_request_error", code: "invalid_json", message: expect.any(String) }
      })
    })

    it("a body that is not JSON: invalid_content_type", async () => {
      const account = await createAccount(server)
      const res = await api(server, "POST", "/api/v1/music/generations", {
        key: account.key,
        rawBody: "style=x",
        headers: { "content-type": "application/x-www-form-urlencoded" }
      })
      expect(res.status).toBe(400)
      expect(res.body.error?.code).toBe("invalid_content_type")
    })

    it("an oversized body: request_too_large", async () => {
      const account = await createAccount(server)
      const res = await api(server, "POST", "/api/v1/music/generations", {
        key: account.key,
        rawBody: JSON.stringify({ ...validSong, lyrics: "x".repeat(400_000) }),
        headers: { "content-type": "application/json" }
      })
      expect(res.status).toBe(400)
      expect(res.body.error?.code).toBe("request_too_large")
      expect(await tasksOf(account.id)).toBe(0)
    })
  })

  it("402 insufficient_credits: nothing charged, no task", async () => {
    const account = await createAccount(server, { subscription: 30, onetime: 60 })
    const res = await create(account.key, { ...validSong, model: "echo" })
    expect(res.status).toBe(402)
    expect(res.body).toEqual({
      error: { type: "insufficient_credits", code: "insufficient_credits", message: expect.any(String) }
    })
    expect(await balanceOf(account.id)).toEqual({ subscription: 30, onetime: 60, total: 90 })
    expect(await tasksOf(account.id)).toBe(0)
    expect((await create(account.key, { ...validSong, model: "aether" })).status).toBe(202)
  })

  it("429 concurrent_limit_exceeded at the credential's limit, with Retry-After; nothing charged", async () => {
    const account = await createAccount(server, { concurrency_limit: 2 })
    expect((await create(account.key)).status).toBe(202)
    expect((await create(account.key)).status).toBe(202)
    const res = await create(account.key)
    expect(res.status).toBe(429)
    expect(res.body).toEqual({
      error: {
        type: "rate_limit_error",
        code: "concurrent_limit_exceeded",
        message: expect.any(String),
        retry_after_seconds: expect.any(Number)
      }
    })
    expect(Number(res.headers.get("retry-after"))).toBe(res.body.error?.retry_after_seconds)
    expect(await balanceOf(account.id)).toEqual({ subscription: 900, onetime: 0, total: 900 })
  })

  it("429 concurrency is checked before credits (check order)", async () => {
    const account = await createAccount(server, { concurrency_limit: 1, subscription: 60 })
    expect((await create(account.key)).status).toBe(202)
    expect((await create(account.key)).body.error?.code).toBe("concurrent_limit_exceeded")
  })

  it("concurrency counts per key: another key of the same account has its own limit", async () => {
    const account = await createAccount(server, { concurrency_limit: 1 })
    const second = await server.admin("POST", `/accounts/${account.id}/keys`, { name: "b", scopes: ["music:generate"] })
    expect((await create(account.key)).status).toBe(202)
    expect((await create(account.key)).status).toBe(429)
    expect((await create(String(second.body.key))).status).toBe(202)
  })

  it("a credential without an in-flight counter (made before counters existed) gets one at its first create", async () => {
    const account = await createAccount(server, { concurrency_limit: 1 })
    await server.query("delete from credential_inflight where subject = $1", account.keyId)
    expect((await create(account.key)).status).toBe(202)
    expect((await create(account.key)).status).toBe(429)
    const [slot] = await server.query<{ pending: number }>(
      "select pending from credential_inflight where subject = $1",
      account.keyId
    )
    expect(slot?.pending).toBe(1)
  })

  it("503 model_unavailable while the operator marks the model so; no charge; other models still work", async () => {
    const account = await createAccount(server)
    const off = await server.admin("PUT", "/models/echo", { available: false, retry_after_seconds: 120 })
    expect(off.body).toEqual({ model: "echo", available: false, retry_after_seconds: 120 })
    const res = await create(account.key, { ...validSong, model: "echo" })
    expect(res.status).toBe(503)
    expect(res.body).toEqual({
      error: {
        type: "service_unavailable",
        code: "model_unavailable",
        message: expect.any(String),
        model: "echo",
        retry_after_seconds: 120
      }
    })
    expect(res.headers.get("retry-after")).toBe("120")
    expect((await create(account.key, validSong)).status).toBe(202)
    expect(await balanceOf(account.id)).toEqual({ subscription: 950, onetime: 0, total: 950 })
    await server.admin("PUT", "/models/echo", { available: true })
    expect((await create(account.key, { ...validSong, model: "echo" })).status).toBe(202)
  })

  it("503 comes before concurrency and credits (check order)", async () => {
    const account = await createAccount(server, { subscription: 0 })
    await server.admin("PUT", "/models/nocturne", { available: false })
    expect((await create(account.key, { ...validSong, model: "nocturne" })).status).toBe(503)
    await server.admin("PUT", "/models/nocturne", { available: true })
    expect((await create(account.key, { ...validSong, model: "nocturne" })).status).toBe(402)
  })

  describe("Idempotency-Key", () => {
    it("the same key and body returns the first answer and charges once", async () => {
      const account = await createAccount(server)
      const first = await create(account.key, validSong, { "idempotency-key": "order-1" })
      const again = await create(account.key, validSong, { "idempotency-key": "order-1" })
      expect(first.status).toBe(202)
      expect(again.status).toBe(202)
      expect(again.body).toEqual(first.body)
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      expect(await tasksOf(account.id)).toBe(1)
      expect((await balanceOf(account.id))?.total).toBe(950)
    })

    it("the same key with another body is 400 idempotency_key_reused", async () => {
      const account = await createAccount(server)
      await create(account.key, validSong, { "idempotency-key": "order-2" })
      const res = await create(account.key, { ...validSong, title: "Other" }, { "idempotency-key": "order-2" })
      expect(res.status).toBe(400)
      expect(res.body.error?.code).toBe("idempotency_key_reused")
      expect(await tasksOf(account.id)).toBe(1)
    })

    it("keys belong to the account: another account may use the same key", async () => {
      const a = await createAccount(server)
      const b = await createAccount(server)
      const first = await create(a.key, validSong, { "idempotency-key": "shared" })
      const second = await create(b.key, validSong, { "idempotency-key": "shared" })
      expect(second.body.id).not.toBe(first.body.id)
    })

    it("concurrent requests with one key create one task", async () => {
      const account = await createAccount(server)
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => create(account.key, validSong, { "idempotency-key": "burst" }))
      )
      expect(new Set(answers.map((a) => a.status))).toEqual(new Set([202]))
      expect(new Set(answers.map((a) => a.body.id)).size).toBe(1)
      expect(await tasksOf(account.id)).toBe(1)
      expect((await balanceOf(account.id))?.total).toBe(950)
    })

    it("a failed first attempt is not remembered: a retry can succeed", async () => {
      const account = await createAccount(server, { subscription: 0 })
      expect((await create(account.key, validSong, { "idempotency-key": "topup" })).status).toBe(402)
      await server.admin("POST", `/accounts/${account.id}/credits`, { onetime: 50 })
      expect((await create(account.key, validSong, { "idempotency-key": "topup" })).status).toBe(202)
    })

    it("a held key answers first: a retry after the balance ran out still gets the first task, not a 402", async () => {
      const account = await createAccount(server, { subscription: 50 })
      const first = await create(account.key, validSong, { "idempotency-key": "last-credits" })
      expect(first.status).toBe(202)
      expect((await create(account.key, validSong)).status).toBe(402)
      const again = await create(account.key, validSong, { "idempotency-key": "last-credits" })
      expect(again.status).toBe(202)
      expect(again.body.id).toBe(first.body.id)
      expect(again.headers.get("idempotent-replayed")).toBe("true")
    })

    it("a key past its 24 hours is free again, for any body, and charges anew", async () => {
      const account = await createAccount(server)
      const first = await create(account.key, validSong, { "idempotency-key": "yesterday" })
      await server.query(
        "update idempotency_keys set created_at = now() - interval '25 hours' where account_id = $1 and key = 'yesterday'",
        account.id
      )
      const later = await create(account.key, { ...validSong, title: "Today" }, { "idempotency-key": "yesterday" })
      expect(later.status).toBe(202)
      expect(later.body.id).not.toBe(first.body.id)
      expect(await tasksOf(account.id)).toBe(2)
      expect((await balanceOf(account.id))?.total).toBe(900)
      // And the key now holds the new answer.
      const replay = await create(account.key, { ...validSong, title: "Today" }, { "idempotency-key": "yesterday" })
      expect(replay.body.id).toBe(later.body.id)
    })

    it("a key longer than 255 characters is refused", async () => {
      const account = await createAccount(server)
      const res = await create(account.key, validSong, { "idempotency-key": "k".repeat(256) })
      expect(res.status).toBe(400)
      expect(res.body.error?.param).toBe("Idempotency-Key")
    })
  })
})

describe("GET /v1/music/generations/{id}", () => {
  it("200: the task, as create returned it", async () => {
    const account = await createAccount(server)
    const created = await create(account.key)
    const res = await api(server, "GET", `/api/v1/music/generations/${String(created.body.id)}`, { key: account.key })
    expect(res.status).toBe(200)
    expect(res.body).toEqual(created.body)
  })

  it("200 for another credential of the same account", async () => {
    const account = await createAccount(server)
    const other = await server.admin("POST", `/accounts/${account.id}/keys`, { name: "b", scopes: ["music:generate"] })
    const created = await create(account.key)
    const res = await api(server, "GET", `/api/v1/music/generations/${String(created.body.id)}`, {
      key: String(other.body.key)
    })
    expect(res.status).toBe(200)
  })

  it("404 task_not_found for another account's task", async () => {
    const owner = await createAccount(server)
    const stranger = await createAccount(server)
    const created = await create(owner.key)
    const res = await api(server, "GET", `/api/v1/music/generations/${String(created.body.id)}`, { key: stranger.key })
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ error: { type: "not_found", code: "task_not_found", message: expect.any(String) } })
  })

  it("404 for an unknown id and for an id of the wrong shape, never 400 or 500", async () => {
    const account = await createAccount(server)
    for (const id of ["gen_AAAAAAAAAAAAAAAAAAAAAAAA", "nope", "gen_'%3B--", "%E2%82%AC"]) {
      const res = await api(server, "GET", `/api/v1/music/generations/${id}`, { key: account.key })
      expect(res.status).toBe(404)
      expect(res.body.error?.code).toBe("task_not_found")
    }
  })
})

describe("GET /v1/music/generations (list)", () => {
  it("the account's tasks, newest first, paged with starting_after", async () => {
    const account = await createAccount(server)
    const other = await createAccount(server)
    await create(other.key)
    const ids: Array<string> = []
    for (let i = 0; i < 5; i++) ids.push(String((await create(account.key)).body.id))
    const first = await api(server, "GET", "/api/v1/music/generations?limit=2", { key: account.key })
    expect(first.status).toBe(200)
    const page1 = first.body.data as unknown as Array<Json>
    expect(page1.map((t) => t.id)).toEqual([ids[4], ids[3]])
    expect(first.body.has_more).toBe(true)
    const next = await api(server, "GET", `/api/v1/music/generations?limit=3&starting_after=${ids[3]}`, {
      key: account.key
    })
    const page2 = next.body.data as unknown as Array<Json>
    expect(page2.map((t) => t.id)).toEqual([ids[2], ids[1], ids[0]])
    expect(next.body.has_more).toBe(false)
  })

  it("400 for a limit out of range, an unknown cursor or an unknown parameter", async () => {
    const account = await createAccount(server)
    for (const [query, code, param] of [
      ["limit=0", "invalid_parameter", "limit"],
      ["limit=101", "invalid_parameter", "limit"],
      ["limit=abc", "invalid_parameter", "limit"],
      ["starting_after=gen_AAAAAAAAAAAAAAAAAAAAAAAA", "invalid_parameter", "starting_after"],
      ["sort=asc", "unknown_parameter", "sort"]
    ] as const) {
      const res = await api(server, "GET", `/api/v1/music/generations?${query}`, { key: account.key })
      expect(res.status).toBe(400)
      expect(res.body.error?.code).toBe(code)
      expect(res.body.error?.param).toBe(param)
    }
  })
})

describe("statements on one task by id", () => {
  /** The generic plan of `select ... where id = $1 and <guard>`, as a cached prepared statement gets it. */
  const genericPlanOf = (guard: string) =>
    server.runtime.runPromise(
      SqlClient.use((sql) =>
        sql.withTransaction(
          Effect.gen(function* () {
            yield* sql.unsafe("set local plan_cache_mode = force_generic_plan")
            yield* sql.unsafe(`prepare by_id(text) as select id from generation_tasks where id = $1 and ${guard}`)
            const plan = yield* sql.unsafe("explain (format json) execute by_id('gen_x')")
            yield* sql.unsafe("deallocate by_id")
            return JSON.stringify(plan)
          })
        )
      ).pipe(Effect.orDie)
    )

  // Written "status = 'pending'", the same generic plan scans the partial index of pending tasks
  // for the id (PostgreSQL 15 picks it here): every transition would walk every task in flight.
  it("guard 'still pending' so that only the primary key can find the row, whatever plan is cached", async () => {
    const account = await createAccount(server, { subscription: 100_000, concurrency_limit: 1_000 })
    for (let i = 0; i < 20; i++) await create(account.key)
    const plan = await genericPlanOf(stillPending())
    expect(plan).toContain("generation_tasks_pkey")
    expect(plan).not.toMatch(/generation_tasks_(deadline|due)/)
  })
})
