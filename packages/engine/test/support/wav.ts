// WAV files the engine gives out, read back with wavefile (a library we did not write): it parses
// the RIFF chunks and the format; the data chunk of a 16-bit PCM file is then interleaved
// little-endian int16 samples, viewed here as they are. wavefile's own getSamples unpacks them one
// at a time, about a second per minute of stereo audio, which the sound tests paid on every file.

import { createRequire } from "node:module"

const require = createRequire(import.meta.url)
const { WaveFile } = require("wavefile") as typeof import("wavefile")

export interface Pcm16 {
  /** The format tag (1: PCM), channels, rate and bits the file's header gives. */
  readonly format: number
  readonly channels: number
  readonly sampleRate: number
  readonly bits: number
  /** Interleaved samples, as `getSamples(true, Int16Array)` gives them. */
  readonly samples: Int16Array
}

/** A 16-bit PCM WAV file's header and samples; anything else is refused. */
export function readPcm16(bytes: Uint8Array): Pcm16 {
  const w = new WaveFile(bytes)
  const fmt = w.fmt as { numChannels: number; sampleRate: number; bitsPerSample: number; audioFormat: number }
  if (fmt.audioFormat !== 1 || fmt.bitsPerSample !== 16)
    throw new Error(`not a 16-bit PCM WAV file: format ${fmt.audioFormat}, ${fmt.bitsPerSample} bits`)
  const data = (w as unknown as { data: { samples: Uint8Array } }).data.samples
  const aligned = data.byteOffset % 2 === 0 ? data : data.slice()
  return {
    format: fmt.audioFormat,
    channels: fmt.numChannels,
    sampleRate: fmt.sampleRate,
    bits: fmt.bitsPerSample,
    samples: new Int16Array(aligned.buffer, aligned.byteOffset, aligned.length >> 1)
  }
}
