// What the sound goals are measured with, shared by the tests and `pnpm bench`: octave-band
// balance and spectral flatness from Essentia's spectrum, integrated loudness (ITU-R BS.1770,
// K-weighted and gated) from Essentia's EBU R128 meter, and true peak (4x oversampled) from the
// engine's own meter: Essentia's true-peak detector aborts in its WASM build, and
// test/sound/loudness.test.ts checks the engine's meter against known signals and against Essentia.

import { truePeakDb } from "../../src/synth/loudness.ts"
import { getEssentia } from "./analysis.ts"

export interface SoundMeasures {
  /** Energy of each octave band from 2 kHz up (2-4, 4-8, 8-16, 16-22 kHz), in dB of the total. */
  readonly bandsDb: ReadonlyArray<number>
  /** Mean spectral flatness (geometric / arithmetic mean of power) between 1 and 8 kHz over the sounding frames. */
  readonly flatness: number
  /** Integrated loudness, LUFS. */
  readonly lufs: number
  /** True peak, dBTP. */
  readonly truePeakDb: number
}

export const OCTAVES: ReadonlyArray<readonly [number, number]> = [
  [2000, 4000],
  [4000, 8000],
  [8000, 16000],
  [16000, 22050]
]

const SR = 44100
const FRAME = 2048
const HOP = 2048

/** Octave-band shares and flatness of a mono signal. */
export function spectralMeasures(signal: Float32Array): { readonly bandsDb: number[]; readonly flatness: number } {
  const e = getEssentia()
  const bin = SR / FRAME
  const frames = Math.max(0, Math.floor((signal.length - FRAME) / HOP))
  const band = new Float64Array(OCTAVES.length)
  let total = 0
  const flat: { readonly energy: number; readonly flatness: number }[] = []
  const lo = Math.ceil(1000 / bin)
  const hi = Math.floor(8000 / bin)
  for (let f = 0; f < frames; f++) {
    const v = e.arrayToVector(signal.subarray(f * HOP, f * HOP + FRAME))
    const w = e.Windowing(v, true, FRAME, "hann")
    const s = e.Spectrum(w.frame, FRAME)
    const mags = e.vectorToArray(s.spectrum)
    v.delete()
    w.frame.delete()
    s.spectrum.delete()
    for (let k = 1; k < mags.length; k++) {
      const p = (mags[k] as number) ** 2
      total += p
      const hz = k * bin
      for (let b = 0; b < OCTAVES.length; b++) {
        const [a, z] = OCTAVES[b] as readonly [number, number]
        if (hz >= a && hz < z) band[b] = (band[b] as number) + p
      }
    }
    let sum = 0
    let logSum = 0
    for (let k = lo; k <= hi; k++) {
      const p = (mags[k] as number) ** 2 + 1e-20
      sum += p
      logSum += Math.log(p)
    }
    const count = hi - lo + 1
    flat.push({ energy: sum, flatness: Math.exp(logSum / count) / (sum / count) })
  }
  // Frames more than 50 dB below the loudest are silence (a fade, a break): their flatness is the dither's.
  const loudest = flat.reduce((m, x) => Math.max(m, x.energy), 0)
  const sounding = flat.filter((x) => x.energy > loudest * 1e-5)
  const flatness = sounding.length === 0 ? 0 : sounding.reduce((a, x) => a + x.flatness, 0) / sounding.length
  return { bandsDb: [...band].map((x) => 10 * Math.log10(x / (total || 1) + 1e-30)), flatness }
}

export function integratedLoudness(left: Float32Array, right: Float32Array): number {
  const e = getEssentia()
  const l = e.arrayToVector(left)
  const r = e.arrayToVector(right)
  const out = e.LoudnessEBUR128(l, r, 0.1, SR, false).integratedLoudness
  l.delete()
  r.delete()
  return out
}

export function soundMeasures(left: Float32Array, right: Float32Array): SoundMeasures {
  const m = new Float32Array(left.length)
  for (let i = 0; i < m.length; i++) m[i] = 0.5 * ((left[i] as number) + (right[i] as number))
  return { ...spectralMeasures(m), lufs: integratedLoudness(left, right), truePeakDb: truePeakDb(left, right) }
}
