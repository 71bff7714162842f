// Plays notes of the score through the SoundFont synthesizer (spessasynth_core), one part at a
// time on a fresh synthesizer: every part is rendered apart, so a part sounds the same alone
// (its stem) as in the mix, and one render never depends on what another left behind. The
// synthesizer's own effects are off; the mixer adds reverb to all parts alike.

import { InterpolationTypes, SpessaSynthProcessor } from "spessasynth_core"
import { SR } from "../synth/dsp.ts"
import { DEFAULT_BANK, soundBank, type BankName } from "./bank.ts"

/** One key held on the synthesizer, in seconds and MIDI units. */
export interface PlayedNote {
  readonly start: number
  readonly end: number
  readonly key: number
  readonly velocity: number
}

const BLOCK = 128
/**
 * Voices one part may sound at once; a new note takes the oldest's place beyond that. Strummed
 * chords with long release tails reach 60 otherwise, at four times the cost, while 16 is more
 * than a guitar's six strings or a pianist's ten fingers let ring audibly.
 */
const VOICES = 16
const MELODIC = 0
const PERCUSSION = 9

interface KeyEvent { readonly at: number; readonly on: boolean; readonly key: number; readonly velocity: number }

function schedule(notes: ReadonlyArray<PlayedNote>, n: number): KeyEvent[] {
  const events: KeyEvent[] = []
  for (const note of notes) {
    const at = Math.round(note.start * SR)
    if (at >= n) continue
    events.push({ at, on: true, key: note.key, velocity: note.velocity })
    events.push({ at: Math.max(at + 1, Math.round(note.end * SR)), on: false, key: note.key, velocity: 0 })
  }
  // By time; at the same sample a key is released before it is struck again.
  return events.sort((a, b) => a.at - b.at || Number(a.on) - Number(b.on))
}

/**
 * Renders `notes` with General MIDI `program` (a drum kit when `percussion`) into `left` and
 * `right` (added to what is there), sample-accurately: each block stops at the next key event.
 * Returns the index after the last sample that can be non-zero.
 */
export function playNotes(notes: ReadonlyArray<PlayedNote>, program: number, percussion: boolean, left: Float32Array, right: Float32Array, bank: BankName = DEFAULT_BANK): number {
  const n = left.length
  const events = schedule(notes, n)
  if (events.length === 0) return 0
  const synth = new SpessaSynthProcessor(SR, { effectsEnabled: false, eventsEnabled: false, maxBufferSize: BLOCK })
  synth.soundBankManager.addSoundBank(soundBank(bank), "gm")
  const channel = percussion ? PERCUSSION : MELODIC
  synth.programChange(channel, program)
  synth.setSystemParameter("voiceCap", VOICES)
  // Linear interpolation for pitched parts: a quarter less work than Hermite, and the mixer
  // rolls their top off anyway; drum hits are few and keep Hermite's crisper transients.
  if (!percussion) synth.setSystemParameter("interpolationType", InterpolationTypes.linear)
  const scratchL = new Float32Array(BLOCK)
  const scratchR = new Float32Array(BLOCK)
  let e = 0
  let i = (events[0] as KeyEvent).at
  let silentBlocks = 0
  while (i < n) {
    while (e < events.length && (events[e] as KeyEvent).at <= i) {
      const ev = events[e] as KeyEvent
      if (ev.on) synth.noteOn(channel, ev.key, ev.velocity)
      else synth.noteOff(channel, ev.key)
      e++
    }
    const next = e < events.length ? (events[e] as KeyEvent).at : n
    const count = Math.min(BLOCK, next - i, n - i)
    scratchL.fill(0, 0, count)
    scratchR.fill(0, 0, count)
    synth.process(scratchL, scratchR, 0, count)
    for (let k = 0; k < count; k++) {
      left[i + k] = (left[i + k] as number) + (scratchL[k] as number)
      right[i + k] = (right[i + k] as number) + (scratchR[k] as number)
    }
    i += count
    // After the last release, stop once every voice has died away.
    if (e >= events.length && synth.voiceCount === 0 && ++silentBlocks > 1) return i
  }
  return n
}
