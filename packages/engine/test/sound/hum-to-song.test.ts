// Hum to song (issue 51): an upload of a melody hummed alone becomes a whole song in the style
// asked for, on that melody. The hum is synthesised here as a voice is heard: a man's register
// (D3 to D4, under the G3 a band's tune is read above), a glottal tone through the formants of
// an "ah", a vibrato of 35 cents at 5.5 Hz coming in after each note's onset, glides into legato
// notes and a breath between phrases. It is listened to as every upload is (Basic Pitch, the
// beat tracker, the key and the chords), a cover of it is made in another style, and the melody
// kept is judged from the cover's MIDI export, as the other cover tests judge it. No audio is
// rendered: the MIDI export composes the cover, and a render only plays it.

import { createRequire } from "node:module"
import { Midi } from "@tonejs/midi"
import { beforeAll, describe, expect, it } from "vitest"
import { sourceTake } from "../../src/arrange/index.ts"
import { listen } from "../../src/listen/analyse.ts"
import { transcribe } from "../../src/listen/transcribe.ts"
import { exportTrack, segmentsOf, trackWav } from "../../src/song.ts"
import type { TrackSource, UploadRoot } from "../../src/types.ts"

const require = createRequire(import.meta.url)
const { WaveFile } = require("wavefile") as typeof import("wavefile")

const rate = 44_100
const bpm = 100
const beat = 60 / bpm
/** Where the first note starts, seconds. */
const lead = 0.6
/** The tune in G major: MIDI note and beats; a rest (null) is a breath between phrases. */
const tune: ReadonlyArray<readonly [number | null, number]> = [
  [55, 1],
  [57, 1],
  [59, 2],
  [62, 1],
  [60, 1],
  [59, 1],
  [57, 0.75],
  [null, 0.25],
  [55, 1.5],
  [52, 0.5],
  [54, 1],
  [55, 1],
  [57, 2],
  [50, 1.75],
  [null, 0.25],
  [55, 1],
  [59, 1],
  [62, 1],
  [64, 1],
  [62, 1],
  [59, 1],
  [57, 2],
  [55, 3]
]

interface Sung {
  readonly pitch: number
  readonly start: number
  readonly end: number
}

const sungNotes: ReadonlyArray<Sung> = (() => {
  const notes: Array<Sung> = []
  let at = lead
  for (const [pitch, beats] of tune) {
    if (pitch !== null) notes.push({ pitch, start: at, end: at + beats * beat })
    at += beats * beat
  }
  return notes
})()

/** The formants of an "ah" (centre Hz, bandwidth Hz, gain), as a resonance curve over the harmonics. */
const formants = [
  [700, 110, 1],
  [1220, 120, 0.5],
  [2600, 160, 0.25]
] as const
const formantGain = (f: number): number =>
  formants.reduce((g, [centre, width, gain]) => g + gain / (1 + ((f - centre) / width) ** 2), 0.02)

/** The hum as 16-bit mono samples. */
function hum(): Int16Array {
  const seconds = (sungNotes[sungNotes.length - 1]?.end ?? 0) + 0.8
  const out = new Float32Array(Math.round(seconds * rate))
  const glide = 0.07
  let phase = 0
  let noise = 7
  for (let i = 0; i < out.length; i++) {
    const t = i / rate
    const k = sungNotes.findIndex((n) => t >= n.start && t < n.end)
    const note = sungNotes[k]
    if (note === undefined) continue
    const previous = sungNotes[k - 1]
    const legato = previous !== undefined && Math.abs(previous.end - note.start) < 1e-9
    const into = t - note.start
    // A legato note is reached by a glide from the one before; every note then wavers.
    const pitch =
      legato && into < glide
        ? previous.pitch + (note.pitch - previous.pitch) * (0.5 - 0.5 * Math.cos((Math.PI * into) / glide))
        : note.pitch
    const vibrato = Math.min(1, Math.max(0, (into - 0.2) / 0.3)) * 0.35 * Math.sin(2 * Math.PI * 5.5 * t)
    const f0 = 440 * 2 ** ((pitch + vibrato - 69) / 12)
    phase += (2 * Math.PI * f0) / rate
    let s = 0
    for (let h = 1; h * f0 < 5000; h++) s += (formantGain(h * f0) / h ** 0.3) * Math.sin(h * phase)
    noise = (noise * 1_103_515_245 + 12_345) & 0x7fffffff
    const envelope = Math.min(1, into / (legato ? 0.02 : 0.06)) * Math.min(1, (note.end - t) / 0.03)
    out[i] = envelope * (s + 0.02 * (noise / 0x3fffffff - 1))
  }
  const peak = out.reduce((m, v) => Math.max(m, Math.abs(v)), 0)
  return Int16Array.from(out, (v) => Math.round((v / peak) * 0.7 * 32_767))
}

let root: UploadRoot
let heardSeconds: number

beforeAll(async () => {
  const wav = new WaveFile()
  wav.fromScratch(1, rate, "16", Array.from(hum()))
  const listened = await listen(new Uint8Array(wav.toBuffer()), "audio/wav", transcribe)
  heardSeconds = listened.duration
  root = {
    id: "upl_hum",
    // Never read: a cover composes from what was heard.
    audioPath: "/nonexistent/hum.wav",
    contentType: "audio/wav",
    duration: listened.duration,
    analysis: listened.analysis,
    transcription: listened.transcription
  }
}, 120_000)

/** The hum's track, as core makes an upload's (generation/uploadTracks.ts): its request is what was heard. */
const uploadTrack = (): TrackSource => ({
  request: {
    style: `${root.analysis.bpm} bpm, in ${root.analysis.key}`,
    title: "Hummed",
    lyrics: null,
    instrumental: true,
    model: "aether"
  },
  taskId: root.id,
  index: 0,
  upload: root
})

const cover = (): TrackSource => ({
  request: {
    style: "bossa nova, acoustic guitar",
    title: "Hum to song",
    lyrics: null,
    instrumental: true,
    model: "aether"
  },
  taskId: "hum-to-song",
  index: 0,
  derives: { kind: "cover", source: uploadTrack() }
})

describe("hum to song", { timeout: 60_000 }, () => {
  it("hears the hum's tempo and key", () => {
    expect(Math.abs(root.analysis.bpm - bpm) / bpm).toBeLessThan(0.02)
    expect(root.analysis.key).toBe("G major")
  })

  it("makes a whole song in the style asked for, as long as the hum, that keeps 80% of its notes or more", async () => {
    const take = sourceTake(cover(), {}, { segmentsOf, trackWav })
    expect(take.spec.genre.name).toBe("jazz")
    const midi = new Midi((await exportTrack(cover(), "midi", {}, null)).files[0]?.bytes ?? new Uint8Array(0))
    const tempo = midi.header.tempos[0]?.bpm ?? 0
    expect(Math.abs(tempo - root.analysis.bpm)).toBeLessThan(0.01)
    // A band under the tune: drums, a bass line and chords at least (the style may add more).
    const roles = midi.tracks.filter((t) => t.notes.length > 0).map((t) => t.name.split(" ")[0])
    expect(roles).toEqual(expect.arrayContaining(["chords", "bass", "lead", "drums"]))
    // As long as the hum from its first beat, within a bar.
    const grid = root.analysis.beats[0] ?? 0
    expect(Math.abs(midi.duration - (heardSeconds - grid))).toBeLessThan((4 * 60) / tempo)

    // The tune: each sung note found in the cover's lead, in order, at its pitch and within half
    // a beat of where it was sung (the cover's bar 0 is the hum's first beat).
    const played = midi.tracks.find((t) => t.name.startsWith("lead"))?.notes ?? []
    const at = (t: number) => ((t - grid) * root.analysis.bpm) / tempo
    let next = 0
    let kept = 0
    for (const n of sungNotes) {
      const found = played.findIndex(
        (p, i) => i >= next && p.midi === n.pitch && Math.abs(p.time - Math.max(0, at(n.start))) < beat / 2
      )
      if (found < 0) continue
      kept++
      next = found + 1
    }
    expect(kept / sungNotes.length, `${kept} of ${sungNotes.length} sung notes kept`).toBeGreaterThanOrEqual(0.8)
    // And not a stutter: a held note played once, not again at every swing of its vibrato.
    expect(played.length).toBeLessThanOrEqual(Math.ceil(1.2 * sungNotes.length))
  })
})
