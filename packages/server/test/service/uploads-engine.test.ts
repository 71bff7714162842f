/**
 * An upload's track on the built-in engine (the embedded default), through the API: exported as
 * WAV (its audio) and MIDI (its transcription), refused timed lyrics, and extended: the
 * extension is the upload sample for sample up to `continue_at`, then the engine's continuation.
 * Another account's upload track is 404 to every song tool. A persona made from an upload's
 * track is accepted by a generation, which renders to ready.
 */
import { readdirSync } from "node:fs"
import { createRequire } from "node:module"
import { basename, join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, createAccount, startTestServer } from "../support/harness.ts"
import type { Json, TestAccount, TestServer } from "../support/harness.ts"
import { aMajor, pulsedChordWav } from "../support/testAudio.ts"

const require = createRequire(import.meta.url)
const { WaveFile } = require("wavefile") as typeof import("wavefile")
const { Midi } = require("@tonejs/midi") as typeof import("@tonejs/midi")

const rate = 44_100

/** Ten seconds of a chord with a kick on every beat at 120 bpm, in stereo. */
const song = pulsedChordWav({ seconds: 10, channels: 2, chord: aMajor })

let server: TestServer
let account: TestAccount
let other: TestAccount
let trackId: string
beforeAll(async () => {
  server = await startTestServer({
    provider: "embedded",
    providerUrl: null,
    providerApiKey: null,
    worker: "inline",
    providerPollSeconds: 1
  })
  account = await createAccount(server, { subscription: 1_000 })
  other = await createAccount(server, { subscription: 1_000 })
  const created = await fetch(`${server.url}/api/v1/music/uploads?title=Mine`, {
    method: "POST",
    headers: { authorization: `Bearer ${account.key}`, "content-type": "audio/wav" },
    body: song
  }).then(async (res) => (await res.json()) as Json)
  const ready = await settled(`/api/v1/music/uploads/${String(created.id)}`)
  expect(ready.status).toBe("ready")
  trackId = String(ready.track_id)
}, 240_000)
afterAll(() => server.close())

async function settled(path: string, key = account.key, withinMs = 200_000): Promise<Json> {
  const until = Date.now() + withinMs
  let body = (await api(server, "GET", path, { key })).body
  while (String(body.status) === "pending" && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 250))
    body = (await api(server, "GET", path, { key })).body
  }
  return body
}

const exported = async (track: string, format: string): Promise<Json> => {
  const res = await api(server, "POST", `/api/v1/music/tracks/${track}/exports`, { key: account.key, body: { format } })
  // 200: the account's ready export of that track and format, made by an earlier case.
  expect([200, 202]).toContain(res.status)
  return settled(`/api/v1/music/exports/${String(res.body.id)}`)
}

const fileBytes = async (exportBody: Json): Promise<Buffer> => {
  const files = exportBody.files as unknown as Array<Json>
  return Buffer.from(await (await fetch(String(files[0]?.url))).arrayBuffer())
}

const pcmOf = (bytes: Buffer): Int16Array => {
  const data = (new WaveFile(bytes) as unknown as { data: { samples: Uint8Array } }).data.samples
  return new Int16Array(data.buffer, data.byteOffset, data.length >> 1)
}

describe("song tools on an upload's track (built-in engine)", { timeout: 240_000 }, () => {
  it("WAV: the upload's audio; MIDI: its transcription; timed lyrics: 400 track_has_no_lyrics", async () => {
    const wav = await exported(trackId, "wav")
    expect(wav.status).toBe("ready")
    expect(String(wav.task_id)).toMatch(/^upl_/)
    const pcm = pcmOf(await fileBytes(wav))
    const original = pcmOf(song)
    expect(pcm.length).toBe(original.length)
    let worst = 0
    for (let i = 0; i < pcm.length; i++) worst = Math.max(worst, Math.abs((pcm[i] ?? 0) - (original[i] ?? 0)))
    expect(worst).toBeLessThanOrEqual(1)

    const midi = await exported(trackId, "midi")
    expect(midi.status).toBe("ready")
    const parsed = new Midi(await fileBytes(midi))
    const [row] = await server.query<{ transcription: { notes: Array<unknown> } }>(
      "select transcription from uploads where track_id = $1",
      trackId
    )
    expect(parsed.tracks.flatMap((t) => t.notes).length).toBe(row?.transcription.notes.length)

    const lyrics = await api(server, "POST", `/api/v1/music/tracks/${trackId}/exports`, {
      key: account.key,
      body: { format: "timed_lyrics" }
    })
    expect([lyrics.status, lyrics.body.error?.code]).toEqual([400, "track_has_no_lyrics"])
  })

  it("an extension is the upload sample for sample up to continue_at, then the engine's continuation", async () => {
    const res = await api(server, "POST", `/api/v1/music/tracks/${trackId}/extensions`, {
      key: account.key,
      body: { continue_at: 6, style: "synthwave" }
    })
    expect(res.status).toBe(202)
    const task = await settled(`/api/v1/music/generations/${String(res.body.id)}`)
    expect(task.status).toBe("ready")
    const extended = (task.tracks as unknown as Array<Json>)[0] ?? {}
    expect(Number(extended.duration)).toBeGreaterThan(6 + 20)
    const source = pcmOf(await fileBytes(await exported(trackId, "wav")))
    const wav = pcmOf(await fileBytes(await exported(String(extended.id), "wav")))
    const cut = 6 * rate * 2
    let differing = 0
    for (let i = 0; i < cut; i++) if (wav[i] !== source[i]) differing++
    expect(differing).toBe(0)
  })

  it("the tasks and exports made from the upload read its file where storage keeps it: no copy under engine/", () => {
    const staging = join(server.config.dataDir, "engine")
    const copies = readdirSync(staging, { recursive: true, encoding: "utf8" }).filter((name) =>
      basename(name).startsWith("upl_")
    )
    expect(copies).toEqual([])
  })

  it("another account's upload track is 404 to every song tool", async () => {
    for (const [path, body] of [
      ["exports", { format: "wav" }],
      ["extensions", { continue_at: 4 }]
    ] as const) {
      const res = await api(server, "POST", `/api/v1/music/tracks/${trackId}/${path}`, { key: other.key, body })
      expect([res.status, res.body.error?.code]).toEqual([404, "track_not_found"])
    }
  })

  it("a persona made from an upload's track names a generation, which renders to ready", async () => {
    const made = await api(server, "POST", "/api/v1/personas", {
      key: account.key,
      body: { track_id: trackId, name: "From my upload", description: "Its tempo and key" }
    })
    expect(made.status).toBe(201)
    const res = await api(server, "POST", "/api/v1/music/generations", {
      key: account.key,
      body: { style: "folk", title: "With my persona", lyrics: "[Verse]\nSing it back", persona_id: made.body.id }
    })
    expect(res.status).toBe(202)
    const task = await settled(`/api/v1/music/generations/${String(res.body.id)}`)
    expect(task.status).toBe("ready")
  })
})
