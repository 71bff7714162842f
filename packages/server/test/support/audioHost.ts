/**
 * For the agents' uploads: a WAV made here (a chord of sines with a pulse on every beat, as
 * uploads.test.ts makes one), and an HTTP server on 127.0.0.1 that serves it, redirects to it,
 * declares a file past the upload cap, and serves a file that is not audio.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { maxUploadBytes } from "@lyre/core"

const rate = 44_100

/** 16-bit mono PCM WAV of `seconds` of an A minor chord, pulsed at 120 bpm. */
export const toneWav = (seconds: number): Buffer => {
  const frames = Math.round(seconds * rate)
  const out = Buffer.alloc(44 + frames * 2)
  out.write("RIFF", 0)
  out.writeUInt32LE(36 + frames * 2, 4)
  out.write("WAVEfmt ", 8)
  out.writeUInt32LE(16, 16)
  out.writeUInt16LE(1, 20)
  out.writeUInt16LE(1, 22)
  out.writeUInt32LE(rate, 24)
  out.writeUInt32LE(rate * 2, 28)
  out.writeUInt16LE(2, 32)
  out.writeUInt16LE(16, 34)
  out.write("data", 36)
  out.writeUInt32LE(frames * 2, 40)
  for (let i = 0; i < frames; i++) {
    const t = i / rate
    const beat = t % 0.5
    const pulse = beat < 0.05 ? Math.sin(2 * Math.PI * 80 * t) * (1 - beat / 0.05) : 0
    const v = 0.25 * (Math.sin(2 * Math.PI * 220 * t) + Math.sin(2 * Math.PI * 261.63 * t) + Math.sin(2 * Math.PI * 329.63 * t)) / 3 + 0.3 * pulse
    out.writeInt16LE(Math.round(Math.max(-1, Math.min(1, v)) * 32767), 44 + i * 2)
  }
  return out
}

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
