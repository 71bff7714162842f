// The mixer's filters as objects whose state runs forward: `run(buf, from, to)` over consecutive
// ranges gives what one call over the whole range gives (the same operations, in the same order),
// so a take can be filtered a block at a time, as it is synthesized (decision 0129).

import { onePoleCoef } from "./dsp.ts"

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
  constructor(hz: number, gain: number) {
    this.a = onePoleCoef(hz)
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
