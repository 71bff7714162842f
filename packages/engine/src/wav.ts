// 16-bit PCM: the quantization every WAV the engine gives out uses, and the RIFF file around it.

import { SR } from "./synth/dsp.ts"

export const WAV_HEADER_BYTES = 44

/** Interleaved 16-bit samples of a float stereo signal (-1..1), rounded to nearest. */
export function quantize(left: Float32Array, right: Float32Array): Int16Array {
  const n = left.length
  const out = new Int16Array(n * 2)
  for (let i = 0; i < n; i++) {
    const l = Math.round((left[i] as number) * 32767)
    const r = Math.round((right[i] as number) * 32767)
    out[2 * i] = Math.max(-32768, Math.min(32767, l))
    out[2 * i + 1] = Math.max(-32768, Math.min(32767, r))
  }
  return out
}

/** The float stereo signal those samples stand for (the exact inverse of `quantize` on its output). */
export function dequantize(pcm: Int16Array): { readonly left: Float32Array; readonly right: Float32Array } {
  const n = pcm.length >> 1
  const left = new Float32Array(n)
  const right = new Float32Array(n)
  for (let i = 0; i < n; i++) {
    left[i] = (pcm[2 * i] as number) / 32767
    right[i] = (pcm[2 * i + 1] as number) / 32767
  }
  return { left, right }
}

/** A RIFF WAVE file: PCM, 16-bit, 44.1 kHz, stereo. */
export function wavFile(pcm: Int16Array): Uint8Array {
  const dataBytes = pcm.length * 2
  const out = new Uint8Array(WAV_HEADER_BYTES + dataBytes)
  const v = new DataView(out.buffer)
  const ascii = (at: number, text: string): void => {
    for (let i = 0; i < text.length; i++) out[at + i] = text.charCodeAt(i)
  }
  ascii(0, "RIFF")
  v.setUint32(4, 36 + dataBytes, true)
  ascii(8, "WAVE")
  ascii(12, "fmt ")
  v.setUint32(16, 16, true)
  v.setUint16(20, 1, true) // PCM
  v.setUint16(22, 2, true)
  v.setUint32(24, SR, true)
  v.setUint32(28, SR * 4, true)
  v.setUint16(32, 4, true)
  v.setUint16(34, 16, true)
  ascii(36, "data")
  v.setUint32(40, dataBytes, true)
  // WAV is little-endian, as every platform Node runs on.
  out.set(new Uint8Array(pcm.buffer, pcm.byteOffset, dataBytes), WAV_HEADER_BYTES)
  return out
}

/** The samples of a file written by `wavFile` (the PCM cache reads its own files back). */
export function wavSamples(file: Uint8Array): Int16Array {
  const copy = file.slice(WAV_HEADER_BYTES)
  return new Int16Array(copy.buffer, 0, copy.length >> 1)
}
