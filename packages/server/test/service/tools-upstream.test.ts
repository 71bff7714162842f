/**
 * Song tools on the upstream (DESIGN.md section 9) end to end: the server runs with
 * `PROVIDER=http` against the fake Suno-style upstream over real HTTP, its worker inline. A song
 * is generated there first, so every tool works on a track the upstream made and knows by its
 * audio id. Each export and the extension reach `ready` with their files re-hosted; every way
 * the upstream can fail them refunds exactly once.
 */
import { startFakeUpstream } from "@lyre/fake-upstream"
import type { Behaviour, FakeUpstream, ToolKind } from "@lyre/fake-upstream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, balanceOf, createAccount, startTestServer, validSong } from "../support/harness.ts"
import type { Json, TestAccount, TestServer } from "../support/harness.ts"

const apiKey = "tools-upstream-key"
let upstream: FakeUpstream
/** Polls every 0.2 s, doubling up to 1 s; a 4 s deadline; provider calls time out after 0.5 s. */
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

/** Waits until `read` answers a body whose status is no longer `pending`. */
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
const exported = (account: TestAccount, id: string) => () =>
  api(server, "GET", `/api/v1/music/exports/${id}`, { key: account.key })

/** A finished song of `account` on the upstream, its title unique; answers the task and its first track. */
const song = async (account: TestAccount, extra: Record<string, unknown> = {}) => {
  const title = `Upstream tools ${++serial} ${Math.random().toString(36).slice(2, 8)}`
  const res = await api(server, "POST", "/api/v1/music/generations", {
    key: account.key,
    body: { ...validSong, title, ...extra }
  })
  expect(res.status).toBe(202)
  const done = await settled(task(account, String(res.body.id)))
  expect(done.status).toBe("ready")
  return { title, taskId: String(done.id), trackId: String(done.tracks?.[0]?.id) }
}

const exportRefunds = (exportId: string) =>
  server.query<{ n: number }>(
    "select count(*)::int as n from credit_ledger where export_id = $1 and kind = 'refund'",
    exportId
  )

const taskRefunds = (taskId: string) =>
  server.query<{ n: number }>(
    "select count(*)::int as n from credit_ledger where task_id = $1 and kind = 'refund'",
    taskId
  )

const eventTypes = async (id: string) =>
  (
    await server.query<{ type: string }>("select type from outbox_events where payload->>'id' = $1 order by seq", id)
  ).map((row) => row.type)

/** A file the service serves itself: fetched whole, with its bytes and type. */
const fetchFile = async (url: string) => {
  expect(url.startsWith(`${server.url}/`)).toBe(true)
  const res = await fetch(url)
  return { status: res.status, type: res.headers.get("content-type"), bytes: new Uint8Array(await res.arrayBuffer()) }
}

/** Exports `format` of a fresh song, the upstream told to behave so for `kinds`; answers the settled export. */
const exportBehaving = async (
  format: string,
  behaviours: Partial<Record<ToolKind, Behaviour>> = {},
  songExtra: Record<string, unknown> = {}
) => {
  const account = await createAccount(server)
  const source = await song(account, songExtra)
  for (const [kind, behaviour] of Object.entries(behaviours))
    upstream.control.onTrackOf(source.title, kind as ToolKind, behaviour)
  const before = await balanceOf(server, account)
  const res = await api(server, "POST", `/api/v1/music/tracks/${source.trackId}/exports`, {
    key: account.key,
    body: { format }
  })
  const id = await createdId(res, "exports", account)
  const done = await settled(exported(account, id))
  return { account, source, id, done, before, status: res.status }
}

/**
 * The id of what a POST created: in its 202, or, when the upstream refused it at once (the
 * interface's 500 `provider_error`), the account's newest row, failed and refunded already.
 */
const createdId = async (
  res: { status: number; body: Json },
  table: "exports" | "generation_tasks",
  account: TestAccount
) => {
  if (res.status === 202) return String(res.body.id)
  expect(res.status).toBe(500)
  expect(res.body.error?.type).toBe("api_error")
  const [row] = await server.query<{ id: string }>(
    `select id from ${table} where account_id = $1 order by created_at desc, id desc limit 1`,
    account.id
  )
  return row?.id ?? ""
}

describe("exports reach ready with their files re-hosted", () => {
  it("wav: the upstream's WAV, served by the service", async () => {
    const { id, done } = await exportBehaving("wav")
    expect(done).toMatchObject({
      status: "ready",
      format: "wav",
      credits_used: 5,
      credits_refunded: 0,
      error: null,
      timed_lyrics: null
    })
    const files = done.files as unknown as ReadonlyArray<{ url: string; stem: string | null; bytes: number }>
    expect(files).toHaveLength(1)
    const file = await fetchFile(files[0]?.url ?? "")
    expect(file.status).toBe(200)
    expect(Buffer.from(file.bytes.subarray(0, 4)).toString("latin1")).toBe("RIFF")
    expect(file.bytes.length).toBe(files[0]?.bytes)
    expect(upstream.control.downloads.some((path) => path.endsWith(".wav"))).toBe(true)
    expect(await eventTypes(id)).toContain("export.completed")
  })

  it("stems: the upstream's vocals and instrumental", async () => {
    const { done } = await exportBehaving("stems")
    expect(done).toMatchObject({ status: "ready", credits_used: 20 })
    const files = done.files as unknown as ReadonlyArray<{ url: string; stem: string | null }>
    expect(files.map((file) => file.stem)).toEqual(["vocals", "instrumental"])
    for (const file of files) expect((await fetchFile(file.url)).status).toBe(200)
  })

  it("midi: separated, transcribed once, written as a Standard MIDI File", async () => {
    const { source, done } = await exportBehaving("midi", {
      "vocal-removal": { pollsBeforeDone: 1 },
      midi: { pollsBeforeDone: 1 }
    })
    expect(done).toMatchObject({ status: "ready", credits_used: 5 })
    const files = done.files as unknown as ReadonlyArray<{ url: string }>
    const file = await fetchFile(files[0]?.url ?? "")
    expect(Buffer.from(file.bytes.subarray(0, 4)).toString("latin1")).toBe("MThd")
    const separations = upstream.control
      .toolRequestsFor("vocal-removal")
      .filter((request) => (request.body as { audioId?: string }).audioId !== undefined && request.taskId !== null)
    const separation = separations.at(-1)?.taskId
    expect(
      upstream.control
        .toolRequestsFor("midi")
        .filter((request) => (request.body as { taskId: string }).taskId === separation)
    ).toHaveLength(1)
    expect(source.trackId).toMatch(/^trk_/)
  })

  it("timed_lyrics: the upstream's aligned words, with the .lrc and WebVTT beside them", async () => {
    const { done } = await exportBehaving("timed_lyrics")
    expect(done).toMatchObject({ status: "ready", credits_used: 5 })
    const words = done.timed_lyrics as unknown as ReadonlyArray<{ text: string; start: number; end: number }>
    expect(words.length).toBeGreaterThan(0)
    expect(words.some((word) => word.text.includes("["))).toBe(false)
    const names = (done.files as unknown as ReadonlyArray<{ name: string }>).map((file) => file.name)
    expect(names.some((name) => name.endsWith(".lrc"))).toBe(true)
    expect(names.some((name) => name.endsWith(".vtt"))).toBe(true)
  })
})

describe("an extension on the upstream", () => {
  it("is submitted with the source's audio id and becomes ready with re-hosted tracks", async () => {
    const account = await createAccount(server)
    const source = await song(account)
    const res = await api(server, "POST", `/api/v1/music/tracks/${source.trackId}/extensions`, {
      key: account.key,
      body: { continue_at: 30 }
    })
    expect(res.status).toBe(202)
    const done = await settled(task(account, String(res.body.id)))
    expect(done.status).toBe("ready")
    const sent = upstream.control.submissions.filter((submission) => submission.endpoint === "extend").at(-1)
    const sourceTask =
      upstream.control.submissions.find((submission) => submission.title === source.title)?.taskId ?? ""
    expect(upstream.control.task(sourceTask)?.trackIds).toContain(
      (sent?.body as { audioId: string } | undefined)?.audioId
    )
    expect(sent?.body).toMatchObject({ defaultParamFlag: true, continueAt: 30, model: "V4_5" })
    const tracks = done.tracks as unknown as ReadonlyArray<{ audio_url: string }>
    expect(tracks.length).toBeGreaterThan(0)
    for (const track of tracks) expect((await fetchFile(track.audio_url)).status).toBe(200)
  })

  for (const [name, behaviour, code] of [
    ["refused at submission", { submit: { code: 400 } }, "provider_error"],
    ["failed later", { outcome: "GENERATE_AUDIO_FAILED" }, "provider_error"],
    ["refused for a sensitive word", { outcome: "SENSITIVE_WORD_ERROR" }, "content_policy"],
    ["never finished", { pollsBeforeDone: Infinity, callbacks: "none" }, "generation_timeout"]
  ] as const) {
    it(`${name}: failed ${code}, refunded once`, async () => {
      const account = await createAccount(server)
      const source = await song(account)
      const before = await balanceOf(server, account)
      const title = `Extension ${++serial} ${Math.random().toString(36).slice(2, 8)}`
      upstream.control.onTitle(title, behaviour)
      const res = await api(server, "POST", `/api/v1/music/tracks/${source.trackId}/extensions`, {
        key: account.key,
        body: { continue_at: 30, title }
      })
      const id = await createdId(res, "generation_tasks", account)
      const done = await settled(task(account, id))
      expect(done.status).toBe("failed")
      expect(done.error?.code).toBe(code)
      expect(done.credits_refunded).toBe(done.credits_used)
      expect((await taskRefunds(id))[0]?.n).toBe(1)
      expect(await balanceOf(server, account)).toBe(before)
    })
  }
})

describe("every failure of an export on the upstream refunds exactly once", () => {
  const cases: ReadonlyArray<readonly [string, string, Partial<Record<ToolKind, Behaviour>>, string]> = [
    ["wav refused at submission", "wav", { wav: { submit: { code: 400 } } }, "provider_error"],
    ["wav refused for maintenance", "wav", { wav: { submit: { code: 455 } } }, "provider_error"],
    ["wav failed later", "wav", { wav: { outcome: "GENERATE_AUDIO_FAILED" } }, "provider_error"],
    ["wav never finished", "wav", { wav: { pollsBeforeDone: Infinity, callbacks: "none" } }, "generation_timeout"],
    ["wav whose file is gone", "wav", { wav: { files: "missing" } }, "provider_error"],
    ["stems failed later", "stems", { "vocal-removal": { outcome: "CREATE_TASK_FAILED" } }, "provider_error"],
    [
      "midi whose separation failed",
      "midi",
      { "vocal-removal": { outcome: "GENERATE_AUDIO_FAILED" } },
      "provider_error"
    ],
    ["midi whose transcription was refused", "midi", { midi: { submit: { code: 413 } } }, "provider_error"],
    ["midi whose transcription failed", "midi", { midi: { outcome: "GENERATE_AUDIO_FAILED" } }, "provider_error"],
    ["timed lyrics refused", "timed_lyrics", { "timestamped-lyrics": { submit: { code: 404 } } }, "provider_error"],
    ["timed lyrics never answered", "timed_lyrics", { "timestamped-lyrics": { submit: "hang" } }, "generation_timeout"]
  ]
  for (const [name, format, behaviours, code] of cases) {
    it(`${name}: failed ${code}`, async () => {
      const { account, id, done, before } = await exportBehaving(format, behaviours)
      expect(done.status).toBe("failed")
      expect(done.error?.code).toBe(code)
      expect(done.credits_refunded).toBe(done.credits_used)
      expect((await exportRefunds(id))[0]?.n).toBe(1)
      expect(await balanceOf(server, account)).toBe(before)
      expect(await eventTypes(id)).toContain("export.failed")
    })
  }

  it("duplicate callbacks change nothing: ready once, charged once", async () => {
    const { account, id, done, before } = await exportBehaving("wav", {
      wav: { callbackCopies: 3, pollsBeforeDone: Infinity }
    })
    expect(done.status).toBe("ready")
    await upstream.control.settled()
    expect((await exportRefunds(id))[0]?.n).toBe(0)
    expect(await balanceOf(server, account)).toBe(before - 5)
    expect((await eventTypes(id)).filter((type) => type === "export.completed")).toHaveLength(1)
  })
})
