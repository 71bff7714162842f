import type { ProviderExportFile } from "@lyre/core/provider/outcomes"
import { writeMidi } from "@lyre/engine/midi"
import type { MidiTrackInput } from "@lyre/engine/midi"
import { gmProgramOf } from "./gmPrograms.ts"
import type { MidiInstrument } from "./sunoAnswers.ts"

/**
 * The upstream gives no tempo with its notes. At 120 bpm a beat is half a second, so the file's
 * ticks carry the upstream's seconds exactly and any player plays them at their real times.
 */
export const TRANSCRIPTION_BPM = 120

/** General MIDI's percussion channel ("channel 10"). */
const DRUM_CHANNEL = 9

// Krumhansl-Kessler key profiles, from C.
const MAJOR_PROFILE = [6.35, 2.23, 3.48, 2.33, 4.38, 4.09, 2.52, 5.19, 2.39, 3.66, 2.29, 2.88]
const MINOR_PROFILE = [6.33, 2.68, 3.52, 5.38, 2.6, 3.53, 2.54, 4.75, 3.98, 2.69, 3.34, 3.17]
const NOTE_NAMES = ["C", "C#", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B"]

const correlation = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): number => {
  const mean = (xs: ReadonlyArray<number>) => xs.reduce((sum, x) => sum + x, 0) / xs.length
  const ma = mean(a)
  const mb = mean(b)
  let num = 0
  let da = 0
  let db = 0
  for (let i = 0; i < a.length; i++) {
    const x = (a[i] ?? 0) - ma
    const y = (b[i] ?? 0) - mb
    num += x * y
    da += x * x
    db += y * y
  }
  return da === 0 || db === 0 ? 0 : num / Math.sqrt(da * db)
}

/**
 * The key the pitched notes suggest (Krumhansl-Schmuckler: the major or minor profile that best
 * matches how long each pitch class sounds), or null when nothing pitched was heard. The upstream
 * names no key, and a Standard MIDI File of ours carries a key signature.
 */
export const estimateKey = (tracks: ReadonlyArray<MidiTrackInput>): string | null => {
  const weight = Array.from({ length: 12 }, () => 0)
  for (const track of tracks) {
    if (track.channel === DRUM_CHANNEL) continue
    for (const note of track.notes) {
      const pc = ((Math.round(note.pitch) % 12) + 12) % 12
      weight[pc] = (weight[pc] ?? 0) + Math.max(0, note.end - note.start)
    }
  }
  if (weight.every((w) => w === 0)) return null
  let best = { score: -Infinity, key: "C major" }
  for (let tonic = 0; tonic < 12; tonic++) {
    const rotated = weight.map((_, i) => weight[(i + tonic) % 12] ?? 0)
    for (const [profile, mode] of [
      [MAJOR_PROFILE, "major"],
      [MINOR_PROFILE, "minor"]
    ] as const) {
      const score = correlation(rotated, profile)
      if (score > best.score) best = { score, key: `${NOTE_NAMES[tonic]} ${mode}` }
    }
  }
  return best.key
}

/**
 * The upstream's transcription as tracks: one per part, its General MIDI program from the part's
 * name, drums on the percussion channel, the other parts on channels of their own (shared only
 * past fifteen parts). Velocities come as 0..1.
 */
export const tracksOf = (instruments: ReadonlyArray<MidiInstrument>): ReadonlyArray<MidiTrackInput> => {
  let nextChannel = 0
  return instruments.map((instrument) => {
    const name = instrument.name || "Part"
    const { program, drums } = gmProgramOf(name)
    let channel = DRUM_CHANNEL
    if (!drums) {
      channel = nextChannel % 15 >= DRUM_CHANNEL ? (nextChannel % 15) + 1 : nextChannel % 15
      nextChannel++
    }
    const notes = (instrument.notes ?? []).map((note) => ({
      pitch: note.pitch,
      start: Math.max(0, note.start),
      end: Math.max(0, note.start, note.end),
      velocity: Math.round(Math.min(1, Math.max(0, note.velocity ?? 1)) * 126) + 1
    }))
    return { name, program, channel, notes }
  })
}

/** The transcription as a Standard MIDI File (format 1), written by the engine's writer. */
export const transcriptionFile = (instruments: ReadonlyArray<MidiInstrument>): ProviderExportFile => {
  const tracks = tracksOf(instruments)
  const bytes = writeMidi({ bpm: TRANSCRIPTION_BPM, key: estimateKey(tracks), tracks })
  return { name: "track.mid", contentType: "audio/midi", stem: null, content: { _tag: "Bytes", bytes } }
}
