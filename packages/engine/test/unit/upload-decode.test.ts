/**
 * Decoding an upload as it is accepted: a file whose own header counts more than is there (an
 * MP3's Xing tag, a WAV's data size) is refused as truncated; bytes that are not MPEG audio are
 * refused without mpg123 printing a line. MP3s are made here with LAME (wasm-media-encoders).
 */
import { createRequire } from "node:module"
import { readFileSync } from "node:fs"
import { createEncoder } from "wasm-media-encoders"
import { afterEach, describe, expect, it, vi } from "vitest"
import { decodeAudio, declaredMpegFrames, UndecodableAudio } from "../../src/listen/decode.ts"
import type { AudioType } from "../../src/listen/decode.ts"

const require = createRequire(import.meta.url)
const { WaveFile } = require("wavefile") as typeof import("wavefile")

const rate = 44_100

const sine = (seconds: number): Float32Array => {
  const out = new Float32Array(Math.round(seconds * rate))
  for (let i = 0; i < out.length; i++) out[i] = 0.25 * Math.sin((2 * Math.PI * 440 * i) / rate)
  return out
}

const mp3Of = async (samples: Float32Array): Promise<Buffer> => {
  const lame = readFileSync(require.resolve("wasm-media-encoders").replace(/dist[\\/].*$/, "wasm/mp3.wasm"))
  const encoder = await createEncoder("audio/mpeg", lame)
  encoder.configure({ sampleRate: rate, channels: 1, bitrate: 128 })
  const parts: Array<Uint8Array> = []
  for (let i = 0; i < samples.length; i += 11_520) parts.push(encoder.encode([samples.subarray(i, i + 11_520)]).slice())
  parts.push(encoder.finalize().slice())
  return Buffer.concat(parts)
}

/** MPEG-1 Layer III, 128 kb/s, 44.1 kHz, mono: a frame of 417 bytes, 1152 samples. */
const frameHeader = [0xff, 0xfb, 0x90, 0xc0]
const frameBytes = 417

/** An Info frame (what LAME writes first) counting `frames` audio frames after it. */
const infoFrame = (frames: number): Buffer => {
  const frame = Buffer.alloc(frameBytes)
  frame.set(frameHeader, 0)
  // Mono MPEG-1: 17 bytes of side information, then the tag, its flags (frames present) and count.
  frame.write("Info", 4 + 17, "latin1")
  frame.writeUInt32BE(1, 4 + 17 + 4)
  frame.writeUInt32BE(frames, 4 + 17 + 8)
  return frame
}

/** The audio frames of an encoded stream, counted by their headers. */
const framesIn = (mp3: Buffer): number => {
  let count = 0
  for (let at = 0; at + 4 <= mp3.length; ) {
    if (mp3[at] !== 0xff || ((mp3[at + 1] ?? 0) & 0xe0) !== 0xe0) throw new Error(`no frame at ${at}`)
    const padding = ((mp3[at + 2] ?? 0) >> 1) & 1
    at += frameBytes + padding
    count++
  }
  return count
}

const decode = async (bytes: Uint8Array, type: AudioType): Promise<number> => {
  async function* once() {
    yield bytes
  }
  let frames = 0
  await decodeAudio(once(), type, (channels) => {
    frames += channels[0]?.length ?? 0
  })
  return frames
}

const refusal = async (bytes: Uint8Array, type: AudioType): Promise<string> => {
  const error = await decode(bytes, type).then(
    () => undefined,
    (cause: unknown) => cause
  )
  expect(error).toBeInstanceOf(UndecodableAudio)
  return (error as UndecodableAudio).message
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe("an MP3 whose header counts more frames than are there", () => {
  it("reads the count of a Xing/Info tag and of a VBRI tag; an audio frame has none", () => {
    expect(declaredMpegFrames(infoFrame(7536))).toBe(7536)
    const vbri = Buffer.alloc(frameBytes)
    vbri.set(frameHeader, 0)
    vbri.write("VBRI", 36, "latin1")
    vbri.writeUInt32BE(3765, 50)
    expect(declaredMpegFrames(vbri)).toBe(3765)
    const audio = Buffer.alloc(frameBytes)
    audio.set(frameHeader, 0)
    expect(declaredMpegFrames(audio)).toBeNull()
  })

  it("decodes when the tag's count is what follows, and is refused as truncated when the tag says twice as much", async () => {
    const audio = await mp3Of(sine(6))
    const frames = framesIn(audio)
    const whole = Buffer.concat([infoFrame(frames), audio])
    expect((await decode(whole, "audio/mpeg")) / rate).toBeGreaterThan(5.9)
    const cut = Buffer.concat([infoFrame(frames * 2), audio])
    const message = await refusal(cut, "audio/mpeg")
    expect(message).toContain("truncated")
    expect(message).toContain(`${((frames * 2 * 1152) / rate).toFixed(1)} s`)
  })
})

describe("a WAV whose data chunk is larger than the bytes present", () => {
  it("is refused as truncated", async () => {
    const wav = new WaveFile()
    wav.fromScratch(
      1,
      rate,
      "16",
      Array.from(sine(6), (v) => Math.round(v * 32767))
    )
    const bytes = Buffer.from(wav.toBuffer())
    expect((await decode(bytes, "audio/wav")) / rate).toBeCloseTo(6, 3)
    expect(await refusal(bytes.subarray(0, bytes.length - 1001), "audio/wav")).toContain("truncated")
  })
})

describe("bytes that are not MPEG audio", () => {
  it("decode to nothing (which the upload refuses), and mpg123 prints nothing", async () => {
    const printed = vi.spyOn(console, "error").mockImplementation(() => undefined)
    const logged = vi.spyOn(console, "log").mockImplementation(() => undefined)
    const text = Buffer.from("this is not audio at all\n".repeat(4000))
    expect(await decode(text, "audio/mpeg").catch(() => 0)).toBe(0)
    // Random bytes are full of false frame syncs: mpg123 fed them printed a line for each (400 here).
    const junk = Buffer.alloc(600_000)
    let seed = 7
    for (let i = 0; i < junk.length; i++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
      junk[i] = (seed >> 16) & 0xff
    }
    expect(await decode(junk, "audio/mpeg").catch(() => 0)).toBe(0)
    // Audio then noise: whether it is refused or read short, the noise is not printed.
    await decode(Buffer.concat([await mp3Of(sine(1)), junk]), "audio/mpeg").catch(() => 0)
    expect(printed).not.toHaveBeenCalled()
    expect(logged).not.toHaveBeenCalled()
  })
})
