// The master's loudness and true-peak meters, against known signals and against Essentia's
// EBU R128 meter (an independent implementation).

import { describe, expect, it } from "vitest"
import { integratedLoudness, truePeak } from "../../src/synth/loudness.ts"
import { integratedLoudness as essentiaLoudness } from "../support/sound-measures.ts"

const SR = 44100

const sine = (hz: number, amplitude: number, seconds: number, phase = 0): Float32Array => {
  const x = new Float32Array(Math.round(seconds * SR))
  for (let i = 0; i < x.length; i++) x[i] = amplitude * Math.sin((2 * Math.PI * hz * i) / SR + phase)
  return x
}

describe("loudness meter (BS.1770-4)", () => {
  it("reads a 997 Hz sine at -20 dBFS in both channels as -20 LUFS", () => {
    const x = sine(997, 0.1, 5)
    expect(integratedLoudness(x, x)).toBeCloseTo(-20, 1)
  })

  it("gates silence out: the same tone with silence after it reads the same", () => {
    const x = sine(997, 0.1, 5)
    const padded = new Float32Array(x.length * 3)
    padded.set(x)
    expect(Math.abs(integratedLoudness(padded, padded) + 20)).toBeLessThan(0.3)
    expect(integratedLoudness(new Float32Array(SR * 2), new Float32Array(SR * 2))).toBe(-Infinity)
  })

  it("agrees with Essentia's EBU R128 meter within 0.2 LU on noise bursts and low and high tones", () => {
    let s = 1
    const n = SR * 8
    const l = new Float32Array(n)
    const r = new Float32Array(n)
    for (let i = 0; i < n; i++) {
      s = (s * 1103515245 + 12345) >>> 0
      const burst = Math.floor(i / SR) % 2 === 0 ? 0.3 : 0.02
      l[i] = (s / 2 ** 32 - 0.5) * burst + 0.2 * Math.sin((2 * Math.PI * 60 * i) / SR)
      r[i] = 0.1 * Math.sin((2 * Math.PI * 6000 * i) / SR)
    }
    expect(Math.abs(integratedLoudness(l, r) - essentiaLoudness(l, r))).toBeLessThan(0.2)
  })
})

describe("true-peak meter (4x oversampled)", () => {
  it("finds the peak between samples of a quarter-rate sine sampled at 45 degrees", () => {
    // Every sample sits at 0.707 of the amplitude; the wave itself reaches 0.5.
    const x = sine(SR / 4, 0.5, 1, Math.PI / 4)
    let samplePeak = 0
    for (const v of x) samplePeak = Math.max(samplePeak, Math.abs(v))
    expect(samplePeak).toBeLessThan(0.36)
    expect(truePeak(x)).toBeGreaterThan(0.48)
    expect(truePeak(x)).toBeLessThan(0.52)
  })

  it("reads a low tone's true peak as its sample peak", () => {
    expect(truePeak(sine(100, 0.25, 1))).toBeCloseTo(0.25, 3)
  })
})
