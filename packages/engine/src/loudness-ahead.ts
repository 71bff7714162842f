// What the score says about loudness before anything is synthesized (decision 0129). The take is
// made forward in time, so its levels are decided from its opening: a layer's (a part's, the
// drums') from its first seconds, the master's from the mix's first seconds. The score knows the
// rest: when each note sounds and how hard it is struck. Counted in 100 ms steps, that says how
// much louder a layer plays over the whole take than in its opening, and, with every layer at the
// level the mix balances it to, how much louder the whole mix is than its opening, gated as
// BS.1770 gates.

import { STEP } from "./note-loudness.ts"
import { SR } from "./synth/dsp.ts"

/** A note as the score has it: when it is struck (seconds) and its power in each 100 ms step from then (relative). */
export interface Sounding {
  readonly start: number
  readonly powers: ArrayLike<number>
}

/** A layer's power in each 100 ms step of a take of `n` samples: the sum of its notes sounding then. */
export function stepPowers(notes: ReadonlyArray<Sounding>, n: number): Float64Array {
  const count = Math.floor(n / STEP)
  const steps = new Float64Array(count)
  for (const note of notes) {
    const first = Math.max(0, Math.floor((note.start * SR) / STEP))
    for (let k = 0; k < note.powers.length && first + k < count; k++)
      steps[first + k] = (steps[first + k] as number) + (note.powers[k] as number)
  }
  return steps
}

/** The layer's mean power over the steps from sample `from` to sample `to` in which it sounds (0 if none). */
export function soundingPower(steps: Float64Array, from: number, to: number): number {
  let sum = 0
  let count = 0
  for (let b = Math.max(0, Math.floor(from / STEP)); b < Math.min(steps.length, Math.ceil(to / STEP)); b++) {
    const p = steps[b] as number
    if (p > 0) {
      sum += p
      count++
    }
  }
  return count === 0 ? 0 : sum / count
}

/**
 * How much a layer's level measured over its opening (samples `from` to `to`) is to be scaled to
 * be its level over the whole take, as amplitude: 1 when the score cannot tell.
 */
export function openingToWhole(steps: Float64Array, from: number, to: number): number {
  const opening = soundingPower(steps, from, to)
  const whole = soundingPower(steps, from, steps.length * STEP)
  return opening > 0 && whole > 0 ? Math.sqrt(whole / opening) : 1
}

/** A layer of the mix: its power while it sounds, as the mix balances it, and its steps. */
export interface Layer {
  readonly power: number
  readonly steps: Float64Array
}

/** The gated mean power of the 400 ms blocks (75 % overlap) of the first `count` steps, relative gate -10 LU. */
function gatedPower(steps: Float64Array, count: number): number {
  const blocks: number[] = []
  for (let b = 0; b + 4 <= count; b++) {
    const e =
      ((steps[b] as number) + (steps[b + 1] as number) + (steps[b + 2] as number) + (steps[b + 3] as number)) / 4
    if (e > 0) blocks.push(e)
  }
  if (blocks.length === 0) return 0
  const gate = (blocks.reduce((a, e) => a + e, 0) / blocks.length) * 0.1
  const gated = blocks.filter((e) => e > gate)
  return gated.reduce((a, e) => a + e, 0) / gated.length
}

/** The score's mix of a take of `n` samples: every layer at its balanced level, louder or softer as its notes are. */
export class ScoreLoudness {
  private readonly mix: Float64Array
  private readonly whole: number

  constructor(layers: ReadonlyArray<Layer>, n: number) {
    const count = Math.floor(n / STEP)
    this.mix = new Float64Array(count)
    for (const layer of layers) {
      const mean = soundingPower(layer.steps, 0, n)
      if (mean <= 0) continue
      for (let b = 0; b < count; b++)
        this.mix[b] = (this.mix[b] as number) + (layer.power * (layer.steps[b] as number)) / mean
    }
    this.whole = gatedPower(this.mix, count)
  }

  /** How many dB louder the whole take will measure than its first `to` samples; 0 when either says nothing. */
  aheadOf(to: number): number {
    const opening = gatedPower(this.mix, Math.min(this.mix.length, Math.floor(to / STEP)))
    return this.whole > 0 && opening > 0 ? 10 * Math.log10(this.whole / opening) : 0
  }
}
