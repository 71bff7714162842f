/**
 * Listening, end to end: a song written here as MIDI and rendered by FluidSynth (outside
 * material) is uploaded; the listening worker hears its written key, its tempo within 2%, chords
 * on its beat grid, and Basic Pitch's transcription holds at least 70% of its written melody
 * (pitch class, onset within a sixteenth).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, createAccount, startTestServer } from "./support/harness.ts"
import type { Json, TestAccount, TestServer } from "./support/harness.ts"
import { writeOutsideSong } from "./support/outsideSong.ts"
import type { OutsideSong } from "./support/outsideSong.ts"

let server: TestServer
let account: TestAccount
let song: OutsideSong
let ready: Json
beforeAll(async () => {
  // Rendered before the first request: FluidSynth blocks this thread for seconds on a busy
  // machine, long enough for the server to close the kept-alive connection that fetch would
  // then reuse for the upload (ECONNRESET).
  song = writeOutsideSong()
  server = await startTestServer({ worker: "inline", providerPollSeconds: 1 })
  account = await createAccount(server)
  const created = await fetch(`${server.url}/api/v1/music/uploads?title=Outside`, {
    method: "POST",
    headers: { authorization: `Bearer ${account.key}`, "content-type": "audio/wav" },
    body: song.wav
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as Json }))
  expect(created.status).toBe(202)
  const until = Date.now() + 150_000
  ready = created.body
  while (String(ready.status) === "pending" && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 250))
    ready = (await api(server, "GET", `/api/v1/music/uploads/${String(created.body.id)}`, { key: account.key })).body
  }
}, 240_000)
afterAll(() => server.close())

describe("listening to an upload made outside", () => {
  it("is ready, with a track", () => {
    expect(ready.status).toBe("ready")
    expect(String(ready.track_id)).toMatch(/^trk_/)
  })

  it("hears the written key and the tempo within 2%", () => {
    expect(ready.analysis?.key).toBe(song.key)
    expect(Math.abs(Number(ready.analysis?.bpm) - song.bpm) / song.bpm).toBeLessThanOrEqual(0.02)
    expect(ready.analysis?.time_signature).toBe("4/4")
    expect(Number(ready.analysis?.loudness_lufs)).toBeLessThan(-5)
    expect(Number(ready.analysis?.loudness_lufs)).toBeGreaterThan(-40)
  })

  it("puts chords on the beat grid, in the song's harmony", () => {
    const beats = ready.analysis?.beats as unknown as Array<number>
    const chords = ready.analysis?.chords as unknown as Array<{ start: number; end: number; chord: string }>
    expect(chords.length).toBeGreaterThan(3)
    for (const span of chords) {
      expect(beats.some((b) => Math.abs(b - span.start) < 0.002)).toBe(true)
      expect(span.end).toBeGreaterThan(span.start)
    }
    // Most of the time is in the four written chords.
    const written = new Set(["G", "Em", "C", "D"])
    const inKey = chords.filter((c) => written.has(c.chord)).reduce((s, c) => s + c.end - c.start, 0)
    const total = chords.reduce((s, c) => s + c.end - c.start, 0)
    expect(inKey / total).toBeGreaterThan(0.5)
  })

  it("keeps a transcription that holds at least 70% of the written melody", async () => {
    const [row] = await server.query<{ transcription: { notes: Array<{ pitch: number; start: number; end: number; velocity: number }> } }>(
      "select transcription from uploads where id = $1",
      String(ready.id)
    )
    const notes = row?.transcription.notes ?? []
    const sixteenth = 60 / song.bpm / 4
    const heard = song.melody.filter((written) =>
      notes.some((n) => n.pitch % 12 === written.pitch % 12 && Math.abs(n.start - written.start) <= sixteenth)
    )
    expect(heard.length / song.melody.length).toBeGreaterThanOrEqual(0.7)
    for (const n of notes) {
      expect(n.end).toBeGreaterThan(n.start)
      expect(n.velocity).toBeGreaterThanOrEqual(0)
      expect(n.velocity).toBeLessThanOrEqual(1)
    }
  })
})
