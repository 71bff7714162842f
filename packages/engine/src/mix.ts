// The mixer: buses, reverb, sidechain pump, master colour, loudness and a look-ahead
// peak limiter. Output peaks never exceed CEILING, so the MP3 never clips on decode.

import { INV_SR, Noise, SR, biquadRun, lowpassBiquad, onePoleCoef, type BiquadCoefficients } from "./synth/dsp.ts"
import { StereoLoudness, integratedLoudness } from "./synth/loudness.ts"

/** -2 dBFS: leaves room for the MP3 encoder's overshoots on bright transients. */
export const CEILING = 0.8

/** The most the master will raise a mix, so that a (nearly) silent render stays silent. */
const MAX_GAIN = 100

/** Where every take lands: the loudness streaming services normalise to. */
export const TARGET_LUFS = -14

/**
 * Freeverb (Jezar's public-domain design), stereo, fed by a mono send, run forward: `run(to)`
 * reads the send up to `to` and adds the reverb into the outputs. Each comb and all-pass runs as
 * its own pass over a block: tight single-buffer loops are several times faster in V8 than one
 * loop juggling twelve delay lines. The state carries from one block to the next, so blocks give
 * what one pass over the whole take gives, to the bit.
 */
export class Reverb {
  // Runs at half the sample rate (delay lengths halved): a reverb tail has little above
  // 8 kHz after damping, and this halves the cost of the most expensive mix stage.
  private static readonly combTunings = [558, 594, 638, 678, 711, 745]
  private static readonly apTunings = [278, 220, 170]
  private readonly feedback: number
  private readonly gain: number
  private readonly n: number
  private readonly h: number
  private readonly channels: ReadonlyArray<{
    readonly out: Float32Array
    readonly combs: Float32Array[]
    readonly combAt: number[]
    readonly combState: number[]
    readonly allpasses: Float32Array[]
    readonly allpassAt: number[]
    /** The last half-rate output, whose odd full-rate neighbour waits for the next one. */
    pending: number
  }>
  /** Half-rate samples done. */
  private done = 0

  private readonly send: Float32Array

  constructor(send: Float32Array, outL: Float32Array, outR: Float32Array, size: number, wet: number) {
    this.send = send
    const spread = 11
    this.feedback = 0.7 + 0.28 * size
    this.gain = (wet * 8) / Reverb.combTunings.length
    this.n = send.length
    this.h = Math.ceil(this.n / 2)
    this.channels = [
      [outL, 0],
      [outR, spread]
    ].map(([out, extra]) => ({
      out: out as Float32Array,
      combs: Reverb.combTunings.map((t) => new Float32Array(t + (extra as number))),
      combAt: Reverb.combTunings.map(() => 0),
      combState: Reverb.combTunings.map(() => 0),
      allpasses: Reverb.apTunings.map((t) => new Float32Array(t + (extra as number))),
      allpassAt: Reverb.apTunings.map(() => 0),
      pending: 0
    }))
  }

  /**
   * Reads the send up to sample `to` (even, or the take's end) and adds the reverb to the outputs;
   * returns the index up to which they are final (the last odd sample waits on the next block).
   */
  run(to: number): number {
    const { send, n, h, feedback, gain } = this
    const damp = 0.4
    const h0 = this.done
    const h1 = to >= n ? h : Math.min(h, to >> 1)
    if (h1 <= h0) return this.finalTo()
    const len = h1 - h0
    const input = new Float32Array(len)
    for (let k = 0; k < len; k++) {
      const i = h0 + k
      input[k] = ((send[2 * i] as number) + (send[2 * i + 1] ?? 0)) * 0.0075
    }
    const acc = new Float32Array(len)
    for (const ch of this.channels) {
      acc.fill(0)
      // Three combs per pass: each comb's damping filter is a chain of dependent multiplies, and
      // three independent chains in one loop cost little more than one. Each sample still adds
      // comb k before comb k + 1 with float32 rounding in between: bit-identical to one pass each.
      for (let c = 0; c < ch.combs.length; c += 3) {
        const bufA = ch.combs[c] as Float32Array
        const bufB = ch.combs[c + 1] as Float32Array
        const bufC = ch.combs[c + 2] as Float32Array
        const lenA = bufA.length
        const lenB = bufB.length
        const lenC = bufC.length
        let ja = ch.combAt[c] as number,
          jb = ch.combAt[c + 1] as number,
          jc = ch.combAt[c + 2] as number
        let sa = ch.combState[c] as number,
          sb = ch.combState[c + 1] as number,
          sc = ch.combState[c + 2] as number
        for (let i = 0; i < len; i++) {
          const x = input[i] as number
          const ya = bufA[ja] as number
          sa = ya * (1 - damp) + sa * damp
          bufA[ja] = x + sa * feedback
          if (++ja === lenA) ja = 0
          const yb = bufB[jb] as number
          sb = yb * (1 - damp) + sb * damp
          bufB[jb] = x + sb * feedback
          if (++jb === lenB) jb = 0
          const yc = bufC[jc] as number
          sc = yc * (1 - damp) + sc * damp
          bufC[jc] = x + sc * feedback
          if (++jc === lenC) jc = 0
          acc[i] = Math.fround(Math.fround((acc[i] as number) + ya) + yb) + yc
        }
        ch.combAt[c] = ja
        ch.combAt[c + 1] = jb
        ch.combAt[c + 2] = jc
        ch.combState[c] = sa
        ch.combState[c + 1] = sb
        ch.combState[c + 2] = sc
      }
      for (let a = 0; a < ch.allpasses.length; a++) {
        const buf = ch.allpasses[a] as Float32Array
        const blen = buf.length
        let j = ch.allpassAt[a] as number
        for (let i = 0; i < len; i++) {
          const x = acc[i] as number
          const bo = buf[j] as number
          buf[j] = x + bo * 0.5
          if (++j === blen) j = 0
          acc[i] = bo - x
        }
        ch.allpassAt[a] = j
      }
      // Back to full rate by linear interpolation; the previous block's last odd sample first.
      const out = ch.out
      if (h0 > 0) {
        const o = 2 * (h0 - 1) + 1
        if (o < n) out[o] = (out[o] as number) + 0.5 * (ch.pending + (acc[0] as number) * gain)
      }
      for (let k = 0; k < len; k++) {
        const i = h0 + k
        const a = (acc[k] as number) * gain
        const o = 2 * i
        out[o] = (out[o] as number) + a
        if (k + 1 < len) {
          const b = (acc[k + 1] as number) * gain
          if (o + 1 < n) out[o + 1] = (out[o + 1] as number) + 0.5 * (a + b)
        } else if (i + 1 >= h) {
          if (o + 1 < n) out[o + 1] = (out[o + 1] as number) + 0.5 * a
        } else ch.pending = a
      }
    }
    this.done = h1
    return this.finalTo()
  }

  private finalTo(): number {
    return this.done >= this.h ? this.n : Math.max(0, 2 * this.done - 1)
  }
}

/** The reverb of a whole signal at once (a stem's). */
export function reverb(send: Float32Array, outL: Float32Array, outR: Float32Array, size: number, wet: number): void {
  new Reverb(send, outL, outR, size, wet).run(send.length)
}

/** Ducks a stereo bus after each kick over samples `from` to `to`: the "pumping" of house and trance. */
export function sidechain(
  l: Float32Array,
  r: Float32Array,
  kicks: ReadonlyArray<number>,
  depth: number,
  from = 0,
  to = l.length
): void {
  let k = 0
  const release = 0.16
  // The envelope exp(-dt / release) starts exact at each kick's first sample (and at `from`), then
  // advances by a constant factor per sample: a multiply instead of an exp() per sample. The
  // product drifts from the exact value by under 1e-11 over the 0.5 s window, far below float32's
  // resolution.
  const step = Math.exp(-INV_SR / release)
  let current = -1
  let decay = 0
  for (let i = from; i < to; i++) {
    const t = i * INV_SR
    while (k + 1 < kicks.length && (kicks[k + 1] as number) <= t) k++
    const kt = kicks[k]
    if (kt === undefined || kt > t) continue
    const dt = t - kt
    if (dt > 0.5) continue
    if (k === current) decay *= step
    else {
      current = k
      decay = Math.exp(-dt / release)
    }
    const g = 1 - depth * decay * Math.min(1, dt / 0.004 + 0.3)
    l[i] = (l[i] as number) * g
    r[i] = (r[i] as number) * g
  }
}

export interface MasterOptions {
  /** Integrated loudness (LUFS) the master brings the mix to. */
  readonly targetLufs: number
  /** Stereo width 0..1.5 (mid/side). */
  readonly width: number
  /** Low-pass on the whole mix (Hz), 0 = none. */
  readonly lowpass: number
  /** Vinyl/tape crackle amount (lo-fi). */
  readonly crackle: number
  readonly seed: number
  /** Fade-out length in seconds at the end. */
  readonly fadeOut: number
}

/**
 * What the master decided while mastering the mix: its gain at every sample (loudness and limiter
 * together, `gain` is 1). Replaying it on each stem masters the stem exactly as the mix was, so
 * that the stems add up to the mix although loudness and limiting depend on the mix itself.
 */
export interface MasterTrace {
  gain: number
  readonly limiter: Float32Array
}

/**
 * The master's colour, run forward over a stereo pair: stereo width, the genre's low-pass, nothing
 * above 16 kHz, no DC or rumble below 20 Hz, and the lo-fi crackle. Linear but for the crackle,
 * which a stem takes only where asked.
 */
class MasterColour {
  private readonly colour: number
  private l1 = 0
  private l2 = 0
  private r1 = 0
  private r2 = 0
  private readonly air: BiquadCoefficients
  private readonly airL = [0, 0, 0, 0]
  private readonly airR = [0, 0, 0, 0]
  private readonly hp = onePoleCoef(20)
  private dl = 0
  private dr = 0
  private readonly noise: Noise
  private hiss = 0

  private readonly o: MasterOptions
  private readonly crackle: boolean

  constructor(o: MasterOptions, crackle: boolean) {
    this.o = o
    this.crackle = crackle
    this.colour = o.lowpass > 0 ? onePoleCoef(o.lowpass) : 0
    this.air = lowpassBiquad(16000)
    this.noise = new Noise(o.seed)
  }

  run(l: Float32Array, r: Float32Array, from: number, to: number): void {
    const o = this.o
    // Stereo width via mid/side.
    if (o.width !== 1) {
      for (let i = from; i < to; i++) {
        const m = ((l[i] as number) + (r[i] as number)) * 0.5
        const s = ((l[i] as number) - (r[i] as number)) * 0.5 * o.width
        l[i] = m + s
        r[i] = m - s
      }
    }
    if (o.lowpass > 0) {
      // Two one-pole stages: a gentle 12 dB/oct roll-off. The four recursions (two stages, two
      // channels) run in one loop, where the CPU overlaps them; each stage's output is rounded to
      // float32 as when the stages ran as separate passes.
      const a = this.colour
      let l1 = this.l1,
        l2 = this.l2,
        r1 = this.r1,
        r2 = this.r2
      for (let i = from; i < to; i++) {
        l1 += a * ((l[i] as number) - l1)
        r1 += a * ((r[i] as number) - r1)
        l2 += a * (Math.fround(l1) - l2)
        r2 += a * (Math.fround(r1) - r2)
        l[i] = l2
        r[i] = r2
      }
      this.l1 = l1
      this.l2 = l2
      this.r1 = r1
      this.r2 = r2
    }
    // Nothing above 16 kHz: the MP3 encoder drops it anyway, and leaving it in makes the
    // decoded waveform overshoot the limiter's ceiling on bright transients.
    biquadRun(l, from, to, this.air, this.airL)
    biquadRun(r, from, to, this.air, this.airR)
    // DC and sub-rumble removal (20 Hz high-pass).
    const hp = this.hp
    let dl = this.dl
    let dr = this.dr
    for (let i = from; i < to; i++) {
      dl += hp * ((l[i] as number) - dl)
      dr += hp * ((r[i] as number) - dr)
      l[i] = (l[i] as number) - dl
      r[i] = (r[i] as number) - dr
    }
    this.dl = dl
    this.dr = dr
    if (o.crackle > 0 && this.crackle) {
      const noise = this.noise
      let hiss = this.hiss
      for (let i = from; i < to; i++) {
        hiss += 0.1 * (noise.next() - hiss)
        const pop = noise.next() > 0.99985 ? noise.next() * 0.5 : 0
        const v = (hiss * 0.02 + pop) * o.crackle
        l[i] = (l[i] as number) + v
        r[i] = (r[i] as number) + v
      }
      this.hiss = hiss
    }
  }
}

/** The fade in (256 samples, against a click) and the fade out, as a factor at sample `i` of `n`. */
function fadeAt(i: number, n: number, fadeOut: number): number {
  const fi = Math.min(n, 256)
  const fo = Math.min(n, Math.round(fadeOut * SR))
  let f = i < fi ? i / fi : 1
  const fromEnd = n - 1 - i
  if (fromEnd < fo) {
    const g = fromEnd / fo
    f = f * g * g
  }
  return f
}

/** How far ahead the master hears the mix before it decides its loudness gain. */
export const LOUDNESS_WINDOW = Math.round(1 * SR)

/** How fast the master's gain rides toward what it learns as the take goes on: 0.5 dB a second. */
const RIDE = Math.pow(10, 0.5 / 20 / SR)

/** The loudness steps' length (BS.1770's 100 ms). */
const LOUDNESS_STEP = Math.round(0.1 * SR)

/**
 * The master, run forward (decision 0129): colour, a loudness gain, fades and the look-ahead
 * limiter. The gain is first decided from the mix's first `window` samples (the whole take when it
 * is no longer) and `aheadDb(to)`, what the score says the whole take is louder than its first
 * `to` samples, made up for what the limiter takes; from then on the master measures the mix it
 * has heard and what its limiter took, and rides the gain toward what that says, at most 0.5 dB a
 * second. Each block of the mix is mastered as soon as it is given, one limiter block (64 samples)
 * behind, so the encoder can start on the take's first seconds.
 */
export class Mastering {
  private readonly colour: MasterColour
  private readonly limiter: Limiter
  private readonly gains: Float32Array
  /** The loudness gain at each sample, kept for the trace. */
  private readonly ride: Float32Array | null
  private readonly heard: StereoLoudness
  private readonly out: StereoLoudness
  /** Per loudness step: the sum of the squared gain (fades included) and how many samples had it. */
  private readonly stepGain: Float64Array
  private readonly stepCount: Float64Array
  private readonly n: number
  private gain: number | null = null
  /** What the limiter took off the opening, in dB, until the output says. */
  private openingLoss = 0
  private colouredTo = 0
  private gainedTo = 0
  private limitedTo = 0
  private readonly l: Float32Array
  private readonly r: Float32Array
  private readonly o: MasterOptions
  private readonly window: number
  private readonly aheadDb: (to: number) => number

  constructor(
    l: Float32Array,
    r: Float32Array,
    o: MasterOptions,
    trace: MasterTrace | null,
    window: number,
    aheadDb: (to: number) => number
  ) {
    this.l = l
    this.r = r
    this.o = o
    this.window = window
    this.aheadDb = aheadDb
    this.n = l.length
    this.colour = new MasterColour(o, true)
    this.gains = trace?.limiter ?? new Float32Array(this.n)
    this.ride = trace === null ? null : new Float32Array(this.n)
    this.limiter = new Limiter(l, r, CEILING, this.gains)
    this.heard = new StereoLoudness(this.n)
    this.out = new StereoLoudness(this.n)
    this.stepGain = new Float64Array(Math.ceil(this.n / LOUDNESS_STEP))
    this.stepCount = new Float64Array(this.stepGain.length)
    if (trace !== null) trace.gain = 1
  }

  /** The mix is final up to sample `to`: masters what it can; returns the index up to which the output is final. */
  run(to: number): number {
    const { l, r, n } = this
    if (to > this.colouredTo) {
      this.colour.run(l, r, this.colouredTo, to)
      this.heard.add(l, r, this.colouredTo, to)
      this.colouredTo = to
    }
    if (this.gain === null) {
      if (this.colouredTo < Math.min(n, this.window)) return 0
      this.gain = this.decide(this.colouredTo)
    }
    const target = this.target()
    let g = this.gain
    const up = target > g
    for (let i = this.gainedTo; i < this.colouredTo; i++) {
      if (up) g = Math.min(target, g * RIDE)
      else g = Math.max(target, g / RIDE)
      const f = g * fadeAt(i, n, this.o.fadeOut)
      l[i] = (l[i] as number) * f
      r[i] = (r[i] as number) * f
      if (this.ride !== null) this.ride[i] = g
      const b = Math.floor(i / LOUDNESS_STEP)
      this.stepGain[b] = (this.stepGain[b] as number) + f * f
      this.stepCount[b] = (this.stepCount[b] as number) + 1
    }
    this.gain = g
    this.gainedTo = this.colouredTo
    const limited = this.limiter.run(this.gainedTo)
    this.out.add(l, r, this.limitedTo, limited)
    // The trace holds the whole gain at each sample: loudness times limiter (the fades are replayed apart).
    if (this.ride !== null)
      for (let i = this.limitedTo; i < limited; i++)
        this.gains[i] = (this.gains[i] as number) * (this.ride[i] as number)
    this.limitedTo = limited
    return limited
  }

  /**
   * The gain that brings the take to its loudness as far as the master can tell now: the mix heard
   * so far with what the score says the rest adds, and what the limiter has taken so far made up.
   */
  private target(): number {
    const { n, o } = this
    const heard = this.heard.integrated() + (this.colouredTo < n ? this.aheadDb(this.colouredTo) : 0)
    if (!Number.isFinite(heard)) return this.gain ?? 1
    const gained = this.heard.integrated((b) => {
      const count = this.stepCount[b] as number
      return count > 0 ? Math.sqrt((this.stepGain[b] as number) / count) : 0
    }, this.limitedTo)
    const limited = this.out.integrated()
    const loss = Number.isFinite(gained) && Number.isFinite(limited) ? Math.max(0, gained - limited) : this.openingLoss
    return Math.min(MAX_GAIN, Math.pow(10, (o.targetLufs - heard + loss) / 20))
  }

  /**
   * The first gain, from the mix's first `w` samples: loudness as listeners' players measure it
   * (BS.1770 integrated, gated), corrected by what the score says the rest adds, capped so that a
   * (nearly) silent render is not blown up into noise; then made up once for what the limiter
   * takes off the opening.
   */
  private decide(w: number): number {
    const { l, r, n, o } = this
    const ahead = w < n ? this.aheadDb(w) : 0
    const lufs = integratedLoudness(l.subarray(0, w), r.subarray(0, w)) + ahead
    const gain = Number.isFinite(lufs) ? Math.min(MAX_GAIN, Math.pow(10, (o.targetLufs - lufs) / 20)) : 1
    const dl = new Float32Array(w)
    const dr = new Float32Array(w)
    for (let i = 0; i < w; i++) {
      const f = gain * fadeAt(i, n, o.fadeOut)
      dl[i] = (l[i] as number) * f
      dr[i] = (r[i] as number) * f
    }
    limit(dl, dr, CEILING)
    const after = integratedLoudness(dl, dr) + ahead
    const shortfall = o.targetLufs - after
    if (!Number.isFinite(after) || shortfall <= 0.1 || gain >= MAX_GAIN) return gain
    this.openingLoss = shortfall
    return gain * Math.min(MAX_GAIN / gain, Math.pow(10, shortfall / 20))
  }
}

/**
 * Masters a stem with the mix's trace: the same colour (crackle only where asked), then the mix's
 * gain at every sample and its fades. No clamp here: a stem may peak where the mix did not, and
 * clamping it would break the sum.
 */
export function master(
  l: Float32Array,
  r: Float32Array,
  o: MasterOptions,
  mode: { readonly replay: MasterTrace; readonly crackle: boolean }
): void {
  const n = l.length
  new MasterColour(o, mode.crackle).run(l, r, 0, n)
  const { gain, limiter } = mode.replay
  for (let i = 0; i < n; i++) {
    const f = gain * fadeAt(i, n, o.fadeOut) * (limiter[i] as number)
    l[i] = (l[i] as number) * f
    r[i] = (r[i] as number) * f
  }
}

/**
 * Look-ahead peak limiter, run forward: the gain needed for each 64-sample block is taken as the
 * minimum over this block and the next, so the gain is already down when a peak arrives; it
 * recovers with a 120 ms release. A final clamp guards rounding. `gains`, when given, receives
 * the gain applied at each sample.
 */
class Limiter {
  private block = 0
  private g = 1
  private needNext = 1
  private readonly rel = 1 - Math.exp(-INV_SR / 0.12)

  private readonly l: Float32Array
  private readonly r: Float32Array
  private readonly ceiling: number
  private readonly gains: Float32Array | undefined

  constructor(l: Float32Array, r: Float32Array, ceiling: number, gains?: Float32Array) {
    this.l = l
    this.r = r
    this.ceiling = ceiling
    this.gains = gains
  }

  /** The signal is given up to sample `to`: limits every block whose next block is given too; returns the index limited up to. */
  run(to: number): number {
    const { l, r, ceiling, gains, rel } = this
    const n = l.length
    const B = 64
    for (;;) {
      const start = this.block * B
      if (start >= n) return n
      const end = Math.min(n, start + B)
      const nextEnd = Math.min(n, end + B)
      if (end > to || (end < n && nextEnd > to)) return start
      const own = this.block === 0 ? this.need(start, end) : this.needNext
      const next = end < n ? this.need(end, nextEnd) : 1
      this.needNext = next
      const target = Math.min(own, next)
      // Attack: ramp linearly down across this block to reach the target by the next one;
      // otherwise release exponentially back toward the target.
      const stepDown = target < this.g ? (target - this.g) / B : 0
      let g = this.g
      for (let i = start; i < end; i++) {
        if (stepDown < 0) g += stepDown
        else g += rel * (target - g)
        // Never more gain than this block's own peak allows.
        // biome-ignore lint/complexity/useMathMinMax: not the same for NaN (this gives own, Math.min NaN) nor for a -0 gain, and the renders are held sample for sample.
        const gg = g < own ? g : own
        if (gains !== undefined) gains[i] = gg
        let x = (l[i] as number) * gg
        let y = (r[i] as number) * gg
        if (x > ceiling) x = ceiling
        else if (x < -ceiling) x = -ceiling
        if (y > ceiling) y = ceiling
        else if (y < -ceiling) y = -ceiling
        l[i] = x
        r[i] = y
      }
      this.g = g
      this.block++
    }
  }

  private need(from: number, to: number): number {
    let peak = 0
    for (let i = from; i < to; i++) {
      const a = Math.abs(this.l[i] as number)
      const c = Math.abs(this.r[i] as number)
      if (a > peak) peak = a
      if (c > peak) peak = c
    }
    // Float32, as the whole-take limiter kept its needs.
    return Math.fround(peak > this.ceiling ? this.ceiling / peak : 1)
  }
}

/** The look-ahead peak limiter over a whole signal at once. */
export function limit(l: Float32Array, r: Float32Array, ceiling: number, gains?: Float32Array): void {
  new Limiter(l, r, ceiling, gains).run(l.length)
}
