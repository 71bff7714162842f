// Essentia (essentia.js: the Music Technology Group's C++ library compiled to WebAssembly) for
// beats, key, chords and loudness: loaded once per thread, on first use.

import { createRequire } from "node:module"

/** Opaque handle to an Essentia vector living in WASM memory: freed with delete(). */
export interface EssentiaVector { delete(): void; push_back?(v: unknown): void; size(): number; get(i: number): unknown }

export interface EssentiaApi {
  arrayToVector(a: Float32Array): EssentiaVector
  vectorToArray(v: EssentiaVector): Float32Array
  RhythmExtractor2013(signal: EssentiaVector, maxTempo?: number, method?: string, minTempo?: number): { bpm: number; confidence: number; ticks: EssentiaVector; estimates: EssentiaVector; bpmIntervals: EssentiaVector }
  KeyExtractor(signal: EssentiaVector, averageDetuningCorrection?: boolean, frameSize?: number, hopSize?: number, hpcpSize?: number, maxFrequency?: number, maximumSpectralPeaks?: number, minFrequency?: number, pcpThreshold?: number, profileType?: string): { key: string; scale: string; strength: number }
  LoudnessEBUR128(left: EssentiaVector, right: EssentiaVector, hopSize?: number, sampleRate?: number, startAtZero?: boolean): { integratedLoudness: number; loudnessRange: number; momentaryLoudness: EssentiaVector; shortTermLoudness: EssentiaVector }
  Windowing(frame: EssentiaVector, normalized?: boolean, size?: number, type?: string): { frame: EssentiaVector }
  Spectrum(frame: EssentiaVector, size?: number): { spectrum: EssentiaVector }
  SpectralPeaks(spectrum: EssentiaVector, magnitudeThreshold?: number, maxFrequency?: number, maxPeaks?: number, minFrequency?: number, orderBy?: string, sampleRate?: number): { frequencies: EssentiaVector; magnitudes: EssentiaVector }
  HPCP(frequencies: EssentiaVector, magnitudes: EssentiaVector, bandPreset?: boolean, bandSplitFrequency?: number, harmonics?: number, maxFrequency?: number, maxShifted?: boolean, minFrequency?: number, nonLinear?: boolean, normalized?: string, referenceFrequency?: number, sampleRate?: number, size?: number, weightType?: string, windowSize?: number): { hpcp: EssentiaVector }
  ChordsDetectionBeats(pcp: EssentiaVector, ticks: EssentiaVector, chromaPick?: string, hopSize?: number, sampleRate?: number): { chords: EssentiaVector; strength: EssentiaVector }
}

interface EssentiaModule {
  readonly EssentiaWASM: { readonly VectorVectorFloat: new () => EssentiaVector & { push_back(v: EssentiaVector): void } }
  readonly Essentia: new (wasm: unknown) => EssentiaApi
}

let loaded: { readonly api: EssentiaApi; readonly module: EssentiaModule } | null = null

export function essentia(): { readonly api: EssentiaApi; readonly newMatrix: () => EssentiaVector & { push_back(v: EssentiaVector): void } } {
  if (loaded === null) {
    const module = createRequire(import.meta.url)("essentia.js") as EssentiaModule
    loaded = { api: new module.Essentia(module.EssentiaWASM), module }
  }
  const module = loaded.module
  return { api: loaded.api, newMatrix: () => new module.EssentiaWASM.VectorVectorFloat() }
}

/** A JS array of the strings in an Essentia vector of strings. */
export function strings(v: EssentiaVector): Array<string> {
  const out: Array<string> = []
  for (let i = 0; i < v.size(); i++) out.push(String(v.get(i)))
  return out
}
