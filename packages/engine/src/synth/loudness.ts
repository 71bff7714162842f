// Loudness as streaming services measure it: ITU-R BS.1770-4 integrated loudness (K-weighted,
// 400 ms blocks with 75 % overlap, absolute gate at -70 LUFS, relative gate 10 LU below) and
// true peak (4x oversampled). The master steers by these, so a take lands at the asked LUFS
// with no inter-sample overs.

import { SR } from "./dsp.ts"

interface Biquad {
  readonly b0: number
  readonly b1: number
  readonly b2: number
  readonly a1: number
  readonly a2: number
}

/** The two K-weighting stages (a high shelf, then a high-pass), derived for any sample rate as in BS.1770's reference design. */
function kWeighting(fs: number): readonly [Biquad, Biquad] {
  let k = Math.tan((Math.PI * 1681.974450955533) / fs)
  const vh = Math.pow(10, 3.999843853973347 / 20)
  const vb = Math.pow(vh, 0.4996667741545416)
  let q = 0.7071752369554196
  let a0 = 1 + k / q + k * k
  const shelf: Biquad = {
    b0: (vh + (vb * k) / q + k * k) / a0,
    b1: (2 * (k * k - vh)) / a0,
    b2: (vh - (vb * k) / q + k * k) / a0,
    a1: (2 * (k * k - 1)) / a0,
    a2: (1 - k / q + k * k) / a0
  }
  k = Math.tan((Math.PI * 38.13547087602444) / fs)
  q = 0.5003270373238773
  a0 = 1 + k / q + k * k
  const highpass: Biquad = { b0: 1, b1: -2, b2: 1, a1: (2 * (k * k - 1)) / a0, a2: (1 - k / q + k * k) / a0 }
  return [shelf, highpass]
}

const [SHELF, HIGHPASS] = kWeighting(SR)

/** Adds the K-weighted energy of `x` in each 100 ms step into `steps`. */
function kWeightedSteps(x: Float32Array, steps: Float64Array, step: number): void {
  const s = SHELF
  const h = HIGHPASS
  let x1 = 0,
    x2 = 0,
    y1 = 0,
    y2 = 0,
    z1 = 0,
    z2 = 0
  for (let b = 0; b < steps.length; b++) {
    let e = 0
    const end = Math.min(x.length, (b + 1) * step)
    for (let i = b * step; i < end; i++) {
      const v = x[i] as number
      const y = s.b0 * v + s.b1 * x1 + s.b2 * x2 - s.a1 * y1 - s.a2 * y2
      x2 = x1
      x1 = v
      const z = y - 2 * y1 + y2 - h.a1 * z1 - h.a2 * z2
      y2 = y1
      y1 = y
      z2 = z1
      z1 = z
      e += z * z
    }
    steps[b] = (steps[b] as number) + e
  }
}

/** Integrated loudness of a stereo signal in LUFS (-Infinity for silence). */
export function integratedLoudness(left: Float32Array, right: Float32Array): number {
  const step = Math.round(0.1 * SR)
  const count = Math.floor(left.length / step)
  if (count < 4) return -Infinity
  const steps = new Float64Array(count)
  kWeightedSteps(left, steps, step)
  kWeightedSteps(right, steps, step)
  const blocks: number[] = []
  for (let b = 0; b + 4 <= count; b++) {
    const e =
      ((steps[b] as number) + (steps[b + 1] as number) + (steps[b + 2] as number) + (steps[b + 3] as number)) /
      (4 * step)
    if (-0.691 + 10 * Math.log10(e) > -70) blocks.push(e)
  }
  if (blocks.length === 0) return -Infinity
  const relative = -0.691 + 10 * Math.log10(blocks.reduce((a, e) => a + e, 0) / blocks.length) - 10
  const gated = blocks.filter((e) => -0.691 + 10 * Math.log10(e) > relative)
  return -0.691 + 10 * Math.log10(gated.reduce((a, e) => a + e, 0) / gated.length)
}

/** Half the interpolation kernel's width, in samples. */
const HALF = 6
/** Windowed-sinc coefficients for the three in-between phases (1/4, 2/4, 3/4 of a sample). */
const PHASES: ReadonlyArray<Float64Array> = [1, 2, 3].map((p) => {
  const c = new Float64Array(2 * HALF)
  for (let m = -HALF + 1; m <= HALF; m++) {
    const d = m - p / 4
    const sinc = Math.sin(Math.PI * d) / (Math.PI * d)
    c[m + HALF - 1] = sinc * 0.5 * (1 + Math.cos((Math.PI * d) / HALF))
  }
  return c
})

/**
 * Largest absolute value of a channel upsampled 4x (BS.1770-4 Annex 2's method), looking
 * between samples only where a neighbour is above `floor` (an inter-sample peak exceeds its
 * neighbours by a few dB at most, so quieter stretches cannot hold the maximum).
 */
export function truePeak(x: Float32Array, floor = 0): number {
  let peak = 0
  const n = x.length
  for (let i = 0; i < n; i++) {
    const a = Math.abs(x[i] as number)
    if (a > peak) peak = a
    if (i + 1 >= n) continue
    const nb = Math.abs(x[i + 1] as number)
    if (a < floor && nb < floor) continue
    if (a < peak * 0.5 && nb < peak * 0.5) continue
    for (const c of PHASES) {
      let y = 0
      for (let m = -HALF + 1; m <= HALF; m++) {
        const j = i + m
        if (j >= 0 && j < n) y += (x[j] as number) * (c[m + HALF - 1] as number)
      }
      const ay = Math.abs(y)
      if (ay > peak) peak = ay
    }
  }
  return peak
}

/** True peak of a stereo signal in dBTP. */
export function truePeakDb(left: Float32Array, right: Float32Array): number {
  const p = Math.max(truePeak(left), truePeak(right))
  return 20 * Math.log10(p || 1e-12)
}
