/**
 * Tasks on a track end to end on the built-in engine (the embedded default): a song generated
 * through the API is covered and edited, and a persona made from it sings a later song; each
 * reaches `ready` through the worker with `job.completed`, and the edit's WAV export is the
 * source's sample for sample outside the span.
 */
import { createRequire } from "node:module"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, createAccount, settledAt, startTestServer } from "../support/harness.ts"
import type { Json, TestAccount, TestServer } from "../support/harness.ts"

const require = createRequire(import.meta.url)
const { WaveFile } = require("wavefile") as typeof import("wavefile")

let server: TestServer
let account: TestAccount
let song: Json
beforeAll(async () => {
  server = await startTestServer({
    provider: "embedded",
    providerUrl: null,
    providerApiKey: null,
    worker: "inline",
    providerPollSeconds: 1,
    // A cover's length follows its source's in the new tempo: whole songs, uncut.
    engineMaxSeconds: null
  })
  account = await createAccount(server, { subscription: 1_000 })
  const created = await api(server, "POST", "/api/v1/music/generations", {
    key: account.key,
    body: {
      style: "synthpop, 120 bpm, in C major, synth, drums, bass",
      title: "Glass City",
      lyrics: "[Verse]\nLights over the water\n[Chorus]\nHold on to the night"
    }
  })
  song = await settled(`/api/v1/music/generations/${String(created.body.id)}`)
}, 240_000)
afterAll(() => server.close())

const settled = (path: string): Promise<Json> => settledAt(server, account.key, path)

const firstTrack = (task: Json): Json => (task.tracks as unknown as Array<Json>)[0] ?? {}

const run = async (path: string, body: unknown): Promise<Json> => {
  const res = await api(server, "POST", path, { key: account.key, body })
  expect(res.body.error ?? null).toBeNull()
  expect(res.status).toBe(202)
  return settled(`/api/v1/music/generations/${String(res.body.id)}`)
}

const wavOf = async (trackId: string): Promise<Int16Array> => {
  const res = await api(server, "POST", `/api/v1/music/tracks/${trackId}/exports`, {
    key: account.key,
    body: { format: "wav" }
  })
  const exported = await settled(`/api/v1/music/exports/${String(res.body.id)}`)
  const url = String((exported.files as unknown as Array<Json>)[0]?.url)
  const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer())
  return new WaveFile(bytes).getSamples(true, Int16Array) as unknown as Int16Array
}

const completedEvents = async (taskId: string) =>
  (await server.query<{ type: string }>("select type from outbox_events where payload->>'task_id' = $1", taskId)).map(
    (e) => e.type
  )

describe("tasks on a track on the built-in engine", () => {
  it("the source song is ready", () => {
    expect(song.status).toBe("ready")
  })

  it("a cover: two tracks in the new tempo and the source's key, job.completed once", async () => {
    const source = firstTrack(song)
    const cover = await run(`/api/v1/music/tracks/${String(source.id)}/covers`, {
      style: "reggae, 90 bpm, organ, guitar"
    })
    expect(cover).toMatchObject({ status: "ready", credits_used: 50 })
    const tracks = cover.tracks as unknown as Array<Json>
    expect(tracks).toHaveLength(2)
    for (const track of tracks) {
      expect(String(track.tags)).toContain("90 bpm")
      expect(String(track.tags)).toContain("C major")
      expect(track.lyrics).toBe(source.lyrics)
      // The same bars at 90 bpm instead of 120: about 4/3 of the source's length.
      expect(Number(track.duration) / Number(source.duration)).toBeCloseTo(4 / 3, 1)
    }
    // Heard while it was made (record 0126), then done, once each.
    expect((await completedEvents(String(cover.id))).sort()).toEqual(["job.completed", "job.streaming"])
  }, 300_000)

  it("an edit: outside the span, the source's WAV sample for sample", async () => {
    const source = firstTrack(song)
    // 120 bpm: bars of 2 s; the span runs between the bar lines at 8 s and 12 s.
    const edit = await run(`/api/v1/music/tracks/${String(source.id)}/edits`, {
      start: 8,
      end: 12,
      lyrics: "Glass and fire"
    })
    expect(edit.status).toBe("ready")
    const [before, after] = await Promise.all([wavOf(String(source.id)), wavOf(String(firstTrack(edit).id))])
    expect(after.length).toBe(before.length)
    // Compared as bytes, natively: a loop over millions of samples would hold this process's event
    // loop long enough for the server to close the kept-alive connection the next request reuses.
    const rate = 44_100 * 2
    const bytes = (samples: Int16Array, from: number, to: number) =>
      Buffer.from(samples.buffer, samples.byteOffset + from * 2, (to - from) * 2)
    const same = (from: number, to: number) => bytes(before, from, to).equals(bytes(after, from, to))
    expect(same(0, 8 * rate)).toBe(true)
    expect(same(12 * rate, before.length)).toBe(true)
    expect(same(8 * rate, 12 * rate)).toBe(false)
  }, 300_000)

  it("a persona made from the song sings a later song", async () => {
    const source = firstTrack(song)
    const persona = await api(server, "POST", "/api/v1/personas", {
      key: account.key,
      body: { track_id: String(source.id), name: "Glass voice", description: "The voice of Glass City" }
    })
    expect(persona.status).toBe(201)
    expect(String(persona.body.vocal_gender)).toBe(String(source.tags).includes("female vocals") ? "f" : "m")
    const later = await run("/api/v1/music/generations", {
      style: "folk ballad",
      title: "Later",
      lyrics: "[Verse]\nA new song in an old voice",
      persona_id: String(persona.body.id)
    })
    expect(later.status).toBe("ready")
    const voice = String(persona.body.vocal_gender) === "f" ? "female vocals" : "male vocals"
    for (const track of later.tracks as unknown as Array<Json>) expect(String(track.tags)).toContain(voice)
  }, 300_000)
})
