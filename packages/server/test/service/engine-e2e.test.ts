/**
 * The embedded default's provider is the built-in engine: a request posted to the API comes
 * back as two playable songs, re-hosted under /files, with no network and no upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, createAccount, startTestServer } from "../support/harness.ts"
import type { Json, TestServer } from "../support/harness.ts"
import { parseMetrics, scrape, sumOf } from "../support/prometheus.ts"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer({
    provider: "embedded",
    // Half a minute: the voice comes in, and the tests read lengths and sung words past 8 s.
    engineMaxSeconds: 30,
    providerUrl: null,
    providerApiKey: null,
    worker: "inline",
    providerPollSeconds: 2
  })
})
afterAll(() => server.close())

describe("the built-in engine behind the provider port", () => {
  it("renders two takes that become a ready task with hosted MP3s and covers", async () => {
    const account = await createAccount(server)
    const created = await api(server, "POST", "/api/v1/music/generations", {
      key: account.key,
      body: {
        style: "lofi hip hop, 80 bpm, piano, mellow",
        title: "Rain on Glass",
        lyrics: "[Verse]\nRain on the glass\n[Chorus]\nStay a while"
      }
    })
    expect(created.status).toBe(202)
    const id = String(created.body.id)
    let task: Json = created.body
    const deadline = Date.now() + 150_000
    while (String(task.status) === "pending" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500))
      task = (await api(server, "GET", `/api/v1/music/generations/${id}`, { key: account.key })).body
    }
    expect(task.status).toBe("ready")
    const tracks = task.tracks as unknown as Array<Json>
    expect(tracks.map((t) => t.index)).toEqual([0, 1])
    for (const track of tracks) {
      expect(String(track.audio_url)).toMatch(new RegExp(`^${server.url}/files/${id}/\\d\\.mp3$`))
      expect(String(track.image_url)).toMatch(/\.png$/)
      expect(Number(track.duration)).toBeGreaterThan(20)
      expect(track.title).toBe("Rain on Glass")
      expect(String(track.lyrics)).toContain("Rain on the glass")
      const audio = await fetch(String(track.audio_url))
      expect(audio.headers.get("content-type")).toBe("audio/mpeg")
      const bytes = new Uint8Array(await audio.arrayBuffer())
      expect(bytes.length).toBeGreaterThan(100_000)
      // An MP3 starts with an ID3 tag or a frame sync.
      expect((bytes[0] === 0x49 && bytes[1] === 0x44) || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0)).toBe(
        true
      )
      const cover = await fetch(String(track.image_url))
      expect(cover.headers.get("content-type")).toBe("image/png")
    }
    // Two takes, two different songs.
    const [a, b] = await Promise.all(
      tracks.map(async (t) => Buffer.from(await (await fetch(String(t.audio_url))).arrayBuffer()))
    )
    expect(a?.equals(b ?? Buffer.alloc(0))).toBe(false)
    // The render is measured: its time, and seconds of music per second of rendering.
    const metrics = parseMetrics((await scrape(server.url)).text)
    expect(sumOf(metrics, "lyre_engine_render_seconds")).toBe(1)
    const realtime = metrics.get("lyre_engine_realtime_factor")?.metrics[0]
    expect(Number(realtime?.count)).toBe(1)
    expect(Number(realtime?.sum)).toBeGreaterThan(1)
    expect(sumOf(metrics, "lyre_provider_call_duration_seconds", { call: "submit", result: "accepted" })).toBe(1)
  }, 180_000)
})
