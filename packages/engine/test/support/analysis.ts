// Independent measurement of rendered audio: the MP3 is decoded with mpg123 (WASM) and
// analysed with Essentia (essentia.js, WASM). Nothing here reuses engine code.

import { createRequire } from "node:module"
import { MPEGDecoder } from "mpg123-decoder"

/** Opaque handle to an Essentia std::vector<float> living in WASM memory. */
export interface EssentiaVector {
  delete(): void
}

interface EssentiaApi {
  arrayToVector(a: Float32Array): EssentiaVector
  vectorToArray(v: EssentiaVector): Float32Array
  RhythmExtractor2013(
    signal: EssentiaVector,
    maxTempo?: number,
    method?: string,
    minTempo?: number
  ): { bpm: number; confidence: number; ticks: EssentiaVector }
  KeyExtractor(
    signal: EssentiaVector,
    averageDetuningCorrection?: boolean,
    frameSize?: number,
    hopSize?: number,
    hpcpSize?: number,
    maxFrequency?: number,
    maximumSpectralPeaks?: number,
    minFrequency?: number,
    pcpThreshold?: number,
    profileType?: string
  ): { key: string; scale: string; strength: number }
  LoudnessEBUR128(
    left: EssentiaVector,
    right: EssentiaVector,
    hopSize?: number,
    sampleRate?: number,
    startAtZero?: boolean
  ): { integratedLoudness: number; loudnessRange: number }
  Windowing(frame: EssentiaVector, normalized?: boolean, size?: number, type?: string): { frame: EssentiaVector }
  Spectrum(frame: EssentiaVector, size?: number): { spectrum: EssentiaVector }
  EnergyBand(
    spectrum: EssentiaVector,
    sampleRate?: number,
    startCutoffFrequency?: number,
    stopCutoffFrequency?: number
  ): { energyBand: number }
}

const require = createRequire(import.meta.url)
let essentia: EssentiaApi | null = null
export function getEssentia(): EssentiaApi {
  if (essentia === null) {
    const mod = require("essentia.js") as { EssentiaWASM: unknown; Essentia: new (wasm: unknown) => EssentiaApi }
    essentia = new mod.Essentia(mod.EssentiaWASM)
  }
  return essentia
}

export interface Decoded {
  readonly left: Float32Array
  readonly right: Float32Array
  readonly sampleRate: number
  readonly seconds: number
}

export async function decodeMp3(mp3: Uint8Array): Promise<Decoded> {
  const decoder = new MPEGDecoder()
  await decoder.ready
  const out = decoder.decode(mp3)
  decoder.free()
  const [left, right] = out.channelData
  if (left === undefined || right === undefined) throw new Error("decoder returned no stereo audio")
  if (out.errors.length > 0) throw new Error(`mp3 decode errors: ${out.errors.length}`)
  return { left, right, sampleRate: out.sampleRate, seconds: out.samplesDecoded / out.sampleRate }
}

export function mono(d: Decoded): Float32Array {
  const m = new Float32Array(d.left.length)
  for (let i = 0; i < m.length; i++) m[i] = 0.5 * ((d.left[i] as number) + (d.right[i] as number))
  return m
}

export function tempo(signal: Float32Array): { bpm: number; confidence: number } {
  const e = getEssentia()
  const v = e.arrayToVector(signal)
  const r = e.RhythmExtractor2013(v, 208, "multifeature", 40)
  v.delete()
  r.ticks.delete()
  return { bpm: r.bpm, confidence: r.confidence }
}

const PCS: Readonly<Record<string, number>> = {
  C: 0,
  "C#": 1,
  Db: 1,
  D: 2,
  "D#": 3,
  Eb: 3,
  E: 4,
  F: 5,
  "F#": 6,
  Gb: 6,
  G: 7,
  "G#": 8,
  Ab: 8,
  A: 9,
  "A#": 10,
  Bb: 10,
  B: 11
}
export function key(signal: Float32Array): { pc: number; scale: string; strength: number; name: string } {
  const e = getEssentia()
  const v = e.arrayToVector(signal)
  const r = e.KeyExtractor(v, true, 4096, 4096, 12, 3500, 60, 25, 0.2, "bgate")
  v.delete()
  return { pc: PCS[r.key] ?? -1, scale: r.scale, strength: r.strength, name: `${r.key} ${r.scale}` }
}

export function loudness(d: Decoded): number {
  const e = getEssentia()
  const l = e.arrayToVector(d.left)
  const r = e.arrayToVector(d.right)
  const out = e.LoudnessEBUR128(l, r, 0.1, d.sampleRate, false).integratedLoudness
  l.delete()
  r.delete()
  return out
}

export function peak(d: Decoded): number {
  let p = 0
  for (const ch of [d.left, d.right])
    for (let i = 0; i < ch.length; i++) {
      const a = Math.abs(ch[i] as number)
      if (a > p) p = a
    }
  return p
}

/** Per-frame energy in a frequency band (Hann window, 2048-point frames, 1024 hop). */
export function bandEnvelope(signal: Float32Array, lo: number, hi: number, frame = 2048, hop = 1024): Float32Array {
  return bandEnvelopes(signal, [[lo, hi]], frame, hop)[0] ?? new Float32Array(0)
}

/** Per-frame energies of several bands from one spectrum per frame (one Essentia pass). */
export function bandEnvelopes(
  signal: Float32Array,
  bands: ReadonlyArray<readonly [number, number]>,
  frame = 2048,
  hop = 1024
): Float32Array[] {
  const e = getEssentia()
  const frames = Math.max(0, Math.floor((signal.length - frame) / hop))
  const envs = bands.map(() => new Float32Array(frames))
  for (let f = 0; f < frames; f++) {
    // Essentia vectors live in WASM memory and must be freed by hand.
    const input = e.arrayToVector(signal.subarray(f * hop, f * hop + frame))
    const w = e.Windowing(input, true, frame, "hann")
    const s = e.Spectrum(w.frame, frame)
    bands.forEach(([lo, hi], b) => {
      const env = envs[b]
      if (env !== undefined) env[f] = e.EnergyBand(s.spectrum, 44100, lo, hi).energyBand
    })
    input.delete()
    w.frame.delete()
    s.spectrum.delete()
  }
  return envs
}

/** Share of a signal's energy that lies in [lo, hi] Hz. */
export function bandShare(signal: Float32Array, lo: number, hi: number): number {
  const [band, all] = bandEnvelopes(
    signal,
    [
      [lo, hi],
      [20, 20000]
    ],
    4096,
    2048
  )
  const sum = (x: Float32Array | undefined): number => (x ?? new Float32Array(0)).reduce((t, v) => t + v, 0)
  const total = sum(all)
  return total > 0 ? sum(band) / total : 0
}

/**
 * Strength of a regular percussive onset pattern: half-wave-rectified log-energy flux of
 * the 5-16 kHz band (where noise drums live), autocorrelated; the peak normalized
 * autocorrelation over lags of 0.2-1.2 s. Drum grooves score high, tonal music low.
 */
export function percussivePattern(signal: Float32Array, hfEnvelope?: Float32Array): number {
  const hop = 512
  const env = hfEnvelope ?? bandEnvelope(signal, 5000, 16000, 1024, hop)
  const flux = new Float32Array(env.length)
  for (let i = 1; i < env.length; i++)
    flux[i] = Math.max(0, Math.log10((env[i] as number) + 1e-9) - Math.log10((env[i - 1] as number) + 1e-9))
  let mean = 0
  for (const x of flux) mean += x
  mean /= Math.max(1, flux.length)
  for (let i = 0; i < flux.length; i++) flux[i] = (flux[i] as number) - mean
  let r0 = 0
  for (const x of flux) r0 += x * x
  if (r0 === 0) return 0
  const fps = 44100 / hop
  let best = 0
  for (let lag = Math.round(0.2 * fps); lag <= Math.round(1.2 * fps); lag++) {
    let r = 0
    for (let i = lag; i < flux.length; i++) r += (flux[i] as number) * (flux[i - lag] as number)
    best = Math.max(best, r / r0)
  }
  return best
}

/**
 * Percussive onset strength: how much of the signal's energy sits in the 5-16 kHz band
 * (per mille) times how regular its onsets are. Drum grooves score in the tens; music
 * without drums scores well under one (pitched instruments put little energy up there).
 */
export function percussiveStrength(signal: Float32Array): { strength: number; hfShare: number; pattern: number } {
  const [hf = new Float32Array(0), all = new Float32Array(0)] = bandEnvelopes(
    signal,
    [
      [5000, 16000],
      [20, 16000]
    ],
    1024,
    512
  )
  let h = 0
  let a = 0
  for (let i = 0; i < hf.length; i++) {
    h += hf[i] as number
    a += all[i] as number
  }
  const hfShare = a > 0 ? (1000 * h) / a : 0
  const pattern = percussivePattern(signal, hf)
  return { strength: hfShare * pattern, hfShare, pattern }
}
