// How loud an instrument's note is, and how that changes over the note, known before a song is
// played (decision 0129): one note is played alone and measured, once per worker and instrument.
// The mix, made forward in time, decides each part's level from its first seconds; these tell
// how much louder or softer the rest of the part will be (a piano's long chords in an intro fade
// where its comping later strikes again and again; a kick carries tens of times a hi-hat's energy).

import type { Instrument } from "./genres.ts"
import { DRUM_HOLD } from "./soundfont/programs.ts"
import { NotePlayer } from "./soundfont/sampler.ts"
import { Noise, SR, airLiftInPlace, highShelfInPlace } from "./synth/dsp.ts"
import { renderNote, type BassVoice } from "./synth/instruments.ts"

/** The loudness steps' length, in samples (BS.1770's 100 ms). */
export const STEP = Math.round(0.1 * SR)
/** The measured note is held this many steps (2 s), then released and heard for as many again. */
export const HELD_STEPS = 20

const envelopes = new Map<string, Float64Array>()
const drums = new Map<string, number>()

/** How an instrument is played: the bank's program, or the engine's own synthesis with its context. */
export type Voicing =
  | { readonly program: number }
  | { readonly instrument: Instrument; readonly bass: BassVoice; readonly bright: number }

/** Mean power in each 100 ms step of a stereo (or mono, `right` null) recording. */
function stepsOf(left: Float32Array, right: Float32Array | null): Float64Array {
  const steps = new Float64Array(Math.floor(left.length / STEP))
  for (let b = 0; b < steps.length; b++) {
    let e = 0
    for (let i = b * STEP; i < (b + 1) * STEP; i++)
      e += (left[i] as number) ** 2 + (right === null ? 0 : (right[i] as number) ** 2)
    steps[b] = e / STEP
  }
  return steps
}

/**
 * The power, step by step, of one note at `pitch` struck at full strength, held 2 s
 * (`HELD_STEPS`) and released: the first `HELD_STEPS` steps while held, the rest after the release.
 */
export function noteEnvelope(voicing: Voicing, pitch: number): Float64Array {
  const id =
    "program" in voicing
      ? `p${voicing.program}|${pitch}`
      : `s${voicing.instrument}|${voicing.bass}|${voicing.bright}|${pitch}`
  let envelope = envelopes.get(id)
  if (envelope === undefined) {
    const held = (HELD_STEPS * STEP) / SR
    const buf = new Float32Array(2 * HELD_STEPS * STEP)
    if ("program" in voicing)
      new NotePlayer([{ start: 0, end: held, key: pitch, velocity: 127 }], voicing.program, false, {
        mono: buf
      }).playTo(buf.length)
    else
      renderNote(voicing.instrument, { start: 0, dur: held, pitch, vel: 1 }, buf, {
        noise: new Noise(1),
        weird: 0,
        bass: voicing.bass,
        bright: voicing.bright
      })
    envelope = stepsOf(buf, null)
    envelopes.set(id, envelope)
  }
  return envelope
}

/** The power, step by step, of a note held `dur` seconds: the measured note's while held, then its release. */
export function notePowers(envelope: Float64Array, dur: number, amplitude: number): Float64Array {
  const held = Math.max(1, Math.round((dur * SR) / STEP))
  const powers = new Float64Array(held + HELD_STEPS)
  const a2 = amplitude * amplitude
  for (let k = 0; k < held; k++) powers[k] = a2 * (envelope[Math.min(k, HELD_STEPS - 1)] as number)
  // The release falls from where the note was when let go, when that is lower than after the
  // measured 2 s (a short pad note never swelled); a struck note let go early is taken as no louder.
  const heldAt = envelope[HELD_STEPS - 1] as number
  const from = heldAt > 0 ? Math.min(1, (envelope[Math.min(held, HELD_STEPS) - 1] as number) / heldAt) : 0
  for (let k = 0; k < HELD_STEPS; k++) powers[held + k] = a2 * from * (envelope[HELD_STEPS + k] as number)
  return powers
}

/**
 * The energy of one hit of a kit's key at full strength through the kit's colour (hats and
 * cymbals, `metal`, darker and at the overheads' gain; the whole kit darker, its sizzle lifted).
 */
export function drumEnergy(kit: number, key: number, metal: boolean): number {
  const id = `${kit}|${key}|${metal}`
  let energy = drums.get(id)
  if (energy === undefined) {
    const left = new Float32Array(SR)
    const right = new Float32Array(SR)
    new NotePlayer([{ start: 0, end: DRUM_HOLD, key, velocity: 127 }], kit, true, { left, right }).playTo(SR)
    for (const ch of [left, right]) {
      if (metal) {
        highShelfInPlace(ch, 0, SR, 3000, 0.6)
        for (let i = 0; i < SR; i++) ch[i] = (ch[i] as number) * 0.4
      }
      highShelfInPlace(ch, 0, SR, 2500, 0.4)
      airLiftInPlace(ch, 0, SR, 10000, 4.5)
    }
    energy = 0
    for (let i = 0; i < SR; i++) energy += (left[i] as number) ** 2 + (right[i] as number) ** 2
    drums.set(id, energy)
  }
  return energy
}
