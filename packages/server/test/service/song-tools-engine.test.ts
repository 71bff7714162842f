/**
 * Song tools end to end on the built-in engine (the embedded default): a song generated through
 * the API is extended and exported in every format; each reaches `ready` through the worker,
 * with its files re-hosted and served at the service's own URLs with Range.
 */
import { readAsset, readSidecar } from "@lyre/provenance"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, createAccount, settledAt, startTestServer } from "../support/harness.ts"
import type { Json, TestAccount, TestServer } from "../support/harness.ts"

let server: TestServer
let account: TestAccount
let song: Json
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
  const created = await api(server, "POST", "/api/v1/music/generations", {
    key: account.key,
    body: {
      style: "synthpop, 118 bpm, bright",
      title: "Glass City",
      lyrics: "[Verse]\nLights over the water\n[Chorus]\nHold on to the night"
    }
  })
  song = await settled(`/api/v1/music/generations/${String(created.body.id)}`)
}, 240_000)
afterAll(() => server.close())

const settled = (path: string): Promise<Json> => settledAt(server, account.key, path)

const firstTrack = (task: Json): Json => (task.tracks as unknown as Array<Json>)[0] ?? {}

const exportAndWait = async (trackId: string, format: string): Promise<Json> => {
  const res = await api(server, "POST", `/api/v1/music/tracks/${trackId}/exports`, {
    key: account.key,
    body: { format }
  })
  expect(res.status).toBe(202)
  return settled(`/api/v1/music/exports/${String(res.body.id)}`)
}

const filesOf = (exported: Json): Array<Json> => exported.files as unknown as Array<Json>

/** The first bytes of a hosted file, asked for with a Range. */
const head = async (url: string, bytes: number) => {
  const res = await fetch(url, { headers: { range: `bytes=0-${bytes - 1}` } })
  return {
    status: res.status,
    range: res.headers.get("content-range"),
    type: res.headers.get("content-type"),
    body: Buffer.from(await res.arrayBuffer())
  }
}

describe("song tools on the built-in engine", () => {
  it("the source song is ready", () => {
    expect(song.status).toBe("ready")
  })

  it("exports: wav, midi, stems and timed lyrics reach ready, their files served with Range, charged once each", async () => {
    const track = firstTrack(song)
    const trackId = String(track.id)
    const duration = Number(track.duration)
    const [wav, midi, stems, lyrics] = await Promise.all(
      ["wav", "midi", "stems", "timed_lyrics"].map((format) => exportAndWait(trackId, format))
    )

    expect(wav).toMatchObject({
      status: "ready",
      format: "wav",
      track_id: trackId,
      task_id: song.id,
      credits_used: 5,
      timed_lyrics: null
    })
    const [wavFile] = filesOf(wav ?? {})
    expect(wavFile).toMatchObject({ content_type: "audio/wav", stem: null })
    expect(String(wavFile?.url)).toMatch(new RegExp(`^${server.url}/files/exp_[0-9A-Za-z]{24}/.+\\.wav$`))
    const riff = await head(String(wavFile?.url), 12)
    expect([riff.status, riff.range, riff.type]).toEqual([206, `bytes 0-11/${Number(wavFile?.bytes)}`, "audio/wav"])
    expect([riff.body.subarray(0, 4).toString(), riff.body.subarray(8, 12).toString()]).toEqual(["RIFF", "WAVE"])
    // 16-bit stereo at 44.1 kHz: about the track's length of PCM.
    expect(Number(wavFile?.bytes) / (44_100 * 4)).toBeCloseTo(duration, 0)

    const [midiFile] = filesOf(midi ?? {})
    expect(midi?.status).toBe("ready")
    expect((await head(String(midiFile?.url), 4)).body.toString()).toBe("MThd")

    expect(stems?.status).toBe("ready")
    expect(stems?.credits_used).toBe(20)
    const parts = filesOf(stems ?? {})
    expect(parts.length).toBeGreaterThanOrEqual(2)
    for (const part of parts) {
      expect(typeof part.stem).toBe("string")
      expect((await head(String(part.url), 4)).body.toString()).toBe("RIFF")
    }

    expect(lyrics?.status).toBe("ready")
    const words = lyrics?.timed_lyrics as unknown as Array<{ text: string; start: number; end: number }>
    expect(words.length).toBeGreaterThan(4)
    words.forEach((word, i) => {
      expect(word.start).toBeLessThanOrEqual(word.end)
      expect(word.end).toBeLessThanOrEqual(duration + 0.01)
      if (i > 0) expect(word.start).toBeGreaterThanOrEqual(words[i - 1]?.start ?? 0)
    })
    const lyricFiles = filesOf(lyrics ?? {})
    expect(lyricFiles.map((f) => f.name)).toEqual(["lyrics.lrc", "lyrics.vtt", "lyrics.json"])
    const vtt = await (await fetch(String(lyricFiles[1]?.url))).text()
    expect(vtt.startsWith("WEBVTT")).toBe(true)
    expect(JSON.parse(await (await fetch(String(lyricFiles[2]?.url))).text())).toEqual(words)

    // Asked again: the ready one, free.
    const again = await api(server, "POST", `/api/v1/music/tracks/${trackId}/exports`, {
      key: account.key,
      body: { format: "wav" }
    })
    expect([again.status, again.body.id]).toEqual([200, wav?.id])
    const me = await api(server, "GET", "/api/v1/me", { key: account.key })
    expect(me.body.credits?.total).toBe(1_000 - 50 - 5 - 5 - 20 - 5)
    const events = await server.query<{ type: string }>(
      "select type from outbox_events where type like 'export.%' and account_id = $1",
      account.id
    )
    expect(events.map((e) => e.type)).toEqual([
      "export.completed",
      "export.completed",
      "export.completed",
      "export.completed"
    ])
  }, 300_000)

  it("extend: a ready task whose tracks run past continue_at by 20 s or more; its own tracks export in turn", async () => {
    const source = firstTrack(song)
    const res = await api(server, "POST", `/api/v1/music/tracks/${String(source.id)}/extensions`, {
      key: account.key,
      body: { continue_at: 20, lyrics: "[Verse]\nThe city wakes in glass" }
    })
    expect(res.status).toBe(202)
    expect(res.body.credits_used).toBe(50)
    const task = await settled(`/api/v1/music/generations/${String(res.body.id)}`)
    expect(task.status).toBe("ready")
    const tracks = task.tracks as unknown as Array<Json>
    expect(tracks).toHaveLength(2)
    for (const track of tracks) {
      expect(Number(track.duration)).toBeGreaterThanOrEqual(40)
      expect(track.title).toBe("Glass City")
      const audio = await head(String(track.audio_url), 2)
      expect([audio.status, audio.type]).toEqual([206, "audio/mpeg"])
    }
    const events = await server.query<{ type: string }>(
      "select type from outbox_events where payload->>'task_id' = $1",
      String(res.body.id)
    )
    // The engine's takes are heard while they are made (record 0126): `job.streaming`, then the end.
    expect(events.map((e) => e.type).sort()).toEqual(["job.completed", "job.streaming"])
    // The extension's track is a source too: its export renders the chain again.
    const exported = await exportAndWait(String(firstTrack(task).id), "midi")
    expect(exported.status).toBe("ready")
  }, 300_000)
})

/** A hosted file's bytes. */
const bytesAt = async (url: unknown): Promise<Buffer> => Buffer.from(await (await fetch(String(url))).arrayBuffer())

/** The ready export of a format (made in the test above, or now). */
const readyExport = async (trackId: string, format: string): Promise<Json> => {
  const res = await api(server, "POST", `/api/v1/music/tracks/${trackId}/exports`, {
    key: account.key,
    body: { format }
  })
  return settled(`/api/v1/music/exports/${String(res.body.id)}`)
}

describe("content credentials (DESIGN.md section 13)", () => {
  it("the song's MP3 and its WAV and MIDI exports read Valid by c2pa-rs, and Invalid with one audio byte changed", async () => {
    const track = firstTrack(song)
    const mp3 = await bytesAt(track.audio_url)
    const report = await readAsset(mp3, "audio/mpeg")
    expect(report.state).toBe("Valid")
    expect(report.failures.map((failure) => failure.code)).toEqual(["signingCredential.untrusted"])
    expect(report.manifests[0]).toMatchObject({
      title: "Glass City",
      claimGenerator: expect.stringMatching(/^Lyre /),
      actions: [
        {
          action: "c2pa.created",
          digitalSourceType: "http://cv.iptc.org/newscodes/digitalsourcetype/algorithmicMedia",
          softwareAgent: expect.stringMatching(/^Lyre built-in engine/)
        }
      ]
    })
    expect(JSON.stringify(report)).not.toContain(account.id)
    // The disclosure in the file's own ID3v2 tag.
    expect(mp3.subarray(0, 3).toString()).toBe("ID3")
    expect(mp3.includes("Made with AI")).toBe(true)
    const changed = Buffer.from(mp3)
    changed[changed.length - 500] = (changed[changed.length - 500] ?? 0) ^ 0x01
    expect((await readAsset(changed, "audio/mpeg")).state).toBe("Invalid")

    const wav = await readyExport(String(track.id), "wav")
    const wavBytes = await bytesAt(filesOf(wav)[0]?.url)
    const wavReport = await readAsset(wavBytes, "audio/wav")
    expect(wavReport.state).toBe("Valid")
    expect(wavReport.manifests[0]?.actions.map((action) => action.action)).toEqual(["c2pa.opened", "c2pa.transcoded"])
    // Its ingredient is the track's MP3, whose own manifest comes along.
    expect(wavReport.manifests[0]?.ingredients).toMatchObject([{ title: "Glass City", relationship: "parentOf" }])
    expect(wavReport.manifests.map((manifest) => manifest.title)).toEqual(["track.wav", "Glass City"])

    const midi = await readyExport(String(track.id), "midi")
    const [midiFile, sidecar] = filesOf(midi)
    expect(sidecar).toMatchObject({ name: "track.mid.c2pa", content_type: "application/c2pa" })
    const midiBytes = await bytesAt(midiFile?.url)
    expect((await readSidecar(await bytesAt(sidecar?.url), midiBytes)).state).toBe("Valid")
  }, 120_000)
})
