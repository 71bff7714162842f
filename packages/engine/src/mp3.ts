// MP3 encoding with LAME compiled to WebAssembly (wasm-media-encoders: the WASM ships
// inside the npm package, no native build, no install script). The pure-JS lamejs port
// was measured at ~23x real time here, too slow for the 30x budget; this runs ~80x.

import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { createEncoder } from "wasm-media-encoders"

export const MP3_BITRATE = 192

// Compile the LAME module once per thread; instantiating from a compiled module is ~0.3 ms
// where createMp3Encoder() recompiles the inlined WASM (~30 ms) on every call.
type LameWasm = Parameters<typeof createEncoder>[1]
// The root tsconfig has no DOM lib, so reach the WebAssembly global through a narrow type.
const wasmApi = (globalThis as unknown as { readonly WebAssembly: { compile(bytes: Uint8Array): Promise<LameWasm> } })
  .WebAssembly
let compiled: Promise<LameWasm> | null = null
function lameModule(): Promise<LameWasm> {
  if (compiled === null) {
    const require = createRequire(import.meta.url)
    const entry = require.resolve("wasm-media-encoders")
    const wasmPath = entry.replace(/dist[\\/].*$/, "wasm/mp3.wasm")
    compiled = wasmApi.compile(readFileSync(wasmPath))
  }
  return compiled
}

/**
 * Where an MP3 goes while it is encoded: each piece of frames the encoder hands out, in order, the
 * moment it is out. The pieces joined are the returned file, byte for byte (a stream of a take
 * being made is its final file's first bytes). The piece is the file's own: a sink that keeps or
 * transfers it takes a copy.
 */
export type Mp3Sink = (piece: Uint8Array) => void

/**
 * An MP3 encoded as its PCM comes, in order: `write` takes the next samples, `end` flushes the
 * encoder and returns the whole file. Each piece of frames also goes to the sink the moment it is out.
 */
export class Mp3Stream {
  private readonly chunks: Uint8Array[] = []
  private total = 0
  private readonly encoder: Awaited<ReturnType<typeof createEncoder<"audio/mpeg">>>
  private readonly sink: Mp3Sink | undefined

  private constructor(encoder: Awaited<ReturnType<typeof createEncoder<"audio/mpeg">>>, sink: Mp3Sink | undefined) {
    this.encoder = encoder
    this.sink = sink
  }

  static async open(kbps: 128 | 160 | 192 = MP3_BITRATE, sink?: Mp3Sink): Promise<Mp3Stream> {
    const encoder = await createEncoder("audio/mpeg", await lameModule())
    encoder.configure({ sampleRate: 44100, channels: 2, bitrate: kbps })
    return new Mp3Stream(encoder, sink)
  }

  /** Encodes samples `from` to `to` of 44.1 kHz stereo float PCM (-1..1), the ones after the last written. */
  write(left: Float32Array, right: Float32Array, from: number, to: number): void {
    const step = 1152 * 16
    for (let i = from; i < to; i += step) {
      const end = Math.min(to, i + step)
      // The returned view belongs to the encoder and is overwritten by the next call: copy it.
      this.keep(this.encoder.encode([left.subarray(i, end), right.subarray(i, end)]).slice())
    }
  }

  /** Flushes the encoder: the whole file (no ID3 tag). */
  end(): Uint8Array {
    this.keep(this.encoder.finalize().slice())
    const mp3 = new Uint8Array(this.total)
    let o = 0
    for (const c of this.chunks) {
      mp3.set(c, o)
      o += c.length
    }
    return mp3
  }

  private keep(piece: Uint8Array): void {
    this.chunks.push(piece)
    this.total += piece.length
    if (this.sink !== undefined && piece.length > 0) this.sink(piece)
  }
}

/** Encodes 44.1 kHz stereo float PCM (-1..1) to a CBR MP3 (no ID3 tag); each piece also to `sink` as it is made. */
export async function encodeMp3(
  left: Float32Array,
  right: Float32Array,
  kbps: 128 | 160 | 192 = MP3_BITRATE,
  sink?: Mp3Sink
): Promise<Uint8Array> {
  const stream = await Mp3Stream.open(kbps, sink)
  stream.write(left, right, 0, left.length)
  return stream.end()
}
