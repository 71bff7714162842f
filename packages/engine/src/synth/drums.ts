// Noise-and-oscillator drum kit. Each hit is synthesized into the stereo drum bus at
// its own pan position; the kit's character follows the genre (808 trap kick, tight
// metal kick, brushed folk snare).

import type { DrumHit, DrumKind } from "../compose.ts"
import { INV_SR, Noise, SR, lowpassInPlace, panGains, softClip, tsin } from "./dsp.ts"

export type KitFlavour = "acoustic" | "electronic" | "808" | "brush" | "metal"

const PAN: Readonly<Record<DrumKind, number>> = {
  kick: 0,
  snare: 0.05,
  clap: -0.05,
  hat: 0.35,
  ohat: 0.35,
  ride: -0.4,
  crash: -0.3,
  tom: 0.2,
  rim: 0.15,
  shaker: -0.45
}

export function renderDrums(
  hits: ReadonlyArray<DrumHit>,
  left: Float32Array,
  right: Float32Array,
  flavour: KitFlavour,
  noise: Noise
): void {
  for (const h of hits) {
    const start = Math.round(h.time * SR)
    if (start < 0 || start >= left.length) continue
    const [gl, gr] = panGains(PAN[h.kind])
    const v = h.vel
    switch (h.kind) {
      case "kick":
        kick(left, right, start, v, gl, gr, flavour, noise)
        break
      case "snare":
        snare(left, right, start, v, gl, gr, flavour, noise)
        break
      case "clap":
        clap(left, right, start, v, gl, gr, noise)
        break
      case "hat":
        metalNoise(left, right, start, v * 0.55, gl, gr, 0.035, noise)
        break
      case "ohat":
        metalNoise(left, right, start, v * 0.45, gl, gr, 0.22, noise)
        break
      case "shaker":
        metalNoise(left, right, start, v * 0.3, gl, gr, 0.05, noise)
        break
      case "ride":
        ride(left, right, start, v * 0.3, gl, gr, 0.6, noise)
        break
      case "crash":
        ride(left, right, start, v * 0.4, gl, gr, 1.2, noise)
        break
      case "tom":
        tom(left, right, start, v, gl, gr, 90 + 25 * h.tune)
        break
      case "rim":
        rim(left, right, start, v, gl, gr, noise)
        break
    }
  }
}

function kick(
  l: Float32Array,
  r: Float32Array,
  s: number,
  v: number,
  gl: number,
  gr: number,
  fl: KitFlavour,
  noise: Noise
): void {
  const len = Math.round((fl === "808" ? 0.9 : fl === "metal" ? 0.18 : 0.4) * SR)
  const end = Math.min(l.length, s + len)
  const base = fl === "808" ? 48 : fl === "metal" ? 60 : 52
  const sweep = fl === "metal" ? 180 : 140
  const tau = fl === "808" ? 0.45 : fl === "metal" ? 0.06 : 0.16
  // Exponential envelopes as per-sample multipliers: no exp() in the loop.
  const kSweep = Math.exp(-INV_SR / 0.025)
  const kAmp = Math.exp(-INV_SR / tau)
  let sw = sweep
  let env = 1
  let ph = 0
  const amp = 0.9 * v
  for (let i = s; i < end; i++) {
    ph += (base + sw) * INV_SR
    sw *= kSweep
    let x = tsin(ph) * env
    env *= kAmp
    if (i - s < 130) x += noise.next() * 0.35 * (1 - (i - s) / 130)
    const y = softClip(x * 1.4) * amp
    l[i] = (l[i] as number) + y * gl
    r[i] = (r[i] as number) + y * gr
  }
}

function snare(
  l: Float32Array,
  r: Float32Array,
  s: number,
  v: number,
  gl: number,
  gr: number,
  fl: KitFlavour,
  noise: Noise
): void {
  const brush = fl === "brush"
  const len = Math.round((brush ? 0.3 : 0.22) * SR)
  const end = Math.min(l.length, s + len)
  let p1 = 0
  let p2 = 0
  let prev = 0
  let lp = 0
  const amp = (brush ? 0.35 : 0.7) * v
  const kBody = Math.exp(-INV_SR / 0.05)
  const kRattle = Math.exp(-INV_SR / (brush ? 0.12 : 0.07))
  let eBody = brush ? 0 : 0.6
  let eRattle = 1.1
  const attack = brush ? Math.round(0.01 * SR) : 1
  for (let i = s; i < end; i++) {
    p1 += 185 * INV_SR
    p2 += 330 * INV_SR
    const body = eBody === 0 ? 0 : (tsin(p1) + 0.5 * tsin(p2)) * eBody
    eBody *= kBody
    const n = noise.next()
    const hp = n - prev
    prev = n
    lp += 0.5 * (hp - lp)
    const rattle = lp * eRattle * Math.min(1, (i - s + 1) / attack)
    eRattle *= kRattle
    const y = (body + rattle) * amp
    l[i] = (l[i] as number) + y * gl
    r[i] = (r[i] as number) + y * gr
  }
}

function clap(l: Float32Array, r: Float32Array, s: number, v: number, gl: number, gr: number, noise: Noise): void {
  const end = Math.min(l.length, s + Math.round(0.25 * SR))
  let bp1 = 0
  let bp2 = 0
  const amp = 0.8 * v
  for (let i = s; i < end; i++) {
    const t = (i - s) * INV_SR
    // Three quick bursts then a tail: several hands, slightly apart.
    const burst = t < 0.03 ? Math.exp(-((t * 1000) % 10) / 2.5) : 0
    const env = Math.max(burst, Math.exp(-(t - 0.02) / 0.09) * (t >= 0.02 ? 1 : 0))
    const n = noise.next()
    bp1 += 0.25 * (n - bp1)
    bp2 += 0.25 * (bp1 - bp2)
    const y = (bp1 - bp2) * 2.2 * env * amp
    l[i] = (l[i] as number) + y * gl
    r[i] = (r[i] as number) + y * gr
  }
}

/** One second of steeply tilted noise (second difference of white noise), shared by all hats. */
const HAT_NOISE = (() => {
  const n = SR
  const out = new Float32Array(n)
  const noise = new Noise(0x4a7)
  let prev = 0
  let prev2 = 0
  for (let i = 0; i < n; i++) {
    const x = noise.next()
    out[i] = (x - 2 * prev + prev2) * 0.5
    prev2 = prev
    prev = x
  }
  // Keep the sizzle below ~14 kHz: energy near Nyquist is inaudible and only makes the
  // MP3 encoder overshoot.
  lowpassInPlace(out, 0, n, 13000)
  lowpassInPlace(out, 0, n, 13000)
  for (let i = 0; i < n; i++) out[i] = (out[i] as number) * 1.6
  return out
})()

function metalNoise(
  l: Float32Array,
  r: Float32Array,
  s: number,
  v: number,
  gl: number,
  gr: number,
  decay: number,
  noise: Noise
): void {
  const len = Math.min(Math.round(decay * 4 * SR), HAT_NOISE.length >> 1)
  const end = Math.min(l.length, s + len)
  const offset = Math.floor((noise.next() + 1) * 0.5 * (HAT_NOISE.length - len - 1))
  const k = Math.exp(-INV_SR / decay)
  let env = v
  for (let i = s; i < end; i++) {
    const y = (HAT_NOISE[offset + i - s] as number) * env * (i - s < 20 ? (i - s) / 20 : 1)
    env *= k
    l[i] = (l[i] as number) + y * gl
    r[i] = (r[i] as number) + y * gr
  }
}

/**
 * 808-style cymbal source: six detuned square waves plus noise, high-passed. Rendered once
 * per thread (fixed seed, so deterministic); every ride/crash hit plays it back under an
 * envelope from a hit-dependent offset, which is far cheaper than six oscillators per hit.
 */
const METAL = (() => {
  const n = SR * 2
  const out = new Float32Array(n)
  const ratios = [1, 1.342, 1.2312, 1.6532, 1.9523, 2.1523]
  const ph = [0, 0, 0, 0, 0, 0]
  const noise = new Noise(0x5eed)
  let prevIn = 0
  for (let i = 0; i < n; i++) {
    let sum = 0
    for (let k = 0; k < 6; k++) {
      let p = (ph[k] as number) + 540 * (ratios[k] as number) * INV_SR
      if (p >= 1) p -= 1
      ph[k] = p
      sum += p < 0.5 ? 1 : -1
    }
    const x = sum * 0.12 + noise.next() * 0.5
    out[i] = (x - prevIn) * 0.6
    prevIn = x
  }
  lowpassInPlace(out, 0, n, 12000)
  lowpassInPlace(out, 0, n, 12000)
  for (let i = 0; i < n; i++) out[i] = (out[i] as number) * 1.5
  return out
})()

function ride(
  l: Float32Array,
  r: Float32Array,
  s: number,
  v: number,
  gl: number,
  gr: number,
  decay: number,
  noise: Noise
): void {
  const len = Math.min(Math.round(decay * 2 * SR), METAL.length >> 1)
  const end = Math.min(l.length, s + len)
  // A different stretch of the source per hit, so repeated hits are not identical clones.
  const offset = Math.floor((noise.next() + 1) * 0.5 * (METAL.length - len - 1))
  const k = Math.exp(-INV_SR / decay)
  let env = v
  for (let i = s; i < end; i++) {
    const y = (METAL[offset + i - s] as number) * env
    env *= k
    l[i] = (l[i] as number) + y * gl
    r[i] = (r[i] as number) + y * gr
  }
}

function tom(l: Float32Array, r: Float32Array, s: number, v: number, gl: number, gr: number, hz: number): void {
  const end = Math.min(l.length, s + Math.round(0.4 * SR))
  let ph = 0
  for (let i = s; i < end; i++) {
    const t = (i - s) * INV_SR
    ph += hz * (1 + 0.5 * Math.exp(-t / 0.04)) * INV_SR
    const y = tsin(ph) * Math.exp(-t / 0.15) * 0.7 * v
    l[i] = (l[i] as number) + y * gl
    r[i] = (r[i] as number) + y * gr
  }
}

function rim(l: Float32Array, r: Float32Array, s: number, v: number, gl: number, gr: number, noise: Noise): void {
  const end = Math.min(l.length, s + Math.round(0.05 * SR))
  let ph = 0
  for (let i = s; i < end; i++) {
    const t = (i - s) * INV_SR
    ph += 820 * INV_SR
    const y = (tsin(ph) * 0.6 + noise.next() * 0.3) * Math.exp(-t / 0.012) * 0.6 * v
    l[i] = (l[i] as number) + y * gl
    r[i] = (r[i] as number) + y * gr
  }
}
