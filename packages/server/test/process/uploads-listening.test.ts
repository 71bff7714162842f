/**
 * Listening, end to end: a song written here as MIDI and rendered by FluidSynth (outside
 * material) is uploaded; the listening worker hears its written key, its tempo within 2%, chords
 * on its beat grid, and Basic Pitch's transcription holds at least 70% of its written melody
 * (pitch class, onset within a sixteenth). A cover of it, made by the built-in engine, plays that
 * melody as the top line of one of its parts (its MIDI export, read with @tonejs/midi).
 */
import { createRequire } from "node:module"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, createAccount, settledAt, startTestServer } from "../support/harness.ts"
import type { Json, TestAccount, TestServer } from "../support/harness.ts"
import { writeOutsideSong } from "../support/outsideSong.ts"
import type { OutsideSong, WrittenNote } from "../support/outsideSong.ts"

const { Midi } = createRequire(import.meta.url)("@tonejs/midi") as typeof import("@tonejs/midi")

let server: TestServer
let account: TestAccount
let song: OutsideSong
let ready: Json
beforeAll(async () => {
  // Rendered before the first request: FluidSynth blocks this thread for seconds on a busy
  // machine, long enough for the server to close the kept-alive connection that fetch would
  // then reuse for the upload (ECONNRESET).
  song = writeOutsideSong()
  server = await startTestServer({
    provider: "embedded",
    // Half a minute: the tests read sung words, stems and melodies past the first 8 s.
    engineMaxSeconds: 30,
    providerUrl: null,
    providerApiKey: null,
    worker: "inline",
    providerPollSeconds: 1
  })
  account = await createAccount(server, { subscription: 1_000 })
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
    const [row] = await server.query<{
      transcription: { notes: Array<{ pitch: number; start: number; end: number; velocity: number }> }
    }>("select transcription from uploads where id = $1", String(ready.id))
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

const settled = (path: string): Promise<Json> => settledAt(server, account.key, path)

interface Heard {
  readonly pitch: number
  readonly start: number
}

/** A part's top line: of the notes that start together (within 50 ms), the highest. */
const topLine = (notes: ReadonlyArray<Heard>): Array<Heard> => {
  const sorted = [...notes].sort((a, b) => a.start - b.start || b.pitch - a.pitch)
  const line: Array<Heard> = []
  for (const n of sorted) {
    const last = line[line.length - 1]
    if (last !== undefined && n.start - last.start < 0.05) continue
    line.push(n)
  }
  return line
}

/**
 * The share of the written melody found in a line, in the cover's tempo, wherever in the song it
 * begins: each written note laid at `offset + (start - first) * scale`, matched by pitch class and
 * onset within a sixteenth; the best over every offset that puts the tune's first note on one of
 * the line's notes.
 */
const melodyShare = (
  melody: ReadonlyArray<WrittenNote>,
  line: ReadonlyArray<Heard>,
  scale: number,
  sixteenth: number
): number => {
  const first = melody[0]?.start ?? 0
  let best = 0
  for (const anchor of line) {
    const found = melody.filter((w) => {
      const at = anchor.start + (w.start - first) * scale
      return line.some((n) => n.pitch % 12 === w.pitch % 12 && Math.abs(n.start - at) <= sixteenth)
    }).length
    best = Math.max(best, found / melody.length)
  }
  return best
}

describe("a cover of an upload made outside", () => {
  it("plays at least 70% of the written melody as the top line of one of its parts", async () => {
    const created = await api(server, "POST", `/api/v1/music/tracks/${String(ready.track_id)}/covers`, {
      key: account.key,
      body: { style: "piano ballad, strings" }
    })
    expect(created.status).toBe(202)
    const cover = await settled(`/api/v1/music/generations/${String(created.body.id)}`)
    expect(cover.status).toBe("ready")
    const track = (cover.tracks as unknown as Array<Json>)[0] ?? {}
    const exported = await api(server, "POST", `/api/v1/music/tracks/${String(track.id)}/exports`, {
      key: account.key,
      body: { format: "midi" }
    })
    const file = (await settled(`/api/v1/music/exports/${String(exported.body.id)}`)).files as unknown as Array<Json>
    const midi = new Midi(new Uint8Array(await (await fetch(String(file[0]?.url))).arrayBuffer()))
    const coverBpm = midi.header.tempos[0]?.bpm ?? song.bpm
    const scale = song.bpm / coverBpm
    const sixteenth = 60 / coverBpm / 4
    const pitched = midi.tracks.filter((t) => t.channel !== 9 && t.notes.length > 0)
    const shares = pitched.map((t) =>
      melodyShare(song.melody, topLine(t.notes.map((n) => ({ pitch: n.midi, start: n.time }))), scale, sixteenth)
    )
    expect(Math.max(...shares)).toBeGreaterThanOrEqual(0.7)
  }, 300_000)
})
