// A persona made from an upload's track: the voice listening hears in the upload (register,
// brightness, vibrato; src/listen/voiceProfile.ts), kept with its transcription, and sung by
// later tasks under that persona. The "uploads" are tones written here: a voice-like harmonic
// tone over a bass note, with and without vibrato; the engine's renders are read back from its
// stems export with wavefile.

import { createRequire } from "node:module"
import { Midi } from "@tonejs/midi"
import { describe, expect, it } from "vitest"
import { sourceTake } from "../../src/arrange/index.ts"
import { listen } from "../../src/listen/analyse.ts"
import { voiceProfile } from "../../src/listen/voiceProfile.ts"
import { exportTrack, segmentsOf, trackWav } from "../../src/song.ts"
import type { TrackSource, UploadRoot, VoiceProfile } from "../../src/types.ts"

const require = createRequire(import.meta.url)
const { WaveFile } = require("wavefile") as typeof import("wavefile")

const rate = 44_100
const hz = (midi: number): number => 440 * 2 ** ((midi - 69) / 12)

/**
 * Four one-second notes of `pitch` with `harmonics` partials (1/k amplitudes), a vibrato of
 * `depth` (peak, a fraction of the pitch) at `vibratoHz`, over a quiet bass two octaves down.
 */
function sung(
  pitch: number,
  harmonics: number,
  depth: number,
  vibratoHz: number
): {
  readonly mono: Float32Array
  readonly notes: ReadonlyArray<{ pitch: number; start: number; end: number; velocity: number }>
} {
  const seconds = 4.5
  const mono = new Float32Array(Math.round(seconds * rate))
  let phase = 0
  for (let i = 0; i < mono.length; i++) {
    const t = i / rate
    const f = hz(pitch) * (1 + depth * Math.sin(2 * Math.PI * vibratoHz * t))
    phase += (2 * Math.PI * f) / rate
    let x = 0
    for (let k = 1; k <= harmonics; k++) x += Math.sin(k * phase) / k
    mono[i] = 0.3 * x + 0.1 * Math.sin((2 * Math.PI * hz(pitch - 24) * i) / rate)
  }
  const notes = [0, 1, 2, 3].flatMap((n) => [
    { pitch, start: 0.25 + n, end: 1.2 + n, velocity: 0.8 },
    { pitch: pitch - 24, start: 0.25 + n, end: 1.2 + n, velocity: 0.5 }
  ])
  return { mono, notes }
}

describe("the voice heard in an upload", () => {
  it("a high, bright voice singing with a wide vibrato", () => {
    const { mono, notes } = sung(69, 12, 0.03, 5.5)
    const voice = voiceProfile(mono, rate, notes)
    expect(voice?.register).toBe("f")
    expect(voice?.centre).toBe(69)
    expect(voice?.vibrato.rate).toBeGreaterThan(5)
    expect(voice?.vibrato.rate).toBeLessThan(6)
    expect(voice?.vibrato.depth).toBeGreaterThan(0.024)
    expect(voice?.vibrato.depth).toBeLessThan(0.036)
  })

  it("a low, dull voice singing straight", () => {
    const bright = voiceProfile(sung(69, 12, 0, 5.5).mono, rate, sung(69, 12, 0, 5.5).notes)
    const { mono, notes } = sung(57, 2, 0, 5.5)
    const voice = voiceProfile(mono, rate, notes)
    expect(voice?.register).toBe("m")
    expect(voice?.centre).toBe(57)
    expect(voice?.vibrato.depth).toBeLessThan(0.003)
    expect(voice?.brightness ?? 1).toBeLessThan(bright?.brightness ?? 0)
  })

  it("is heard while listening, and kept with the transcription", async () => {
    const { mono, notes } = sung(69, 12, 0.03, 5.5)
    const wav = new WaveFile()
    wav.fromScratch(
      1,
      rate,
      "16",
      Array.from(mono, (x) => Math.round(x * 32_000))
    )
    // The transcription is given (Basic Pitch is the server's listening test's to run).
    const heard = await listen(wav.toBuffer(), "audio/wav", async () => ({ notes }))
    expect(heard.transcription.notes).toEqual(notes)
    expect(heard.transcription.voice).toEqual(voiceProfile(mono, rate, notes))
    expect(heard.transcription.voice?.register).toBe("f")
    expect(heard.timings.voice).toBeGreaterThanOrEqual(0)
  })

  it("nothing to measure: no tune above the bass", () => {
    expect(voiceProfile(new Float32Array(rate), rate, [{ pitch: 40, start: 0, end: 0.9 }])).toBeNull()
  })
})

describe("a persona made from an upload's track", { timeout: 300_000 }, () => {
  const root = (voice: VoiceProfile): TrackSource => {
    const upload: UploadRoot = {
      id: "upl_persona",
      audioPath: "/nonexistent/never-read.wav",
      contentType: "audio/wav",
      duration: 20,
      analysis: { bpm: 100, key: "A minor", time_signature: "4/4", loudness_lufs: -14, beats: [0], chords: [] },
      transcription: { notes: [], voice }
    }
    return {
      request: { style: "100 bpm, in A minor", title: "Mine", lyrics: null, instrumental: true, model: "aether" },
      taskId: upload.id,
      index: 0,
      upload
    }
  }
  const wide: VoiceProfile = { register: "f", centre: 69, brightness: 0.9, vibrato: { rate: 5.5, depth: 0.04 } }
  const straight: VoiceProfile = { register: "m", centre: 57, brightness: 0.2, vibrato: { rate: 5.5, depth: 0 } }
  const song = (persona: TrackSource, taskId: string): TrackSource => ({
    request: {
      style: "folk, 100 bpm, in C major",
      title: "Sung as mine",
      lyrics: "[Verse]\nHold the morning\nHold it long and slow\nHold the evening\nLet the river flow",
      instrumental: false,
      model: "aether"
    },
    taskId,
    index: 0,
    persona
  })
  const tracks = { segmentsOf, trackWav }

  it("lends its register, and its vibrato and brightness to the voice that sings", async () => {
    const options = { maxSeconds: 24 }
    const high = song(root(wide), "persona-upload-wide")
    const low = song(root(straight), "persona-upload-straight")
    expect(sourceTake(high, options, tracks).score.voice).toBe("f")
    expect(sourceTake(low, options, tracks).score.voice).toBe("m")
    expect(sourceTake(high, options, tracks).voiceColour).toEqual({
      brightness: 0.9,
      vibratoRate: 5.5,
      vibratoDepth: 0.04
    })

    // Heard back on each render's vocal stem, along the notes its MIDI export says it sings; and
    // the stem's share of energy in its second difference (a rise of 12 dB an octave: its highs).
    const highs = new Map<TrackSource, number>()
    const heardIn = async (source: TrackSource): Promise<VoiceProfile | null> => {
      const [stems, midi] = await Promise.all([
        exportTrack(source, "stems", options, null),
        exportTrack(source, "midi", options, null)
      ])
      const wav = new WaveFile(stems.files.find((f) => f.stem === "vocals")?.bytes ?? new Uint8Array(0))
      const samples = wav.getSamples(true, Int16Array) as unknown as Int16Array
      const mono = Float32Array.from(
        { length: samples.length >> 1 },
        (_, i) => ((samples[2 * i] ?? 0) + (samples[2 * i + 1] ?? 0)) / 65_536
      )
      let energy = 0
      let curvature = 0
      for (let i = 2; i < mono.length; i++) {
        energy += (mono[i] ?? 0) ** 2
        curvature += ((mono[i] ?? 0) - 2 * (mono[i - 1] ?? 0) + (mono[i - 2] ?? 0)) ** 2
      }
      highs.set(source, curvature / energy)
      const sungNotes =
        new Midi(midi.files[0]?.bytes ?? new Uint8Array(0)).tracks.find((t) => t.name === "vocals")?.notes ?? []
      return voiceProfile(
        mono,
        rate,
        sungNotes.map((n) => ({ pitch: n.midi, start: n.time, end: n.time + n.duration }))
      )
    }
    const dull = song(root({ ...wide, brightness: 0.1 }), "persona-upload-wide")
    const [fromWide, fromStraight, fromDull] = await Promise.all([heardIn(high), heardIn(low), heardIn(dull)])
    // The formant voice sings with a vibrato of its own (1.2%); the wide persona's reaches 4%.
    expect(fromWide?.vibrato.depth ?? 0).toBeGreaterThan(0.025)
    expect(fromStraight?.vibrato.depth ?? 1).toBeLessThan(0.02)
    expect(fromWide?.vibrato.depth ?? 0).toBeGreaterThan(1.5 * (fromStraight?.vibrato.depth ?? 1))
    // The same voice and song, only the persona's brightness apart.
    expect(fromWide?.brightness ?? 0).toBeGreaterThan(fromDull?.brightness ?? 1)
    expect(highs.get(high) ?? 0).toBeGreaterThan(2 * (highs.get(dull) ?? 1))
  })
})
