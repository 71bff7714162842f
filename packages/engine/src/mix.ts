// The mixer: buses, reverb, sidechain pump, master colour, loudness and a look-ahead
// peak limiter. Output peaks never exceed CEILING, so the MP3 never clips on decode.

import { INV_SR, Noise, SR, biquadLowpassInPlace, onePoleCoef } from "./synth/dsp.ts"
import { integratedLoudness } from "./synth/loudness.ts"

/** -2 dBFS: leaves room for the MP3 encoder's overshoots on bright transients. */
export const CEILING = 0.8

/** The most the master will raise a mix, so that a (nearly) silent render stays silent. */
const MAX_GAIN = 100

/** Where every take lands: the loudness streaming services normalise to. */
export const TARGET_LUFS = -14

/**
 * Freeverb (Jezar's public-domain design), stereo, fed by a mono send. Each comb and
 * all-pass runs as its own pass over the whole signal: tight single-buffer loops are
 * several times faster in V8 than one loop juggling twelve delay lines.
 */
export function reverb(send: Float32Array, outL: Float32Array, outR: Float32Array, size: number, wet: number): void {
  // Runs at half the sample rate (delay lengths halved): a reverb tail has little above
  // 8 kHz after damping, and this halves the cost of the most expensive mix stage.
  const combTunings = [558, 594, 638, 678, 711, 745]
  const apTunings = [278, 220, 170]
  const spread = 11
  const feedback = 0.7 + 0.28 * size
  const damp = 0.4
  const n = send.length
  const h = Math.ceil(n / 2)
  const acc = new Float32Array(h)
  const input = new Float32Array(h)
  for (let i = 0; i < h; i++) input[i] = ((send[2 * i] as number) + (send[2 * i + 1] ?? 0)) * 0.0075
  const gain = (wet * 8) / combTunings.length
  for (const [out, extra] of [
    [outL, 0],
    [outR, spread]
  ] as const) {
    acc.fill(0)
    // Three combs per pass: each comb's damping filter is a chain of dependent multiplies, and
    // three independent chains in one loop cost little more than one. Each sample still adds
    // comb k before comb k + 1 with float32 rounding in between: bit-identical to one pass each.
    for (let c = 0; c < combTunings.length; c += 3) {
      const bufA = new Float32Array((combTunings[c] as number) + extra)
      const bufB = new Float32Array((combTunings[c + 1] as number) + extra)
      const bufC = new Float32Array((combTunings[c + 2] as number) + extra)
      const lenA = bufA.length
      const lenB = bufB.length
      const lenC = bufC.length
      let ja = 0,
        jb = 0,
        jc = 0
      let sa = 0,
        sb = 0,
        sc = 0
      for (let i = 0; i < h; i++) {
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
    }
    for (const tuning of apTunings) {
      const buf = new Float32Array(tuning + extra)
      const len = buf.length
      let j = 0
      for (let i = 0; i < h; i++) {
        const x = acc[i] as number
        const bo = buf[j] as number
        buf[j] = x + bo * 0.5
        if (++j === len) j = 0
        acc[i] = bo - x
      }
    }
    // Back to full rate by linear interpolation.
    for (let i = 0; i < h; i++) {
      const a = (acc[i] as number) * gain
      const b = (i + 1 < h ? (acc[i + 1] as number) : 0) * gain
      const o = 2 * i
      out[o] = (out[o] as number) + a
      if (o + 1 < n) out[o + 1] = (out[o + 1] as number) + 0.5 * (a + b)
    }
  }
}

/** Ducks a stereo bus after each kick: the "pumping" of house and trance. */
export function sidechain(l: Float32Array, r: Float32Array, kicks: ReadonlyArray<number>, depth: number): void {
  let k = 0
  const release = 0.16
  // The envelope exp(-dt / release) starts exact at each kick's first sample, then advances by
  // a constant factor per sample: a multiply instead of an exp() per sample. The product drifts
  // from the exact value by under 1e-11 over the 0.5 s window, far below float32's resolution.
  const step = Math.exp(-INV_SR / release)
  let current = -1
  let decay = 0
  for (let i = 0; i < l.length; i++) {
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
 * What the master decided from the whole mix: its loudness gain and the limiter's gain at every
 * sample. Replaying it on each stem masters the stem exactly as the mix was, so that the stems
 * add up to the mix although loudness and limiting depend on the mix itself.
 */
export interface MasterTrace {
  gain: number
  readonly limiter: Float32Array
}

/** `record` fills the trace while mastering the mix; `replay` masters a stem with it (crackle only where asked). */
export type MasterMode = { readonly record: MasterTrace } | { readonly replay: MasterTrace; readonly crackle: boolean }

export function master(l: Float32Array, r: Float32Array, o: MasterOptions, mode?: MasterMode): void {
  const n = l.length
  const replay = mode !== undefined && "replay" in mode ? mode : null
  const record = mode !== undefined && "record" in mode ? mode.record : null
  // Stereo width via mid/side.
  if (o.width !== 1) {
    for (let i = 0; i < n; i++) {
      const m = ((l[i] as number) + (r[i] as number)) * 0.5
      const s = ((l[i] as number) - (r[i] as number)) * 0.5 * o.width
      l[i] = m + s
      r[i] = m - s
    }
  }
  if (o.lowpass > 0) {
    // Two one-pole stages: a gentle 12 dB/oct roll-off. The four recursions (two stages, two
    // channels) run in one loop, where the CPU overlaps them; each stage's output is rounded to
    // float32 as when the stages ran as separate passes, so the result is the same to the bit.
    const a = onePoleCoef(o.lowpass)
    let l1 = 0,
      l2 = 0,
      r1 = 0,
      r2 = 0
    for (let i = 0; i < n; i++) {
      l1 += a * ((l[i] as number) - l1)
      r1 += a * ((r[i] as number) - r1)
      l2 += a * (Math.fround(l1) - l2)
      r2 += a * (Math.fround(r1) - r2)
      l[i] = l2
      r[i] = r2
    }
  }
  // Nothing above 16 kHz: the MP3 encoder drops it anyway, and leaving it in makes the
  // decoded waveform overshoot the limiter's ceiling on bright transients.
  biquadLowpassInPlace(l, 16000)
  biquadLowpassInPlace(r, 16000)
  // DC and sub-rumble removal (20 Hz high-pass).
  const hp = onePoleCoef(20)
  let dl = 0
  let dr = 0
  for (let i = 0; i < n; i++) {
    dl += hp * ((l[i] as number) - dl)
    dr += hp * ((r[i] as number) - dr)
    l[i] = (l[i] as number) - dl
    r[i] = (r[i] as number) - dr
  }
  if (o.crackle > 0 && (replay === null || replay.crackle)) {
    const noise = new Noise(o.seed)
    let hiss = 0
    for (let i = 0; i < n; i++) {
      hiss += 0.1 * (noise.next() - hiss)
      const pop = noise.next() > 0.99985 ? noise.next() * 0.5 : 0
      const v = (hiss * 0.02 + pop) * o.crackle
      l[i] = (l[i] as number) + v
      r[i] = (r[i] as number) + v
    }
  }
  let gain: number
  if (replay !== null) gain = replay.replay.gain
  else {
    // Loudness as listeners' players measure it (BS.1770 integrated, gated), capped so that a
    // (nearly) silent render is not blown up into noise.
    const lufs = integratedLoudness(l, r)
    gain = Number.isFinite(lufs) ? Math.min(MAX_GAIN, Math.pow(10, (o.targetLufs - lufs) / 20)) : 1
  }
  for (let i = 0; i < n; i++) {
    l[i] = (l[i] as number) * gain
    r[i] = (r[i] as number) * gain
  }
  // Fade in (avoid a click) and fade out.
  const fi = Math.min(n, 256)
  for (let i = 0; i < fi; i++) {
    l[i] = (l[i] as number) * (i / fi)
    r[i] = (r[i] as number) * (i / fi)
  }
  const fo = Math.min(n, Math.round(o.fadeOut * SR))
  for (let i = 0; i < fo; i++) {
    const g = i / fo
    const j = n - 1 - i
    l[j] = (l[j] as number) * g * g
    r[j] = (r[j] as number) * g * g
  }
  if (replay === null) {
    const gains = record?.limiter ?? new Float32Array(n)
    const dryL = l.slice()
    const dryR = r.slice()
    limit(l, r, CEILING, gains)
    // The limiter takes loudness off a dense mix: make up what it took, once, and limit again.
    const after = integratedLoudness(l, r)
    const shortfall = o.targetLufs - after
    if (Number.isFinite(after) && shortfall > 0.1 && gain < MAX_GAIN) {
      const extra = Math.min(MAX_GAIN / gain, Math.pow(10, shortfall / 20))
      for (let i = 0; i < n; i++) {
        l[i] = (dryL[i] as number) * extra
        r[i] = (dryR[i] as number) * extra
      }
      limit(l, r, CEILING, gains)
      if (record !== null) record.gain = gain * extra
      // Stems replay gain, fades and limiter in that order; the fades' factors commute with it.
    } else if (record !== null) record.gain = gain
  } else {
    // No clamp here: a stem may peak where the mix did not, and clamping it would break the sum.
    const g = replay.replay.limiter
    for (let i = 0; i < n; i++) {
      l[i] = (l[i] as number) * (g[i] as number)
      r[i] = (r[i] as number) * (g[i] as number)
    }
  }
}

/**
 * Look-ahead peak limiter: the gain needed for each 64-sample block is taken as the
 * minimum over this block and the next, so the gain is already down when a peak
 * arrives; it recovers with a 120 ms release. A final clamp guards rounding.
 * `gains`, when given, receives the gain applied at each sample.
 */
export function limit(l: Float32Array, r: Float32Array, ceiling: number, gains?: Float32Array): void {
  const n = l.length
  const B = 64
  const blocks = Math.ceil(n / B)
  const need = new Float32Array(blocks + 1).fill(1)
  for (let b = 0; b < blocks; b++) {
    let peak = 0
    const end = Math.min(n, (b + 1) * B)
    for (let i = b * B; i < end; i++) {
      const a = Math.abs(l[i] as number)
      const c = Math.abs(r[i] as number)
      if (a > peak) peak = a
      if (c > peak) peak = c
    }
    need[b] = peak > ceiling ? ceiling / peak : 1
  }
  const rel = 1 - Math.exp(-INV_SR / 0.12)
  let g = 1
  for (let b = 0; b < blocks; b++) {
    const target = Math.min(need[b] as number, need[b + 1] as number)
    const end = Math.min(n, (b + 1) * B)
    // Attack: ramp linearly down across this block to reach the target by the next one;
    // otherwise release exponentially back toward the target.
    const stepDown = target < g ? (target - g) / B : 0
    const own = need[b] as number
    for (let i = b * B; i < end; i++) {
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
  }
}
