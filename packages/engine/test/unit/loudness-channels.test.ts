/**
 * Integrated loudness per BS.1770-4 for any number of channels, against the standard's own
 * reference points: a 997 Hz sine at -20 dBFS measures -20 LUFS on both channels of a stereo
 * file and -23.01 LUFS (once, not twice) as a mono file; a surround channel weighs +1.5 dB and
 * the LFE nothing; the meter holds at every sample rate and however the blocks arrive.
 */
import { createRequire } from "node:module"
import { describe, expect, it } from "vitest"
import { decodeWhole } from "../../src/listen/analyse.ts"
import { channelWeights, LoudnessMeter } from "../../src/synth/loudness.ts"

const require = createRequire(import.meta.url)
const { WaveFile } = require("wavefile") as typeof import("wavefile")

/** A 997 Hz sine of `seconds` at -20 dBFS (peak 0.1). */
const sine = (seconds: number, rate: number): Float32Array => {
  const out = new Float32Array(Math.round(seconds * rate))
  for (let i = 0; i < out.length; i++) out[i] = 0.1 * Math.sin((2 * Math.PI * 997 * i) / rate)
  return out
}

const measure = (channels: ReadonlyArray<Float32Array>, rate: number, weights: ReadonlyArray<number>, block = 4096) => {
  const meter = new LoudnessMeter(rate, weights)
  const length = channels[0]?.length ?? 0
  for (let at = 0; at < length; at += block) meter.push(channels.map((c) => c.subarray(at, at + block)))
  return meter.integrated()
}

describe("LoudnessMeter", () => {
  it("stereo: -20 LUFS for a -20 dBFS sine on both channels, at 44.1 and 48 kHz", () => {
    for (const rate of [44_100, 48_000]) {
      const x = sine(10, rate)
      expect(measure([x, x], rate, channelWeights(2, "wav"))).toBeCloseTo(-20, 1)
    }
  })

  it("mono: the one channel counted once, -23.01 LUFS, 3 dB under the same sine on two channels", () => {
    const x = sine(10, 48_000)
    expect(measure([x], 48_000, channelWeights(1, "wav"))).toBeCloseTo(-23.01, 1)
  })

  it("5.1: a surround channel weighs 1.41 (+1.5 dB), the LFE nothing, in WAV's order and in Vorbis's", () => {
    const rate = 48_000
    const x = sine(10, rate)
    const silent = new Float32Array(x.length)
    const only = (index: number) => Array.from({ length: 6 }, (_, c) => (c === index ? x : silent))
    expect(measure(only(0), rate, channelWeights(6, "wav"))).toBeCloseTo(-23.01, 1)
    expect(measure(only(4), rate, channelWeights(6, "wav"))).toBeCloseTo(-23.01 + 10 * Math.log10(1.41), 1)
    expect(measure(only(3), rate, channelWeights(6, "wav"))).toBe(-Infinity)
    expect(measure(only(5), rate, channelWeights(6, "vorbis"))).toBe(-Infinity)
    expect(measure(only(3), rate, channelWeights(6, "vorbis"))).toBeCloseTo(-23.01 + 10 * Math.log10(1.41), 1)
  })

  it("gives the same figure whatever the size of the blocks it is fed", () => {
    const rate = 44_100
    const x = sine(5, rate)
    const y = sine(5, rate).map((v, i) => v * (i % 44_100 < 22_050 ? 1 : 0.2))
    const whole = measure([x, y], rate, [1, 1], x.length)
    expect(measure([x, y], rate, [1, 1], 1000)).toBeCloseTo(whole, 9)
    expect(measure([x, y], rate, [1, 1], 4410)).toBeCloseTo(whole, 9)
  })
})

describe("an upload's loudness", () => {
  const wavOf = (channels: number, rate: number, samples: Float32Array): Uint8Array => {
    const wav = new WaveFile()
    const ints = Array.from(samples, (v) => Math.round(v * 32767))
    wav.fromScratch(channels, rate, "16", channels === 1 ? ints : Array.from({ length: channels }, () => ints))
    return wav.toBuffer()
  }

  it("of a mono WAV is 3 dB under the same sound on both channels of a stereo WAV", async () => {
    const x = sine(8, 44_100)
    const mono = await decodeWhole(wavOf(1, 44_100, x), "audio/wav")
    const stereo = await decodeWhole(wavOf(2, 44_100, x), "audio/wav")
    expect(mono.lufs).toBeCloseTo(-23.01, 1)
    expect(stereo.lufs).toBeCloseTo(-20, 1)
  })
})
