/**
 * Re-hosting into file storage: HTTP downloads from the fake upstream, `file:` URLs from an
 * in-process provider, fixed keys per task and index, and which failures are definite.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { ContentCredentials, Ids } from "@lyre/core"
import type { ProviderTrack } from "@lyre/core"
import { startFakeUpstream } from "@lyre/fake-upstream"
import { readAsset } from "@lyre/provenance"
import type { FakeUpstream } from "@lyre/fake-upstream"
import { Effect, Exit, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  destroyUpstreamAgents,
  makeUpstreamAgents,
  UPSTREAM_SOCKETS_PER_ORIGIN
} from "../../src/provider/upstreamAgents.ts"
import { provenanceOf, rehostTracks as rehostWith } from "../../src/rehost.ts"
import { Storage } from "../../src/storage/Storage.ts"

let upstream: FakeUpstream
let directory: string
beforeAll(async () => {
  upstream = await startFakeUpstream({ apiKey: "k", audioBytes: 10_000 })
  directory = mkdtempSync(join(tmpdir(), "lyre-rehost-"))
})
const agents = makeUpstreamAgents()
afterAll(async () => {
  destroyUpstreamAgents(agents)
  await upstream.close()
  rmSync(directory, { recursive: true, force: true })
})

const credentials = ContentCredentials.layerEphemeral()
const run = <A, E>(effect: Effect.Effect<A, E, Storage | Ids | ContentCredentials>) =>
  Effect.runPromiseExit(
    effect.pipe(Effect.provide(Layer.mergeAll(Storage.layerFiles(join(directory, "files")), Ids.layer, credentials)))
  )

/** Re-hosting a new song's tracks (the upstream's), signed as such. */
const rehostTracks = (taskId: string, tracks: ReadonlyArray<ProviderTrack>, rehostOptions: typeof options) =>
  rehostWith(
    taskId,
    tracks,
    rehostOptions,
    provenanceOf({ work: "song", model: "V4_5", maker: "http", userAudio: false, source: null })
  )

const track = (audioUrl: string, imageUrl: string | null): ProviderTrack => ({
  providerTrackId: "t",
  audioUrl,
  imageUrl,
  lyrics: "la",
  title: "Song",
  tags: "pop",
  duration: 12.5
})

const options = { publicUrl: "https://lyre.example", agents, timeoutMs: 5_000 }

describe("rehostTracks", () => {
  it("copies audio and covers over HTTP to fixed keys and answers lasting URLs", async () => {
    const fetched = await fetch(`${upstream.url}/api/v1/generate`, {
      method: "POST",
      headers: { authorization: "Bearer k", "content-type": "application/json" },
      body: JSON.stringify({ customMode: true, instrumental: true, model: "V4_5", style: "pop", title: "Rehost" })
    }).then((res) => res.json() as Promise<{ data: { taskId: string } }>)
    const view = upstream.control.task(fetched.data.taskId)
    const ids = view?.trackIds ?? []
    const exit = await run(
      rehostTracks(
        "gen_a",
        ids.map((id) => track(`${upstream.url}/files/${id}.mp3`, `${upstream.url}/files/${id}.png`)),
        options
      )
    )
    expect(Exit.isSuccess(exit)).toBe(true)
    if (!Exit.isSuccess(exit)) return
    expect(exit.value.map(({ track: t }) => [t.index, t.audio_url, t.image_url])).toEqual([
      [0, "https://lyre.example/files/gen_a/0.mp3", "https://lyre.example/files/gen_a/0-cover.png"],
      [1, "https://lyre.example/files/gen_a/1.mp3", "https://lyre.example/files/gen_a/1-cover.png"]
    ])
    expect(exit.value[0]?.track).toMatchObject({ title: "Song", lyrics: "la", tags: "pop", duration: 12.5 })
    expect(exit.value.map((t) => t.providerTrackId)).toEqual(["t", "t"])
    // Stored signed: the upstream's 10,000 bytes after the manifest, which c2pa-rs reads Valid.
    const stored = readFileSync(join(directory, "files/gen_a/0.mp3"))
    expect(stored.length).toBeGreaterThan(10_000)
    const report = await readAsset(stored, "audio/mpeg")
    expect(report.state).toBe("Valid")
    expect(report.manifests[0]?.actions[0]).toMatchObject({
      action: "c2pa.created",
      digitalSourceType: "http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia",
      softwareAgent: "http model V4_5"
    })
  })

  it("reads file: URLs (an in-process provider's renders)", async () => {
    const audio = join(directory, "render.mp3")
    writeFileSync(audio, Buffer.alloc(321, 7))
    const exit = await run(rehostTracks("gen_b", [track(pathToFileURL(audio).toString(), null)], options))
    expect(Exit.isSuccess(exit) && exit.value[0]?.track.image_url).toBe(null)
    // The render's bytes, after the ID3 tag that carries the disclosure and the manifest.
    expect(readFileSync(join(directory, "files/gen_b/0.mp3")).subarray(-321)).toEqual(Buffer.alloc(321, 7))
  })

  it("a missing audio file is a definite failure; a missing cover only leaves image_url null", async () => {
    const gone = await run(
      rehostTracks("gen_c", [track(`${upstream.url}/files/00000000-0000-0000-0000-000000000000.mp3`, null)], options)
    )
    expect(Exit.isFailure(gone) && JSON.stringify(gone.cause)).toContain('"definite":true')
    const audio = join(directory, "ok.mp3")
    writeFileSync(audio, Buffer.alloc(10))
    const coverless = await run(
      rehostTracks(
        "gen_d",
        [track(pathToFileURL(audio).toString(), `${upstream.url}/files/00000000-0000-0000-0000-000000000000.png`)],
        options
      )
    )
    expect(Exit.isSuccess(coverless) && coverless.value[0]?.track.image_url).toBe(null)
  })

  it("an unreachable host is not definite (retried until the deadline)", async () => {
    const exit = await run(rehostTracks("gen_e", [track("http://127.0.0.1:9/x.mp3", null)], options))
    expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain('"definite":false')
  })

  it("the time limit covers connect to last byte: a download that stalls midway fails, not definite, and leaves no file", async () => {
    const { createServer } = await import("node:http")
    const server = createServer((req, res) => {
      if (req.url === "/slow-head.mp3") return // never answers
      res.writeHead(200, { "content-type": "audio/mpeg", "content-length": "100000" })
      res.write(Buffer.alloc(1000, 1)) // then stalls
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const address = server.address()
    const base = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
    try {
      for (const path of ["/slow-body.mp3", "/slow-head.mp3"]) {
        const started = Date.now()
        const exit = await run(rehostTracks("gen_f", [track(`${base}${path}`, null)], { ...options, timeoutMs: 300 }))
        expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain('"definite":false')
        expect(Date.now() - started).toBeLessThan(3_000)
      }
      expect(existsSync(join(directory, "files/gen_f")) ? readdirSync(join(directory, "files/gen_f")) : []).toEqual([])
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })

  it(`downloads share at most ${UPSTREAM_SOCKETS_PER_ORIGIN} connections to one host, the rest waiting their turn`, async () => {
    // Unbounded, 64 tasks' downloads opened a connection each and overflowed the upstream's accept queue.
    const created = await fetch(`${upstream.url}/api/v1/generate`, {
      method: "POST",
      headers: { authorization: "Bearer k", "content-type": "application/json" },
      body: JSON.stringify({ customMode: true, instrumental: true, model: "V4_5", style: "pop", title: "Many" })
    }).then((res) => res.json() as Promise<{ data: { taskId: string } }>)
    const [id] = upstream.control.task(created.data.taskId)?.trackIds ?? []
    const tracks = Array.from({ length: 100 }, () =>
      track(`${upstream.url}/files/${id}.mp3`, `${upstream.url}/files/${id}.png`)
    )
    upstream.control.reset()
    // The test's own fetch keeps its connection open.
    const already = upstream.control.mostConnections()
    const exit = await run(rehostTracks("gen_g", tracks, options))
    expect(Exit.isSuccess(exit) && exit.value.length).toBe(100)
    expect(upstream.control.mostConnections() - already).toBeGreaterThan(1)
    expect(upstream.control.mostConnections() - already).toBeLessThanOrEqual(UPSTREAM_SOCKETS_PER_ORIGIN)
  })
})
