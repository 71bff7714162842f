// Noise-and-oscillator drum kit. Each hit is synthesized into the stereo drum bus at
// its own pan position; the kit's character follows the genre (808 trap kick, tight
// metal kick, brushed folk snare).

import type { DrumHit, DrumKind } from "../compose.ts"
import { INV_SR, Noise, SR, panGains, softClip, tsin } from "./dsp.ts"

export type KitFlavour = "acoustic" | "electronic" | "808" | "brush" | "metal"

const PAN: Readonly<Record<DrumKind, number>> = {
  kick: 0, snare: 0.05, clap: -0.05, hat: 0.35, ohat: 0.35, ride: -0.4, crash: -0.3, tom: 0.2, rim: 0.15, shaker: -0.45
}

export function renderDrums(hits: ReadonlyArray<DrumHit>, left: Float32Array, right: Float32Array, flavour: KitFlavour, noise: Noise): void {
  for (const h of hits) {
    const start = Math.round(h.time * SR)
    if (start < 0 || start >= left.length) continue
    const [gl, gr] = panGains(PAN[h.kind])
    const v = h.vel
    switch (h.kind) {
      case "kick": kick(left, right, start, v, gl, gr, flavour, noise); break
      case "snare": snare(left, right, start, v, gl, gr, flavour, noise); break
      case "clap": clap(left, right, start, v, gl, gr, noise); break
      case "hat": metalNoise(left, right, start, v * 0.55, gl, gr, 0.035, noise, 7000); break
      case "ohat": metalNoise(left, right, start, v * 0.45, gl, gr, 0.22, noise, 6500); break
      case "shaker": metalNoise(left, right, start, v * 0.3, gl, gr, 0.05, noise, 5000); break
      case "ride": ride(left, right, start, v * 0.3, gl, gr, 0.9, noise); break
      case "crash": ride(left, right, start, v * 0.4, gl, gr, 1.2, noise); break
      case "tom": tom(left, right, start, v, gl, gr, 90 + 25 * h.tune); break
      case "rim": rim(left, right, start, v, gl, gr, noise); break
    }
  }
}

function kick(l: Float32Array, r: Float32Array, s: number, v: number, gl: number, gr: number, fl: KitFlavour, noise: Noise): void {
  const len = Math.round((fl === "808" ? 0.9 : fl === "metal" ? 0.18 : 0.4) * SR)
  const end = Math.min(l.length, s + len)
  const base = fl === "808" ? 48 : fl === "metal" ? 60 : 52
  const sweep = fl === "metal" ? 180 : 140
  const tau = fl === "808" ? 0.45 : fl === "metal" ? 0.06 : 0.16
  let ph = 0
  const amp = 0.9 * v
  for (let i = s; i < end; i++) {
    const t = (i - s) * INV_SR
    ph += (base + sweep * Math.exp(-t / 0.025)) * INV_SR
    let x = tsin(ph) * Math.exp(-t / tau)
    if (i - s < 130) x += noise.next() * 0.35 * (1 - (i - s) / 130)
    const y = softClip(x * 1.4) * amp
    l[i] = (l[i] as number) + y * gl
    r[i] = (r[i] as number) + y * gr
  }
}

function snare(l: Float32Array, r: Float32Array, s: number, v: number, gl: number, gr: number, fl: KitFlavour, noise: Noise): void {
  const brush = fl === "brush"
  const len = Math.round((brush ? 0.3 : 0.22) * SR)
  const end = Math.min(l.length, s + len)
  let p1 = 0
  let p2 = 0
  let prev = 0
  let lp = 0
  const amp = (brush ? 0.35 : 0.7) * v
  for (let i = s; i < end; i++) {
    const t = (i - s) * INV_SR
    p1 += 185 * INV_SR
    p2 += 330 * INV_SR
    const body = brush ? 0 : (tsin(p1) + 0.5 * tsin(p2)) * Math.exp(-t / 0.05) * 0.6
    const n = noise.next()
    const hp = n - prev
    prev = n
    lp += 0.5 * (hp - lp)
    const rattle = lp * Math.exp(-t / (brush ? 0.12 : 0.07)) * (brush ? Math.min(1, t / 0.01) : 1)
    const y = (body + rattle * 1.1) * amp
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

function metalNoise(l: Float32Array, r: Float32Array, s: number, v: number, gl: number, gr: number, decay: number, noise: Noise, _hz: number): void {
  const end = Math.min(l.length, s + Math.round(decay * 5 * SR))
  let prev = 0
  let prev2 = 0
  for (let i = s; i < end; i++) {
    const t = (i - s) * INV_SR
    const n = noise.next()
    // Second difference of white noise: a steep tilt towards the top octaves.
    const hp = n - 2 * prev + prev2
    prev2 = prev
    prev = n
    const y = hp * 0.5 * Math.exp(-t / decay) * v * Math.min(1, (i - s) / 20)
    l[i] = (l[i] as number) + y * gl
    r[i] = (r[i] as number) + y * gr
  }
}

const RIDE_RATIOS = [1, 1.342, 1.2312, 1.6532, 1.9523, 2.1523]
function ride(l: Float32Array, r: Float32Array, s: number, v: number, gl: number, gr: number, decay: number, noise: Noise): void {
  // 808-style cymbal: six detuned square waves, high-passed, plus noise.
  const end = Math.min(l.length, s + Math.round(decay * 2 * SR))
  const ph = [0, 0, 0, 0, 0, 0]
  let prevIn = 0
  for (let i = s; i < end; i++) {
    const t = (i - s) * INV_SR
    let sum = 0
    for (let k = 0; k < 6; k++) {
      let p = (ph[k] as number) + 540 * (RIDE_RATIOS[k] as number) * INV_SR
      if (p >= 1) p -= 1
      ph[k] = p
      sum += p < 0.5 ? 1 : -1
    }
    const x = sum * 0.12 + noise.next() * 0.5
    const hp = x - prevIn
    prevIn = x
    const y = hp * 0.6 * Math.exp(-t / decay) * v
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
