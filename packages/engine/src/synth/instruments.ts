// Pitched instruments. Each note is synthesized straight into the part's mono buffer
// (additively), so a part costs one full-length buffer no matter how many notes it has.

import type { NoteEvent } from "../compose.ts"
import type { Instrument } from "../genres.ts"
import { INV_SR, type Noise, SR, midiHz, polyBlep, softClip, tsin } from "./dsp.ts"

export type BassVoice = "electric" | "synth" | "sub" | "upright"

export interface InstrumentContext {
  readonly noise: Noise
  /** 0..1: detune and inharmonic colour grow with weirdness. */
  readonly weird: number
  readonly bass: BassVoice
  /** 0..1 brightness (energy of the genre and the model's richness). */
  readonly bright: number
}

const CONTROL = 32

const coefs: [number, number, number] = [1, 0, 0]
/**
 * Two-pole resonant low-pass state-variable filter (TPT form): its coefficients (a1, a2, a3)
 * for a cutoff and Q, set once per control block. The filter itself runs inline in each
 * instrument's loop with its two state variables in locals:
 *   v3 = x - ic2; v1 = a1 ic1 + a2 v3; v2 = ic2 + a2 ic1 + a3 v3; ic1 = 2 v1 - ic1; ic2 = 2 v2 - ic2; out = v2.
 * The returned tuple is reused by every call.
 */
function svfCoefs(hz: number, q: number): [number, number, number] {
  const g = Math.tan((Math.PI * Math.min(hz, SR * 0.45)) / SR)
  const k = 1 / q
  const a1 = 1 / (1 + g * (g + k))
  const a2 = g * a1
  coefs[0] = a1
  coefs[1] = a2
  coefs[2] = g * a2
  return coefs
}

/** Release tail (seconds) each instrument rings on after its note-off. */
export function releaseOf(inst: Instrument): number {
  switch (inst) {
    case "pad":
      return 1.2
    case "strings":
      return 0.5
    case "piano":
    case "epiano":
    case "bells":
      return 0.6
    case "guitar":
      return 0.4
    case "organ":
      return 0.08
    default:
      return 0.2
  }
}

export function renderNote(inst: Instrument, n: NoteEvent, buf: Float32Array, ctx: InstrumentContext): void {
  const start = Math.max(0, Math.round(n.start * SR))
  const hold = Math.max(1, Math.round(n.dur * SR))
  const rel = Math.round(releaseOf(inst) * SR)
  const end = Math.min(buf.length, start + hold + rel)
  if (end <= start) return
  const f = midiHz(n.pitch)
  switch (inst) {
    case "piano":
      return piano(buf, start, hold, end, f, n.vel, ctx)
    case "epiano":
      return epiano(buf, start, hold, end, f, n.vel)
    case "guitar":
      return pluckString(buf, start, hold, end, f, n.vel, ctx, false)
    case "eguitar":
      return pluckString(buf, start, hold, end, f, n.vel, ctx, true)
    case "strings":
      return saws(buf, start, hold, end, f, n.vel, ctx, 0.18, 0.35, 2, 2600)
    case "pad":
      return saws(buf, start, hold, end, f, n.vel, ctx, 0.5, 1.1, 2, 1400)
    case "synth":
      return lead(buf, start, hold, end, f, n.vel, ctx)
    case "brass":
      return brass(buf, start, hold, end, f, n.vel, ctx)
    case "organ":
      return organ(buf, start, hold, end, f, n.vel)
    case "flute":
      return flute(buf, start, hold, end, f, n.vel, ctx)
    case "bells":
      return bell(buf, start, end, f, n.vel, ctx)
    case "pluck":
      return pluckSynth(buf, start, hold, end, f, n.vel, ctx)
    case "bass":
      return bass(buf, start, hold, end, f, n.vel, ctx)
    case "drums":
      return
  }
}

/** Per piano partial: start amplitude, cos and sin of the step, decay per sample while held, last sample. */
const PARTIAL = new Float64Array(6 * 5)

/** Piano: inharmonic partials as damped rotators (no sin calls per sample), plus a hammer thump. */
function piano(
  buf: Float32Array,
  start: number,
  hold: number,
  end: number,
  f: number,
  vel: number,
  ctx: InstrumentContext
): void {
  const partials = f > 1200 ? 3 : 6
  const baseDecay = 2.6 * Math.pow(220 / f, 0.45)
  const amp = 0.32 * vel
  const rOff = Math.exp(-INV_SR / 0.09)
  let count = 0
  for (let k = 1; k <= partials; k++) {
    const fk = k * f * Math.sqrt(1 + 0.0004 * k * k)
    if (fk > SR * 0.45) break
    const w = 2 * Math.PI * fk * INV_SR
    const tau = baseDecay / (1 + 0.5 * (k - 1))
    const r = Math.exp(-INV_SR / tau)
    // Stop once the partial has decayed by 80 dB: upper partials die long before the note ends.
    const audible = start + Math.ceil(Math.log(1e-4) / Math.log(r))
    const o = count * 5
    PARTIAL[o] = amp * Math.pow(k, -1.1) * (0.6 + 0.4 * vel * (k < 3 ? 1 : ctx.bright))
    PARTIAL[o + 1] = Math.cos(w)
    PARTIAL[o + 2] = Math.sin(w)
    PARTIAL[o + 3] = r
    PARTIAL[o + 4] = Math.min(end, audible)
    count++
  }
  // Two partials per pass: each rotator is a chain of dependent multiplies, and two independent
  // chains in one loop run in about the time of one. Each sample still adds partial k before
  // partial k + 1, rounding in between, so the sum is the same to the bit as one pass each.
  const held = start + hold
  for (let p = 0; p < count; p += 2) {
    const o = p * 5
    if (p + 1 === count) {
      rotator(
        buf,
        start,
        PARTIAL[o + 4] as number,
        held,
        PARTIAL[o] as number,
        0,
        PARTIAL[o + 1] as number,
        PARTIAL[o + 2] as number,
        PARTIAL[o + 3] as number,
        rOff
      )
      continue
    }
    let x1 = PARTIAL[o] as number
    const c1 = PARTIAL[o + 1] as number
    const s1 = PARTIAL[o + 2] as number
    const r1 = PARTIAL[o + 3] as number
    const stop1 = PARTIAL[o + 4] as number
    let x2 = PARTIAL[o + 5] as number
    const c2 = PARTIAL[o + 6] as number
    const s2 = PARTIAL[o + 7] as number
    const r2 = PARTIAL[o + 8] as number
    const stop2 = PARTIAL[o + 9] as number
    let y1 = 0
    let y2 = 0
    const both = Math.min(stop1, stop2)
    const heldBoth = Math.min(both, held)
    let i = start
    for (; i < heldBoth; i++) {
      const nx1 = r1 * (x1 * c1 - y1 * s1)
      y1 = r1 * (x1 * s1 + y1 * c1)
      x1 = nx1
      const nx2 = r2 * (x2 * c2 - y2 * s2)
      y2 = r2 * (x2 * s2 + y2 * c2)
      x2 = nx2
      buf[i] = Math.fround((buf[i] as number) + y1) + y2
    }
    for (; i < both; i++) {
      const nx1 = rOff * (x1 * c1 - y1 * s1)
      y1 = rOff * (x1 * s1 + y1 * c1)
      x1 = nx1
      const nx2 = rOff * (x2 * c2 - y2 * s2)
      y2 = rOff * (x2 * s2 + y2 * c2)
      x2 = nx2
      buf[i] = Math.fround((buf[i] as number) + y1) + y2
    }
    if (stop1 > both) rotator(buf, i, stop1, held, x1, y1, c1, s1, r1, rOff)
    else if (stop2 > both) rotator(buf, i, stop2, held, x2, y2, c2, s2, r2, rOff)
  }
  // Hammer: a few ms of low-passed noise.
  const hn = Math.min(end, start + 220)
  let lp = 0
  for (let i = start; i < hn; i++) {
    lp += 0.3 * (ctx.noise.next() - lp)
    buf[i] = (buf[i] as number) + lp * 0.08 * vel * (1 - (i - start) / 220)
  }
}

/** One damped rotator from sample `from` (state x, y) to `to`: decay r before `held`, rOff after. */
function rotator(
  buf: Float32Array,
  from: number,
  to: number,
  held: number,
  x: number,
  y: number,
  c: number,
  s: number,
  r: number,
  rOff: number
): void {
  let i = from
  const h = Math.min(to, held)
  for (; i < h; i++) {
    const nx = r * (x * c - y * s)
    y = r * (x * s + y * c)
    x = nx
    buf[i] = (buf[i] as number) + y
  }
  for (; i < to; i++) {
    const nx = rOff * (x * c - y * s)
    y = rOff * (x * s + y * c)
    x = nx
    buf[i] = (buf[i] as number) + y
  }
}

/** Electric piano: two-operator FM with a fast-decaying index (the tine's bark). */
function epiano(buf: Float32Array, start: number, hold: number, end: number, f: number, vel: number): void {
  const dt = f * INV_SR
  const decay = Math.exp(-INV_SR / (1.8 * Math.pow(220 / f, 0.3)))
  const idxDecay = Math.exp(-INV_SR / 0.12)
  const off = Math.exp(-INV_SR / 0.08)
  let env = 0.3 * vel
  let index = 1.2 + vel
  let ph = 0
  let tremPh = 0
  for (let i = start; i < end; i++) {
    env *= i - start < hold ? decay : off
    index *= idxDecay
    ph += dt
    if (ph >= 1) ph -= 1
    tremPh += 4.5 * INV_SR
    const mod = tsin(ph) * (index + 0.15)
    const out = tsin(ph + mod * 0.16) * env * (1 + 0.08 * tsin(tremPh))
    buf[i] = (buf[i] as number) + out
  }
}

const ksLine = new Float32Array(4096)
/** Karplus-Strong plucked string; the electric variant is overdriven and cabinet-filtered later. */
function pluckString(
  buf: Float32Array,
  start: number,
  hold: number,
  end: number,
  f: number,
  vel: number,
  ctx: InstrumentContext,
  electric: boolean
): void {
  const period = SR / f
  const len = Math.min(ksLine.length - 1, Math.max(2, Math.floor(period)))
  const frac = period - len
  // Excite with noise, low-passed more for soft notes (softer pick).
  let lp = 0
  const bright = 0.25 + 0.6 * vel
  for (let i = 0; i < len; i++) {
    lp += bright * (ctx.noise.next() - lp)
    ksLine[i] = lp
  }
  let idx = 0
  let prev = 0
  const damp = electric ? 0.9985 : 0.996 - (f > 600 ? 0.004 : 0)
  const mute = 0.96
  const amp = (electric ? 0.5 : 0.45) * vel
  for (let i = start; i < end; i++) {
    const cur = ksLine[idx] as number
    const nextIdx = idx + 1 === len ? 0 : idx + 1
    const nxt = ksLine[nextIdx] as number
    // Averaging filter with a fractional-delay tweak keeps long strings in tune.
    const avg = (cur * (1 - frac * 0.5) + nxt * (1 + frac * 0.5)) * 0.5
    const v = (i - start < hold ? damp : mute) * (0.5 * avg + 0.5 * prev)
    prev = avg
    ksLine[idx] = v
    idx = nextIdx
    buf[i] = (buf[i] as number) + cur * amp
  }
}

/** Detuned saw ensemble through a low-pass: strings (fewer, brighter, faster) and pads. */
function saws(
  buf: Float32Array,
  start: number,
  hold: number,
  end: number,
  f: number,
  vel: number,
  ctx: InstrumentContext,
  attack: number,
  release: number,
  voices: 2,
  cutoff: number
): void {
  // The busiest loop of the engine (pads and strings hold long chords): oscillators and filter
  // state live in locals, the detune is worked out once per control block.
  const det = 0.004 + 0.01 * ctx.weird
  const dt0 = f * INV_SR
  const dt1 = f * (1 + det) * INV_SR
  let p0 = 0
  let p1 = 0.33
  const att = Math.max(1, attack * SR)
  const relK = Math.exp(-INV_SR / (release / 4))
  const amp = (0.16 / voices) * vel * 2
  let ic1 = 0
  let ic2 = 0
  let env = 0
  let vib = 0
  for (let i = start; i < end; i += CONTROL) {
    const lfo = tsin(vib)
    const [a1, a2, a3] = svfCoefs(cutoff * (0.6 + 0.5 * vel) * (1 + 0.1 * lfo), 0.8)
    const d0 = dt0 * (1 + 0.0015 * lfo)
    const d1 = dt1 * (1 + 0.0015 * lfo)
    const stop = Math.min(end, i + CONTROL)
    for (let j = i; j < stop; j++) {
      const t = j - start
      if (t < hold) env = t < att ? t / att : env + (1 - env) * 0.0005
      else env *= relK
      p0 += d0
      if (p0 >= 1) p0 -= 1
      p1 += d1
      if (p1 >= 1) p1 -= 1
      let x = 0
      x += 2 * p0 - 1 - polyBlep(p0, d0)
      x += 2 * p1 - 1 - polyBlep(p1, d1)
      // The state-variable low-pass (see svfCoefs), inline.
      const v3 = x - ic2
      const v1 = a1 * ic1 + a2 * v3
      const v2 = ic2 + a2 * ic1 + a3 * v3
      ic1 = 2 * v1 - ic1
      ic2 = 2 * v2 - ic2
      buf[j] = (buf[j] as number) + v2 * env * amp
    }
    vib += (CONTROL * 5) / SR
  }
}

/** Lead synth: saw + square an octave down, filter envelope, delayed vibrato. */
function lead(
  buf: Float32Array,
  start: number,
  hold: number,
  end: number,
  f: number,
  vel: number,
  ctx: InstrumentContext
): void {
  const dt1 = f * INV_SR
  let p1 = 0
  let p2 = 0.5
  let ic1 = 0
  let ic2 = 0
  let env = 0
  const amp = 0.22 * vel
  const relK = Math.exp(-INV_SR / 0.05)
  let vib = 0
  for (let i = start; i < end; i += CONTROL) {
    const t = (i - start) * INV_SR
    const fenv = Math.exp(-t / 0.25)
    const [a1, a2, a3] = svfCoefs(700 + 3800 * ctx.bright * vel * (0.35 + fenv), 1.6)
    const vibDepth = Math.min(1, Math.max(0, (t - 0.25) * 3)) * 0.006
    const stop = Math.min(end, i + CONTROL)
    for (let j = i; j < stop; j++) {
      const k = j - start
      if (k < hold) env += (1 - env) * 0.01
      else env *= relK
      // Vibrato only on held notes; short stabs and arpeggios skip the LFO entirely.
      const d = vibDepth > 0 ? dt1 * (1 + vibDepth * tsin(vib)) : dt1
      vib += 5.5 * INV_SR
      p1 += d
      if (p1 >= 1) p1 -= 1
      p2 += d * 0.5
      if (p2 >= 1) p2 -= 1
      const saw = 2 * p1 - 1 - polyBlep(p1, d)
      // (p2 + 0.5) % 1, exactly, without the modulo.
      let q2 = p2 + 0.5
      if (q2 >= 1) q2 -= 1
      const sq = (p2 < 0.5 ? 1 : -1) + polyBlep(p2, d * 0.5) - polyBlep(q2, d * 0.5)
      const v3 = saw + 0.5 * sq - ic2
      const v1 = a1 * ic1 + a2 * v3
      const v2 = ic2 + a2 * ic1 + a3 * v3
      ic1 = 2 * v1 - ic1
      ic2 = 2 * v2 - ic2
      buf[j] = (buf[j] as number) + v2 * env * amp
    }
  }
}

/** Brass: saw pair whose filter opens with the breath, then settles; slight pitch scoop. */
function brass(
  buf: Float32Array,
  start: number,
  hold: number,
  end: number,
  f: number,
  vel: number,
  ctx: InstrumentContext
): void {
  let p1 = 0
  let p2 = 0.3
  let ic1 = 0
  let ic2 = 0
  let env = 0
  const amp = 0.2 * vel
  const relK = Math.exp(-INV_SR / 0.06)
  let vib = 0
  for (let i = start; i < end; i += CONTROL) {
    const t = (i - start) * INV_SR
    const open = Math.min(1, t / 0.06) * (0.7 + 0.3 * Math.exp(-t / 0.3))
    const [a1, a2, a3] = svfCoefs(300 + 3000 * open * (0.5 + 0.5 * vel) * (0.6 + 0.4 * ctx.bright), 1.1)
    const scoop = 1 - 0.02 * Math.exp(-t / 0.03)
    const stop = Math.min(end, i + CONTROL)
    for (let j = i; j < stop; j++) {
      const k = j - start
      if (k < hold) env += (1 - env) * 0.004
      else env *= relK
      vib += 5 * INV_SR
      const d = f * scoop * INV_SR * (1 + 0.004 * Math.min(1, t * 2) * tsin(vib))
      p1 += d
      if (p1 >= 1) p1 -= 1
      p2 += d * 1.003
      if (p2 >= 1) p2 -= 1
      const s = 2 * p1 - 1 - polyBlep(p1, d) + 2 * p2 - 1 - polyBlep(p2, d)
      const v3 = s - ic2
      const v1 = a1 * ic1 + a2 * v3
      const v2 = ic2 + a2 * ic1 + a3 * v3
      ic1 = 2 * v1 - ic1
      ic2 = 2 * v2 - ic2
      buf[j] = (buf[j] as number) + v2 * env * amp
    }
  }
}

/** Drawbar organ: sine partials 1, 2, 3, 4 and 8 with a rotary-speaker tremolo. */
function organ(buf: Float32Array, start: number, hold: number, end: number, f: number, vel: number): void {
  const dt = f * INV_SR
  let ph = 0
  let rot = 0
  let env = 0
  const relK = Math.exp(-INV_SR / 0.02)
  const amp = 0.09 * (0.7 + 0.3 * vel)
  for (let i = start; i < end; i++) {
    const k = i - start
    if (k < hold) env += (1 - env) * 0.02
    else env *= relK
    ph += dt
    if (ph >= 1) ph -= 1
    rot += 6.2 * INV_SR
    const s = tsin(ph) + 0.8 * tsin(2 * ph) + 0.5 * tsin(3 * ph) + 0.35 * tsin(4 * ph) + 0.15 * tsin(8 * ph)
    const click = k < 400 ? 0.6 * tsin(5 * ph) * (1 - k / 400) : 0
    buf[i] = (buf[i] as number) + (s + click) * env * amp * (1 + 0.15 * tsin(rot))
  }
}

/** Flute: near-sine with a touch of 2nd/3rd harmonic, breath noise and vibrato. */
function flute(
  buf: Float32Array,
  start: number,
  hold: number,
  end: number,
  f: number,
  vel: number,
  ctx: InstrumentContext
): void {
  let ph = 0
  let env = 0
  let vib = 0
  let nlp = 0
  const relK = Math.exp(-INV_SR / 0.06)
  const amp = 0.28 * vel
  for (let i = start; i < end; i++) {
    const k = i - start
    if (k < hold) env += (1 - env) * 0.0012
    else env *= relK
    vib += 5 * INV_SR
    const depth = Math.min(1, k * INV_SR * 2) * 0.005
    ph += f * INV_SR * (1 + depth * tsin(vib))
    if (ph >= 1) ph -= 1
    nlp += 0.2 * (ctx.noise.next() - nlp)
    const s = tsin(ph) + 0.18 * tsin(2 * ph) + 0.06 * tsin(3 * ph) + nlp * (0.12 + 0.3 * Math.exp(-k / 3000))
    buf[i] = (buf[i] as number) + s * env * amp
  }
}

/** Bell: FM with a non-integer ratio, long ring, index decays faster than the amplitude. */
function bell(buf: Float32Array, start: number, end: number, f: number, vel: number, ctx: InstrumentContext): void {
  const ratio = 3.5 + ctx.weird * 0.9
  const dt = f * INV_SR
  const ampK = Math.exp(-INV_SR / 1.4)
  const idxK = Math.exp(-INV_SR / 0.4)
  let env = 0.2 * vel
  let index = 2.5
  let ph = 0
  const stop = Math.min(buf.length, Math.max(end, start + Math.round(2.5 * SR)))
  for (let i = start; i < stop; i++) {
    env *= ampK
    index *= idxK
    ph += dt
    if (ph >= 1) ph -= 1
    buf[i] = (buf[i] as number) + tsin(ph + index * 0.15 * tsin(ph * ratio)) * env
  }
}

/** Pluck synth: saw through a low-pass whose cutoff snaps shut (house/techno stabs, arps). */
function pluckSynth(
  buf: Float32Array,
  start: number,
  hold: number,
  end: number,
  f: number,
  vel: number,
  ctx: InstrumentContext
): void {
  const dt = f * INV_SR
  let p = 0
  let ic1 = 0
  let ic2 = 0
  const amp = 0.25 * vel
  const decay = Math.exp(-INV_SR / 0.18)
  let env = 1
  for (let i = start; i < end; i += CONTROL) {
    const t = (i - start) * INV_SR
    const [a1, a2, a3] = svfCoefs(300 + 5000 * ctx.bright * Math.exp(-t / 0.07), 2.2)
    const stop = Math.min(end, i + CONTROL)
    for (let j = i; j < stop; j++) {
      env *= j - start < hold ? decay : decay * decay
      p += dt
      if (p >= 1) p -= 1
      const v3 = 2 * p - 1 - polyBlep(p, dt) - ic2
      const v1 = a1 * ic1 + a2 * v3
      const v2 = ic2 + a2 * ic1 + a3 * v3
      ic1 = 2 * v1 - ic1
      ic2 = 2 * v2 - ic2
      buf[j] = (buf[j] as number) + v2 * env * amp
    }
  }
}

/** Bass voices: electric (finger), synth (filtered saw), sub (808 sine with drop), upright. */
function bass(
  buf: Float32Array,
  start: number,
  hold: number,
  end: number,
  f: number,
  vel: number,
  ctx: InstrumentContext
): void {
  const kind = ctx.bass
  let p = 0
  let ic1 = 0
  let ic2 = 0
  let env = 0
  const amp = 0.5 * vel
  const relK = Math.exp(-INV_SR / 0.03)
  const decay = Math.exp(-INV_SR / (kind === "upright" ? 0.5 : kind === "sub" ? 1.5 : kind === "electric" ? 1.0 : 3))
  for (let i = start; i < end; i += CONTROL) {
    const t = (i - start) * INV_SR
    const [a1, a2, a3] = svfCoefs(
      kind === "synth"
        ? 180 + 1400 * ctx.bright * Math.exp(-t / 0.12) * vel
        : kind === "electric"
          ? 500 + 900 * Math.exp(-t / 0.08)
          : 900,
      kind === "synth" ? 1.8 : kind === "electric" ? 0.9 : 0.7
    )
    const drop = kind === "sub" ? 1 + 0.6 * Math.exp(-t / 0.02) : 1
    const dt = f * drop * INV_SR
    const stop = Math.min(end, i + CONTROL)
    for (let j = i; j < stop; j++) {
      const k = j - start
      if (k < hold) env = k < 60 ? k / 60 : env * decay
      else env *= relK
      p += dt
      if (p >= 1) p -= 1
      let s: number
      if (kind === "sub") s = softClip(1.6 * tsin(p)) * 0.9
      else {
        let x: number
        if (kind === "synth") x = 2 * p - 1 - polyBlep(p, dt)
        else if (kind === "upright") x = tsin(p) + 0.3 * tsin(2 * p) + 0.1 * tsin(3 * p)
        else x = 0.8 * tsin(p) + 0.5 * (2 * p - 1 - polyBlep(p, dt))
        const v3 = x - ic2
        const v1 = a1 * ic1 + a2 * v3
        const v2 = ic2 + a2 * ic1 + a3 * v3
        ic1 = 2 * v1 - ic1
        ic2 = 2 * v2 - ic2
        s = v2
      }
      buf[j] = (buf[j] as number) + s * env * amp
    }
  }
}
