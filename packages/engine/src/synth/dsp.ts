// Shared DSP building blocks. Everything works on preallocated typed arrays; inner
// loops avoid allocation and transcendental calls where a table or recursion will do.

export const SR = 44100
export const INV_SR = 1 / SR

const TABLE_BITS = 12
export const TABLE_SIZE = 1 << TABLE_BITS
export const TABLE_MASK = TABLE_SIZE - 1
/** One sine period plus a guard point for interpolation. */
export const SINE = new Float32Array(TABLE_SIZE + 1)
for (let i = 0; i <= TABLE_SIZE; i++) SINE[i] = Math.sin((2 * Math.PI * i) / TABLE_SIZE)

/** Table sine of a phase given in cycles (any real number). */
export function tsin(phase: number): number {
  const x = (phase - Math.floor(phase)) * TABLE_SIZE
  const i = x | 0
  const f = x - i
  const a = SINE[i] as number
  return a + ((SINE[i + 1] as number) - a) * f
}

/** PolyBLEP correction for a naive sawtooth/square at phase t (0..1) with increment dt. */
export function polyBlep(t: number, dt: number): number {
  if (t < dt) {
    const x = t / dt
    return x + x - x * x - 1
  }
  if (t > 1 - dt) {
    const x = (t - 1) / dt
    return x * x + x + x + 1
  }
  return 0
}

/** xorshift32 white noise in [-1, 1); the state lives in a one-element array so callers can share it. */
export class Noise {
  private s: number
  constructor(seed: number) {
    this.s = seed >>> 0 || 0x9e3779b9
  }
  next(): number {
    let s = this.s
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    this.s = s >>> 0
    return this.s / 2147483648 - 1
  }
}

export function midiHz(m: number): number {
  return 440 * Math.pow(2, (m - 69) / 12)
}

/** One-pole low-pass coefficient for a cutoff in Hz. */
export function onePoleCoef(hz: number, rate = SR): number {
  return 1 - Math.exp((-2 * Math.PI * Math.min(hz, rate * 0.45)) / rate)
}

/** In-place one-pole low-pass over a range of a buffer. */
export function lowpassInPlace(buf: Float32Array, from: number, to: number, hz: number): void {
  new RunningLowpass(hz).run(buf, from, to)
}

/** In-place one-pole high-pass (signal minus its low-pass). */
export function highpassInPlace(buf: Float32Array, from: number, to: number, hz: number): void {
  new RunningHighpass(hz).run(buf, from, to)
}

/** Constant-power pan gains for pan in -1..1. */
export function panGains(pan: number): [number, number] {
  const p = (Math.max(-1, Math.min(1, pan)) + 1) * 0.25 * Math.PI
  return [Math.cos(p), Math.sin(p)]
}

/** Fast tanh-like soft clipper (rational approximation, exact at 0 and saturating at ±1). */
export function softClip(x: number): number {
  if (x > 3) return 1
  if (x < -3) return -1
  const x2 = x * x
  return (x * (27 + x2)) / (27 + 9 * x2)
}

/** In-place RBJ biquad low-pass (Butterworth Q by default) over a whole buffer. */
export function biquadLowpassInPlace(buf: Float32Array, hz: number, q = Math.SQRT1_2): void {
  biquadInPlace(buf, lowpassBiquad(hz, q))
}

/** RBJ low-pass coefficients (Butterworth Q by default). */
export function lowpassBiquad(hz: number, q = Math.SQRT1_2): BiquadCoefficients {
  const w = (2 * Math.PI * hz) / SR
  const alpha = Math.sin(w) / (2 * q)
  const cw = Math.cos(w)
  const a0 = 1 + alpha
  const b0 = (1 - cw) / 2 / a0
  return { b0, b1: (1 - cw) / a0, b2: b0, a1: (-2 * cw) / a0, a2: (1 - alpha) / a0 }
}

/** Runs a biquad (direct form I) over a whole buffer in place. */
export function biquadInPlace(buf: Float32Array, c: BiquadCoefficients): void {
  biquadRun(buf, 0, buf.length, c, [0, 0, 0, 0])
}

/** A biquad (direct form I) over samples `from` to `to`, its state [x1, x2, y1, y2] carried in `state`. */
export function biquadRun(buf: Float32Array, from: number, to: number, c: BiquadCoefficients, state: number[]): void {
  const { b0, b1, b2, a1, a2 } = c
  let x1 = state[0] as number
  let x2 = state[1] as number
  let y1 = state[2] as number
  let y2 = state[3] as number
  for (let i = from; i < to; i++) {
    const x = buf[i] as number
    const y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
    x2 = x1
    x1 = x
    y2 = y1
    y1 = y
    buf[i] = y
  }
  state[0] = x1
  state[1] = x2
  state[2] = y1
  state[3] = y2
}

/** A biquad's normalised coefficients (a0 = 1), for a filter run inline in a hot loop. */
export interface BiquadCoefficients {
  readonly b0: number
  readonly b1: number
  readonly b2: number
  readonly a1: number
  readonly a2: number
}

/** RBJ peaking EQ: `db` added at `hz`, `q` setting how wide (about 1.2 octaves at q 1.2), for a signal at `rate`. */
export function peakingBiquad(hz: number, db: number, q: number, rate = SR): BiquadCoefficients {
  const a = Math.pow(10, db / 40)
  const w = (2 * Math.PI * hz) / rate
  const alpha = Math.sin(w) / (2 * q)
  const cos = Math.cos(w)
  const a0 = 1 + alpha / a
  return {
    b0: (1 + alpha * a) / a0,
    b1: (-2 * cos) / a0,
    b2: (1 - alpha * a) / a0,
    a1: (-2 * cos) / a0,
    a2: (1 - alpha / a) / a0
  }
}

/** First-order high shelf: everything above about `hz` scaled by `gain` (below 1 cuts), what lies below untouched; `rate` the signal's. */
export function highShelfInPlace(
  buf: Float32Array,
  from: number,
  to: number,
  hz: number,
  gain: number,
  rate = SR
): void {
  new RunningShelf(hz, gain, rate).run(buf, from, to)
}

/** Adds `amount` times a second-order high-pass at `hz` back onto the signal: a lift of the top octave that leaves the band below it alone. */
export function airLiftInPlace(buf: Float32Array, from: number, to: number, hz: number, amount: number): void {
  new RunningAirLift(hz, amount).run(buf, from, to)
}

// The filters below as objects whose state runs forward: `run(buf, from, to)` over consecutive
// ranges gives what one call over the whole range gives (the same operations, in the same order),
// so a take can be filtered a block at a time, as it is synthesized (decision 0129). The in-place
// functions above are one such run over their range, from rest.

/** A one-pole low-pass (as `lowpassInPlace`). */
export class RunningLowpass {
  private readonly a: number
  private y = 0
  constructor(hz: number) {
    this.a = onePoleCoef(hz)
  }
  run(buf: Float32Array, from: number, to: number): void {
    const a = this.a
    let y = this.y
    for (let i = from; i < to; i++) {
      y += a * ((buf[i] as number) - y)
      buf[i] = y
    }
    this.y = y
  }
}

/** A one-pole high-pass, the signal minus its low-pass (as `highpassInPlace`). */
export class RunningHighpass {
  private readonly a: number
  private y = 0
  constructor(hz: number) {
    this.a = onePoleCoef(hz)
  }
  run(buf: Float32Array, from: number, to: number): void {
    const a = this.a
    let y = this.y
    for (let i = from; i < to; i++) {
      const x = buf[i] as number
      y += a * (x - y)
      buf[i] = x - y
    }
    this.y = y
  }
}

/** A first-order high shelf (as `highShelfInPlace`): above about `hz` scaled by `gain`. */
export class RunningShelf {
  private readonly a: number
  private readonly gain: number
  private lp = 0
  constructor(hz: number, gain: number, rate = SR) {
    this.a = onePoleCoef(hz, rate)
    this.gain = gain
  }
  run(buf: Float32Array, from: number, to: number): void {
    const { a, gain } = this
    let lp = this.lp
    for (let i = from; i < to; i++) {
      const x = buf[i] as number
      lp += a * (x - lp)
      buf[i] = lp + gain * (x - lp)
    }
    this.lp = lp
  }
}

/** A lift of the top octave (as `airLiftInPlace`): `amount` times a second-order high-pass added back. */
export class RunningAirLift {
  private readonly a: number
  private readonly amount: number
  private lp1 = 0
  private lp2 = 0
  constructor(hz: number, amount: number) {
    this.a = onePoleCoef(hz)
    this.amount = amount
  }
  run(buf: Float32Array, from: number, to: number): void {
    const { a, amount } = this
    let lp1 = this.lp1
    let lp2 = this.lp2
    for (let i = from; i < to; i++) {
      const x = buf[i] as number
      lp1 += a * (x - lp1)
      const h1 = x - lp1
      lp2 += a * (h1 - lp2)
      buf[i] = x + amount * (h1 - lp2)
    }
    this.lp1 = lp1
    this.lp2 = lp2
  }
}
