/**
 * For the agents' uploads: a WAV (testAudio.ts's chord of sines with a kick on every beat), and
 * an HTTP server on 127.0.0.1 that serves it, redirects to it, declares a file past the upload
 * cap, and serves a file that is not audio.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { maxUploadBytes } from "@lyre/core"
import { startTestServer } from "./harness.ts"
import type { TestServer } from "./harness.ts"
import { pulsedChordWav } from "./testAudio.ts"

/** `seconds` of an A minor chord, pulsed at 120 bpm, as 16-bit mono WAV. */
export const toneWav = (seconds: number): Buffer => pulsedChordWav({ seconds })

export interface AudioHost {
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  /** Paths asked for, in order. */
  readonly hits: ReadonlyArray<string>
  readonly close: () => Promise<void>
}

/**
 * `/song.wav` the WAV (served as `application/octet-stream`, so its type comes from the path),
 * `/redirect` a 302 to it, `/huge.wav` a declared length one past the cap (no body sent),
 * `/notes.wav` text, `/missing.wav` a 404.
 */
export const startAudioHost = async (wav: Buffer): Promise<AudioHost> => {
  const hits: Array<string> = []
  const server = createServer((req, res) => {
    const path = req.url ?? "/"
    hits.push(path)
    switch (path) {
      case "/song.wav":
        res.writeHead(200, { "content-type": "application/octet-stream", "content-length": wav.length }).end(wav)
        return
      case "/redirect":
        res.writeHead(302, { location: "/song.wav" }).end()
        return
      case "/huge.wav":
        res.writeHead(200, { "content-type": "audio/wav", "content-length": maxUploadBytes + 1 })
        res.flushHeaders()
        return
      case "/notes.wav":
        res.writeHead(200, { "content-type": "audio/wav" }).end("these are words, not sound ".repeat(100))
        return
      default:
        res.writeHead(404).end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () => {
      server.closeAllConnections()
      return new Promise((resolve) => server.close(() => resolve()))
    }
  }
}

/**
 * What the agents' upload tests run against: the audio host serving `wav`, a service with the
 * built-in engine that may fetch from it (WEBHOOK_ALLOW_PRIVATE, as only tests set it), and a
 * strict one that refuses every private address.
 */
export interface UploadBeds {
  readonly host: AudioHost
  readonly live: TestServer
  readonly strict: TestServer
  readonly close: () => Promise<void>
}

export const startUploadBeds = async (wav: Buffer): Promise<UploadBeds> => {
  const [host, live, strict] = await Promise.all([
    startAudioHost(wav),
    startTestServer({
      provider: "embedded",
      providerUrl: null,
      providerApiKey: null,
      worker: "inline",
      providerPollSeconds: 0.5,
      webhookAllowPrivate: true
    }),
    startTestServer()
  ])
  return {
    host,
    live,
    strict,
    close: async () => void (await Promise.all([live.close(), strict.close(), host.close()]))
  }
}
