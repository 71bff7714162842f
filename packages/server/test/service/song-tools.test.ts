/**
 * Song tools (DESIGN.md section 9) through REST: extensions and exports, their check order,
 * limits, idempotency, ledger, events and the export worker's paths. Sources are ready tracks
 * written straight into the database (the end-to-end run on the built-in engine is
 * song-tools-engine.test.ts). Two servers: `engine` (the built-in provider, which accepts every
 * submission; the worker is off, so exports stay pending unless a test drives the worker), and
 * `upstream` (the fake Suno-style upstream, which refuses an export of a track it never made:
 * the synchronous rejection).
 */
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Ids, randomBase62, SongTools, Webhooks } from "@lyre/core"
import { ExportWorker } from "@lyre/worker"
import { api, createAccount, startTestServer, validSong } from "../support/harness.ts"
import { readyTrack } from "../support/tracks.ts"
import { parseMetrics, scrape, sumOf } from "../support/prometheus.ts"
import type { Json, TestServer } from "../support/harness.ts"

let engine: TestServer
let upstream: TestServer
beforeAll(async () => {
  ;[engine, upstream] = await Promise.all([
    startTestServer({ provider: "embedded", providerUrl: null, providerApiKey: null }),
    startTestServer()
  ])
})
afterAll(async () => {
  await Promise.all([engine?.close(), upstream?.close()])
})

const exportOf = (
  server: TestServer,
  key: string,
  trackId: string,
  body: unknown,
  headers: Record<string, string> = {}
) => api(server, "POST", `/api/v1/music/tracks/${trackId}/exports`, { key, body, headers })

const extend = (
  server: TestServer,
  key: string,
  trackId: string,
  body: unknown = {},
  headers: Record<string, string> = {}
) => api(server, "POST", `/api/v1/music/tracks/${trackId}/extensions`, { key, body, headers })

const balanceOf = async (server: TestServer, accountId: string) =>
  Number((await server.admin("GET", `/accounts/${accountId}`)).body.credits?.total)

const ledgerOf = async (server: TestServer, accountId: string) =>
  (await server.admin("GET", `/accounts/${accountId}/ledger`)).body.data as unknown as ReadonlyArray<Json>

const exportRows = (server: TestServer, accountId: string) =>
  server.query<{ id: string; status: string }>("select id, status from exports where account_id = $1", accountId)

const eventsOf = (server: TestServer, exportId: string) =>
  server.query<{ type: string; payload: Json }>(
    "select type, payload from outbox_events where payload->>'id' = $1 order by seq",
    exportId
  )

const tools = <A>(server: TestServer, f: (t: SongTools["Service"]) => Effect.Effect<A>) =>
  server.runtime.runPromise(SongTools.use(f))

/** One pass of the export worker (claim, poll, settle) or its deadline sweep, as the inline worker runs them. */
const exportWorker = (server: TestServer) => {
  const layer = ExportWorker.layer({
    workerId: "test-worker",
    publicUrl: server.url,
    pollSeconds: 1,
    leaseSeconds: 30
  }).pipe(Layer.provide(Ids.layer))
  return {
    tick: () => server.runtime.runPromise(ExportWorker.use((w) => w.tick).pipe(Effect.provide(layer))),
    sweep: () => server.runtime.runPromise(ExportWorker.use((w) => w.sweep).pipe(Effect.provide(layer)))
  }
}

const notFoundTrack = (trackId: string) => ({
  error: { type: "not_found", code: "track_not_found", message: `No ready track ${trackId}.`, param: "track_id" }
})

describe("POST /v1/music/tracks/{track_id}/exports", () => {
  it("202: a pending Export, charged by format (wav 5, midi 5, stems 20, timed_lyrics 5), a debit in the ledger", async () => {
    const account = await createAccount(engine, { subscription: 100 })
    const source = await readyTrack(engine, account)
    const prices = { wav: 5, midi: 5, stems: 20, timed_lyrics: 5 } as const
    let balance = 100
    for (const [format, price] of Object.entries(prices)) {
      const res = await exportOf(engine, account.key, source.trackId, { format })
      expect(res.status).toBe(202)
      expect(res.body).toEqual({
        id: expect.stringMatching(/^exp_[0-9A-Za-z]{24}$/),
        track_id: source.trackId,
        task_id: source.taskId,
        format,
        status: "pending",
        credits_used: price,
        credits_refunded: 0,
        error: null,
        files: [],
        timed_lyrics: null,
        created_at: expect.any(String),
        updated_at: expect.any(String)
      })
      expect(res.headers.get("x-ratelimit-limit")).not.toBeNull()
      balance -= price
      expect(await balanceOf(engine, account.id)).toBe(balance)
    }
    const debits = (await ledgerOf(engine, account.id)).filter((e) => String(e.kind) === "debit")
    expect(debits.map((e) => [e.subscription_delta, e.task_id, String(e.export_id).slice(0, 4)])).toEqual([
      [-5, null, "exp_"],
      [-5, null, "exp_"],
      [-20, null, "exp_"],
      [-5, null, "exp_"]
    ])
  })

  it("200: the account's ready export of that track and format, charged nothing", async () => {
    const account = await createAccount(engine, { subscription: 100 })
    const source = await readyTrack(engine, account)
    const first = await exportOf(engine, account.key, source.trackId, { format: "wav" })
    const id = String(first.body.id)
    const file = {
      name: "track.wav",
      url: `${engine.url}/files/${id}/0-track.wav`,
      content_type: "audio/wav",
      bytes: 44,
      stem: null
    }
    expect(await tools(engine, (t) => t.markExportReady(id, [file], null))).toBe(true)
    const again = await exportOf(engine, account.key, source.trackId, { format: "wav" })
    expect(again.status).toBe(200)
    expect(again.body).toMatchObject({ id, status: "ready", files: [file], credits_used: 5 })
    expect(await balanceOf(engine, account.id)).toBe(95)
    // Another format, or the same format of another account's copy of nothing, is a new export.
    expect((await exportOf(engine, account.key, source.trackId, { format: "midi" })).status).toBe(202)
  })

  describe("400 invalid_request_error, nothing charged or stored", () => {
    const cases: ReadonlyArray<readonly [string, unknown, string, string | undefined]> = [
      ["missing format", {}, "missing_parameter", "format"],
      ["unknown format", { format: "flac" }, "invalid_parameter", "format"],
      ["unknown property", { format: "wav", bitrate: 320 }, "unknown_parameter", "bitrate"],
      ["not an object", [1], "invalid_parameter", undefined]
    ]
    for (const [name, body, code, param] of cases) {
      it(name, async () => {
        const account = await createAccount(engine)
        const source = await readyTrack(engine, account)
        const res = await exportOf(engine, account.key, source.trackId, body)
        expect(res.status).toBe(400)
        const expected: Record<string, unknown> = { type: "invalid_request_error", code, message: expect.any(String) }
        if (param !== undefined) expected["param"] = param
        expect(res.body).toEqual({ error: expected })
        expect(await balanceOf(engine, account.id)).toBe(1_000)
        expect(await exportRows(engine, account.id)).toHaveLength(0)
      })
    }

    it("timed_lyrics of an instrumental track: track_has_no_lyrics, param format", async () => {
      const account = await createAccount(engine)
      const source = await readyTrack(engine, account, { instrumental: true })
      const res = await exportOf(engine, account.key, source.trackId, { format: "timed_lyrics" })
      expect(res.status).toBe(400)
      expect(res.body).toEqual({
        error: {
          type: "invalid_request_error",
          code: "track_has_no_lyrics",
          message: expect.any(String),
          param: "format"
        }
      })
      expect(await balanceOf(engine, account.id)).toBe(1_000)
      // The other formats of an instrumental are fine.
      expect((await exportOf(engine, account.key, source.trackId, { format: "midi" })).status).toBe(202)
    })
  })

  it("401: no credential", async () => {
    const res = await exportOf(engine, "", `trk_${randomBase62(24)}`, { format: "wav" })
    expect(res.status).toBe(401)
    expect(res.body.error?.type).toBe("authentication_error")
    expect(res.headers.get("www-authenticate")).toContain("resource_metadata=")
  })

  it("403: below Pro (tier_insufficient) and without music:generate (insufficient_scope)", async () => {
    const basic = await createAccount(engine, { plan: "basic" })
    const source = await readyTrack(engine, basic)
    const tier = await exportOf(engine, basic.key, source.trackId, { format: "wav" })
    expect([tier.status, tier.body.error?.code]).toEqual([403, "tier_insufficient"])
    const profile = await createAccount(engine, { scopes: ["profile"] })
    const mine = await readyTrack(engine, profile)
    const scope = await exportOf(engine, profile.key, mine.trackId, { format: "wav" })
    expect([scope.status, scope.body.error?.code]).toEqual([403, "insufficient_scope"])
    expect(scope.headers.get("www-authenticate")).toContain('scope="music:generate"')
  })

  describe("404 not_found track_not_found, param track_id", () => {
    it("another account's track, an unknown id, a malformed id", async () => {
      const owner = await createAccount(engine)
      const other = await createAccount(engine)
      const source = await readyTrack(engine, owner)
      for (const trackId of [source.trackId, `trk_${randomBase62(24)}`, "not-a-track", source.taskId]) {
        const res = await exportOf(engine, other.key, trackId, { format: "wav" })
        expect(res.status).toBe(404)
        expect(res.body).toEqual(notFoundTrack(trackId))
      }
      expect(await balanceOf(engine, other.id)).toBe(1_000)
    })

    it("a track of a task that is not ready", async () => {
      const account = await createAccount(engine)
      for (const status of ["pending", "failed"] as const) {
        const source = await readyTrack(engine, account, { status })
        const res = await exportOf(engine, account.key, source.trackId, { format: "wav" })
        expect(res.status).toBe(404)
        expect(res.body).toEqual(notFoundTrack(source.trackId))
      }
    })
  })

  it("429: requests per minute (rpm_exceeded)", async () => {
    const account = await createAccount(engine, { requests_per_minute: 1 })
    const source = await readyTrack(engine, account, { instrumental: true })
    expect((await exportOf(engine, account.key, source.trackId, { format: "midi" })).status).toBe(202)
    const res = await exportOf(engine, account.key, source.trackId, { format: "wav" })
    expect([res.status, res.body.error?.code]).toEqual([429, "rpm_exceeded"])
    expect(res.headers.get("retry-after")).not.toBeNull()
  })

  it("429: concurrency (concurrent_limit_exceeded): each pending export and extension counts", async () => {
    const account = await createAccount(engine, { concurrency_limit: 2 })
    const source = await readyTrack(engine, account, { instrumental: true })
    expect((await exportOf(engine, account.key, source.trackId, { format: "midi" })).status).toBe(202)
    expect((await extend(engine, account.key, source.trackId)).status).toBe(202)
    const res = await exportOf(engine, account.key, source.trackId, { format: "wav" })
    expect([res.status, res.body.error?.code]).toEqual([429, "concurrent_limit_exceeded"])
    expect(res.headers.get("retry-after")).not.toBeNull()
    const generation = await api(engine, "POST", "/api/v1/music/generations", { key: account.key, body: validSong })
    expect(generation.status).toBe(429)
    expect(await balanceOf(engine, account.id)).toBe(1_000 - 5 - 50)
  })

  it("429 under a race: at the concurrency limit, concurrent exports admit exactly as many as there are slots", async () => {
    const account = await createAccount(engine, { concurrency_limit: 2 })
    const source = await readyTrack(engine, account, { instrumental: true })
    const answers = await Promise.all(
      (["wav", "midi", "stems", "wav", "midi", "stems"] as const).map((format) =>
        exportOf(engine, account.key, source.trackId, { format })
      )
    )
    expect(answers.filter((a) => a.status === 202)).toHaveLength(2)
    expect(answers.filter((a) => a.status === 429)).toHaveLength(4)
    const charged = answers.filter((a) => a.status === 202).reduce((sum, a) => sum + Number(a.body.credits_used), 0)
    expect(await balanceOf(engine, account.id)).toBe(1_000 - charged)
  })

  it("credits.low: an export's debit that takes the balance below the threshold fires it once", async () => {
    const account = await createAccount(engine, { subscription: 12 })
    await engine.admin("PATCH", `/accounts/${account.id}`, { credit_alert_threshold: 10 })
    const source = await readyTrack(engine, account, { instrumental: true })
    expect((await exportOf(engine, account.key, source.trackId, { format: "wav" })).status).toBe(202)
    expect((await exportOf(engine, account.key, source.trackId, { format: "midi" })).status).toBe(202)
    const events = await engine.query<{ payload: Json }>(
      "select payload from outbox_events where account_id = $1 and type = 'credits.low'",
      account.id
    )
    expect(events.map((e) => e.payload)).toEqual([
      { threshold: 10, balance: 7, subscription_credits: 7, onetime_credits: 0 }
    ])
  })

  it("402: not enough credits (insufficient_credits), nothing charged", async () => {
    const account = await createAccount(engine, { subscription: 19 })
    const source = await readyTrack(engine, account, { instrumental: true })
    const res = await exportOf(engine, account.key, source.trackId, { format: "stems" })
    expect(res.status).toBe(402)
    expect(res.body).toEqual({
      error: {
        type: "insufficient_credits",
        code: "insufficient_credits",
        message: "A stems export costs 20 credits; the balance is 19."
      }
    })
    expect(await exportRows(engine, account.id)).toHaveLength(0)
    expect((await exportOf(engine, account.key, source.trackId, { format: "wav" })).status).toBe(202)
    expect(await balanceOf(engine, account.id)).toBe(14)
  })

  it("503: the source's model is unavailable (model_unavailable), with model and Retry-After", async () => {
    const account = await createAccount(engine)
    const source = await readyTrack(engine, account, { model: "nocturne", instrumental: true })
    await engine.admin("PUT", "/models/nocturne", { available: false, retry_after_seconds: 30 })
    try {
      const res = await exportOf(engine, account.key, source.trackId, { format: "wav" })
      expect(res.status).toBe(503)
      expect(res.body.error).toMatchObject({
        type: "service_unavailable",
        code: "model_unavailable",
        model: "nocturne",
        retry_after_seconds: 30
      })
      expect(res.headers.get("retry-after")).toBe("30")
      expect(await balanceOf(engine, account.id)).toBe(1_000)
    } finally {
      await engine.admin("PUT", "/models/nocturne", { available: true })
    }
  })

  describe("check order: credential -> plan -> scope -> rpm -> body -> model -> concurrency -> credits", () => {
    it("a bad body outranks a missing track, and a missing track outranks credits and concurrency", async () => {
      const poor = await createAccount(engine, { subscription: 0, concurrency_limit: 0 })
      const unknown = `trk_${randomBase62(24)}`
      expect((await exportOf(engine, poor.key, unknown, { format: "flac" })).body.error?.code).toBe("invalid_parameter")
      expect((await exportOf(engine, poor.key, unknown, { format: "wav" })).body.error?.code).toBe("track_not_found")
      const source = await readyTrack(engine, poor)
      expect((await exportOf(engine, poor.key, source.trackId, { format: "wav" })).body.error?.code).toBe(
        "concurrent_limit_exceeded"
      )
    })

    it("scope outranks a bad body; concurrency outranks credits; model outranks both", async () => {
      const profile = await createAccount(engine, { scopes: ["profile"] })
      expect((await exportOf(engine, profile.key, "nope", { format: "flac" })).body.error?.code).toBe(
        "insufficient_scope"
      )
      const account = await createAccount(engine, { subscription: 0, concurrency_limit: 0 })
      const source = await readyTrack(engine, account, { model: "echo", instrumental: true })
      await engine.admin("PUT", "/models/echo", { available: false })
      try {
        expect((await exportOf(engine, account.key, source.trackId, { format: "wav" })).body.error?.code).toBe(
          "model_unavailable"
        )
      } finally {
        await engine.admin("PUT", "/models/echo", { available: true })
      }
      expect((await exportOf(engine, account.key, source.trackId, { format: "wav" })).body.error?.code).toBe(
        "concurrent_limit_exceeded"
      )
    })

    it("a ready export is answered before the model, concurrency and credits are looked at", async () => {
      const account = await createAccount(engine, { subscription: 5 })
      const source = await readyTrack(engine, account, { instrumental: true })
      const first = await exportOf(engine, account.key, source.trackId, { format: "wav" })
      await tools(engine, (t) => t.markExportReady(String(first.body.id), [], null))
      await engine.admin("PATCH", `/accounts/${account.id}`, { concurrency_limit: 0 })
      const res = await exportOf(engine, account.key, source.trackId, { format: "wav" })
      expect([res.status, res.body.id]).toEqual([200, first.body.id])
      expect(await balanceOf(engine, account.id)).toBe(0)
    })
  })

  describe("Idempotency-Key", () => {
    it("a retried POST with the same key and body answers the first export and charges once", async () => {
      const account = await createAccount(engine)
      const source = await readyTrack(engine, account, { instrumental: true })
      const headers = { "idempotency-key": "export-once" }
      const first = await exportOf(engine, account.key, source.trackId, { format: "stems" }, headers)
      const second = await exportOf(engine, account.key, source.trackId, { format: "stems" }, headers)
      expect(first.status).toBe(202)
      expect(second.status).toBe(202)
      expect(second.body).toEqual(first.body)
      expect(second.headers.get("idempotent-replayed")).toBe("true")
      expect(await balanceOf(engine, account.id)).toBe(980)
      expect(await exportRows(engine, account.id)).toHaveLength(1)
    })

    it("the same key with another body (or another track): 400 idempotency_key_reused, nothing charged", async () => {
      const account = await createAccount(engine)
      const source = await readyTrack(engine, account, { instrumental: true })
      const other = await readyTrack(engine, account, { instrumental: true })
      const headers = { "idempotency-key": "export-reused" }
      expect((await exportOf(engine, account.key, source.trackId, { format: "wav" }, headers)).status).toBe(202)
      for (const [trackId, body] of [
        [source.trackId, { format: "midi" }],
        [other.trackId, { format: "wav" }]
      ] as const) {
        const res = await exportOf(engine, account.key, trackId, body, headers)
        expect([res.status, res.body.error?.code]).toEqual([400, "idempotency_key_reused"])
      }
      // A key used for a generation is not an export's.
      const generation = await api(engine, "POST", "/api/v1/music/generations", {
        key: account.key,
        body: validSong,
        headers
      })
      expect(generation.body.error?.code).toBe("idempotency_key_reused")
      expect(await balanceOf(engine, account.id)).toBe(995)
    })

    it("concurrent requests with one key make one export", async () => {
      const account = await createAccount(engine)
      const source = await readyTrack(engine, account, { instrumental: true })
      const headers = { "idempotency-key": "export-race" }
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => exportOf(engine, account.key, source.trackId, { format: "midi" }, headers))
      )
      expect(new Set(answers.map((a) => a.body.id)).size).toBe(1)
      expect(answers.every((a) => a.status === 202)).toBe(true)
      expect(await exportRows(engine, account.id)).toHaveLength(1)
      expect(await balanceOf(engine, account.id)).toBe(995)
    })

    it("a 200 for a ready export is kept under the key too", async () => {
      const account = await createAccount(engine)
      const source = await readyTrack(engine, account, { instrumental: true })
      const first = await exportOf(engine, account.key, source.trackId, { format: "wav" })
      await tools(engine, (t) => t.markExportReady(String(first.body.id), [], null))
      const headers = { "idempotency-key": "ready-kept" }
      const a = await exportOf(engine, account.key, source.trackId, { format: "wav" }, headers)
      const b = await exportOf(engine, account.key, source.trackId, { format: "wav" }, headers)
      expect([a.status, b.status]).toEqual([200, 200])
      expect(b.body).toEqual(a.body)
      expect(b.headers.get("idempotent-replayed")).toBe("true")
    })
  })

  describe("500 api_error provider_error: the provider refuses at submission", () => {
    it("the export is failed and refunded in the same transaction, export.failed is written, and a retry with the key answers the 500 again", async () => {
      const account = await createAccount(upstream, { subscription: 100 })
      const source = await readyTrack(upstream, account, { instrumental: true })
      const headers = { "idempotency-key": "refused-export" }
      const res = await exportOf(upstream, account.key, source.trackId, { format: "wav" }, headers)
      expect(res.status).toBe(500)
      expect(res.body).toEqual({ error: { type: "api_error", code: "provider_error", message: expect.any(String) } })
      expect(await balanceOf(upstream, account.id)).toBe(100)
      const again = await exportOf(upstream, account.key, source.trackId, { format: "wav" }, headers)
      expect([again.status, again.body.error?.code]).toEqual([500, "provider_error"])
      const [row, ...more] = await exportRows(upstream, account.id)
      expect(more).toHaveLength(0)
      expect(row?.status).toBe("failed")
      const ledger = (await ledgerOf(upstream, account.id)).filter((e) => String(e.export_id) === row?.id)
      expect(ledger.map((e) => [e.kind, e.subscription_delta, e.subscription_after])).toEqual([
        ["debit", -5, 95],
        ["refund", 5, 100]
      ])
      const events = await eventsOf(upstream, row?.id ?? "")
      expect(events.map((e) => e.type)).toEqual(["export.failed"])
      expect(events[0]?.payload).toMatchObject({
        id: row?.id,
        status: "failed",
        credits_refunded: 5,
        error: { code: "provider_error" }
      })
      const listed = await api(upstream, "GET", `/api/v1/music/exports/${row?.id}`, { key: account.key })
      expect(listed.body).toMatchObject({
        status: "failed",
        credits_used: 5,
        credits_refunded: 5,
        files: [],
        error: { code: "provider_error" }
      })
      // The slot it held is free again.
      const inflight = await upstream.query<{ pending: number }>(
        "select pending from credential_inflight where subject = $1",
        account.keyId
      )
      expect(inflight[0]?.pending).toBe(0)
    })
  })
})

describe("POST /v1/music/tracks/{track_id}/extensions", () => {
  it("202: a pending GenerationTask priced as a generation of the source's model, continuing at the track's end by default", async () => {
    const account = await createAccount(engine)
    const source = await readyTrack(engine, account, { model: "echo", instrumental: true })
    const res = await extend(engine, account.key, source.trackId)
    expect(res.status).toBe(202)
    expect(res.body).toEqual({
      id: expect.stringMatching(/^gen_[0-9A-Za-z]{24}$/),
      status: "pending",
      model: "echo",
      created_at: expect.any(String),
      updated_at: expect.any(String),
      credits_used: 100,
      credits_refunded: 0,
      error: null,
      tracks: [],
      previews: []
    })
    expect(await balanceOf(engine, account.id)).toBe(900)
    const [stored] = await engine.query<{ request: Json; source_track_id: string; continue_at: number }>(
      "select request, source_track_id, continue_at from generation_tasks where id = $1",
      String(res.body.id)
    )
    expect(stored).toMatchObject({ source_track_id: source.trackId, continue_at: 120 })
    expect(stored?.request).toMatchObject({
      style: "ambient, 80 bpm",
      title: "Drift",
      instrumental: true,
      model: "echo"
    })
    const listed = await api(engine, "GET", "/api/v1/music/generations", { key: account.key })
    expect((listed.body.data as unknown as Array<Json>).map((t) => t.id)).toEqual([res.body.id, source.taskId])
    const task = await api(engine, "GET", `/api/v1/music/generations/${String(res.body.id)}`, { key: account.key })
    expect(task.body).toEqual(res.body)
  })

  it("202: given fields replace the source's; a move off aether leaves the source's aether-only fields behind", async () => {
    const account = await createAccount(engine)
    const source = await readyTrack(engine, account, { extra: { vocal_gender: "f", style_weight: 0.7 } })
    const res = await extend(engine, account.key, source.trackId, {
      continue_at: 42.5,
      model: "echo",
      lyrics: "[Verse]\nA second verse",
      title: "Night Drive (extended)"
    })
    expect(res.status).toBe(202)
    expect(res.body.credits_used).toBe(100)
    const [stored] = await engine.query<{ request: Record<string, unknown>; continue_at: number }>(
      "select request, continue_at from generation_tasks where id = $1",
      String(res.body.id)
    )
    expect(stored?.continue_at).toBe(42.5)
    expect(stored?.request).toEqual({
      style: validSong.style,
      title: "Night Drive (extended)",
      lyrics: "[Verse]\nA second verse",
      instrumental: false,
      model: "echo"
    })
  })

  describe("400 invalid_request_error, nothing charged", () => {
    const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string, string]> = [
      ["continue_at 0", { continue_at: 0 }, "invalid_parameter", "continue_at"],
      ["continue_at negative", { continue_at: -3 }, "invalid_parameter", "continue_at"],
      ["continue_at at the track's duration", { continue_at: 120 }, "invalid_parameter", "continue_at"],
      ["continue_at past it", { continue_at: 500 }, "invalid_parameter", "continue_at"],
      ["unknown property", { bpm: 90 }, "unknown_parameter", "bpm"],
      ["title too long", { title: "t".repeat(201) }, "invalid_parameter", "title"],
      [
        "aether-only field given with echo",
        { model: "echo", style_weight: 0.3 },
        "parameter_not_supported_for_model",
        "style_weight"
      ],
      ["a vocal extension of an instrumental needs lyrics", { instrumental: false }, "missing_parameter", "lyrics"],
      ["whitespace lyrics", { instrumental: false, lyrics: "  " }, "invalid_parameter", "lyrics"]
    ]
    for (const [name, body, code, param] of cases) {
      it(name, async () => {
        const account = await createAccount(engine)
        const source = await readyTrack(engine, account, { instrumental: true })
        const res = await extend(engine, account.key, source.trackId, body)
        expect(res.status).toBe(400)
        expect(res.body).toEqual({ error: { type: "invalid_request_error", code, message: expect.any(String), param } })
        expect(await balanceOf(engine, account.id)).toBe(1_000)
      })
    }
  })

  it("404: another account's track, unknown, malformed, or of a task not ready", async () => {
    const owner = await createAccount(engine)
    const other = await createAccount(engine)
    const source = await readyTrack(engine, owner)
    const pending = await readyTrack(engine, other, { status: "pending" })
    for (const trackId of [source.trackId, `trk_${randomBase62(24)}`, "trk_short", pending.trackId]) {
      const res = await extend(engine, other.key, trackId)
      expect(res.status).toBe(404)
      expect(res.body).toEqual(notFoundTrack(trackId))
    }
    expect(await balanceOf(engine, other.id)).toBe(1_000)
  })

  it("401, 403 tier, 403 scope, 402, 503 in the check order of create", async () => {
    expect((await extend(engine, "", "trk_x")).status).toBe(401)
    const basic = await createAccount(engine, { plan: "basic" })
    expect((await extend(engine, basic.key, "trk_x")).body.error?.code).toBe("tier_insufficient")
    const profile = await createAccount(engine, { scopes: ["profile"] })
    expect((await extend(engine, profile.key, "trk_x", { bpm: 1 })).body.error?.code).toBe("insufficient_scope")
    const poor = await createAccount(engine, { subscription: 49 })
    const source = await readyTrack(engine, poor, { instrumental: true })
    const res = await extend(engine, poor.key, source.trackId)
    expect([res.status, res.body.error?.code]).toEqual([402, "insufficient_credits"])
    await engine.admin("PUT", "/models/nocturne", { available: false, retry_after_seconds: 12 })
    try {
      const moved = await extend(engine, poor.key, source.trackId, { model: "nocturne" })
      expect([moved.status, moved.body.error?.code, moved.body.error?.model]).toEqual([
        503,
        "model_unavailable",
        "nocturne"
      ])
    } finally {
      await engine.admin("PUT", "/models/nocturne", { available: true })
    }
  })

  it("500 provider_error: an extension the provider refuses at submission is failed, refunded once, with job.failed", async () => {
    const account = await createAccount(upstream, { subscription: 100 })
    // The fake upstream never made this track, so it refuses its audioId.
    const source = await readyTrack(upstream, account, { instrumental: true })
    const headers = { "idempotency-key": "refused-extension" }
    const res = await extend(upstream, account.key, source.trackId, { continue_at: 30 }, headers)
    expect(res.status).toBe(500)
    expect(res.body).toEqual({ error: { type: "api_error", code: "provider_error", message: expect.any(String) } })
    expect((await extend(upstream, account.key, source.trackId, { continue_at: 30 }, headers)).status).toBe(500)
    expect(await balanceOf(upstream, account.id)).toBe(100)
    const [task] = await upstream.query<{ id: string; status: string; credits_refunded: number }>(
      "select id, status, credits_refunded from generation_tasks where account_id = $1 and source_track_id = $2",
      account.id,
      source.trackId
    )
    expect(task).toMatchObject({ status: "failed", credits_refunded: 50 })
    const refunds = await upstream.query<{ n: number }>(
      "select count(*)::int as n from credit_ledger where task_id = $1 and kind = 'refund'",
      task?.id
    )
    expect(refunds[0]?.n).toBe(1)
    const events = await upstream.query<{ type: string }>(
      "select type from outbox_events where payload->>'task_id' = $1",
      task?.id
    )
    expect(events.map((e) => e.type)).toEqual(["job.failed"])
  })

  it("Idempotency-Key: a retried POST charges once; the same key on another track is reused", async () => {
    const account = await createAccount(engine)
    const source = await readyTrack(engine, account, { instrumental: true })
    const other = await readyTrack(engine, account, { instrumental: true })
    const headers = { "idempotency-key": "extend-once" }
    const first = await extend(engine, account.key, source.trackId, { continue_at: 30 }, headers)
    const second = await extend(engine, account.key, source.trackId, { continue_at: 30 }, headers)
    expect([first.status, second.status]).toEqual([202, 202])
    expect(second.body).toEqual(first.body)
    expect(await balanceOf(engine, account.id)).toBe(950)
    const elsewhere = await extend(engine, account.key, other.trackId, { continue_at: 30 }, headers)
    expect(elsewhere.body.error?.code).toBe("idempotency_key_reused")
    expect(await balanceOf(engine, account.id)).toBe(950)
  })

  it("Idempotency-Key: concurrent requests with one key make one task", async () => {
    const account = await createAccount(engine)
    const source = await readyTrack(engine, account, { instrumental: true })
    const headers = { "idempotency-key": "extend-race" }
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => extend(engine, account.key, source.trackId, { continue_at: 10 }, headers))
    )
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202])
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1)
    const tasks = await engine.query<{ n: number }>(
      "select count(*)::int as n from generation_tasks where source_track_id = $1",
      source.trackId
    )
    expect(tasks[0]?.n).toBe(1)
    expect(await balanceOf(engine, account.id)).toBe(950)
  })
})

describe("GET /v1/music/exports/{id}", () => {
  it("200: the account's export; 404 export_not_found for another account's, an unknown or a malformed id", async () => {
    const owner = await createAccount(engine)
    const other = await createAccount(engine)
    const source = await readyTrack(engine, owner, { instrumental: true })
    const created = await exportOf(engine, owner.key, source.trackId, { format: "midi" })
    const id = String(created.body.id)
    const mine = await api(engine, "GET", `/api/v1/music/exports/${id}`, { key: owner.key })
    expect(mine.status).toBe(200)
    expect(mine.body).toEqual(created.body)
    for (const probe of [id, `exp_${randomBase62(24)}`, "exp_nope", String(source.taskId)]) {
      const res = await api(engine, "GET", `/api/v1/music/exports/${probe}`, { key: other.key })
      expect(res.status).toBe(404)
      expect(res.body).toEqual({
        error: { type: "not_found", code: "export_not_found", message: `No export ${probe}.`, param: "id" }
      })
    }
  })

  it("401 without a credential, 403 without the scope", async () => {
    expect((await api(engine, "GET", `/api/v1/music/exports/exp_${randomBase62(24)}`)).status).toBe(401)
    const profile = await createAccount(engine, { scopes: ["profile"] })
    const res = await api(engine, "GET", `/api/v1/music/exports/exp_${randomBase62(24)}`, { key: profile.key })
    expect([res.status, res.body.error?.code]).toEqual([403, "insufficient_scope"])
  })
})

describe("GET /v1/music/exports", () => {
  it("200: the account's exports, newest first, by track, paged with limit and starting_after", async () => {
    const account = await createAccount(engine)
    const stranger = await createAccount(engine)
    const a = await readyTrack(engine, account, { instrumental: true })
    const b = await readyTrack(engine, account, { instrumental: true })
    const theirs = await readyTrack(engine, stranger, { instrumental: true })
    const made: Array<string> = []
    for (const [trackId, format] of [
      [a.trackId, "wav"],
      [b.trackId, "wav"],
      [a.trackId, "midi"]
    ] as const) {
      made.push(String((await exportOf(engine, account.key, trackId, { format })).body.id))
    }
    await exportOf(engine, stranger.key, theirs.trackId, { format: "wav" })
    const all = await api(engine, "GET", "/api/v1/music/exports", { key: account.key })
    expect(all.status).toBe(200)
    expect((all.body.data as unknown as Array<Json>).map((e) => e.id)).toEqual([...made].reverse())
    expect(all.body.has_more).toBe(false)
    const ofA = await api(engine, "GET", `/api/v1/music/exports?track_id=${a.trackId}`, { key: account.key })
    expect((ofA.body.data as unknown as Array<Json>).map((e) => e.id)).toEqual([made[2], made[0]])
    const page = await api(engine, "GET", "/api/v1/music/exports?limit=2", { key: account.key })
    expect((page.body.data as unknown as Array<Json>).map((e) => e.id)).toEqual([made[2], made[1]])
    expect(page.body.has_more).toBe(true)
    const next = await api(engine, "GET", `/api/v1/music/exports?limit=2&starting_after=${made[1]}`, {
      key: account.key
    })
    expect((next.body.data as unknown as Array<Json>).map((e) => e.id)).toEqual([made[0]])
    expect(next.body.has_more).toBe(false)
    const ofTheirs = await api(engine, "GET", `/api/v1/music/exports?track_id=${theirs.trackId}`, { key: account.key })
    expect(ofTheirs.body.data).toEqual([])
  })

  it("401 without a credential, 403 without the scope", async () => {
    expect((await api(engine, "GET", "/api/v1/music/exports")).status).toBe(401)
    const profile = await createAccount(engine, { scopes: ["profile"] })
    const res = await api(engine, "GET", "/api/v1/music/exports", { key: profile.key })
    expect([res.status, res.body.error?.code]).toEqual([403, "insufficient_scope"])
  })

  it("400: a cursor that is not one of the account's exports, a bad limit, an unknown parameter", async () => {
    const account = await createAccount(engine)
    for (const [query, code, param] of [
      [`starting_after=exp_${randomBase62(24)}`, "invalid_parameter", "starting_after"],
      ["limit=0", "invalid_parameter", "limit"],
      ["limit=101", "invalid_parameter", "limit"],
      ["format=wav", "unknown_parameter", "format"]
    ] as const) {
      const res = await api(engine, "GET", `/api/v1/music/exports?${query}`, { key: account.key })
      expect([res.status, res.body.error?.code, res.body.error?.param]).toEqual([400, code, param])
    }
  })
})

describe("the export worker", () => {
  const accepted = async () => {
    const account = await createAccount(engine, { subscription: 100 })
    const source = await readyTrack(engine, account, { instrumental: true })
    const res = await exportOf(engine, account.key, source.trackId, { format: "wav" })
    expect(res.status).toBe(202)
    return { account, id: String(res.body.id) }
  }
  const refunds = async (id: string) =>
    (
      await engine.query<{ n: number }>(
        "select count(*)::int as n from credit_ledger where export_id = $1 and kind = 'refund'",
        id
      )
    )[0]?.n

  it("an asynchronous failure (the provider no longer knows the export) is refunded once, with export.failed", async () => {
    const { account, id } = await accepted()
    await engine.query(
      "update exports set provider_export_id = $2, next_poll_at = now() - interval '1 second' where id = $1",
      id,
      `exp_${randomBase62(24)}`
    )
    // Only this export is due, so one claim takes it.
    await engine.query(
      "update exports set next_poll_at = now() + interval '1 hour' where id <> $1 and status = 'pending'",
      id
    )
    const worker = exportWorker(engine)
    expect(await worker.tick()).toBeGreaterThanOrEqual(1)
    const got = await api(engine, "GET", `/api/v1/music/exports/${id}`, { key: account.key })
    expect(got.body).toMatchObject({ status: "failed", credits_refunded: 5, error: { code: "provider_error" } })
    expect(await balanceOf(engine, account.id)).toBe(100)
    await engine.query("update exports set next_poll_at = now() - interval '1 second' where id = $1", id)
    await worker.tick()
    expect(await tools(engine, (t) => t.markExportFailed(id, { code: "provider_error", message: "again" }))).toBe(false)
    expect(await refunds(id)).toBe(1)
    expect(await balanceOf(engine, account.id)).toBe(100)
    const events = await eventsOf(engine, id)
    expect(events.map((e) => e.type)).toEqual(["export.failed"])
    expect(events[0]?.payload).toEqual(got.body)
  })

  it("past its deadline: generation_timeout, refunded once", async () => {
    const { account, id } = await accepted()
    await engine.query("update exports set deadline_at = now() - interval '1 second' where id = $1", id)
    const worker = exportWorker(engine)
    expect(await worker.sweep()).toBeGreaterThanOrEqual(1)
    expect(await worker.sweep()).toBe(0)
    const got = await api(engine, "GET", `/api/v1/music/exports/${id}`, { key: account.key })
    expect(got.body).toMatchObject({ status: "failed", credits_refunded: 5, error: { code: "generation_timeout" } })
    expect(await refunds(id)).toBe(1)
    expect(await balanceOf(engine, account.id)).toBe(100)
  })

  it("callbacks: the export's own token makes it due now; duplicates, forgeries and late ones change nothing", async () => {
    const { account, id } = await accepted()
    const [row] = await engine.query<{ callback_token: string }>("select callback_token from exports where id = $1", id)
    const token = row?.callback_token ?? ""
    const complete = { code: 200, msg: "success", data: { callbackType: "complete", task_id: id, data: [] } }
    const post = (t: string) => api(engine, "POST", `/internal/provider/callback/${id}?token=${t}`, { body: complete })
    expect((await post("forged")).status).toBe(404)
    expect((await post(token)).status).toBe(200)
    expect((await post(token)).status).toBe(200)
    const [due] = await engine.query<{ hints: number; due: boolean }>(
      "select hints, next_poll_at <= now() as due from exports where id = $1",
      id
    )
    expect(due).toEqual({ hints: 2, due: true })
    await tools(engine, (t) => t.markExportFailed(id, { code: "provider_error", message: "failed" }))
    expect((await post(token)).status).toBe(200)
    expect(await refunds(id)).toBe(1)
    expect(await balanceOf(engine, account.id)).toBe(100)
    expect((await eventsOf(engine, id)).map((e) => e.type)).toEqual(["export.failed"])
  })

  it("ready once: a second transition changes nothing, and export.completed carries the Export", async () => {
    const { account, id } = await accepted()
    expect(await tools(engine, (t) => t.markExportReady(id, [], null))).toBe(true)
    expect(await tools(engine, (t) => t.markExportReady(id, [], null))).toBe(false)
    expect(await tools(engine, (t) => t.markExportFailed(id, { code: "provider_error", message: "late" }))).toBe(false)
    const got = await api(engine, "GET", `/api/v1/music/exports/${id}`, { key: account.key })
    expect(got.body).toMatchObject({ status: "ready", credits_refunded: 0 })
    const events = await eventsOf(engine, id)
    expect(events.map((e) => e.type)).toEqual(["export.completed"])
    expect(events[0]?.payload).toEqual(got.body)
    expect(await balanceOf(engine, account.id)).toBe(95)
  })
})

describe("admin: GET /admin/v1/accounts/{id}/exports", () => {
  it("200: the account's exports, newest first; 404 for an unknown account", async () => {
    const account = await createAccount(engine)
    const source = await readyTrack(engine, account, { instrumental: true })
    const first = await exportOf(engine, account.key, source.trackId, { format: "wav" })
    const second = await exportOf(engine, account.key, source.trackId, { format: "midi" })
    const res = await engine.admin("GET", `/accounts/${account.id}/exports`)
    expect(res.status).toBe(200)
    expect((res.body.data as unknown as Array<Json>).map((e) => e.id)).toEqual([second.body.id, first.body.id])
    const missing = await engine.admin("GET", `/accounts/acct_${randomBase62(24)}/exports`)
    expect(missing.status).toBe(404)
  })
})

describe("webhooks: export events in the catalog", () => {
  it("an endpoint may subscribe to export.completed and export.failed", async () => {
    const account = await createAccount(engine)
    const res = await engine.admin("POST", `/accounts/${account.id}/webhook-endpoints`, {
      url: "https://93.184.216.34/hooks",
      events: ["export.completed", "export.failed"]
    })
    expect(res.status).toBe(201)
    expect(res.body.events).toEqual(["export.completed", "export.failed"])
  })

  it("fan-out: export.completed reaches the endpoints subscribed to it, and only those", async () => {
    const account = await createAccount(engine)
    const hook = async (events: ReadonlyArray<string>) =>
      String(
        (
          await engine.admin("POST", `/accounts/${account.id}/webhook-endpoints`, {
            url: "https://93.184.216.34/hooks",
            events
          })
        ).body.id
      )
    const wants = await hook(["export.completed"])
    const jobsOnly = await hook(["job.completed", "job.failed"])
    const source = await readyTrack(engine, account, { instrumental: true })
    const created = await exportOf(engine, account.key, source.trackId, { format: "midi" })
    await tools(engine, (t) => t.markExportReady(String(created.body.id), [], null))
    await engine.runtime.runPromise(Webhooks.use((w) => w.fanOut(1_000)))
    const deliveries = async (endpoint: string) =>
      (
        (await engine.admin("GET", `/webhook-endpoints/${endpoint}/deliveries`)).body.data as unknown as Array<Json>
      ).map((d) => d.event_type)
    expect(await deliveries(wants)).toEqual(["export.completed"])
    expect(await deliveries(jobsOnly)).toEqual([])
  })
})

describe("metrics", () => {
  it("count exports created, ready and failed by format (and code), and gauge the pending ones", async () => {
    const account = await createAccount(engine)
    const source = await readyTrack(engine, account, { instrumental: true })
    const before = parseMetrics((await scrape(engine.url)).text)
    const count = (families: typeof before, name: string, labels: Record<string, string>) =>
      sumOf(families, name, labels)
    const made = await Promise.all(
      (["wav", "stems"] as const).map((format) => exportOf(engine, account.key, source.trackId, { format }))
    )
    await tools(engine, (t) => t.markExportReady(String(made[0]?.body.id), [], null))
    await tools(engine, (t) => t.markExportFailed(String(made[1]?.body.id), { code: "provider_error", message: "x" }))
    const after = parseMetrics((await scrape(engine.url)).text)
    for (const format of ["wav", "stems"]) {
      expect(
        count(after, "lyre_exports_created_total", { format }) - count(before, "lyre_exports_created_total", { format })
      ).toBe(1)
    }
    expect(
      count(after, "lyre_exports_ready_total", { format: "wav" }) -
        count(before, "lyre_exports_ready_total", { format: "wav" })
    ).toBe(1)
    const failed = { format: "stems", code: "provider_error" }
    expect(count(after, "lyre_exports_failed_total", failed) - count(before, "lyre_exports_failed_total", failed)).toBe(
      1
    )
    expect(after.has("lyre_exports_pending")).toBe(true)
  })
})
