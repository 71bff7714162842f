// A persona's voice colour, laid on the engine's singing voice after it is sung (the voices
// themselves, singer.ts and formant.ts, are left as they are): its brightness as a tilt above 1.5 kHz,
// and the vibrato it lacks as a pitch swing made by a modulated delay (a Doppler vibrato). Both
// are linear in the voice, so the vocal stem still adds up to the mix.

import { SR } from "../dsp.ts"
import { VIBRATO } from "./phrasing.ts"

export interface VoiceColour {
  /** 0 (dull) .. 1 (bright); 0.5 leaves the voice as it is. */
  readonly brightness: number
  /** The vibrato to sing with: rate in Hz, depth as the peak deviation, a fraction of the pitch. */
  readonly vibratoRate: number
  readonly vibratoDepth: number
}

const TILT_COEF = 1 - Math.exp((-2 * Math.PI * 1500) / SR)

export function colourVoice(voice: Float32Array, colour: VoiceColour): void {
  const tilt = Math.max(-1, Math.min(1, (colour.brightness - 0.5) * 2))
  if (Math.abs(tilt) > 1e-3) {
    // Above 1.5 kHz: up to +5 dB (bright) or -14 dB (dull).
    let low = 0
    for (let i = 0; i < voice.length; i++) {
      const x = voice[i] as number
      low += TILT_COEF * (x - low)
      voice[i] = x + 0.8 * tilt * (x - low)
    }
  }
  // The voices already sing with VIBRATO; a persona sings with more.
  const extra = colour.vibratoDepth - VIBRATO
  if (extra > 0.001 && colour.vibratoRate > 0) {
    // y(t) = x(t - D(1 + sin wt)) swings the pitch by D·w: D = extra / w.
    const w = 2 * Math.PI * Math.max(3, Math.min(9, colour.vibratoRate))
    const d = (Math.min(extra, 0.06) / w) * SR
    const source = voice.slice()
    for (let i = 0; i < voice.length; i++) {
      const at = i - d * (1 + Math.sin((w * i) / SR))
      const j = Math.floor(at)
      const frac = at - j
      voice[i] = j < 0 ? 0 : (source[j] as number) * (1 - frac) + (source[j + 1] ?? 0) * frac
    }
  }
}
