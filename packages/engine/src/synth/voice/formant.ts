// The formant voice: sings the words Flite cannot say (singer.ts sings the rest, decision 0102).
// A Klatt-style formant synthesizer. A glottal pulse train at the
// melody's pitch (with vibrato) feeds a cascade of four formant resonators whose
// frequencies follow each syllable's vowel; consonants are made of silence (closures),
// noise bursts and bands (plosives, fricatives), aspiration after voiceless stops, and formant
// targets (nasals, liquids, and the loci of each place of articulation, which give the formant
// transitions into and out of the vowel). Parameters are laid out on a control grid and
// smoothed, which gives coarticulation.

import type { VocalNote } from "../../compose.ts"
import type { Consonant, Vowel } from "../../lyrics.ts"
import { INV_SR, SR, peakingBiquad, tsin } from "../dsp.ts"
import { ONSET_LEAD, VIBRATO, VIBRATO_RATE, vibratoBloom, WORD_GAP } from "./phrasing.ts"

const FRAME = 32

type Formants = readonly [number, number, number, number]
const VOWELS: Readonly<Record<Vowel, Formants>> = {
  i: [270, 2290, 3010, 3500],
  I: [390, 1990, 2550, 3500],
  e: [530, 1840, 2480, 3500],
  ae: [660, 1720, 2410, 3500],
  a: [730, 1090, 2440, 3500],
  o: [570, 840, 2410, 3400],
  U: [440, 1020, 2240, 3400],
  u: [300, 870, 2240, 3400],
  A: [640, 1190, 2390, 3400],
  "@": [500, 1500, 2500, 3500],
  er: [490, 1350, 1690, 3300]
}
const BANDWIDTHS: Formants = [70, 90, 130, 170]
const F5_BANDWIDTH = 250
/** One-pole smoothing of the glottal pulse: lower is duller (0.55 left almost nothing above 3 kHz). */
const SOURCE_TILT = 0.8
/**
 * The longest a vowel sounds as its word (seconds): about a syllable's length in speech, after
 * which the coda follows at once. Held vowels cost the recogniser words: it hears a syllable,
 * then reads words into the rest of the vowel (decisions 0095, 0096).
 */
const SPOKEN_VOWEL = 0.18
/**
 * The rest of a long note is sung on the syllable's vowel taken most of the way (HUM_CENTRE) to
 * a schwa, softer (HUM_LEVEL of the note's voicing, a third of the breath), with the vibrato:
 * the recogniser does not read it as words, it keeps the mix tonal and the vibrato heard, and
 * the vowel is still its own ("me" above "la" in the F2 region). A nasal hum was read as words,
 * quieter sustains left the mix too flat (decision 0096).
 */
const HUM_LEVEL = 0.5
const HUM_BREATH = 0.3
const HUM_CENTRE = 0.65
const SCHWA: Formants = [500, 1500, 2500, 3500]
/** Level of the fricative noise band against the voiced sound. */
const FRICATION = 0.8
/** Aspiration after a voiceless stop's burst, against the stop's own aspiration level. */
const ASPIRATION = 1.6
/** The fricative band-pass's gain at its centre (3 keeps the level the DC-normalised resonator had there). */
const FRIC_GAIN = 3
/** The longest part of an open syllable's vowel that the next syllable's onset consonants may take (seconds). */
const ONSET_BORROW = 0.12
/** The presence lift: a first-order shelf at 2.5 kHz adding this much (1 = +6 dB) above it. */
const PRESENCE_LIFT = 1
const PRESENCE_COEF = 1 - Math.exp((-2 * Math.PI * 2500) / SR)
/**
 * The singer's formant: trained voices gather their upper formants into one peak near 3 kHz,
 * which carries a voice over a band. On the voiced sound only (the frication keeps its own
 * level above it): without it a long sung vowel put more of the mix in 4-8 kHz than in 2-4 kHz
 * (decision 0097).
 */
const SINGERS_FORMANT = peakingBiquad(3000, 6, 1.2)

/** Where the tongue or lips close: it sets the formant transitions (loci) into and out of the vowel. */
type Place = "lab" | "dent" | "alv" | "post" | "vel" | "glot"

interface ConsonantShape {
  readonly dur: number
  /** Voicing amplitude while it sounds (0 for unvoiced). */
  readonly voice: number
  /** Frication amplitude and centre frequency. */
  readonly fric: number
  readonly band: number
  /** Aspiration (breath through the vocal tract). */
  readonly asp: number
  /** Formant targets, or null to take them from the place of articulation and the neighbouring vowel. */
  readonly formants: Formants | null
  /** Plosive: silence for the first part, a burst at the end. */
  readonly plosive: boolean
  readonly place: Place
}

const C = (
  place: Place,
  dur: number,
  voice: number,
  fric: number,
  band: number,
  asp: number,
  formants: Formants | null,
  plosive = false
): ConsonantShape => ({ place, dur, voice, fric, band, asp, formants, plosive })
const CONSONANTS: Readonly<Record<Consonant, ConsonantShape>> = {
  s: C("alv", 0.09, 0, 0.4, 6500, 0, null),
  z: C("alv", 0.07, 0.35, 0.22, 6000, 0, null),
  sh: C("post", 0.09, 0, 0.38, 3000, 0, null),
  f: C("lab", 0.08, 0, 0.13, 5000, 0.05, null),
  v: C("lab", 0.06, 0.4, 0.08, 4500, 0, null),
  th: C("dent", 0.07, 0, 0.1, 5500, 0.05, null),
  dh: C("dent", 0.05, 0.45, 0.06, 5000, 0, null),
  zh: C("post", 0.07, 0.35, 0.2, 3000, 0, null),
  h: C("glot", 0.07, 0, 0, 0, 0.35, null),
  ch: C("post", 0.1, 0, 0.36, 3200, 0, null, true),
  j: C("post", 0.08, 0.3, 0.28, 3000, 0, null, true),
  p: C("lab", 0.09, 0, 0.3, 1000, 0.2, null, true),
  t: C("alv", 0.085, 0, 0.4, 4500, 0.18, null, true),
  k: C("vel", 0.095, 0, 0.35, 2500, 0.2, null, true),
  b: C("lab", 0.06, 0.12, 0.25, 1000, 0, null, true),
  d: C("alv", 0.05, 0.12, 0.3, 4000, 0, null, true),
  g: C("vel", 0.06, 0.12, 0.28, 2300, 0, null, true),
  m: C("lab", 0.08, 0.55, 0, 0, 0, [280, 1000, 2200, 3300]),
  n: C("alv", 0.07, 0.55, 0, 0, 0, [280, 1600, 2600, 3300]),
  ng: C("vel", 0.07, 0.5, 0, 0, 0, [280, 2000, 2700, 3300]),
  l: C("alv", 0.06, 0.75, 0, 0, 0, [360, 1100, 2700, 3400]),
  r: C("alv", 0.06, 0.75, 0, 0, 0, [420, 1250, 1650, 3200]),
  w: C("lab", 0.06, 0.7, 0, 0, 0, [300, 700, 2200, 3300]),
  y: C("post", 0.05, 0.7, 0, 0, 0, [280, 2200, 2900, 3500])
}

/**
 * F2 loci and how far the vowel pulls F2 away from them (locus equations: F2 at the release =
 * locus + k (vowel F2 - locus)); velars pinch F2 and F3 together. F1 falls towards the closure.
 */
const LOCI: Readonly<Record<Place, { readonly f2: number; readonly k: number; readonly f3: number | null }>> = {
  lab: { f2: 850, k: 0.55, f3: null },
  dent: { f2: 1500, k: 0.5, f3: null },
  alv: { f2: 1750, k: 0.35, f3: 2700 },
  post: { f2: 2000, k: 0.4, f3: 2500 },
  vel: { f2: 2100, k: 0.6, f3: null },
  glot: { f2: 0, k: 1, f3: null }
}

function locusFormants(place: Place, vowel: Formants): Formants {
  if (place === "glot") return vowel
  const l = LOCI[place]
  const f2 = l.f2 + l.k * ((vowel[1] as number) - l.f2)
  const f3 =
    place === "vel"
      ? Math.max(vowel[2] as number, f2 + 300)
      : l.f3 === null
        ? (vowel[2] as number)
        : 0.5 * (l.f3 + (vowel[2] as number))
  return [Math.min(vowel[0] as number, 300), f2, f3, vowel[3] as number]
}

/** Glottal flow derivative (Rosenberg pulse), one period, for a table-lookup source. */
const GLOTTAL = (() => {
  const n = 2048
  const flow = new Float32Array(n + 1)
  const tp = 0.42
  const tn = 0.16
  for (let i = 0; i <= n; i++) {
    const t = i / n
    flow[i] =
      t < tp ? 0.5 * (1 - Math.cos((Math.PI * t) / tp)) : t < tp + tn ? Math.cos(((t - tp) / tn) * (Math.PI / 2)) : 0
  }
  const d = new Float32Array(n + 1)
  let mean = 0
  for (let i = 0; i < n; i++) {
    d[i] = ((flow[i + 1] as number) - (flow[i] as number)) * n * 0.08
    mean += d[i] as number
  }
  mean /= n
  for (let i = 0; i < n; i++) d[i] = (d[i] as number) - mean
  d[n] = d[0] as number
  return d
})()

export function renderFormantVoice(
  notes: ReadonlyArray<VocalNote>,
  out: Float32Array,
  register: "m" | "f",
  seed: number
): void {
  if (notes.length === 0) return
  const frames = Math.ceil(out.length / FRAME) + 1
  const f0 = new Float32Array(frames)
  const vAmp = new Float32Array(frames)
  const aAmp = new Float32Array(frames)
  const fAmp = new Float32Array(frames)
  const fBand = new Float32Array(frames).fill(4000)
  const vib = new Float32Array(frames)
  const F = [
    new Float32Array(frames),
    new Float32Array(frames),
    new Float32Array(frames),
    new Float32Array(frames)
  ] as const
  const scale = register === "f" ? 1.16 : 1
  const breath = register === "f" ? 0.05 : 0.025
  const fr = (sec: number): number => Math.max(0, Math.min(frames - 1, Math.round((sec * SR) / FRAME)))

  const setF = (a: number, b: number, fm: Formants): void => {
    for (let k = 0; k < 4; k++) {
      const arr = F[k as 0 | 1 | 2 | 3]
      const v = (fm[k] as number) * (k < 3 ? scale : 1 + (scale - 1) * 0.6)
      arr.fill(v, a, b)
    }
  }
  const consonant = (
    c: Consonant,
    a: number,
    b: number,
    vowelF: Formants,
    pitchHz: number,
    released: boolean
  ): void => {
    const shape = CONSONANTS[c]
    setF(a, b, shape.formants ?? locusFormants(shape.place, vowelF))
    f0.fill(pitchHz, a, b)
    if (shape.plosive) {
      // Closure (near silence, a murmur if voiced), then a short burst; a voiceless stop
      // before a vowel then breathes through the vowel's own formants before the voice starts
      // (the voice onset time that tells p/t/k from b/d/g).
      const aspirated = released && shape.voice === 0 && shape.asp > 0
      const aspFrames = aspirated ? Math.round((b - a) * 0.4) : 0
      const burstEnd = b - aspFrames
      const burst = Math.max(a, burstEnd - Math.max(1, Math.round((0.014 * SR) / FRAME)))
      vAmp.fill(shape.voice, a, burst)
      fAmp.fill(shape.fric, burst, burstEnd)
      fBand.fill(shape.band, burst, burstEnd)
      aAmp.fill(shape.asp, burst, burstEnd)
      if (aspirated) {
        setF(burstEnd, b, vowelF)
        aAmp.fill(shape.asp * ASPIRATION, burstEnd, b)
        fAmp.fill(0, burstEnd, b)
      }
    } else {
      vAmp.fill(shape.voice, a, b)
      fAmp.fill(shape.fric, a, b)
      if (shape.fric > 0) fBand.fill(shape.band * (register === "f" ? 1.1 : 1), a, b)
      aAmp.fill(shape.asp, a, b)
    }
  }

  let prevEnd = 0
  let prevOpen = false
  let prevVowel = 0
  for (let n = 0; n < notes.length; n++) {
    const note = notes[n] as VocalNote
    const next = notes[n + 1]
    const hz = 440 * Math.pow(2, (note.pitch - 69) / 12)
    const sy = note.syllable
    const v1 = VOWELS[sy.vowel[0]]
    const v2 = sy.vowel.length > 1 ? VOWELS[sy.vowel[1] ?? sy.vowel[0]] : v1
    // Onset consonants sit just before the beat so the vowel lands on it; where the previous
    // note leaves no room (legato), they take the start of this note instead of vanishing.
    const onsetFull = sy.onset.reduce((s, c) => s + CONSONANTS[c].dur, 0)
    // A singer takes the consonants from the end of the previous vowel (when that syllable
    // closes on no consonant of its own), so they keep their length and the vowel its beat.
    const borrow = prevOpen ? Math.min(ONSET_BORROW, prevVowel * 0.4) : 0
    const before = Math.min(onsetFull, Math.max(0, note.start - prevEnd) * 0.8 + borrow, ONSET_LEAD)
    const within = Math.min(onsetFull - before, note.dur * 0.3)
    const onsetDur = before + within
    let t = note.start - before
    const onsetScale = onsetDur / Math.max(1e-6, onsetFull)
    for (const [i, c] of sy.onset.entries()) {
      const d = CONSONANTS[c].dur * onsetScale
      // A stop after s is not aspirated ("stop", "sky").
      consonant(c, fr(t), fr(t + d), v1, hz, sy.onset[i - 1] !== "s")
      t += d
    }
    const end = note.start + note.dur
    const codaFull = sy.coda.reduce((s, c) => s + CONSONANTS[c].dur, 0)
    const codaDur = Math.min(codaFull, note.dur * 0.35)
    const vowelStart = note.start + within
    const vowelEnd = Math.min(end - codaDur, vowelStart + SPOKEN_VOWEL)
    const a = fr(vowelStart)
    const b = fr(vowelEnd)
    const mid = fr(vowelStart + (vowelEnd - vowelStart) * (v2 === v1 ? 1 : 0.65))
    /**
     * Frames [from, to) voiced at the note's pitch, `level` of its voicing and `breathShare` of
     * its breath; the vibrato blooms on held notes only (`vibratoBloom`).
     */
    const voiced = (from: number, to: number, level: number, breathShare: number): void => {
      vAmp.fill(note.vel * level, from, to)
      aAmp.fill(breath * breathShare, from, to)
      fAmp.fill(0, from, to)
      f0.fill(hz, from, to)
      for (let i = from; i < to; i++) vib[i] = vibratoBloom((i - a) * FRAME * INV_SR)
    }
    setF(a, mid, v1)
    if (mid < b) setF(mid, b, v2)
    voiced(a, b, 1, 1)
    t = vowelEnd
    const codaScale = codaDur / Math.max(1e-6, codaFull)
    for (const c of sy.coda) {
      const d = CONSONANTS[c].dur * codaScale
      consonant(c, fr(t), fr(t + d), v2, hz, false)
      t += d
    }
    // The rest of the note: the soft, centralised vowel, at the note's pitch, the vibrato blooming
    // as it did on a held vowel.
    const wordEnds = sy.wordEnd && next?.syllable.wordStart
    const sustainEnd = wordEnds && end - WORD_GAP - t > 0.04 ? end - WORD_GAP : end
    if (end - t > 0.04) {
      const ha = fr(t),
        hb = fr(sustainEnd)
      const centred = (k: 0 | 1 | 2 | 3): number => v2[k] + HUM_CENTRE * (SCHWA[k] - v2[k])
      setF(ha, hb, [centred(0), centred(1), centred(2), centred(3)])
      voiced(ha, hb, HUM_LEVEL, HUM_BREATH)
    }
    // Keep the pitch steady into the gap so a following legato note glides from here.
    if (next !== undefined) f0.fill(hz, fr(end), fr(next.start))
    prevEnd = sustainEnd
    prevOpen = sy.coda.length === 0
    prevVowel = vowelEnd - vowelStart
  }

  // Smooth the control tracks: formants glide (coarticulation), amplitudes ramp, pitch slides.
  const smooth = (arr: Float32Array, tau: number): void => {
    const k = 1 - Math.exp(-(FRAME * INV_SR) / tau)
    let y = arr[0] as number
    for (let i = 0; i < arr.length; i++) {
      y += k * ((arr[i] as number) - y)
      arr[i] = y
    }
  }
  // Frames with no formant target yet (before the first note) take the first vowel's values.
  for (const arr of F) {
    let firstSet = arr.findIndex((x) => x > 0)
    if (firstSet < 0) firstSet = 0
    arr.fill(arr[firstSet] as number, 0, firstSet)
    for (let i = 1; i < arr.length; i++) if ((arr[i] as number) === 0) arr[i] = arr[i - 1] as number
  }
  for (let i = 1; i < f0.length; i++) if ((f0[i] as number) === 0) f0[i] = f0[i - 1] as number
  const firstF0 = f0.find((x) => x > 0) ?? 200
  for (let i = 0; i < f0.length && (f0[i] as number) === 0; i++) f0[i] = firstF0
  for (const arr of F) smooth(arr, 0.018)
  smooth(f0, 0.025)
  smooth(vAmp, 0.012)
  smooth(aAmp, 0.006)
  smooth(fAmp, 0.004)
  smooth(vib, 0.05)

  // The per-sample loop keeps every resonator, coefficient and the noise generator's state in
  // locals (no array or object traffic): the same arithmetic, in the same order, as a cascade
  // over arrays of resonators, at a fraction of the cost.
  let ns = seed >>> 0 || 0x9e3779b9 // the Noise generator (xorshift32), inline
  let r0y1 = 0,
    r0y2 = 0,
    r1y1 = 0,
    r1y2 = 0,
    r2y1 = 0,
    r2y2 = 0,
    r3y1 = 0,
    r3y2 = 0,
    r4y1 = 0,
    r4y2 = 0
  let presence = 0
  let sf1 = 0
  let sf2 = 0
  const { b0: sb0, b1: sb1, b2: sb2, a1: sa1, a2: sa2 } = SINGERS_FORMANT
  let fy1 = 0
  let nz1 = 0
  let nz2 = 0
  let fy2 = 0
  let ph = 0
  let vibPh = 0
  let tilt = 0
  let jitter = 0
  const gTable = GLOTTAL
  const [F0, F1, F2, F3] = F
  const [bw0, bw1, bw2, bw3] = BANDWIDTHS
  // Klatt resonator coefficients: the bandwidths are fixed, so only the cosine term changes.
  const cc0 = -Math.exp(-2 * Math.PI * bw0 * INV_SR),
    e0 = 2 * Math.exp(-Math.PI * bw0 * INV_SR)
  const cc1 = -Math.exp(-2 * Math.PI * bw1 * INV_SR),
    e1 = 2 * Math.exp(-Math.PI * bw1 * INV_SR)
  const cc2 = -Math.exp(-2 * Math.PI * bw2 * INV_SR),
    e2 = 2 * Math.exp(-Math.PI * bw2 * INV_SR)
  const cc3 = -Math.exp(-2 * Math.PI * bw3 * INV_SR),
    e3 = 2 * Math.exp(-Math.PI * bw3 * INV_SR)
  // The fifth formant stays put (it follows the head, not the vowel): constant coefficients.
  const f5 = register === "f" ? 4950 : 4500
  const cc4 = -Math.exp(-2 * Math.PI * F5_BANDWIDTH * INV_SR)
  const bb4 = 2 * Math.exp(-Math.PI * F5_BANDWIDTH * INV_SR) * Math.cos(2 * Math.PI * f5 * INV_SR)
  const ca4 = 1 - bb4 - cc4
  for (let fi = 0; fi < frames - 1; fi++) {
    const s0 = fi * FRAME
    if (s0 >= out.length) break
    const va = vAmp[fi] as number
    const aa = aAmp[fi] as number
    const fa = fAmp[fi] as number
    if (va < 1e-4 && aa < 1e-4 && fa < 1e-4) {
      // Silence: let the resonators ring out rather than hard-resetting them.
      r0y1 *= 0.5
      r0y2 *= 0.5
      r1y1 *= 0.5
      r1y2 *= 0.5
      r2y1 *= 0.5
      r2y2 *= 0.5
      r3y1 *= 0.5
      r3y2 *= 0.5
      r4y1 *= 0.5
      r4y2 *= 0.5
      continue
    }
    const bb0 = e0 * Math.cos(2 * Math.PI * (F0[fi] as number) * INV_SR)
    const bb1 = e1 * Math.cos(2 * Math.PI * (F1[fi] as number) * INV_SR)
    const bb2 = e2 * Math.cos(2 * Math.PI * (F2[fi] as number) * INV_SR)
    const bb3 = e3 * Math.cos(2 * Math.PI * (F3[fi] as number) * INV_SR)
    const ca0 = 1 - bb0 - cc0,
      ca1 = 1 - bb1 - cc1,
      ca2 = 1 - bb2 - cc2,
      ca3 = 1 - bb3 - cc3
    const fb = fBand[fi] as number
    const fbw = fb * 0.35
    const fc = -Math.exp(-2 * Math.PI * fbw * INV_SR)
    const fbb = 2 * Math.exp(-Math.PI * fbw * INV_SR) * Math.cos(2 * Math.PI * Math.min(fb, 9000) * INV_SR)
    // A band-pass (zeros at DC and Nyquist): frication has little energy below its band, as
    // in speech, where a resonator normalised at DC let the hiss reach down to the voice's range.
    const fa0 = FRIC_GAIN * (1 - Math.exp(-Math.PI * fbw * INV_SR))
    const pitch = f0[fi] as number
    const depth = (vib[fi] as number) * VIBRATO
    const va1 = vAmp[fi + 1] as number
    const aa1 = aAmp[fi + 1] as number
    const fa1 = fAmp[fi + 1] as number
    const stop = Math.min(out.length, s0 + FRAME)
    // Most frames are vowels: skip the fricative band-pass when it is silent.
    const fricative = fa > 1e-5 || fa1 > 1e-5
    if (!fricative) {
      fy1 *= 0.5
      fy2 *= 0.5
    }
    for (let i = s0; i < stop; i++) {
      const w = (i - s0) / FRAME
      vibPh += VIBRATO_RATE * INV_SR
      if (vibPh >= 1) vibPh -= 1
      ns ^= ns << 13
      ns ^= ns >>> 17
      ns ^= ns << 5
      ns >>>= 0
      jitter += 0.002 * (ns / 2147483648 - 1 - jitter)
      // No vibrato yet (depth 0): skipping the table read adds the same exact zero.
      ph += pitch * (1 + (depth === 0 ? 0 : depth * tsin(vibPh)) + jitter * 0.3) * INV_SR
      if (ph >= 1) ph -= 1
      const x = ph * 2048
      const xi = x | 0
      const g0 = gTable[xi] as number
      const glott = g0 + ((gTable[xi + 1] as number) - g0) * (x - xi)
      tilt += SOURCE_TILT * (glott - tilt)
      ns ^= ns << 13
      ns ^= ns >>> 17
      ns ^= ns << 5
      ns >>>= 0
      const nz = ns / 2147483648 - 1
      let y = tilt * (va + (va1 - va) * w) + nz * 0.3 * (aa + (aa1 - aa) * w)
      y = ca0 * y + bb0 * r0y1 + cc0 * r0y2
      r0y2 = r0y1
      r0y1 = y
      y = ca1 * y + bb1 * r1y1 + cc1 * r1y2
      r1y2 = r1y1
      r1y1 = y
      y = ca2 * y + bb2 * r2y1 + cc2 * r2y2
      r2y2 = r2y1
      r2y1 = y
      y = ca3 * y + bb3 * r3y1 + cc3 * r3y2
      r3y2 = r3y1
      r3y1 = y
      y = ca4 * y + bb4 * r4y1 + cc4 * r4y2
      r4y2 = r4y1
      r4y1 = y
      // The singer's formant, on the voiced sound before the frication joins it.
      const lifted = sb0 * y + sf1
      sf1 = sb1 * y - sa1 * lifted + sf2
      sf2 = sb2 * y - sa2 * lifted
      y = lifted
      if (fricative) {
        const fy = fa0 * (nz - nz2) + fbb * fy1 + fc * fy2
        nz2 = nz1
        nz1 = nz
        fy2 = fy1
        fy1 = fy
        y += fy * FRICATION * (fa + (fa1 - fa) * w)
      }
      // Presence: lift everything above ~2.5 kHz, where consonants and the singer's formant are heard.
      presence += PRESENCE_COEF * (y - presence)
      out[i] = (out[i] as number) + y + PRESENCE_LIFT * (y - presence)
    }
  }
}
