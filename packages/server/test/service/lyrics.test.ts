/**
 * The lyrics agent (DESIGN.md section 12) over REST, on one server whose writer is an
 * OpenAI-compatible chat completions server: a real HTTP peer here, speaking that protocol, told
 * by a word in the prompt how to answer (well, 5xx, never, not JSON, a refusal). The task is
 * charged at accept (2 credits), counted in the per-minute limit but not the concurrency limit,
 * scoped `lyrics:agent`, idempotent by key, and every failure ends `failed` with one refund and
 * `lyrics.failed`. The upstream's lyrics endpoint is driven against the fake upstream directly.
 */
import { createServer } from "node:http"
import type { IncomingMessage, Server, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect } from "effect"
import { GenerateRequest, LyricsWriter } from "@lyre/core"
import type { LyricsJob } from "@lyre/core"
import { sunoLyricsWriterLayer } from "@lyre/worker"
import { startFakeUpstream } from "@lyre/fake-upstream"
import type { FakeUpstream } from "@lyre/fake-upstream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, balanceOf, createAccount, settledAt, startTestServer, validSong } from "../support/harness.ts"
import type { Json, TestAccount, TestServer } from "../support/harness.ts"

/** What the fake model server received: each request's body. */
const received: Array<{ readonly authorization: string | undefined; readonly body: Json }> = []
let model: Server
let server: TestServer

const answerAsModel = (req: IncomingMessage, res: ServerResponse) => {
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => {
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Json
    received.push({ authorization: req.headers.authorization, body })
    const brief = JSON.stringify(body.messages)
    const reply = (status: number, payload: unknown) =>
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(payload))
    const message = (content: string | null, refusal: string | null = null, finish = "stop") =>
      reply(200, {
        id: "chatcmpl-1",
        object: "chat.completion",
        model: body.model,
        choices: [{ index: 0, finish_reason: finish, message: { role: "assistant", content, refusal } }]
      })
    if (brief.includes("[5xx]")) return reply(503, { error: { message: "overloaded" } })
    if (brief.includes("[hang]")) return // never answers: the writer's time-out ends it
    if (brief.includes("[badjson]")) return message("Here are your lyrics: [Verse] la la")
    if (brief.includes("[refuse]")) return message(null, "I can't help with that.")
    if (brief.includes("[one]"))
      return message(JSON.stringify({ variations: [{ title: "Only", text: "[Verse]\nalone" }] }))
    message(
      JSON.stringify({
        variations: [
          { title: "Harbour Light", text: "[Verse]\nThe harbour holds the light\n\n[Chorus]\nStay, stay tonight" },
          { title: "Low Tide", text: "Low tide and the boats asleep\nPromises we meant to keep" }
        ]
      })
    )
  })
}

beforeAll(async () => {
  model = createServer(answerAsModel)
  await new Promise<void>((resolve) => model.listen(0, "127.0.0.1", resolve))
  server = await startTestServer({
    worker: "inline",
    providerPollSeconds: 0.2,
    lyricsModelUrl: `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`,
    lyricsModel: "lyricist-7b",
    lyricsModelKey: "model-secret",
    lyricsModelTimeoutSeconds: 0.5
  })
})
afterAll(async () => {
  await server?.close()
  model?.closeAllConnections()
  await new Promise<void>((resolve) => (model === undefined ? resolve() : model.close(() => resolve())))
})

const lyricsScopes = ["profile", "music:generate", "lyrics:agent"]
const writer = (options: Parameters<typeof createAccount>[1] = {}) =>
  createAccount(server, { scopes: lyricsScopes, ...options })

const write = (account: TestAccount, body: unknown, headers: Record<string, string> = {}) =>
  api(server, "POST", "/api/v1/lyrics", { key: account.key, body, headers })

const settled = (account: TestAccount, id: string) => settledAt(server, account.key, `/api/v1/lyrics/${id}`, 15_000)

const ledgerOf = (id: string) =>
  server.query<{ kind: string; delta: number }>(
    "select kind, (subscription_delta + onetime_delta)::int as delta from credit_ledger where lyrics_id = $1 order by seq",
    id
  )

const eventsOf = async (id: string) =>
  (
    await server.query<{ type: string }>("select type from outbox_events where payload->>'id' = $1 order by seq", id)
  ).map((row) => row.type)

describe("POST /v1/lyrics", () => {
  it("202 a pending task charged 2 credits; ready with two variations valid as a generation's lyrics, and lyrics.completed", async () => {
    const account = await writer()
    const res = await write(account, { prompt: "a harbour town at dusk", style: "folk", sections: ["Verse", "Chorus"] })
    expect(res.status).toBe(202)
    expect(res.body).toMatchObject({ status: "pending", prompt: "a harbour town at dusk", variations: [] })
    expect(String(res.body.id)).toMatch(/^lyt_[0-9A-Za-z]{24}$/)
    expect(res.body.credits_used).toBe(2)
    expect(await balanceOf(server, account)).toBe(998)

    const done = await settled(account, String(res.body.id))
    expect(done.status).toBe("ready")
    const variations = done.variations as unknown as ReadonlyArray<{ title: string; text: string }>
    expect(variations.map((variation) => variation.title)).toEqual(["Harbour Light", "Low Tide"])
    // A draft without a header is given one, so each stands as a generation's lyrics.
    expect(variations[1]?.text.startsWith("[Verse]\n")).toBe(true)
    for (const variation of variations) {
      expect(GenerateRequest.safeParse({ ...validSong, lyrics: variation.text }).success).toBe(true)
    }
    expect(await ledgerOf(String(done.id))).toEqual([{ kind: "debit", delta: -2 }])
    expect(await eventsOf(String(done.id))).toEqual(["lyrics.completed"])

    // The model was asked for JSON of the schema, with the brief, its key and the model's name.
    const asked = received.find((request) => JSON.stringify(request.body).includes("a harbour town at dusk"))
    expect(asked?.authorization).toBe("Bearer model-secret")
    expect(asked?.body.model).toBe("lyricist-7b")
    expect(asked?.body.response_format?.type).toBe("json_schema")
    expect(JSON.stringify(asked?.body.messages)).toContain("Sections, in order: Verse, Chorus")
  })

  it("GET answers the account's own task; another account's, or a malformed id, is 404 lyrics_not_found", async () => {
    const [owner, other] = [await writer(), await writer()]
    const id = String((await write(owner, { prompt: "mine" })).body.id)
    expect((await api(server, "GET", `/api/v1/lyrics/${id}`, { key: owner.key })).status).toBe(200)
    for (const path of [`/api/v1/lyrics/${id}`, "/api/v1/lyrics/lyt_nope"]) {
      const res = await api(server, "GET", path, { key: other.key })
      expect(res.status).toBe(404)
      expect(res.body.error).toMatchObject({ type: "not_found", code: "lyrics_not_found", param: "id" })
    }
  })

  it("lists the account's tasks newest first, paged by starting_after", async () => {
    const account = await writer()
    const ids: Array<string> = []
    for (const prompt of ["one", "two", "three"]) ids.push(String((await write(account, { prompt })).body.id))
    const first = await api(server, "GET", "/api/v1/lyrics?limit=2", { key: account.key })
    expect(first.status).toBe(200)
    expect((first.body.data as unknown as ReadonlyArray<Json>).map((task) => task.id)).toEqual([ids[2], ids[1]])
    expect(first.body.has_more).toBe(true)
    const rest = await api(server, "GET", `/api/v1/lyrics?limit=2&starting_after=${ids[1]}`, { key: account.key })
    expect((rest.body.data as unknown as ReadonlyArray<Json>).map((task) => task.id)).toEqual([ids[0]])
    expect(rest.body.has_more).toBe(false)
  })

  it("an Idempotency-Key replays the first answer and charges once; another body with it is 400", async () => {
    const account = await writer()
    const headers = { "idempotency-key": "lyrics-once" }
    const first = await write(account, { prompt: "once" }, headers)
    const again = await write(account, { prompt: "once" }, headers)
    expect(again.status).toBe(202)
    expect(again.body.id).toBe(first.body.id)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    const other = await write(account, { prompt: "twice" }, headers)
    expect(other.status).toBe(400)
    expect(other.body.error?.code).toBe("idempotency_key_reused")
    expect(await balanceOf(server, account)).toBe(998)
  })

  it("lyrics:agent is required and enough: music:generate alone is 403 insufficient_scope", async () => {
    const musicOnly = await createAccount(server, { scopes: ["music:generate"] })
    const refused = await write(musicOnly, { prompt: "no scope" })
    expect(refused.status).toBe(403)
    expect(refused.body.error).toMatchObject({ type: "permission_error", code: "insufficient_scope" })
    expect(refused.headers.get("www-authenticate")).toContain('scope="lyrics:agent"')
    expect((await api(server, "GET", "/api/v1/lyrics", { key: musicOnly.key })).status).toBe(403)
    expect(await balanceOf(server, musicOnly)).toBe(1000)

    const lyricsOnly = await createAccount(server, { scopes: ["lyrics:agent"] })
    expect((await write(lyricsOnly, { prompt: "just lyrics" })).status).toBe(202)
  })

  it("counts in the per-minute limit but not the concurrency limit", async () => {
    const account = await writer({ requests_per_minute: 2, concurrency_limit: 1 })
    expect((await write(account, { prompt: "first [hang]" })).status).toBe(202)
    expect((await write(account, { prompt: "second [hang]" })).status).toBe(202)
    const limited = await write(account, { prompt: "third" })
    expect(limited.status).toBe(429)
    expect(limited.body.error?.code).toBe("rpm_exceeded")
  })

  it("bad input is 400 or 404 naming the field, and charges nothing", async () => {
    const [account, other] = [await writer(), await writer()]
    const song = await api(server, "POST", "/api/v1/music/generations", { key: other.key, body: validSong })
    const otherTrack = (await settledAt(server, other.key, `/api/v1/music/generations/${String(song.body.id)}`, 15_000))
      .tracks?.[0]?.id
    const cases: ReadonlyArray<readonly [body: unknown, status: number, code: string, param: string]> = [
      [{ prompt: "" }, 400, "invalid_parameter", "prompt"],
      [{ prompt: "x".repeat(1001) }, 400, "invalid_parameter", "prompt"],
      [{}, 400, "missing_parameter", "prompt"],
      [{ prompt: "p", sections: ["Verse", "Solo"] }, 400, "invalid_parameter", "sections.1"],
      [{ prompt: "p", instruction: "make it rhyme" }, 400, "missing_parameter", "lyrics"],
      [{ prompt: "p", lyrics: "[Verse]\nla" }, 400, "missing_parameter", "instruction"],
      [{ prompt: "p", language: "English!" }, 400, "invalid_parameter", "language"],
      [{ prompt: "p", mood: "sad" }, 400, "unknown_parameter", "mood"],
      [{ prompt: "p", track_id: String(otherTrack) }, 404, "track_not_found", "track_id"],
      [{ prompt: "p", track_id: "trk_nope" }, 404, "track_not_found", "track_id"]
    ]
    for (const [body, status, code, param] of cases) {
      const res = await write(account, body)
      expect({ status: res.status, code: res.body.error?.code, param: res.body.error?.param }).toEqual({
        status,
        code,
        param
      })
    }
    expect(await balanceOf(server, account)).toBe(1000)
    expect(await server.query("select id from lyrics_tasks where account_id = $1", account.id)).toEqual([])
  })

  it("with track_id, the writer is told to fit that song's lines", async () => {
    const account = await writer()
    const song = await api(server, "POST", "/api/v1/music/generations", {
      key: account.key,
      body: { ...validSong, lyrics: "[Verse]\nCount every syllable here" }
    })
    const track = (await settledAt(server, account.key, `/api/v1/music/generations/${String(song.body.id)}`, 15_000))
      .tracks?.[0]?.id
    const res = await write(account, { prompt: "fit me", track_id: String(track) })
    expect(res.status).toBe(202)
    expect((await settled(account, String(res.body.id))).status).toBe("ready")
    const asked = received.find((request) => JSON.stringify(request.body).includes("fit me"))
    expect(JSON.stringify(asked?.body.messages)).toContain("Count every syllable here")
  })

  it.each([
    ["a 5xx", "[5xx]", "lyrics_failed"],
    ["a time-out", "[hang]", "lyrics_failed"],
    ["content that is not JSON", "[badjson]", "lyrics_failed"],
    ["a refusal", "[refuse]", "content_policy"],
    ["one variation where two are due", "[one]", "lyrics_failed"]
  ])("%s fails the task, refunded once, with lyrics.failed", async (_name, marker, code) => {
    const account = await writer()
    const res = await write(account, { prompt: `trouble ${marker}` })
    expect(res.status).toBe(202)
    const done = await settled(account, String(res.body.id))
    expect(done).toMatchObject({ status: "failed", credits_used: 2, credits_refunded: 2, variations: [] })
    expect(done.error?.code).toBe(code)
    expect(await ledgerOf(String(done.id))).toEqual([
      { kind: "debit", delta: -2 },
      { kind: "refund", delta: 2 }
    ])
    expect(await eventsOf(String(done.id))).toEqual(["lyrics.failed"])
    expect(await balanceOf(server, account)).toBe(1000)
  })
})

describe("the upstream's lyrics endpoint (PROVIDER=http)", () => {
  const apiKey = "lyrics-upstream-key"
  let upstream: FakeUpstream
  beforeAll(async () => {
    upstream = await startFakeUpstream({ apiKey })
  })
  afterAll(() => upstream?.close())

  const job = (providerTaskId: string | null, prompt = "rain on a tin roof"): LyricsJob => ({
    id: "lyt_000000000000000000000000",
    request: { prompt, style: "blues", instruction: "shorter", lyrics: "[Verse]\nold words" },
    fit: null,
    providerTaskId,
    // Nobody listens here: the callback is a hint the worker confirms by record-info anyway.
    callbackUrl: "http://127.0.0.1:9/internal/provider/callback/lyt_000000000000000000000000?token=t"
  })
  const step = (input: LyricsJob) =>
    Effect.runPromise(
      LyricsWriter.use((writer) => writer.step(input)).pipe(
        Effect.provide(sunoLyricsWriterLayer({ baseUrl: upstream.url, apiKey, timeoutMs: 2_000 }))
      )
    )

  it("takes the task, then reads the words from record-info; the brief rides in the prompt", async () => {
    upstream.control.nextTool("lyrics", { callbacks: "none", pollsBeforeDone: 1 })
    const taken = await step(job(null))
    expect(taken._tag).toBe("Taken")
    const id = taken._tag === "Taken" ? taken.providerTaskId : ""
    expect(upstream.control.lyrics(id)?.prompt).toContain("Revise these lyrics: shorter")
    expect((await step(job(id)))._tag).toBe("NotYet")
    const written = await step(job(id))
    expect(written._tag === "Written" ? written.variations.length : 0).toBe(2)
  })

  it("a sensitive word is content_policy; a refusal at submission fails; maintenance is asked again later", async () => {
    upstream.control.nextTool("lyrics", { callbacks: "none", outcome: "SENSITIVE_WORD_ERROR" })
    const taken = await step(job(null))
    const id = taken._tag === "Taken" ? taken.providerTaskId : ""
    expect(await step(job(id))).toMatchObject({ _tag: "Failed", code: "content_policy" })
    upstream.control.nextTool("lyrics", { submit: { code: 429, msg: "credits exhausted" } })
    expect(await step(job(null))).toMatchObject({ _tag: "Failed", code: "lyrics_failed" })
    upstream.control.nextTool("lyrics", { submit: { code: 455 } })
    expect((await step(job(null)))._tag).toBe("NotYet")
    expect(await step(job(null, "word ".repeat(300)))).toMatchObject({ _tag: "Taken" })
  })
})
