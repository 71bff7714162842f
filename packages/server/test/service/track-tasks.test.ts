/**
 * Tasks on a track (DESIGN.md section 11) through REST: covers, vocals, instrumentals and edits
 * priced and checked as a generation is (the charge, the check order, the key, the ledger), and
 * personas. Sources are ready tracks written straight into the database; the server runs the
 * built-in engine with its worker off, so accepted tasks stay pending (the end-to-end run is
 * track-tasks-engine.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { randomBase62 } from "@lyre/core"
import { api, createAccount, startTestServer, validSong } from "../support/harness.ts"
import type { Json, TestAccount, TestServer } from "../support/harness.ts"
import { readyTrack } from "../support/tracks.ts"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer({ provider: "embedded", providerUrl: null, providerApiKey: null, worker: "off" })
})
afterAll(() => server?.close())

const kinds = [
  ["covers", { style: "bossa nova, acoustic guitar" }],
  ["vocals", { lyrics: "[Verse]\nMorning comes in silver light" }],
  ["instrumentals", { style: "jazz trio" }],
  ["edits", { start: 10, end: 20, lyrics: "New words here" }]
] as const

const post = (
  account: TestAccount,
  trackId: string,
  segment: string,
  body: unknown,
  headers: Record<string, string> = {}
) => api(server, "POST", `/api/v1/music/tracks/${trackId}/${segment}`, { key: account.key, body, headers })

const balance = async (account: TestAccount) =>
  Number((await server.admin("GET", `/accounts/${account.id}`)).body.credits?.total)

const taskRow = async (id: string) =>
  (
    await server.query<{
      derivation: string | null
      source_track_id: string | null
      span_start: number | null
      span_end: number | null
      persona_id: string | null
      request: Json
    }>(
      "select derivation, source_track_id, span_start, span_end, persona_id, request from generation_tasks where id = $1",
      id
    )
  )[0]

const errorOf = (res: { body: Json }) => res.body.error as unknown as { type: string; code: string; param?: string }

describe("POST /v1/music/tracks/{track_id}/{covers,vocals,instrumentals,edits}", () => {
  it("202: a pending GenerationTask at the model's price, made from the track, a debit in the ledger", async () => {
    const account = await createAccount(server, { subscription: 1_000 })
    const source = await readyTrack(server, account)
    const expected = { covers: "cover", vocals: "vocals", instrumentals: "instrumental", edits: "edit" } as const
    let left = 1_000
    for (const [segment, body] of kinds) {
      const res = await post(account, source.trackId, segment, body)
      expect(res.status).toBe(202)
      expect(res.body).toMatchObject({
        status: "pending",
        model: "aether",
        credits_used: 50,
        credits_refunded: 0,
        error: null,
        tracks: []
      })
      expect(String(res.body.id)).toMatch(/^gen_[0-9A-Za-z]{24}$/)
      left -= 50
      expect(await balance(account)).toBe(left)
      const row = await taskRow(String(res.body.id))
      expect(row?.derivation).toBe(expected[segment])
      expect(row?.source_track_id).toBe(source.trackId)
      const read = await api(server, "GET", `/api/v1/music/generations/${String(res.body.id)}`, { key: account.key })
      expect(read.body.id).toBe(res.body.id)
    }
    const edit = await server.query<{ span_start: number; span_end: number }>(
      "select span_start, span_end from generation_tasks where derivation = 'edit' and account_id = $1",
      account.id
    )
    expect(edit).toEqual([{ span_start: 10, span_end: 20 }])
    const ledger = (await server.admin("GET", `/accounts/${account.id}/ledger`)).body
      .data as unknown as ReadonlyArray<Json>
    expect(ledger.filter((entry) => String(entry.kind) === "debit")).toHaveLength(4)
  })

  it("absent fields are the source's: a cover of an echo track is an echo task at 100 credits, with the source's words", async () => {
    const account = await createAccount(server, { subscription: 1_000 })
    const source = await readyTrack(server, account, { model: "echo" })
    const res = await post(account, source.trackId, "covers", { style: "punk rock" })
    expect([res.status, res.body.model, res.body.credits_used]).toEqual([202, "echo", 100])
    const row = await taskRow(String(res.body.id))
    expect(row?.request).toMatchObject({
      style: "punk rock",
      title: validSong.title,
      lyrics: validSong.lyrics,
      model: "echo"
    })
    // Moving to aether keeps nothing aether-only it was not given; given, they are the cover's.
    const aether = await post(account, source.trackId, "covers", {
      style: "punk rock",
      model: "aether",
      audio_weight: 0.8
    })
    expect([aether.status, aether.body.credits_used]).toEqual([202, 50])
    expect((await taskRow(String(aether.body.id)))?.request).toMatchObject({ audio_weight: 0.8, model: "aether" })
  })

  it("an instrumental keeps the source's words; vocals sing the new ones", async () => {
    const account = await createAccount(server, { subscription: 1_000 })
    const song = await readyTrack(server, account)
    const bed = await readyTrack(server, account, { instrumental: true })
    const accompanied = await post(account, song.trackId, "instrumentals", { style: "jazz trio" })
    expect((await taskRow(String(accompanied.body.id)))?.request).toMatchObject({
      lyrics: validSong.lyrics,
      instrumental: false
    })
    const sung = await post(account, bed.trackId, "vocals", { lyrics: "Sing it" })
    expect((await taskRow(String(sung.body.id)))?.request).toMatchObject({ lyrics: "Sing it", instrumental: false })
  })

  const invalid: ReadonlyArray<readonly [string, string, Record<string, unknown>, string, string]> = [
    ["a cover without style", "covers", {}, "missing_parameter", "style"],
    [
      "a cover with audio_weight above 1",
      "covers",
      { style: "pop", audio_weight: 1.5 },
      "invalid_parameter",
      "audio_weight"
    ],
    ["a cover with an unknown field", "covers", { style: "pop", tempo: 100 }, "unknown_parameter", "tempo"],
    [
      "a cover on echo with an aether-only field",
      "covers",
      { style: "pop", model: "echo", weirdness_constraint: 0.5 },
      "parameter_not_supported_for_model",
      "weirdness_constraint"
    ],
    ["vocals without lyrics", "vocals", { style: "pop" }, "missing_parameter", "lyrics"],
    ["vocals of blank lyrics", "vocals", { lyrics: "   " }, "invalid_parameter", "lyrics"],
    [
      "vocals told to be instrumental",
      "vocals",
      { lyrics: "la", instrumental: true },
      "unknown_parameter",
      "instrumental"
    ],
    ["an instrumental without style", "instrumentals", {}, "missing_parameter", "style"],
    ["an instrumental given lyrics", "instrumentals", { style: "jazz", lyrics: "la" }, "unknown_parameter", "lyrics"],
    ["an edit without start", "edits", { end: 20 }, "missing_parameter", "start"],
    ["an edit under 2 seconds", "edits", { start: 10, end: 11.5 }, "invalid_parameter", "end"],
    ["an edit over 60 seconds", "edits", { start: 10, end: 71 }, "invalid_parameter", "end"],
    ["an edit past the track's end", "edits", { start: 110, end: 130 }, "invalid_parameter", "end"],
    ["an edit before the track's start", "edits", { start: -1, end: 5 }, "invalid_parameter", "start"]
  ]
  for (const [name, segment, body, code, param] of invalid) {
    it(`400 ${code} for ${name}: nothing charged, nothing stored`, async () => {
      const account = await createAccount(server, { subscription: 1_000 })
      const source = await readyTrack(server, account)
      const res = await post(account, source.trackId, segment, body)
      expect(res.status).toBe(400)
      expect(errorOf(res)).toMatchObject({ type: "invalid_request_error", code, param })
      expect(await balance(account)).toBe(1_000)
      expect(
        await server.query(
          "select id from generation_tasks where account_id = $1 and derivation is not null",
          account.id
        )
      ).toEqual([])
    })
  }

  it("400 track_has_no_lyrics: an instrumental of a track without vocals", async () => {
    const account = await createAccount(server, { subscription: 1_000 })
    const source = await readyTrack(server, account, { instrumental: true })
    const res = await post(account, source.trackId, "instrumentals", { style: "jazz" })
    expect([res.status, errorOf(res).code, errorOf(res).param]).toEqual([400, "track_has_no_lyrics", "track_id"])
    expect(await balance(account)).toBe(1_000)
  })

  it("404 track_not_found naming the track: another account's, unknown, malformed, not ready", async () => {
    const owner = await createAccount(server, { subscription: 1_000 })
    const other = await createAccount(server, { subscription: 1_000 })
    const theirs = await readyTrack(server, owner)
    const pending = await readyTrack(server, other, { status: "pending" })
    for (const [segment, body] of kinds) {
      for (const trackId of [theirs.trackId, `trk_${randomBase62(24)}`, "trk_nope", pending.trackId]) {
        const res = await post(other, trackId, segment, body)
        expect(res.status).toBe(404)
        expect(errorOf(res)).toMatchObject({ type: "not_found", code: "track_not_found", param: "track_id" })
      }
    }
    expect(await balance(other)).toBe(1_000)
  })

  it("the check order: 401 before anything, 402 when the balance is short, 429 past the concurrency limit", async () => {
    const account = await createAccount(server, { subscription: 40 })
    const source = await readyTrack(server, account)
    const anonymous = await api(server, "POST", `/api/v1/music/tracks/${source.trackId}/covers`, {
      body: { style: "pop" }
    })
    expect(anonymous.status).toBe(401)
    const poor = await post(account, source.trackId, "covers", { style: "pop" })
    expect([poor.status, errorOf(poor).code]).toEqual([402, "insufficient_credits"])
    const busy = await createAccount(server, { subscription: 1_000, concurrency_limit: 1 })
    const mine = await readyTrack(server, busy)
    expect((await post(busy, mine.trackId, "edits", { start: 0, end: 10 })).status).toBe(202)
    const second = await post(busy, mine.trackId, "covers", { style: "pop" })
    expect([second.status, errorOf(second).code]).toEqual([429, "concurrent_limit_exceeded"])
  })

  it("Idempotency-Key: a retried POST answers the first task and charges once; another body is 400", async () => {
    const account = await createAccount(server, { subscription: 1_000 })
    const source = await readyTrack(server, account)
    const headers = { "Idempotency-Key": `cover-${randomBase62(8)}` }
    const first = await post(account, source.trackId, "covers", { style: "reggae" }, headers)
    const again = await post(account, source.trackId, "covers", { style: "reggae" }, headers)
    expect([first.status, again.status]).toEqual([202, 202])
    expect(again.body.id).toBe(first.body.id)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(await balance(account)).toBe(950)
    const other = await post(account, source.trackId, "covers", { style: "ska" }, headers)
    expect([other.status, errorOf(other).code]).toEqual([400, "idempotency_key_reused"])
    // The same body as an edit, or on another track, is another request too.
    const elsewhere = await readyTrack(server, account)
    const moved = await post(account, elsewhere.trackId, "covers", { style: "reggae" }, headers)
    expect([moved.status, errorOf(moved).code]).toEqual([400, "idempotency_key_reused"])
    expect(await balance(account)).toBe(950)
  })
})

describe("a task on a track the engine does not finish in time", () => {
  let hurried: TestServer
  beforeAll(async () => {
    hurried = await startTestServer({
      provider: "embedded",
      providerUrl: null,
      providerApiKey: null,
      worker: "inline",
      providerPollSeconds: 0.2,
      generationTimeoutSeconds: 1
    })
  })
  afterAll(() => hurried?.close())

  it("fails generation_timeout, refunded once; the render finishing later changes nothing", async () => {
    const account = await createAccount(hurried, { subscription: 1_000 })
    const source = await readyTrack(hurried, account)
    const res = await api(hurried, "POST", `/api/v1/music/tracks/${source.trackId}/covers`, {
      key: account.key,
      body: { style: "bossa nova" }
    })
    expect(res.status).toBe(202)
    const read = () => api(hurried, "GET", `/api/v1/music/generations/${String(res.body.id)}`, { key: account.key })
    const until = Date.now() + 20_000
    let body = (await read()).body
    while (String(body.status) === "pending" && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      body = (await read()).body
    }
    expect(body).toMatchObject({ status: "failed", error: { code: "generation_timeout" }, credits_refunded: 50 })
    // The engine's render goes on; once it has called back and been polled, the task stays failed.
    await new Promise((resolve) => setTimeout(resolve, 8_000))
    expect((await read()).body.status).toBe("failed")
    const refunds = await hurried.query<{ n: number }>(
      "select count(*)::int as n from credit_ledger where task_id = $1 and kind = 'refund'",
      String(res.body.id)
    )
    expect(refunds[0]?.n).toBe(1)
    expect(Number((await hurried.admin("GET", `/accounts/${account.id}`)).body.credits?.total)).toBe(1_000)
  }, 60_000)
})

describe("personas", () => {
  const create = (account: TestAccount, body: unknown) =>
    api(server, "POST", "/api/v1/personas", { key: account.key, body })

  it("POST 201 (free), GET, list newest first, DELETE; a deleted one is gone", async () => {
    const account = await createAccount(server, { subscription: 1_000 })
    const source = await readyTrack(server, account, { extra: { vocal_gender: "f" } })
    const made = await create(account, {
      track_id: source.trackId,
      name: "Night singer",
      description: "A bright voice over synths"
    })
    expect(made.status).toBe(201)
    expect(made.body).toEqual({
      id: expect.stringMatching(/^per_[0-9A-Za-z]{24}$/),
      name: "Night singer",
      description: "A bright voice over synths",
      track_id: source.trackId,
      vocal_gender: "f",
      created_at: expect.any(String)
    })
    expect(await balance(account)).toBe(1_000)
    const second = await create(account, { track_id: source.trackId, name: "Second", description: "Again" })
    const id = String(made.body.id)
    expect((await api(server, "GET", `/api/v1/personas/${id}`, { key: account.key })).body).toEqual(made.body)
    const listed = await api(server, "GET", "/api/v1/personas?limit=1", { key: account.key })
    expect(listed.body).toEqual({ data: [second.body], has_more: true })
    const page = await api(server, "GET", `/api/v1/personas?starting_after=${String(second.body.id)}`, {
      key: account.key
    })
    expect(page.body).toEqual({ data: [made.body], has_more: false })
    const admin = await server.admin("GET", `/accounts/${account.id}/personas`)
    expect(admin.body).toEqual({ data: [second.body, made.body] })

    const removed = await api(server, "DELETE", `/api/v1/personas/${id}`, { key: account.key })
    expect([removed.status, removed.body]).toEqual([200, { id, deleted: true }])
    expect((await api(server, "GET", `/api/v1/personas/${id}`, { key: account.key })).status).toBe(404)
    expect((await api(server, "DELETE", `/api/v1/personas/${id}`, { key: account.key })).status).toBe(404)
    const generation = await api(server, "POST", "/api/v1/music/generations", {
      key: account.key,
      body: { ...validSong, persona_id: id }
    })
    expect([generation.status, errorOf(generation).code, errorOf(generation).param]).toEqual([
      404,
      "persona_not_found",
      "persona_id"
    ])
  })

  it("a persona names its voice in any GenerateRequest: a generation, an extension, a cover", async () => {
    const account = await createAccount(server, { subscription: 1_000 })
    const source = await readyTrack(server, account)
    const persona = String(
      (await create(account, { track_id: source.trackId, name: "Voice", description: "Warm" })).body.id
    )
    const generation = await api(server, "POST", "/api/v1/music/generations", {
      key: account.key,
      body: { ...validSong, persona_id: persona }
    })
    expect(generation.status).toBe(202)
    expect((await taskRow(String(generation.body.id)))?.persona_id).toBe(persona)
    const cover = await post(account, source.trackId, "covers", { style: "folk", persona_id: persona })
    expect((await taskRow(String(cover.body.id)))?.persona_id).toBe(persona)
    const extension = await post(account, source.trackId, "extensions", { persona_id: persona })
    expect((await taskRow(String(extension.body.id)))?.persona_id).toBe(persona)
  })

  it("persona_id is aether-only: 400 parameter_not_supported_for_model on echo, nothing charged", async () => {
    const account = await createAccount(server, { subscription: 1_000 })
    const source = await readyTrack(server, account)
    const persona = String(
      (await create(account, { track_id: source.trackId, name: "Voice", description: "Warm" })).body.id
    )
    const res = await api(server, "POST", "/api/v1/music/generations", {
      key: account.key,
      body: { ...validSong, model: "echo", persona_id: persona }
    })
    expect([res.status, errorOf(res).code, errorOf(res).param]).toEqual([
      400,
      "parameter_not_supported_for_model",
      "persona_id"
    ])
    expect(await balance(account)).toBe(1_000)
  })

  it("another account's persona is 404 everywhere; a persona of another account's track is 404 naming the track", async () => {
    const owner = await createAccount(server, { subscription: 1_000 })
    const other = await createAccount(server, { subscription: 1_000 })
    const source = await readyTrack(server, owner)
    const persona = String(
      (await create(owner, { track_id: source.trackId, name: "Mine", description: "Mine" })).body.id
    )
    for (const id of [persona, `per_${randomBase62(24)}`, "per_nope"]) {
      const read = await api(server, "GET", `/api/v1/personas/${id}`, { key: other.key })
      expect([read.status, errorOf(read).code, errorOf(read).param]).toEqual([404, "persona_not_found", "id"])
      expect((await api(server, "DELETE", `/api/v1/personas/${id}`, { key: other.key })).status).toBe(404)
    }
    expect((await api(server, "GET", "/api/v1/personas", { key: other.key })).body).toEqual({
      data: [],
      has_more: false
    })
    const mine = await readyTrack(server, other)
    for (const [segment, body] of [
      ["covers", { style: "pop" }],
      ["extensions", {}]
    ] as const) {
      const res = await post(other, mine.trackId, segment, { ...body, persona_id: persona })
      expect([res.status, errorOf(res).code, errorOf(res).param]).toEqual([404, "persona_not_found", "persona_id"])
    }
    const generation = await api(server, "POST", "/api/v1/music/generations", {
      key: other.key,
      body: { ...validSong, persona_id: persona }
    })
    expect(generation.status).toBe(404)
    expect(await balance(other)).toBe(1_000)
    const stolen = await create(other, { track_id: source.trackId, name: "Theirs", description: "Theirs" })
    expect([stolen.status, errorOf(stolen).code, errorOf(stolen).param]).toEqual([404, "track_not_found", "track_id"])
  })

  it("400 for a body without name or description", async () => {
    const account = await createAccount(server)
    const source = await readyTrack(server, account)
    const res = await create(account, { track_id: source.trackId, name: "No description" })
    expect([res.status, errorOf(res).code, errorOf(res).param]).toEqual([400, "missing_parameter", "description"])
  })
})

describe("the OpenAPI document", () => {
  it("describes the tasks on a track and the personas", async () => {
    const doc = (await api(server, "GET", "/api/openapi.json")).body
    const paths = doc.paths as unknown as Record<string, Record<string, Json>>
    for (const segment of ["covers", "vocals", "instrumentals", "edits"]) {
      expect(Object.keys(paths[`/v1/music/tracks/{track_id}/${segment}`]?.["post"]?.["responses"] ?? {})).toContain(
        "202"
      )
    }
    expect(Object.keys(paths["/v1/personas"]?.["post"]?.["responses"] ?? {})).toContain("201")
    expect(Object.keys(paths["/v1/personas"] ?? {}).sort()).toEqual(["get", "post"])
    expect(Object.keys(paths["/v1/personas/{id}"] ?? {}).sort()).toEqual(["delete", "get"])
    const edit = paths["/v1/music/tracks/{track_id}/edits"]?.["post"] as unknown as {
      parameters: ReadonlyArray<{ name: string }>
      responses: Json
    }
    expect(edit.parameters.map((p) => p.name)).toContain("Idempotency-Key")
    expect(Object.keys(edit.responses).sort()).toEqual(["202", "400", "401", "402", "403", "404", "429", "500", "503"])
  })
})
