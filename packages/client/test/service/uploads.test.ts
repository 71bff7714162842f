/**
 * The client's uploads, tasks on a track and personas against a running service (the test
 * harness, the fake upstream as provider, the worker inline: uploads are listened to whatever the
 * provider): a path, a Blob, a File, a Node stream and a web stream sent as the raw body with
 * progress; the server's refusals as `LyreApiError`; the tRPC preset's upload by REST.
 */
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { createAccount, startTestServer, validSong } from "../../../server/test/support/harness.ts"
import type { TestAccount, TestServer } from "../../../server/test/support/harness.ts"
import { createLyreTrpcClient, LyreApiError, LyreClient, uploadAudio } from "../../src/index.ts"
import type { Upload } from "../../src/index.ts"
import { songWav } from "../support/audio.ts"

vi.setConfig({ testTimeout: 120_000 })

let server: TestServer
let account: TestAccount
let client: LyreClient
let dir: string
let wav: Buffer
let wavPath: string
beforeAll(async () => {
  server = await startTestServer({ worker: "inline", providerPollSeconds: 1 })
  account = await createAccount(server, { subscription: 1_000 })
  client = new LyreClient({ apiKey: account.key, baseUrl: server.url })
  dir = mkdtempSync(join(tmpdir(), "lyre-client-"))
  wav = songWav(8)
  wavPath = join(dir, "Sines.wav")
  writeFileSync(wavPath, wav)
}, 60_000)
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true })
  await server.close()
})

/** Upload rows of an account, deleted ones included: what a refusal must not have written. */
const uploadRows = async (accountId: string): Promise<number> =>
  Number(
    (await server.query<{ n: string }>("select count(*) as n from uploads where account_id = $1", accountId))[0]?.n
  )

const refusal = async (promise: Promise<unknown>): Promise<LyreApiError> => {
  const error = await promise.then(
    () => undefined,
    (cause: unknown) => cause
  )
  expect(error).toBeInstanceOf(LyreApiError)
  return error as LyreApiError
}

describe("uploads.create", () => {
  let ready: Upload
  it("a path: its type from the extension, progress to the last byte; followed to ready", async () => {
    const progress: Array<[number, number | null]> = []
    const pending = await client.uploads.create(wavPath, {
      title: "Sines",
      onProgress: (sent, total) => progress.push([sent, total])
    })
    expect(pending).toMatchObject({
      status: "pending",
      title: "Sines",
      content_type: "audio/wav",
      bytes: wav.length,
      track_id: null
    })
    expect(progress.at(-1)).toEqual([wav.length, wav.length])
    expect(progress.every(([sent], i) => i === 0 || sent > (progress[i - 1]?.[0] ?? 0))).toBe(true)

    const seen: Array<string> = []
    ready = await client.waitForUpload(pending.id, {
      intervalMs: 200,
      onProgress: ({ upload }) => seen.push(upload.status)
    })
    expect(ready.status).toBe("ready")
    expect(seen.at(-1)).toBe("ready")
    expect(ready.track_id).toMatch(/^trk_/)
    expect(ready.analysis?.bpm).toBeGreaterThan(0)
    expect(await client.uploads.get(pending.id)).toEqual(ready)
  })

  it("a Blob (its own type), a File (typed by its name) and bytes without progress", async () => {
    const blob = await client.uploads.create(new Blob([wav], { type: "audio/wav" }))
    expect(blob).toMatchObject({ content_type: "audio/wav", bytes: wav.length, title: null })
    const seen: Array<number> = []
    const file = await client.uploads.create(new File([wav], "take.wav"), { onProgress: (sent) => seen.push(sent) })
    expect(file).toMatchObject({ content_type: "audio/wav", bytes: wav.length })
    expect(seen.at(-1)).toBe(wav.length)
  })

  it("a Node stream with its size, and a web stream of unknown size (sent chunked), typed by the caller", async () => {
    const seen: Array<[number, number | null]> = []
    const node = await client.uploads.create(createReadStream(wavPath), {
      contentType: "audio/wav",
      size: wav.length,
      onProgress: (sent, total) => seen.push([sent, total])
    })
    expect(node).toMatchObject({ content_type: "audio/wav", bytes: wav.length })
    expect(seen.at(-1)).toEqual([wav.length, wav.length])

    const half = Math.floor(wav.length / 2)
    const web = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(wav.subarray(0, half)))
        controller.enqueue(new Uint8Array(wav.subarray(half)))
        controller.close()
      }
    })
    const unknown: Array<number | null> = []
    const streamed = await client.uploads.create(web, {
      contentType: "audio/x-wav",
      title: "Streamed",
      onProgress: (_, total) => unknown.push(total)
    })
    expect(streamed).toMatchObject({ content_type: "audio/wav", bytes: wav.length, title: "Streamed" })
    expect(unknown).toEqual([null, null])
  })

  it("list newest first, page by page; delete; another account's upload is 404 not_found", async () => {
    const page = await client.uploads.list({ limit: 2 })
    expect(page.data).toHaveLength(2)
    expect(page.has_more).toBe(true)
    const next = await client.uploads.list({ limit: 100, startingAfter: page.data.at(-1)?.id ?? "" })
    expect(next.data.map((u) => u.id)).toContain(ready.id)

    const other = new LyreClient({ apiKey: (await createAccount(server)).key, baseUrl: server.url })
    for (const call of [other.uploads.get(ready.id), other.uploads.delete(ready.id)]) {
      const error = await refusal(call)
      expect([error.status, error.type, error.message]).toEqual([404, "not_found", `No upload ${ready.id}.`])
    }
    const cover = await refusal(other.tracks.cover(ready.track_id ?? "", { style: "jazz" }))
    expect([cover.status, cover.param]).toEqual([404, "track_id"])

    const last = page.data[0]?.id ?? ""
    expect(await client.uploads.delete(last)).toEqual({ id: last, deleted: true })
    expect((await refusal(client.uploads.get(last))).status).toBe(404)
  })

  it("a file that is not audio is the server's 400 invalid_audio, whatever its name; nothing is kept", async () => {
    const fresh = await createAccount(server)
    const own = new LyreClient({ apiKey: fresh.key, baseUrl: server.url })
    const notes = join(dir, "notes.txt")
    writeFileSync(notes, "these are words, not audio\n".repeat(400))
    const lying = join(dir, "notes.wav")
    writeFileSync(lying, "these are words, not audio\n".repeat(400))
    const untyped = await refusal(own.uploads.create(notes))
    expect([untyped.status, untyped.code, untyped.param]).toEqual([400, "invalid_audio", "file"])
    expect(untyped.message).toContain("(this one is application/octet-stream)")
    const named = await refusal(own.uploads.create(lying, { title: "Words" }))
    expect([named.status, named.code, named.param]).toEqual([400, "invalid_audio", "file"])
    expect(await uploadRows(fresh.id)).toBe(0)
  })

  it("a refusal before the body is read reaches the caller, every time: a bad key, a type that is not audio, a length past 50 MB", async () => {
    // Each is answered while the client is still sending; the server reads on a moment (0075).
    const mid = join(dir, "mid.m4a")
    writeFileSync(mid, new Uint8Array(5 * 1024 * 1024))
    const big = join(dir, "big.wav")
    writeFileSync(big, new Uint8Array(50 * 1024 * 1024 + 1))
    const bad = new LyreClient({ apiKey: "lyr_live_nope", baseUrl: server.url })
    for (let attempt = 0; attempt < 3; attempt++) {
      expect((await refusal(bad.uploads.create(mid))).status).toBe(401)
      const untyped = await refusal(client.uploads.create(mid))
      expect([untyped.status, untyped.code, untyped.message]).toEqual([
        400,
        "invalid_audio",
        "An upload is audio: audio/mpeg, audio/wav, audio/flac, audio/ogg (this one is application/octet-stream)."
      ])
      const large = await refusal(client.uploads.create(big, { onProgress: () => undefined }))
      expect([large.status, large.code, large.message]).toEqual([
        413,
        "request_too_large",
        "An upload is at most 52428800 bytes."
      ])
    }
    rmSync(mid)
    rmSync(big)
  })

  it("idempotencyKey: the same key and file again answer the first upload, kept once", async () => {
    const keyed = await createAccount(server)
    const own = new LyreClient({ apiKey: keyed.key, baseUrl: server.url })
    const first = await own.uploads.create(wavPath, { idempotencyKey: "client-take-1" })
    const again = await own.uploads.create(wavPath, { idempotencyKey: "client-take-1" })
    expect(again).toEqual(first)
    expect(await uploadRows(keyed.id)).toBe(1)
  })

  it("a path is sent again after a 429 under one Idempotency-Key; a stream cannot be, so its 429 is thrown at once", async () => {
    const calls: Array<string> = []
    const keys: Array<string | null> = []
    const limitedOnce = (): typeof globalThis.fetch => {
      let first = true
      return async (input, init) => {
        calls.push(String(input))
        keys.push(new Headers(init?.headers).get("idempotency-key"))
        if (first) {
          first = false
          // The body is read as a refusal would leave it: not at all.
          return new Response(
            JSON.stringify({ error: { type: "rate_limit_error", code: "rate_limited", message: "Slow down." } }),
            {
              status: 429,
              headers: { "content-type": "application/json", "retry-after": "0" }
            }
          )
        }
        return globalThis.fetch(input, init)
      }
    }
    const retried = new LyreClient({ apiKey: account.key, baseUrl: server.url, fetch: limitedOnce() })
    expect((await retried.uploads.create(wavPath)).bytes).toBe(wav.length)
    expect(calls).toHaveLength(2)
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/)
    expect(keys[1]).toBe(keys[0])

    calls.length = 0
    const once = new LyreClient({ apiKey: account.key, baseUrl: server.url, fetch: limitedOnce() })
    const error = await refusal(once.uploads.create(createReadStream(wavPath), { contentType: "audio/wav" }))
    expect([error.status, error.code]).toEqual([429, "rate_limited"])
    expect(calls).toHaveLength(1)
  })
})

describe("the tRPC preset", () => {
  it("uploads by REST with the same options, and follows the upload by tRPC; tRPC itself cannot carry a file", async () => {
    const options = { baseUrl: server.url, getCredential: () => account.key }
    const trpc = createLyreTrpcClient(options)
    const seen: Array<number> = []
    const pending = await uploadAudio(options, wavPath, { title: "By tRPC", onProgress: (sent) => seen.push(sent) })
    expect(pending).toMatchObject({ status: "pending", title: "By tRPC", bytes: wav.length })
    expect(seen.at(-1)).toBe(wav.length)
    expect((await trpc.uploads.get.query({ id: pending.id })).id).toBe(pending.id)
    const viaTrpc = await trpc.uploads.create.mutate({ title: "x" }).then(
      () => undefined,
      (cause: unknown) => cause
    )
    expect(String(viaTrpc)).toContain("Send the file to POST /api/v1/music/uploads as its body.")

    const refused = await refusal(uploadAudio({ baseUrl: server.url, credential: "lyr_live_nope" }, wavPath))
    expect(refused.status).toBe(401)
  })
})

describe("tasks on a track and personas", () => {
  // The fake upstream knows its own songs' audio, not Lyre's uploads: the sources here are generated.
  let trackId: string
  beforeAll(async () => {
    const song = await client.waitForGeneration((await client.generations.create(validSong)).id, { intervalMs: 200 })
    trackId = song.tracks[0]?.id ?? ""
  })

  it("cover, vocals, accompaniment and edit answer pending tasks at the model's price; a bad span is the server's 400, free", async () => {
    const before = (await client.me()).credits.total
    const tasks = [
      await client.tracks.cover(trackId, { style: "bossa nova, acoustic guitar", audio_weight: 0.7 }),
      await client.tracks.vocals(trackId, { lyrics: "[Verse]\nMorning comes in silver light", vocal_gender: "f" }),
      await client.tracks.instrumental(trackId, { style: "jazz trio" }),
      await client.tracks.edit(trackId, { start: 1, end: 4, lyrics: "New words" })
    ]
    for (const task of tasks) expect(task).toMatchObject({ status: "pending", model: "aether", credits_used: 50 })
    expect((await client.me()).credits.total).toBe(before - 200)
    const span = await refusal(client.tracks.edit(trackId, { start: 1, end: 2 }))
    expect([span.status, span.param]).toEqual([400, "end"])
    expect((await client.me()).credits.total).toBe(before - 200)
  })

  it("personas: create (free), get, list, use as persona_id, delete; a deleted one is 404", async () => {
    const persona = await client.personas.create({ track_id: trackId, name: "Glass", description: "Bright chords" })
    expect(persona).toMatchObject({ id: expect.stringMatching(/^per_/), name: "Glass", track_id: trackId })
    expect(await client.personas.get(persona.id)).toEqual(persona)
    expect(await client.personas.list({ limit: 10 })).toEqual({ data: [persona], has_more: false })
    const task = await client.generations.create({ ...validSong, persona_id: persona.id })
    expect(task).toMatchObject({ status: "pending", model: "aether" })
    expect(await client.personas.delete(persona.id)).toEqual({ id: persona.id, deleted: true })
    const gone = await refusal(client.personas.get(persona.id))
    expect([gone.status, gone.type]).toEqual([404, "not_found"])
    expect((await refusal(client.generations.create({ ...validSong, persona_id: persona.id }))).param).toBe(
      "persona_id"
    )
  })
})
