// The General MIDI names of the engine's instruments and drums: what the MIDI export writes and
// what the SoundFont synthesizer plays, from one table so the two cannot drift apart.

import type { DrumHit } from "../compose.ts"
import type { Instrument } from "../genres.ts"
import type { KitFlavour } from "../synth/drums.ts"
import type { BassVoice } from "../synth/instruments.ts"

/** General MIDI programs (0-based) for the engine's instruments. */
export const PROGRAM: Readonly<Record<Instrument, number>> = {
  piano: 0,
  epiano: 4,
  guitar: 25,
  eguitar: 29,
  strings: 48,
  synth: 81,
  bass: 33,
  drums: 0,
  pad: 89,
  brass: 61,
  organ: 16,
  flute: 73,
  bells: 9,
  pluck: 46
}

export const BASS_PROGRAM: Readonly<Record<BassVoice, number>> = { electric: 33, upright: 32, synth: 38, sub: 38 }

/** General MIDI drum kits (program on channel 10) for each kit flavour: Standard, Electronic, TR-808, Brush, Power. */
export const KIT_PROGRAM: Readonly<Record<KitFlavour, number>> = {
  acoustic: 0,
  electronic: 24,
  "808": 25,
  brush: 40,
  metal: 16
}

/** General MIDI percussion keys for the drum kinds. */
const DRUM_KEY = {
  kick: 36,
  snare: 38,
  clap: 39,
  hat: 42,
  ohat: 46,
  ride: 51,
  crash: 49,
  tom: 45,
  rim: 37,
  shaker: 70
} as const
const TOM_KEYS = [41, 43, 45, 47, 48, 50] as const

/** The percussion key a drum hit sounds on. */
export function drumKey(hit: DrumHit): number {
  return hit.kind === "tom"
    ? (TOM_KEYS[Math.max(0, Math.min(TOM_KEYS.length - 1, Math.round(hit.tune) + 2))] ?? 45)
    : DRUM_KEY[hit.kind]
}

/** MIDI velocity of a 0..1 level, as written and as played. */
export const midiVelocity = (v: number): number => Math.max(1, Math.min(127, Math.round(v * 127)))

/** How long a drum hit's key is held (percussion mostly ignores it; the MIDI export writes it). */
export const DRUM_HOLD = 0.1
