/**
 * The client's song tools against a running service whose provider is the built-in engine (the
 * worker inline): extend a real song, export it, wait for the export, download its files.
 */
import { afterAll, assert, beforeAll, describe, expect, it } from "vitest"
import { createAccount, startTestServer } from "../../../server/test/support/harness.ts"
import type { TestAccount, TestServer } from "../../../server/test/support/harness.ts"
import { LyreApiError, LyreClient } from "../../src/index.ts"
import type { ExportWaitProgress, GenerationTask } from "../../src/index.ts"

let server: TestServer
let account: TestAccount
let client: LyreClient
let song: GenerationTask
beforeAll(async () => {
  server = await startTestServer({
    provider: "embedded",
    // Half a minute: the voice comes in, and the tests read lengths and sung words past 8 s.
    engineMaxSeconds: 30,
    providerUrl: null,
    providerApiKey: null,
    worker: "inline",
    providerPollSeconds: 1
  })
  account = await createAccount(server, { subscription: 1_000 })
  client = new LyreClient({ apiKey: account.key, baseUrl: server.url })
  const created = await client.generations.create({
    style: "folk, 96 bpm, guitar",
    title: "Home",
    lyrics: "[Verse]\nThe road runs home\n[Chorus]\nHome again"
  })
  song = await client.waitForGeneration(created.id, { intervalMs: 300 })
}, 180_000)
afterAll(() => server.close())

const credits = async (): Promise<number> => (await client.me()).credits.total

describe("LyreClient song tools", () => {
  it("exports WAV and timed lyrics, waits for them, downloads the files; a second WAV is the same export, free", async () => {
    expect(song.status).toBe("ready")
    const track = song.tracks[0]
    assert.isDefined(track)
    const before = await credits()
    const wav = await client.exports.create(track.id, "wav")
    expect(wav).toMatchObject({
      status: "pending",
      format: "wav",
      track_id: track.id,
      task_id: song.id,
      credits_used: 5
    })
    expect(await credits()).toBe(before - 5)

    const seen: Array<ExportWaitProgress> = []
    const ready = await client.waitForExport(wav.id, { intervalMs: 200, onProgress: (p) => seen.push(p) })
    expect(ready.status).toBe("ready")
    expect(seen.at(-1)?.export.status).toBe("ready")
    const file = ready.files[0]
    assert.isDefined(file)
    expect(file).toMatchObject({ content_type: "audio/wav", stem: null })
    const bytes = await client.download(file)
    expect(bytes.length).toBe(file.bytes)
    expect(Buffer.from(bytes.subarray(0, 4)).toString("latin1")).toBe("RIFF")
    expect(Buffer.from(bytes.subarray(8, 12)).toString("latin1")).toBe("WAVE")

    const again = await client.exports.create(track.id, "wav")
    expect(again.id).toBe(wav.id)
    expect(await credits()).toBe(before - 5)

    const lyrics = await client.waitForExport((await client.exports.create(track.id, "timed_lyrics")).id, {
      intervalMs: 200
    })
    expect(lyrics.status).toBe("ready")
    const words = lyrics.timed_lyrics ?? []
    expect(words.map((w) => w.text.toLowerCase().replace(/[^a-z]/g, "")).slice(0, 4)).toEqual([
      "the",
      "road",
      "runs",
      "home"
    ])
    for (const [i, word] of words.entries()) {
      expect(word.end).toBeGreaterThan(word.start)
      const previous = words[i - 1]
      if (previous !== undefined) expect(word.start).toBeGreaterThanOrEqual(previous.start)
    }

    const listed = await client.exports.list({ trackId: track.id })
    expect(listed.data.map((e) => e.id)).toEqual([lyrics.id, wav.id])
    const page = await client.exports.list({ trackId: track.id, limit: 1 })
    expect(page).toMatchObject({ has_more: true, data: [{ id: lyrics.id }] })
    expect((await client.exports.list({ trackId: track.id, startingAfter: lyrics.id })).data.map((e) => e.id)).toEqual([
      wav.id
    ])
  }, 120_000)

  it("extends a track from a point: a generation of the source's model, priced as one; a repeated key charges once", async () => {
    const track = song.tracks[1]
    assert.isDefined(track)
    const before = await credits()
    const idempotencyKey = `extend-${track.id}`
    const extension = await client.tracks.extend(
      track.id,
      { continue_at: 10, title: "Home, Again" },
      { idempotencyKey }
    )
    expect(extension).toMatchObject({ status: "pending", model: "aether", credits_used: 50 })
    // The same key again (a retry after a lost answer): the same task, charged once.
    expect(
      (await client.tracks.extend(track.id, { continue_at: 10, title: "Home, Again" }, { idempotencyKey })).id
    ).toBe(extension.id)
    const midi = await client.exports.create(track.id, "midi", { idempotencyKey: `midi-${track.id}` })
    expect((await client.exports.create(track.id, "midi", { idempotencyKey: `midi-${track.id}` })).id).toBe(midi.id)
    expect(await credits()).toBe(before - 55)
    const done = await client.waitForGeneration(extension.id, { intervalMs: 300 })
    expect(done.status).toBe("ready")
    expect(done.tracks[0]?.title).toBe("Home, Again")
    expect(done.tracks[0]?.duration).toBeGreaterThan(30)
  }, 150_000)

  it("refuses another account's track and export with not_found, and charges nothing", async () => {
    const other = await createAccount(server)
    const stranger = new LyreClient({ apiKey: other.key, baseUrl: server.url })
    const track = song.tracks[0]
    assert.isDefined(track)
    const refused = async (call: () => Promise<unknown>) => {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e
      )
      expect(error).toBeInstanceOf(LyreApiError)
      return error as LyreApiError
    }
    for (const call of [() => stranger.tracks.extend(track.id), () => stranger.exports.create(track.id, "midi")]) {
      const error = await refused(call)
      expect([error.status, error.type, error.param]).toEqual([404, "not_found", "track_id"])
    }
    const mine = (await client.exports.list({ trackId: track.id })).data[0]
    assert.isDefined(mine)
    const error = await refused(() => stranger.exports.get(mine.id))
    expect([error.status, error.type]).toEqual([404, "not_found"])
    expect((await stranger.exports.list({ trackId: track.id })).data).toEqual([])
    expect((await stranger.me()).credits.total).toBe(1_000)
  })
})
