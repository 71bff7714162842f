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

/** A channel's K-weighting filter state (the two biquads' last inputs and outputs). */
interface FilterState {
  x1: number
  x2: number
  y1: number
  y2: number
  z1: number
  z2: number
}

const freshState = (): FilterState => ({ x1: 0, x2: 0, y1: 0, y2: 0, z1: 0, z2: 0 })

/** The K-weighted energy of `x[start..end)` through `shelf` then `highpass`, carrying `state` on. */
function kWeightedEnergy(
  x: Float32Array,
  start: number,
  end: number,
  [s, h]: readonly [Biquad, Biquad],
  state: FilterState
): number {
  let { x1, x2, y1, y2, z1, z2 } = state
  let e = 0
  for (let i = start; i < end; i++) {
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
  state.x1 = x1
  state.x2 = x2
  state.y1 = y1
  state.y2 = y2
  state.z1 = z1
  state.z2 = z2
  return e
}

/** Adds the K-weighted energy of `x` in each 100 ms step into `steps`. */
function kWeightedSteps(x: Float32Array, steps: Float64Array, step: number): void {
  const filters = [SHELF, HIGHPASS] as const
  const state = freshState()
  for (let b = 0; b < steps.length; b++) {
    const end = Math.min(x.length, (b + 1) * step)
    steps[b] = (steps[b] as number) + kWeightedEnergy(x, b * step, end, filters, state)
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
  return gatedLoudness(steps, count, step)
}

/** The gated loudness (LUFS) of 400 ms blocks (75 % overlap) of per-100 ms K-weighted energies, `count` steps of `step` samples. */
function gatedLoudness(steps: Float64Array, count: number, step: number): number {
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

/**
 * Integrated loudness measured as a signal comes: `add` takes the next samples of a stereo pair
 * (consecutive ranges), `integrated` is the loudness of every whole 100 ms step so far, scaled by
 * `scale(step)` in amplitude when given (what it would measure with that gain on each step), up
 * to sample `upTo` when given.
 */
export class StereoLoudness {
  private readonly step = Math.round(0.1 * SR)
  private readonly steps: Float64Array
  private readonly left = freshState()
  private readonly right = freshState()
  private done = 0

  constructor(n: number) {
    this.steps = new Float64Array(Math.floor(n / this.step))
  }

  add(l: Float32Array, r: Float32Array, from: number, to: number): void {
    const filters = [SHELF, HIGHPASS] as const
    let i = from
    while (i < to) {
      const b = Math.floor(i / this.step)
      if (b >= this.steps.length) break
      const end = Math.min(to, (b + 1) * this.step)
      this.steps[b] =
        (this.steps[b] as number) +
        kWeightedEnergy(l, i, end, filters, this.left) +
        kWeightedEnergy(r, i, end, filters, this.right)
      i = end
    }
    this.done = Math.max(this.done, to)
  }

  integrated(scale?: (step: number) => number, upTo = this.done): number {
    const count = Math.min(this.steps.length, Math.floor(Math.min(upTo, this.done) / this.step))
    if (scale === undefined) return gatedLoudness(this.steps, count, this.step)
    const scaled = new Float64Array(count)
    for (let b = 0; b < count; b++) scaled[b] = (this.steps[b] as number) * scale(b) ** 2
    return gatedLoudness(scaled, count, this.step)
  }
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

/**
 * BS.1770-4's channel weights by position: 1 for the front channels, 0 for the LFE, 1.41 (+1.5 dB)
 * for surround ones; a mono file has one channel, counted once. Positions follow each format's
 * defined order: WAV and FLAC put the LFE fourth, Vorbis last and the centre second.
 */
export function channelWeights(count: number, order: "wav" | "vorbis"): ReadonlyArray<number> {
  const S = 1.41
  const wav: Record<number, ReadonlyArray<number>> = {
    4: [1, 1, S, S],
    5: [1, 1, 1, S, S],
    6: [1, 1, 1, 0, S, S],
    7: [1, 1, 1, 0, S, S, S],
    8: [1, 1, 1, 0, S, S, S, S]
  }
  const vorbis: Record<number, ReadonlyArray<number>> = {
    4: [1, 1, S, S],
    5: [1, 1, 1, S, S],
    6: [1, 1, 1, S, S, 0],
    7: [1, 1, 1, S, S, S, 0],
    8: [1, 1, 1, S, S, S, S, 0]
  }
  return (order === "wav" ? wav : vorbis)[count] ?? Array.from({ length: count }, () => 1)
}

/**
 * Integrated loudness (BS.1770-4, as ffmpeg's `ebur128` measures it) of a file of any number of
 * channels at its own sample rate, fed block by block as it decodes: each channel K-weighted with
 * filters for that rate, its energy weighted by its position and summed, in 100 ms steps that
 * make the gated 400 ms blocks. Nothing but the steps' energies is kept.
 */
export class LoudnessMeter {
  readonly #weights: ReadonlyArray<number>
  readonly #step: number
  readonly #filters: readonly [Biquad, Biquad]
  readonly #states: Array<FilterState>
  readonly #steps: Array<number> = []
  #energy = 0
  #filled = 0

  constructor(sampleRate: number, weights: ReadonlyArray<number>) {
    this.#weights = weights
    this.#step = Math.round(0.1 * sampleRate)
    this.#filters = kWeighting(sampleRate)
    this.#states = weights.map(freshState)
  }

  /** One block of PCM: a Float32Array per channel, all of one length. */
  push(channels: ReadonlyArray<Float32Array>): void {
    const length = channels[0]?.length ?? 0
    for (let start = 0; start < length; ) {
      const end = Math.min(length, start + this.#step - this.#filled)
      for (let c = 0; c < this.#states.length; c++) {
        const weight = this.#weights[c] ?? 1
        const samples = channels[c]
        if (weight === 0 || samples === undefined) continue
        this.#energy += weight * kWeightedEnergy(samples, start, end, this.#filters, this.#states[c] as FilterState)
      }
      this.#filled += end - start
      start = end
      if (this.#filled === this.#step) {
        this.#steps.push(this.#energy)
        this.#energy = 0
        this.#filled = 0
      }
    }
  }

  /** Integrated loudness in LUFS so far (-Infinity for silence or under 400 ms). */
  integrated(): number {
    const steps = this.#steps
    const blocks: Array<number> = []
    for (let b = 0; b + 4 <= steps.length; b++) {
      const e =
        ((steps[b] as number) + (steps[b + 1] as number) + (steps[b + 2] as number) + (steps[b + 3] as number)) /
        (4 * this.#step)
      if (-0.691 + 10 * Math.log10(e) > -70) blocks.push(e)
    }
    if (blocks.length === 0) return -Infinity
    const relative = -0.691 + 10 * Math.log10(blocks.reduce((a, e) => a + e, 0) / blocks.length) - 10
    const gated = blocks.filter((e) => -0.691 + 10 * Math.log10(e) > relative)
    return -0.691 + 10 * Math.log10(gated.reduce((a, e) => a + e, 0) / gated.length)
  }
}
