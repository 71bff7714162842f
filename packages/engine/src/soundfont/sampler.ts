// Plays notes of the score through the SoundFont synthesizer (spessasynth_core), one part at a
// time on a fresh synthesizer: every part is rendered apart, so a part sounds the same alone
// (its stem) as in the mix, and one render never depends on what another left behind. The
// synthesizer's own effects are off; the mixer adds reverb to all parts alike.
//
// A note cache does most of the work: with effects, controllers and modulation sources fixed, a
// SoundFont voice's output is a function of its preset, key, velocity and how long the key is
// held, so each distinct (key, velocity, held samples) of a part is played once, alone, and its
// recording added at every onset, as the synthesizer itself sums its voices. A song repeats its
// chords, bass notes and drum hits, so this plays 3-17 times fewer voice-samples. What the cache
// cannot reproduce goes through the synthesizer as a live sequence: notes of an exclusive class
// (a closed hi-hat choking an open one), whose sound depends on the next note of the class.
// How close it is to one synthesizer playing the whole part: docs/decisions/0088-note-cache.md.

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

/** Where a part is played: a stereo pair, or one channel holding left + right (the mixer pans it again). */
export type SampleOut = { readonly left: Float32Array; readonly right: Float32Array } | { readonly mono: Float32Array }

const BLOCK = 128
/**
 * Voices the live sequence may sound at once; a new note takes the quietest's place beyond that.
 * (Notes from the cache are not capped: a voice the cap would take is one fading near silence,
 * 59-95 dB under the part, and the cache costs no more for it.)
 */
const VOICES = 16
const MELODIC = 0
const PERCUSSION = 9
/** SoundFont generator number of the exclusive class (the hi-hat choke group). */
const EXCLUSIVE_CLASS = 57

/** A note as samples: struck at `on`, released at `off` (a key's releases pair with its strikes in order, as the synthesizer pairs them). */
interface SampledNote {
  readonly on: number
  readonly off: number
  readonly key: number
  readonly velocity: number
}

function sampled(notes: ReadonlyArray<PlayedNote>, n: number): SampledNote[] {
  interface KeyEvent {
    readonly at: number
    readonly on: boolean
    readonly key: number
    readonly index: number
  }
  const events: KeyEvent[] = []
  notes.forEach((note, index) => {
    const at = Math.round(note.start * SR)
    if (at >= n) return
    events.push({ at, on: true, key: note.key, index })
    events.push({ at: Math.max(at + 1, Math.round(note.end * SR)), on: false, key: note.key, index })
  })
  // By time; at the same sample a key is released before it is struck again. Stable: notes keep
  // their order.
  events.sort((a, b) => a.at - b.at || Number(a.on) - Number(b.on))
  // A note-off releases the oldest sounding strike of its key (spessasynth's note ids).
  const waiting = new Map<number, number[]>()
  const strikes: Array<{ on: number; key: number; velocity: number; off: number }> = []
  for (const ev of events) {
    if (ev.on) {
      const note = notes[ev.index] as PlayedNote
      const queue = waiting.get(ev.key) ?? []
      queue.push(strikes.length)
      waiting.set(ev.key, queue)
      strikes.push({ on: ev.at, key: ev.key, velocity: note.velocity, off: n })
    } else {
      const first = waiting.get(ev.key)?.shift()
      if (first !== undefined) (strikes[first] as { off: number }).off = Math.min(n, ev.at)
    }
  }
  return strikes
}

function newSynth(program: number, percussion: boolean, bank: BankName): SpessaSynthProcessor {
  const synth = new SpessaSynthProcessor(SR, { effectsEnabled: false, eventsEnabled: false, maxBufferSize: BLOCK })
  synth.soundBankManager.addSoundBank(soundBank(bank), "gm")
  synth.programChange(percussion ? PERCUSSION : MELODIC, program)
  synth.setSystemParameter("voiceCap", VOICES)
  // Linear interpolation for pitched parts: a quarter less work than Hermite, and the mixer
  // rolls their top off anyway; drum hits are few and keep Hermite's crisper transients.
  if (!percussion) synth.setSystemParameter("interpolationType", InterpolationTypes.linear)
  return synth
}

/** Whether a key's sound depends on the notes after it: a voice with an exclusive class is released by the next of its class. */
function exclusiveKeys(
  notes: ReadonlyArray<SampledNote>,
  program: number,
  percussion: boolean,
  bank: BankName
): ReadonlySet<number> {
  const preset = soundBank(bank).getPreset({ program, bankMSB: 0, bankLSB: 0, isGMGSDrum: percussion }, "gs")
  const keys = new Set<number>()
  const seen = new Set<string>()
  for (const note of notes) {
    const id = `${note.key}|${note.velocity}`
    if (keys.has(note.key) || seen.has(id)) continue
    seen.add(id)
    if (preset.getVoiceParameters(note.key, note.velocity).some((v) => v.generators[EXCLUSIVE_CLASS] !== 0))
      keys.add(note.key)
  }
  return keys
}

/** A growable stereo recording of one note. */
class Tape {
  left = new Float32Array(SR)
  right = new Float32Array(SR)
  ensure(length: number): void {
    if (length <= this.left.length) return
    const size = Math.max(length, this.left.length * 2)
    const left = new Float32Array(size)
    const right = new Float32Array(size)
    left.set(this.left)
    right.set(this.right)
    this.left = left
    this.right = right
  }
}

/**
 * Plays one key alone on `synth` (idle before and after): struck at sample 0, released at `hold`,
 * recorded until every voice has died away or `limit` samples. Returns the recording's length.
 */
function record(synth: SpessaSynthProcessor, channel: number, note: SampledNote, limit: number, tape: Tape): number {
  const hold = note.off - note.on
  synth.noteOn(channel, note.key, note.velocity)
  let released = false
  let pos = 0
  while (pos < limit) {
    if (pos === hold) {
      synth.noteOff(channel, note.key)
      released = true
    }
    const count = Math.min(pos < hold ? hold - pos : BLOCK, BLOCK, limit - pos)
    tape.ensure(pos + count)
    tape.left.fill(0, pos, pos + count)
    tape.right.fill(0, pos, pos + count)
    synth.process(tape.left, tape.right, pos, count)
    // A block in which no voice was left sounding is silent, and so is everything after it.
    if (synth.voiceCount === 0) break
    pos += count
  }
  if (!released) synth.noteOff(channel, note.key)
  // Whatever still sounds (a note cut at the end of the take) stops here, and the key counters
  // start again: the next key is played on an idle synthesizer.
  synth.stopAllChannels(true)
  return pos
}

/** Notes alike in key, velocity and held samples: one recording serves them all. */
type Group = ReadonlyArray<SampledNote>

/** The notes grouped by (key, velocity, held samples), in the fixed order they are recorded in. */
function groupsOf(notes: ReadonlyArray<SampledNote>): Group[] {
  const groups = new Map<string, SampledNote[]>()
  for (const note of notes) {
    const id = `${note.key}|${note.velocity}|${note.off - note.on}`
    const group = groups.get(id)
    if (group === undefined) groups.set(id, [note])
    else group.push(note)
  }
  return [...groups.values()].sort((a, b) => {
    const x = a[0] as SampledNote
    const y = b[0] as SampledNote
    return x.key - y.key || x.velocity - y.velocity || x.off - x.on - (y.off - y.on)
  })
}

/**
 * Records each group once and adds it at every onset of the group, later ones too, into `out`;
 * returns the index after the last sample written. The synthesizer is reused, so the order of the
 * groups is part of what is played.
 */
function playCached(
  synth: SpessaSynthProcessor,
  channel: number,
  ordered: ReadonlyArray<Group>,
  out: SampleOut,
  n: number,
  tape: Tape
): number {
  let last = 0
  for (const group of ordered) {
    const first = group[0] as SampledNote
    let limit = 0
    for (const note of group) limit = Math.max(limit, n - note.on)
    const length = record(synth, channel, first, limit, tape)
    const { left, right } = tape
    if ("mono" in out) {
      const mono = out.mono
      for (let j = 0; j < length; j++) left[j] = (left[j] as number) + (right[j] as number)
      for (const note of group) {
        const count = Math.min(length, n - note.on)
        for (let j = 0, i = note.on; j < count; j++, i++) mono[i] = (mono[i] as number) + (left[j] as number)
        last = Math.max(last, note.on + count)
      }
    } else {
      const outL = out.left
      const outR = out.right
      for (const note of group) {
        const count = Math.min(length, n - note.on)
        for (let j = 0, i = note.on; j < count; j++, i++) {
          outL[i] = (outL[i] as number) + (left[j] as number)
          outR[i] = (outR[i] as number) + (right[j] as number)
        }
        last = Math.max(last, note.on + count)
      }
    }
  }
  return last
}

interface KeyEvent {
  readonly at: number
  readonly on: boolean
  readonly key: number
  readonly velocity: number
}

/**
 * Notes as one live sequence, sample-accurately (each block stops at the next key event), played
 * forward in time as far as asked: what it has played up to a sample never changes after.
 */
class LiveSequence {
  private readonly events: KeyEvent[] = []
  private readonly scratchL = new Float32Array(BLOCK)
  private readonly scratchR = new Float32Array(BLOCK)
  private e = 0
  private i: number
  private silentBlocks = 0
  /** The index after the last sample that can be non-zero, once the sequence has died away. */
  private ended: number | null = null
  private readonly synth: SpessaSynthProcessor
  private readonly channel: number
  private readonly out: SampleOut
  private readonly n: number

  constructor(
    synth: SpessaSynthProcessor,
    channel: number,
    notes: ReadonlyArray<SampledNote>,
    out: SampleOut,
    n: number
  ) {
    this.synth = synth
    this.channel = channel
    this.out = out
    this.n = n
    for (const note of notes) {
      this.events.push({ at: note.on, on: true, key: note.key, velocity: note.velocity })
      if (note.off < n) this.events.push({ at: note.off, on: false, key: note.key, velocity: 0 })
    }
    this.events.sort((a, b) => a.at - b.at || Number(a.on) - Number(b.on))
    this.i = this.events.length === 0 ? n : (this.events[0] as KeyEvent).at
    if (this.events.length === 0) this.ended = 0
  }

  /** Plays up to sample `to` (at most the take's end); returns the index after the last sample written so far. */
  playTo(to: number): number {
    const { synth, channel, events, out, n, scratchL, scratchR } = this
    const stop = Math.min(to, n)
    while (this.ended === null && this.i < stop) {
      const i = this.i
      while (this.e < events.length && (events[this.e] as KeyEvent).at <= i) {
        const ev = events[this.e] as KeyEvent
        if (ev.on) synth.noteOn(channel, ev.key, ev.velocity)
        else synth.noteOff(channel, ev.key)
        this.e++
      }
      const next = this.e < events.length ? (events[this.e] as KeyEvent).at : n
      const count = Math.min(BLOCK, next - i, n - i)
      scratchL.fill(0, 0, count)
      scratchR.fill(0, 0, count)
      synth.process(scratchL, scratchR, 0, count)
      if (synth.voiceCount > 0) {
        if ("mono" in out) {
          const mono = out.mono
          for (let k = 0; k < count; k++)
            mono[i + k] = (mono[i + k] as number) + ((scratchL[k] as number) + (scratchR[k] as number))
        } else {
          const { left, right } = out
          for (let k = 0; k < count; k++) {
            left[i + k] = (left[i + k] as number) + (scratchL[k] as number)
            right[i + k] = (right[i + k] as number) + (scratchR[k] as number)
          }
        }
      }
      this.i = i + count
      // After the last release, stop once every voice has died away.
      if (this.e >= events.length && synth.voiceCount === 0 && ++this.silentBlocks > 1) this.ended = this.i
    }
    if (this.ended === null && this.i >= n) this.ended = n
    return this.ended ?? this.i
  }
}

/**
 * Plays a part's notes with General MIDI `program` (a drum kit when `percussion`) into `out` (added
 * to what is there), forward in time: `playTo(t)` plays every note struck before sample `t`, so
 * that every sample before `t` is final (a note struck later writes nothing before its onset).
 * Notes from the cache are recorded the first time their group is struck and added at all of its
 * onsets at once; the exclusive-class notes run as a live sequence up to `t`.
 */
export class NotePlayer {
  private readonly synth: SpessaSynthProcessor
  private readonly channel: number
  /** Groups by their first onset. */
  private readonly groups: Group[]
  private nextGroup = 0
  private readonly live: LiveSequence | null
  private readonly tape = new Tape()
  private readonly n: number
  private last = 0
  private readonly out: SampleOut

  constructor(
    notes: ReadonlyArray<PlayedNote>,
    program: number,
    percussion: boolean,
    out: SampleOut,
    bank: BankName = DEFAULT_BANK
  ) {
    this.out = out
    this.n = "mono" in out ? out.mono.length : out.left.length
    const all = sampled(notes, this.n)
    this.channel = percussion ? PERCUSSION : MELODIC
    this.synth = newSynth(program, percussion, bank)
    const exclusive = all.length === 0 ? new Set<number>() : exclusiveKeys(all, program, percussion, bank)
    const alone = all.filter((note) => !exclusive.has(note.key))
    const live = all.filter((note) => exclusive.has(note.key))
    // Stable: groups first struck at the same sample keep the recording order of the whole part.
    this.groups = groupsOf(alone).sort((a, b) => firstOnset(a) - firstOnset(b))
    this.live =
      live.length === 0 ? null : new LiveSequence(newSynth(program, percussion, bank), this.channel, live, out, this.n)
  }

  /** Plays every note struck before sample `to`; returns the index after the last sample written so far. */
  playTo(to: number): number {
    let end = this.nextGroup
    while (end < this.groups.length && firstOnset(this.groups[end] as Group) < to) end++
    if (end > this.nextGroup) {
      // Recorded in the whole part's order within the batch (key, velocity, held samples).
      const batch = groupsInOrder(this.groups.slice(this.nextGroup, end))
      this.last = Math.max(this.last, playCached(this.synth, this.channel, batch, this.out, this.n, this.tape))
      this.nextGroup = end
    }
    if (this.live !== null) this.last = Math.max(this.last, this.live.playTo(to))
    return this.last
  }
}

function firstOnset(group: Group): number {
  let on = Number.POSITIVE_INFINITY
  for (const note of group) on = Math.min(on, note.on)
  return on
}

function groupsInOrder(groups: ReadonlyArray<Group>): Group[] {
  return [...groups].sort((a, b) => {
    const x = a[0] as SampledNote
    const y = b[0] as SampledNote
    return x.key - y.key || x.velocity - y.velocity || x.off - x.on - (y.off - y.on)
  })
}

/**
 * Renders `notes` with General MIDI `program` (a drum kit when `percussion`) into `out` (added to
 * what is there), each note from the sample it is struck on. Returns the index after the last
 * sample that can be non-zero.
 */
export function playNotes(
  notes: ReadonlyArray<PlayedNote>,
  program: number,
  percussion: boolean,
  out: SampleOut,
  bank: BankName = DEFAULT_BANK
): number {
  return new NotePlayer(notes, program, percussion, out, bank).playTo(Number.POSITIVE_INFINITY)
}

/**
 * The same notes through one synthesizer as a single live sequence (16 voices, the quietest
 * taken beyond that, hi-hats choking): what `playNotes` was before its note cache, kept as the
 * reference the cache is measured against (test/sound/sampler.test.ts).
 */
export function playNotesLive(
  notes: ReadonlyArray<PlayedNote>,
  program: number,
  percussion: boolean,
  out: SampleOut,
  bank: BankName = DEFAULT_BANK
): number {
  const n = "mono" in out ? out.mono.length : out.left.length
  const channel = percussion ? PERCUSSION : MELODIC
  return new LiveSequence(newSynth(program, percussion, bank), channel, sampled(notes, n), out, n).playTo(n)
}
