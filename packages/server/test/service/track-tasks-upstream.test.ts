/**
 * Tasks on a track and personas on the upstream (DESIGN.md section 11) end to end: the server
 * runs with `PROVIDER=http` against the fake Suno-style upstream over real HTTP, its worker
 * inline. A cover, vocals and an instrumental hand the upstream a signed, expiring address of
 * Lyre's own copy of the track, which the fake fetches before it takes the task; an edit names
 * the upstream's own track. Each reaches `ready` with its tracks re-hosted, and every way the
 * upstream can fail one refunds it exactly once.
 */
import { rmSync } from "node:fs"
import { join } from "node:path"
import { startFakeUpstream } from "@lyre/fake-upstream"
import type { FakeUpstream } from "@lyre/fake-upstream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, balanceOf, createAccount, startTestServer, validSong } from "../support/harness.ts"
import type { Json, TestAccount, TestServer } from "../support/harness.ts"

const apiKey = "track-tasks-upstream-key"
let upstream: FakeUpstream
let server: TestServer

beforeAll(async () => {
  upstream = await startFakeUpstream({ apiKey, audioBytes: 32 * 1024 })
  server = await startTestServer({
    provider: "http",
    providerUrl: upstream.url,
    providerApiKey: apiKey,
    worker: "inline",
    providerPollSeconds: 0.2,
    providerTimeoutSeconds: 0.5,
    generationTimeoutSeconds: 4
  })
})
afterAll(async () => {
  await server?.close()
  await upstream?.close()
})

let serial = 0
const unique = (label: string) => `${label} ${++serial} ${Math.random().toString(36).slice(2, 8)}`

const settled = async (read: () => Promise<{ body: Json }>, withinMs = 15_000): Promise<Json> => {
  const until = Date.now() + withinMs
  while (Date.now() < until) {
    const { body } = await read()
    if (String(body.status) !== "pending") return body
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return (await read()).body
}

const task = (account: TestAccount, id: string) => () =>
  api(server, "GET", `/api/v1/music/generations/${id}`, { key: account.key })

/** A finished song of `account` on the upstream; answers its task id, first track and title. */
const song = async (account: TestAccount, extra: Record<string, unknown> = {}) => {
  const title = unique("Upstream source")
  const res = await api(server, "POST", "/api/v1/music/generations", {
    key: account.key,
    body: { ...validSong, title, ...extra }
  })
  const done = await settled(task(account, String(res.body.id)))
  expect(done.status).toBe("ready")
  const track = (done.tracks as unknown as Array<Json>)[0] ?? {}
  return { title, taskId: String(done.id), trackId: String(track.id), audioUrl: String(track.audio_url) }
}

const createdId = async (res: { status: number; body: Json }, account: TestAccount) => {
  if (res.status === 202) return String(res.body.id)
  expect(res.status).toBe(500)
  expect(res.body.error?.type).toBe("api_error")
  const [row] = await server.query<{ id: string }>(
    "select id from generation_tasks where account_id = $1 order by created_at desc, id desc limit 1",
    account.id
  )
  return row?.id ?? ""
}

const refunds = (taskId: string) =>
  server.query<{ n: number }>(
    "select count(*)::int as n from credit_ledger where task_id = $1 and kind = 'refund'",
    taskId
  )

const lastSubmission = (endpoint: string) => upstream.control.submissions.filter((s) => s.endpoint === endpoint).at(-1)

const kinds = [
  ["covers", "upload-cover", { style: "bossa nova" }],
  ["vocals", "add-vocals", { lyrics: "[Verse]\nSilver light" }],
  ["instrumentals", "add-instrumental", { style: "jazz trio" }],
  ["edits", "replace-section", { start: 10, end: 14, lyrics: "New words" }]
] as const

describe("tasks on a track on the upstream", () => {
  for (const [segment, endpoint, body] of kinds) {
    it(`${segment}: sent to ${endpoint}, ready with its tracks re-hosted`, async () => {
      const account = await createAccount(server)
      const source = await song(account)
      const title = unique(segment)
      const res = await api(server, "POST", `/api/v1/music/tracks/${source.trackId}/${segment}`, {
        key: account.key,
        body: { ...body, title }
      })
      expect(res.status).toBe(202)
      const done = await settled(task(account, String(res.body.id)))
      expect(done).toMatchObject({ status: "ready", credits_used: 50, credits_refunded: 0 })
      for (const track of done.tracks as unknown as Array<Json>) {
        expect(String(track.audio_url).startsWith(`${server.url}/files/`)).toBe(true)
        expect((await fetch(String(track.audio_url))).status).toBe(200)
      }
      const sent = lastSubmission(endpoint)
      expect(sent?.answer).toBe("accepted")
      expect(sent?.title).toBe(title)
    })
  }

  it("the bodies are the documented ones; an uploadUrl is a signed address of our copy, fetched by the upstream", async () => {
    const account = await createAccount(server)
    const source = await song(account, { vocal_gender: "f" })
    const before = Math.floor(Date.now() / 1000)
    await api(server, "POST", `/api/v1/music/tracks/${source.trackId}/covers`, {
      key: account.key,
      body: { style: "bossa nova", audio_weight: 0.7 }
    })
    const cover = lastSubmission("upload-cover")?.body as Record<string, unknown>
    expect(cover).toMatchObject({
      customMode: true,
      instrumental: false,
      model: "V4_5",
      style: "bossa nova",
      prompt: validSong.lyrics,
      vocalGender: "f",
      audioWeight: 0.7
    })
    const uploadUrl = new URL(String(cover.uploadUrl))
    expect(`${uploadUrl.origin}${uploadUrl.pathname}`).toBe(source.audioUrl)
    const expires = Number(uploadUrl.searchParams.get("expires"))
    expect(expires).toBeGreaterThan(before)
    expect(expires).toBeLessThanOrEqual(before + 3600)
    expect(upstream.control.uploads.filter((u) => u.url === uploadUrl.toString()).map((u) => u.status)).toEqual([200])

    await api(server, "POST", `/api/v1/music/tracks/${source.trackId}/vocals`, {
      key: account.key,
      body: { lyrics: "Sing" }
    })
    expect(lastSubmission("add-vocals")?.body).toMatchObject({
      prompt: "Sing",
      style: validSong.style,
      negativeTags: ""
    })
    await api(server, "POST", `/api/v1/music/tracks/${source.trackId}/instrumentals`, {
      key: account.key,
      body: { style: "jazz trio" }
    })
    expect(lastSubmission("add-instrumental")?.body).toMatchObject({ tags: "jazz trio", negativeTags: "" })
    // Lyre takes spans from 2 s; the upstream from 6: widened around the middle.
    await api(server, "POST", `/api/v1/music/tracks/${source.trackId}/edits`, {
      key: account.key,
      body: { start: 20, end: 23 }
    })
    const sourceTask = upstream.control.submissions.find((s) => s.title === source.title)?.taskId ?? ""
    const edit = lastSubmission("replace-section")?.body as Record<string, unknown>
    expect(edit).toMatchObject({
      taskId: sourceTask,
      infillStartS: 18.5,
      infillEndS: 24.5,
      prompt: validSong.lyrics,
      fullLyrics: validSong.lyrics
    })
    expect(upstream.control.task(sourceTask)?.trackIds).toContain(edit.audioId)
  })

  it("the server answers a signed address only with its own signature, before it expires", async () => {
    const account = await createAccount(server)
    const source = await song(account)
    await api(server, "POST", `/api/v1/music/tracks/${source.trackId}/covers`, {
      key: account.key,
      body: { style: "bossa nova" }
    })
    const signed = new URL(
      String((lastSubmission("upload-cover")?.body as Record<string, unknown> | undefined)?.uploadUrl)
    )
    expect((await fetch(signed)).status).toBe(200)
    const tampered = new URL(signed)
    tampered.searchParams.set("signature", "0".repeat(64))
    expect((await fetch(tampered)).status).toBe(404)
    const later = new URL(signed)
    later.searchParams.set("expires", String(Number(signed.searchParams.get("expires")) + 60))
    expect((await fetch(later)).status).toBe(404)
    const expired = new URL(signed)
    expired.searchParams.set("expires", "1000")
    expect((await fetch(expired)).status).toBe(404)
    expect((await fetch(source.audioUrl)).status).toBe(200)
  })

  it("a source whose file is gone: the upstream cannot fetch it and refuses, 500 provider_error, refunded once", async () => {
    const account = await createAccount(server)
    const source = await song(account)
    const key = decodeURIComponent(new URL(source.audioUrl).pathname.slice("/files/".length))
    rmSync(join(server.config.dataDir, "files", key))
    const before = await balanceOf(server, account)
    const res = await api(server, "POST", `/api/v1/music/tracks/${source.trackId}/covers`, {
      key: account.key,
      body: { style: "bossa nova" }
    })
    expect([res.status, res.body.error?.code]).toEqual([500, "provider_error"])
    const id = await createdId(res, account)
    expect((await settled(task(account, id))).status).toBe("failed")
    expect((await refunds(id))[0]?.n).toBe(1)
    expect(await balanceOf(server, account)).toBe(before)
    expect(lastSubmission("upload-cover")?.code).toBe(400)
  })

  for (const [segment] of kinds) {
    for (const [name, behaviour, code] of [
      ["refused at submission", { submit: { code: 400 } }, "provider_error"],
      ["failed later", { outcome: "GENERATE_AUDIO_FAILED" }, "provider_error"],
      ["refused for a sensitive word", { outcome: "SENSITIVE_WORD_ERROR" }, "content_policy"],
      ["never finished", { pollsBeforeDone: Infinity, callbacks: "none" }, "generation_timeout"]
    ] as const) {
      it(`${segment} ${name}: failed ${code}, refunded once`, async () => {
        const account = await createAccount(server)
        const source = await song(account)
        const before = await balanceOf(server, account)
        const title = unique(`${segment} failing`)
        upstream.control.onTitle(title, behaviour)
        const body = kinds.find(([s]) => s === segment)?.[2] ?? {}
        const res = await api(server, "POST", `/api/v1/music/tracks/${source.trackId}/${segment}`, {
          key: account.key,
          body: { ...body, title }
        })
        const id = await createdId(res, account)
        const done = await settled(task(account, id))
        expect(done.status).toBe("failed")
        expect(done.error?.code).toBe(code)
        expect(done.credits_refunded).toBe(done.credits_used)
        expect((await refunds(id))[0]?.n).toBe(1)
        expect(await balanceOf(server, account)).toBe(before)
      })
    }
  }
})

describe("personas on the upstream", () => {
  it("made at once with the upstream's personaId kept; named by persona_id, sent as personaId", async () => {
    const account = await createAccount(server)
    const source = await song(account)
    const name = unique("Persona")
    const made = await api(server, "POST", "/api/v1/personas", {
      key: account.key,
      body: { track_id: source.trackId, name, description: "Warm" }
    })
    expect(made.status).toBe(201)
    const upstreamPersona = upstream.control.personas.find((p) => p.name === name)
    const [row] = await server.query<{ provider_persona_id: string }>(
      "select provider_persona_id from personas where id = $1",
      String(made.body.id)
    )
    expect(row?.provider_persona_id).toBe(upstreamPersona?.personaId)
    const title = unique("With persona")
    await api(server, "POST", "/api/v1/music/generations", {
      key: account.key,
      body: { ...validSong, title, persona_id: String(made.body.id) }
    })
    expect(upstream.control.submissions.find((s) => s.title === title)?.body).toMatchObject({
      personaId: upstreamPersona?.personaId
    })
    await api(server, "POST", `/api/v1/music/tracks/${source.trackId}/covers`, {
      key: account.key,
      body: { style: "folk", persona_id: String(made.body.id) }
    })
    expect(lastSubmission("upload-cover")?.body).toMatchObject({ personaId: upstreamPersona?.personaId })
  })

  it("refused by the upstream (a second persona of one track): 500 provider_error, nothing kept, nothing charged", async () => {
    const account = await createAccount(server)
    const source = await song(account)
    const before = await balanceOf(server, account)
    const first = await api(server, "POST", "/api/v1/personas", {
      key: account.key,
      body: { track_id: source.trackId, name: unique("One"), description: "One" }
    })
    expect(first.status).toBe(201)
    const second = await api(server, "POST", "/api/v1/personas", {
      key: account.key,
      body: { track_id: source.trackId, name: unique("Two"), description: "Two" }
    })
    expect([second.status, second.body.error?.code]).toEqual([500, "provider_error"])
    expect((await api(server, "GET", "/api/v1/personas", { key: account.key })).body.data).toHaveLength(1)
    expect(await balanceOf(server, account)).toBe(before)
  })
})
