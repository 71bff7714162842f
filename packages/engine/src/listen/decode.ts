// Decoding an upload with kept decoders (mpg123, libFLAC and libvorbis compiled to WebAssembly by
// the wasm-audio-decoders project; WAV read by wavefile), never one written here. A file is fed to
// its decoder in slices as it is read, and the caller sees the PCM block by block, so checking an
// upload keeps no more than a block, and listening keeps only the mono signal it analyses.

import { createRequire } from "node:module"
import CodecParser from "codec-parser"
import type { CodecFrame, OggPage } from "codec-parser"
import { FLACDecoder } from "@wasm-audio-decoders/flac"
import { OggVorbisDecoder } from "@wasm-audio-decoders/ogg-vorbis"
import { MPEGDecoder } from "mpg123-decoder"

const require = createRequire(import.meta.url)
const { WaveFile } = require("wavefile") as typeof import("wavefile")

export type AudioType = "audio/mpeg" | "audio/wav" | "audio/flac" | "audio/ogg"

/** Why a file is refused: said to the client as it is. */
export class UndecodableAudio extends Error {}

/** One block of decoded PCM: a Float32Array per channel, -1..1. */
export type PcmSink = (channels: ReadonlyArray<Float32Array>, sampleRate: number) => void

interface Decoded {
  readonly channelData: ReadonlyArray<Float32Array>
  readonly samplesDecoded: number
  readonly sampleRate: number
  readonly errors: ReadonlyArray<{ readonly message: string }>
}

const deliver = (out: Decoded, sink: PcmSink): number => {
  if (out.errors.length > 0)
    throw new UndecodableAudio(`the audio does not decode (${out.errors[0]?.message ?? "error"})`)
  if (out.samplesDecoded > 0)
    sink(
      out.channelData.map((c) => c.subarray(0, out.samplesDecoded)),
      out.sampleRate
    )
  return out.samplesDecoded
}

/** codec-parser hands back bare iterators; this lets `for ... of` walk them. */
const walk = <T>(iterator: Iterator<T>): Iterable<T> => ({ [Symbol.iterator]: () => iterator })

interface MpegHeader {
  readonly bitrate: number
  readonly sampleRate: number
  readonly framePadding: number
  readonly layer: string
  readonly mpegVersion: string
}

/** A frame's length in bytes as its own header gives it (ISO/IEC 11172-3 and 13818-3). */
const mpegFrameLength = (h: MpegHeader): number => {
  if (h.bitrate <= 0 || h.sampleRate <= 0) return Number.POSITIVE_INFINITY
  const bits = h.bitrate * 1000
  if (h.layer.includes("Layer I") && !h.layer.includes("II"))
    return (Math.floor((12 * bits) / h.sampleRate) + h.framePadding) * 4
  const perSlot = h.layer.includes("III") && !h.mpegVersion.includes("Version 1 ") ? 72 : 144
  return Math.floor((perSlot * bits) / h.sampleRate) + h.framePadding
}

const tagAt = (data: Uint8Array, at: number): string => String.fromCharCode(...data.subarray(at, at + 4))
const uint32At = (data: Uint8Array, at: number): number =>
  ((data[at] ?? 0) * 2 ** 24 + ((data[at + 1] ?? 0) << 16) + ((data[at + 2] ?? 0) << 8) + (data[at + 3] ?? 0)) >>> 0

/**
 * The audio frames an MP3's first frame says follow it, when it is a tag frame rather than audio:
 * a Xing or Info tag (LAME writes its own inside it) after the side information, its frame count
 * present when flag bit 0 is set; or a VBRI tag at byte 36 (Fraunhofer), its count at byte 50.
 * Null when the first frame is audio, undefined when it is a tag without a count.
 */
export const declaredMpegFrames = (first: Uint8Array): number | null | undefined => {
  if (tagAt(first, 36) === "VBRI") return uint32At(first, 50)
  // The side information is 9 to 32 bytes (and 2 more after a CRC): the tag starts within them.
  for (let at = 4 + 9; at <= 4 + 32 + 2; at++) {
    const tag = tagAt(first, at)
    if (tag !== "Xing" && tag !== "Info") continue
    return (uint32At(first, at + 4) & 1) === 1 ? uint32At(first, at + 8) : undefined
  }
  return null
}

/**
 * MPEG audio, read frame by frame by codec-parser and only its frames fed to mpg123: mpg123
 * prints every resync in bytes that are not audio (and decodes whole frames as they arrive,
 * waiting for the rest of a frame cut short, so a truncated file would pass for a shorter one).
 * A file is cut when its last frame is shorter than its own header says, or in a constant-bitrate
 * stream shorter than the frames before it, or when fewer frames follow a Xing, Info or VBRI tag
 * than it counts (a file cut at a frame boundary).
 */
async function decodeMpeg(chunks: AsyncIterable<Uint8Array>, sink: PcmSink): Promise<number> {
  const decoder = new MPEGDecoder()
  const parser = new CodecParser("audio/mpeg", { enableLogging: false })
  await decoder.ready
  let samples = 0
  let lastLength = 0
  let frames = 0
  /** What the first frame declared: not yet seen (undefined at first), a count, or nothing. */
  let declared: number | null | undefined
  let secondsPerFrame = 0
  let first = true
  const bitrates = new Set<number>()
  const feed = (found: Iterable<CodecFrame | OggPage>, atEnd: boolean): void => {
    const parts: Array<Uint8Array> = []
    for (const frame of found) {
      if (!("header" in frame)) continue
      const header = frame.header as unknown as MpegHeader
      parts.push(frame.data)
      if (first) {
        first = false
        declared = declaredMpegFrames(frame.data)
        secondsPerFrame = header.sampleRate > 0 ? frame.samples / header.sampleRate : 0
        if (declared !== null) continue
      }
      if (
        atEnd &&
        (frame.data.length < mpegFrameLength(header) || (bitrates.size === 1 && frame.data.length < lastLength - 1))
      ) {
        throw new UndecodableAudio("the MP3 file ends inside a frame: it is truncated")
      }
      frames++
      lastLength = frame.data.length
      bitrates.add(header.bitrate)
    }
    if (parts.length > 0) samples += deliver(decoder.decode(Buffer.concat(parts)), sink)
  }
  try {
    for await (const chunk of chunks) feed(walk(parser.parseChunk(chunk)), false)
    feed(walk(parser.flush()), true)
  } finally {
    decoder.free()
  }
  // A tag's count may or may not include the tag's own frame: one frame short is not a cut.
  if (typeof declared === "number" && frames < declared - 1) {
    const seconds = (n: number) => `${(n * secondsPerFrame).toFixed(1)} s`
    throw new UndecodableAudio(
      `the MP3 file's header says ${seconds(declared)} (${declared} frames) but ${seconds(frames)} ` +
        `(${frames} frames) are there: it is truncated`
    )
  }
  return samples
}

/**
 * The total samples a FLAC file's STREAMINFO declares (the first metadata block, which the format
 * requires: 36 bits from its byte 13); 0 when the encoder did not know, or the file is not FLAC.
 */
const declaredFlacSamples = (head: Uint8Array): number => {
  if (head.length < 42 || String.fromCharCode(...head.subarray(0, 4)) !== "fLaC" || ((head[4] ?? 0) & 0x7f) !== 0)
    return 0
  const info = head.subarray(8)
  return (
    ((info[13] ?? 0) & 0x0f) * 2 ** 32 +
    (((info[14] ?? 0) << 24) >>> 0) +
    ((info[15] ?? 0) << 16) +
    ((info[16] ?? 0) << 8) +
    (info[17] ?? 0)
  )
}

/**
 * FLAC: libFLAC decodes the frames that are there and waits for the rest; a file cut short
 * decodes fewer samples than its STREAMINFO block declares.
 */
async function decodeFlac(chunks: AsyncIterable<Uint8Array>, sink: PcmSink): Promise<number> {
  const decoder = new FLACDecoder()
  await decoder.ready
  let samples = 0
  let head = new Uint8Array(0)
  try {
    for await (const chunk of chunks) {
      if (head.length < 42) head = Buffer.concat([head, chunk.subarray(0, 42)])
      samples += deliver(await decoder.decode(chunk), sink)
    }
    samples += deliver(await decoder.flush(), sink)
  } finally {
    decoder.free()
  }
  const declared = declaredFlacSamples(head)
  if (declared > 0 && samples < declared)
    throw new UndecodableAudio("the FLAC file ends before the samples it declares: it is truncated")
  return samples
}

/** Ogg Vorbis: a stream's last page says so; a file whose last page does not is cut short. */
async function decodeVorbis(chunks: AsyncIterable<Uint8Array>, sink: PcmSink): Promise<number> {
  const decoder = new OggVorbisDecoder()
  const parser = new CodecParser("audio/ogg", { enableLogging: false })
  await decoder.ready
  let samples = 0
  let ended = false
  const look = (pages: Iterable<CodecFrame | OggPage>): void => {
    for (const page of pages) if ("isLastPage" in page) ended = page.isLastPage
  }
  try {
    for await (const chunk of chunks) {
      look(walk(parser.parseChunk(chunk)))
      samples += deliver(await decoder.decode(chunk), sink)
    }
    look(walk(parser.flush()))
    samples += deliver(await decoder.flush(), sink)
  } finally {
    decoder.free()
  }
  if (samples > 0 && !ended) throw new UndecodableAudio("the Ogg stream has no last page: it is truncated")
  return samples
}

interface WavFormat {
  readonly numChannels: number
  readonly sampleRate: number
  readonly bitsPerSample: number
  readonly blockAlign: number
  readonly audioFormat: number
}

/** Samples per block handed to the sink: a second or so, so no more is ever unpacked at once. */
const wavBlock = 65_536

/**
 * WAV: wavefile reads the chunks; a header whose sizes do not match the bytes that follow (a
 * truncated file, or one that lies) is refused rather than read short or past its end.
 */
async function decodeWav(chunks: AsyncIterable<Uint8Array>, sink: PcmSink): Promise<number> {
  const parts: Array<Uint8Array> = []
  for await (const chunk of chunks) parts.push(chunk)
  const bytes = Buffer.concat(parts)
  const wav = new WaveFile()
  try {
    wav.fromBuffer(bytes)
  } catch (cause) {
    throw new UndecodableAudio(
      `the WAV file does not parse (${cause instanceof Error ? cause.message : String(cause)})`
    )
  }
  const riff = wav as unknown as { chunkSize: number; fmt: WavFormat; data: { chunkSize: number; samples: Uint8Array } }
  const fmt = riff.fmt
  if (riff.data.chunkSize > riff.data.samples.length) {
    throw new UndecodableAudio(
      `the WAV header declares ${riff.data.chunkSize} bytes of audio but ${riff.data.samples.length} are there: it is truncated`
    )
  }
  if (riff.chunkSize + 8 > bytes.length) {
    throw new UndecodableAudio(
      `the WAV header declares ${riff.chunkSize + 8} bytes but the file has ${bytes.length}: it is truncated`
    )
  }
  if (riff.chunkSize + 8 !== bytes.length)
    throw new UndecodableAudio("the WAV header's RIFF size does not match the file")
  if (riff.data.chunkSize !== riff.data.samples.length)
    throw new UndecodableAudio("the WAV header's data size does not match its samples")
  if (
    fmt.numChannels < 1 ||
    fmt.sampleRate < 8000 ||
    fmt.sampleRate > 192_000 ||
    fmt.blockAlign !== (fmt.numChannels * fmt.bitsPerSample) / 8
  ) {
    throw new UndecodableAudio("the WAV header's format is not one of PCM audio")
  }
  if (riff.data.samples.length % fmt.blockAlign !== 0) throw new UndecodableAudio("the WAV data ends inside a sample")
  const frames = riff.data.samples.length / fmt.blockAlign
  const scale = fmt.audioFormat === 3 ? 1 : 2 ** (fmt.bitsPerSample - 1)
  const offset = fmt.bitsPerSample === 8 ? 1 : 0
  for (let start = 0; start < frames; start += wavBlock) {
    const n = Math.min(wavBlock, frames - start)
    const channels = Array.from({ length: fmt.numChannels }, () => new Float32Array(n))
    for (let i = 0; i < n; i++) {
      for (let c = 0; c < fmt.numChannels; c++) {
        const value = wav.getSample((start + i) * fmt.numChannels + c)
        ;(channels[c] as Float32Array)[i] = value / scale - offset
      }
    }
    sink(channels, fmt.sampleRate)
  }
  return frames
}

/** Decodes a file of the given type slice by slice; answers the frames decoded, or throws UndecodableAudio. */
export async function decodeAudio(chunks: AsyncIterable<Uint8Array>, type: AudioType, sink: PcmSink): Promise<number> {
  try {
    switch (type) {
      case "audio/mpeg":
        return await decodeMpeg(chunks, sink)
      case "audio/flac":
        return await decodeFlac(chunks, sink)
      case "audio/ogg":
        return await decodeVorbis(chunks, sink)
      case "audio/wav":
        return await decodeWav(chunks, sink)
    }
  } catch (cause) {
    if (cause instanceof UndecodableAudio) throw cause
    throw new UndecodableAudio(`the audio does not decode (${cause instanceof Error ? cause.message : String(cause)})`)
  }
}
