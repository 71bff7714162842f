// A Standard MIDI File (format 1) from a plain description of a song in seconds. Generic on
// purpose: the engine writes the score it composed with it, and the upstream adapter turns an
// upstream's note list into a file with it. The bytes are laid out by `midi-file`.

import { writeMidi as encodeMidi, type MidiEvent } from "midi-file"

export interface MidiNoteInput {
  /** MIDI note number, 0..127. */
  readonly pitch: number
  /** Seconds from the start of the song. */
  readonly start: number
  readonly end: number
  /** MIDI velocity, 1..127. */
  readonly velocity: number
}

export interface MidiLyricInput {
  readonly text: string
  /** Seconds from the start of the song. */
  readonly time: number
}

export interface MidiTrackInput {
  readonly name: string
  /** General MIDI program, 0..127 (0-based: 0 = acoustic grand piano). */
  readonly program: number
  /** 0..15; 9 is General MIDI's percussion channel ("channel 10"). */
  readonly channel: number
  readonly notes: ReadonlyArray<MidiNoteInput>
  /** Sung syllables, written as lyric meta events on this track. */
  readonly lyrics?: ReadonlyArray<MidiLyricInput> | undefined
}

export interface MidiSongInput {
  readonly bpm: number
  /** "A minor", "F# major", "Bb"...; null or unreadable: no key signature event. */
  readonly key?: string | null | undefined
  /** Written as the conductor track's name. */
  readonly title?: string | undefined
  readonly tracks: ReadonlyArray<MidiTrackInput>
}

export const TICKS_PER_BEAT = 480

// Sharps (+) or flats (-) of the major key on each tonic pitch class.
const MAJOR_ACCIDENTALS: ReadonlyArray<number> = [0, -5, 2, -3, 4, -1, 6, 1, -4, 3, -2, 5]
const LETTER_PC: Readonly<Record<string, number>> = { c: 0, d: 2, e: 4, f: 5, g: 7, a: 9, b: 11 }

/** Key signature of a key name: sharps/flats and mode, or null when the name is not a key. */
export function keySignature(key: string): { readonly key: number; readonly scale: 0 | 1 } | null {
  const m = /^\s*([a-g])\s*(#|♯|b|♭)?\s*(major|minor|maj|min|m)?\s*$/i.exec(key)
  if (m === null) return null
  const accidental = m[2] === "#" || m[2] === "♯" ? 1 : m[2] === "b" || m[2] === "♭" ? -1 : 0
  const tonic = ((LETTER_PC[(m[1] ?? "c").toLowerCase()] ?? 0) + accidental + 12) % 12
  const minor = m[3] !== undefined && /^(minor|min|m)$/i.test(m[3])
  // A minor key is written with the signature of its relative major, a minor third up.
  return { key: MAJOR_ACCIDENTALS[minor ? (tonic + 3) % 12 : tonic] ?? 0, scale: minor ? 1 : 0 }
}

// midi-file writes each UTF-16 unit as one byte: hand it the UTF-8 bytes as a byte string.
const utf8 = (text: string): string => Buffer.from(text, "utf8").toString("latin1")

const clampInt = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, Math.round(x)))

type EventBody = MidiEvent extends infer E ? (E extends MidiEvent ? Omit<E, "deltaTime"> : never) : never
type Timed = { readonly tick: number; readonly order: number; readonly event: EventBody }

function withDeltas(events: Timed[]): MidiEvent[] {
  // Stable by time, then note-offs before lyrics before note-ons at the same tick.
  events.sort((a, b) => a.tick - b.tick || a.order - b.order)
  let last = 0
  const out: MidiEvent[] = []
  for (const e of events) {
    out.push({ ...e.event, deltaTime: e.tick - last } as MidiEvent)
    last = e.tick
  }
  return out
}

export function writeMidi(song: MidiSongInput): Uint8Array {
  if (!(song.bpm > 0) || !Number.isFinite(song.bpm))
    throw new RangeError(`bpm must be a positive number, got ${song.bpm}`)
  const ticksPerSecond = (song.bpm / 60) * TICKS_PER_BEAT
  const tick = (seconds: number): number => Math.max(0, Math.round(seconds * ticksPerSecond))
  let end = 0
  const tracks: MidiEvent[][] = []

  for (const t of song.tracks) {
    const channel = clampInt(t.channel, 0, 15)
    const events: Timed[] = [
      { tick: 0, order: 0, event: { type: "trackName", meta: true, text: utf8(t.name) } },
      { tick: 0, order: 1, event: { type: "programChange", channel, programNumber: clampInt(t.program, 0, 127) } }
    ]
    for (const n of t.notes) {
      const on = tick(n.start)
      const off = Math.max(on + 1, tick(n.end))
      const noteNumber = clampInt(n.pitch, 0, 127)
      events.push({
        tick: on,
        order: 4,
        event: { type: "noteOn", channel, noteNumber, velocity: clampInt(n.velocity, 1, 127) }
      })
      events.push({ tick: off, order: 2, event: { type: "noteOff", channel, noteNumber, velocity: 0 } })
      end = Math.max(end, off)
    }
    for (const l of t.lyrics ?? []) {
      events.push({ tick: tick(l.time), order: 3, event: { type: "lyrics", meta: true, text: utf8(l.text) } })
    }
    const body = withDeltas(events)
    body.push({ deltaTime: 0, type: "endOfTrack", meta: true })
    tracks.push(body)
  }

  const conductor: Timed[] = [
    { tick: 0, order: 0, event: { type: "trackName", meta: true, text: utf8(song.title ?? "") } },
    {
      tick: 0,
      order: 1,
      event: { type: "setTempo", meta: true, microsecondsPerBeat: Math.round(60_000_000 / song.bpm) }
    },
    {
      tick: 0,
      order: 2,
      event: { type: "timeSignature", meta: true, numerator: 4, denominator: 4, metronome: 24, thirtyseconds: 8 }
    }
  ]
  const signature = song.key === null || song.key === undefined ? null : keySignature(song.key)
  if (signature !== null)
    conductor.push({ tick: 0, order: 3, event: { type: "keySignature", meta: true, ...signature } })
  const head = withDeltas(conductor)
  head.push({ deltaTime: end, type: "endOfTrack", meta: true })

  const bytes = encodeMidi({
    header: { format: 1, numTracks: tracks.length + 1, ticksPerBeat: TICKS_PER_BEAT },
    tracks: [head, ...tracks]
  })
  return Uint8Array.from(bytes)
}
