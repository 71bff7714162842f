/**
 * A song made outside the engine: a melody over chords, bass and drums written here as a MIDI
 * file with @tonejs/midi, then rendered to WAV by Debian's FluidSynth with its General MIDI
 * SoundFont (test/fluidsynth.ts installs both). What the listening must hear is what is written.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createRequire } from "node:module"
import { fluidsynthPath, soundFontPath } from "../../../../test/fluidsynth.ts"

const { Midi } = createRequire(import.meta.url)("@tonejs/midi") as typeof import("@tonejs/midi")

export interface WrittenNote {
  readonly pitch: number
  /** Seconds. */
  readonly start: number
  readonly duration: number
}

export interface OutsideSong {
  /** The rendering, in the container asked for (WAV unless told otherwise). */
  readonly wav: Buffer
  readonly bpm: number
  /** `G major`. */
  readonly key: string
  readonly melody: ReadonlyArray<WrittenNote>
}

/** G major at 100 bpm: I - vi - IV - V, twice, a lead line of quarters and eighths over it. */
export const writeOutsideSong = (format: "wav" | "flac" | "oga" = "wav"): OutsideSong => {
  const bpm = 100
  const beat = 60 / bpm
  const midi = new Midi()
  midi.header.setTempo(bpm)
  const lead = midi.addTrack()
  lead.channel = 0
  lead.instrument.number = 73 // flute: one clear line
  const pads = midi.addTrack()
  pads.channel = 1
  pads.instrument.number = 48 // strings
  const bass = midi.addTrack()
  bass.channel = 2
  bass.instrument.number = 33
  const drums = midi.addTrack()
  drums.channel = 9

  const progression: ReadonlyArray<ReadonlyArray<number>> = [
    [55, 59, 62], // G
    [52, 55, 59], // Em
    [48, 52, 55], // C
    [50, 54, 57] // D
  ]
  // Beats per note, and the pitch: a tune that walks the G major scale and lands on its tonic.
  const tune: ReadonlyArray<readonly [number, number]> = [
    [79, 1],
    [78, 0.5],
    [76, 0.5],
    [74, 1],
    [71, 1],
    [76, 1],
    [74, 0.5],
    [72, 0.5],
    [71, 1],
    [67, 1],
    [72, 1],
    [74, 0.5],
    [76, 0.5],
    [79, 1],
    [76, 1],
    [74, 1],
    [78, 1],
    [81, 1],
    [78, 1],
    [79, 1],
    [81, 0.5],
    [79, 0.5],
    [78, 1],
    [74, 1],
    [71, 1],
    [72, 0.5],
    [74, 0.5],
    [76, 1],
    [79, 1],
    [72, 1],
    [76, 1],
    [81, 1],
    [79, 1],
    [78, 1],
    [76, 1],
    [74, 1],
    [79, 1]
  ]
  const bars = 8
  const melody: Array<WrittenNote> = []
  let at = beat // one beat of count-in
  for (const [pitch, beats] of tune) {
    lead.addNote({ midi: pitch, time: at, duration: beats * beat * 0.9, velocity: 0.9 })
    melody.push({ pitch, start: at, duration: beats * beat * 0.9 })
    at += beats * beat
  }
  for (let bar = 0; bar < bars; bar++) {
    const start = beat + bar * 4 * beat
    const chord = progression[bar % progression.length] ?? []
    for (const pitch of chord) pads.addNote({ midi: pitch, time: start, duration: 4 * beat * 0.95, velocity: 0.45 })
    const root = (chord[0] ?? 48) - 12
    for (let b = 0; b < 4; b++)
      bass.addNote({ midi: root, time: start + b * beat, duration: beat * 0.8, velocity: 0.6 })
    for (let b = 0; b < 4; b++) {
      drums.addNote({ midi: b % 2 === 0 ? 36 : 38, time: start + b * beat, duration: 0.1, velocity: 0.8 })
      for (let half = 0; half < 2; half++)
        drums.addNote({ midi: 42, time: start + (b + half / 2) * beat, duration: 0.05, velocity: 0.4 })
    }
  }
  return { wav: renderWithFluidSynth(midi, format), bpm, key: "G major", melody }
}

/** A MIDI file rendered by FluidSynth with its General MIDI SoundFont, in the container asked for. */
const renderWithFluidSynth = (midi: InstanceType<typeof Midi>, format: "wav" | "flac" | "oga"): Buffer => {
  const dir = mkdtempSync(join(tmpdir(), "lyre-outside-"))
  try {
    const midPath = join(dir, "song.mid")
    const wavPath = join(dir, `song.${format}`)
    writeFileSync(midPath, midi.toArray())
    execFileSync(
      fluidsynthPath,
      ["-ni", "-q", "-g", "0.6", "-r", "44100", "-T", format, "-F", wavPath, soundFontPath, midPath],
      { stdio: "ignore" }
    )
    return readFileSync(wavPath)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * A waltz made outside: sixteen bars of three beats, the bass on one and the chord on two and
 * three (oom-pah-pah), with a kick and hats or without drums at all.
 */
export const writeOutsideWaltz = (bpm: number, drums: boolean): Buffer => {
  const beat = 60 / bpm
  const midi = new Midi()
  midi.header.setTempo(bpm)
  midi.header.timeSignatures.push({ ticks: 0, timeSignature: [3, 4] })
  const pads = midi.addTrack()
  pads.channel = 1
  pads.instrument.number = 0
  const bass = midi.addTrack()
  bass.channel = 2
  bass.instrument.number = 32
  const kit = midi.addTrack()
  kit.channel = 9
  const progression: ReadonlyArray<ReadonlyArray<number>> = [
    [55, 59, 62],
    [52, 55, 59],
    [48, 52, 55],
    [50, 54, 57]
  ]
  for (let bar = 0; bar < 16; bar++) {
    const start = beat + bar * 3 * beat
    const chord = progression[bar % progression.length] ?? []
    bass.addNote({ midi: (chord[0] ?? 48) - 12, time: start, duration: beat * 0.9, velocity: 0.8 })
    for (const b of [1, 2])
      for (const pitch of chord)
        pads.addNote({ midi: pitch, time: start + b * beat, duration: beat * 0.6, velocity: 0.45 })
    if (drums)
      for (let b = 0; b < 3; b++)
        kit.addNote({ midi: b === 0 ? 36 : 42, time: start + b * beat, duration: 0.1, velocity: b === 0 ? 0.9 : 0.4 })
  }
  return renderWithFluidSynth(midi, "wav")
}
