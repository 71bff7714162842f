// Tracks made from tracks (src/arrange/), measured on what the engine gives out, read with
// libraries we did not write: MIDI exports parsed with @tonejs/midi, WAV exports with wavefile.

import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Midi } from "@tonejs/midi"
import { afterAll, describe, expect, it } from "vitest"
import { makeEngine, type EngineExport, type EngineRequest, type TrackSource } from "../../src/index.ts"
import { sheetOf } from "../../src/arrange/sheet.ts"
import { segmentsOf, trackWav } from "../../src/song.ts"
import { readPcm16 } from "../support/wav.ts"

const tracks = { segmentsOf, trackWav }

const LYRICS =
  "[Verse]\nNeon lights are calling me tonight\nRunning through the city burning bright\n[Chorus]\nHold on, hold on to the night\nNever let it go tonight"
const song: EngineRequest = {
  style: "synthwave, 110 bpm, in A minor, synth, drums",
  title: "Neon Nights",
  lyrics: LYRICS,
  instrumental: false,
  model: "aether",
  vocal_gender: "f"
}
const source: TrackSource = { request: song, taskId: "arrange-source", index: 0 }

// One thread each: every worker started costs about a second of CPU (its modules, the SoundFont).
const engine = makeEngine({ threads: 1, pcmCache: null })
// Where the tests hear audio, the songs are cut at 24 s: what they check (tags, an edit's seams and
// stems) does not depend on the song's length. Its PCM cache is the engine's own, as in service: a
// take rendered once (an edit's source, the edit) is read back by the exports after it.
const cacheDir = mkdtempSync(join(tmpdir(), "lyre-arrange-test-"))
const short = makeEngine({ threads: 1, pcmCache: { dir: cacheDir, maxBytes: 1024 ** 3 }, render: { maxSeconds: 24 } })
afterAll(async () => {
  await Promise.all([engine.close(), short.close()])
  rmSync(cacheDir, { recursive: true, force: true })
})

function fileOf(e: EngineExport, name: string): Uint8Array {
  const f = e.files.find((x) => x.name === name)
  if (f === undefined) throw new Error(`no ${name} in ${e.files.map((x) => x.name).join(", ")}`)
  return f.bytes
}

const midiOf = async (s: TrackSource): Promise<Midi> => new Midi(fileOf(await engine.export(s, "midi"), "track.mid"))

/** Interleaved 16-bit samples of a WAV export (of a song cut at 24 s), as wavefile reads them. */
const samplesOf = async (s: TrackSource): Promise<Int16Array> =>
  readPcm16(fileOf(await short.export(s, "wav"), "track.wav")).samples

const PC: Readonly<Record<string, number>> = {
  C: 0,
  "C#": 1,
  Db: 1,
  D: 2,
  "D#": 3,
  Eb: 3,
  E: 4,
  F: 5,
  "F#": 6,
  Gb: 6,
  G: 7,
  "G#": 8,
  Ab: 8,
  A: 9,
  "A#": 10,
  Bb: 10,
  B: 11,
  Cb: 11
}
const MAJOR = [0, 2, 4, 5, 7, 9, 11]
const MINOR = [0, 2, 3, 5, 7, 8, 10]

/** The tonic and mode a MIDI file's key signature names (@tonejs/midi names minor keys by their relative major). */
function keyOf(midi: Midi): { readonly tonic: number; readonly minor: boolean } {
  const signature = midi.header.keySignatures[0]
  if (signature === undefined) throw new Error("no key signature")
  const major = PC[signature.key] ?? 0
  const minor = signature.scale === "minor"
  return { tonic: minor ? (major + 9) % 12 : major, minor }
}

/** The sung melody of a MIDI file: each note as its scale degree and its place in the bar (sixteenths). */
function melodyOf(midi: Midi): ReadonlyArray<string> {
  const { tonic, minor } = keyOf(midi)
  const bpm = midi.header.tempos[0]?.bpm ?? 120
  const bar = 240 / bpm
  const notes = midi.tracks.find((t) => t.name === "vocals")?.notes ?? []
  const scale = minor ? MINOR : MAJOR
  return notes.map((n) => {
    const b = Math.floor(n.time / bar + 1e-6)
    const sixteenth = Math.round(((n.time - b * bar) / bar) * 16)
    const pc = (((n.midi - tonic) % 12) + 12) % 12
    const degree = scale.indexOf(pc)
    return `${b}:${sixteenth}:${degree < 0 ? `x${pc}` : degree}`
  })
}

describe("a cover of an engine track", { timeout: 300_000 }, () => {
  const cover: TrackSource = {
    // The default weight, the lowest that keeps the source's rhythm whole (below it the tune moves
    // towards the new style's rhythm: "audio_weight on a cover" below).
    request: { ...song, style: "bossa nova, acoustic guitar, brass, 140 bpm", audio_weight: 0.5 },
    taskId: "arrange-cover",
    index: 0,
    derives: { kind: "cover", source }
  }

  it("keeps the key, the form and the melody (scale degrees on bar positions); a bpm in the style sets its tempo", async () => {
    const [original, covered] = await Promise.all([midiOf(source), midiOf(cover)])
    expect(keyOf(covered)).toEqual(keyOf(original))
    expect(covered.header.tempos.map((t) => Math.round(t.bpm))).toEqual([140])
    expect(original.header.tempos.map((t) => Math.round(t.bpm))).toEqual([110])

    expect(sheetOf(cover, {}, tracks).plan.length).toBe(sheetOf(source, {}, tracks).plan.length)
    expect(sheetOf(cover, {}, tracks).chords.length).toBe(sheetOf(source, {}, tracks).chords.length)

    const theirs = melodyOf(original)
    const ours = new Set(melodyOf(covered))
    expect(theirs.length).toBeGreaterThan(20)
    const agreeing = theirs.filter((note) => ours.has(note)).length
    expect(agreeing / theirs.length).toBeGreaterThanOrEqual(0.9)

    // Another instrument plays it: the new style's band, not the source's.
    const programs = (m: Midi) =>
      new Set(m.tracks.filter((t) => t.name !== "vocals" && t.name !== "drums").map((t) => t.instrument.number))
    expect([...programs(covered)]).not.toEqual([...programs(original)])
  })

  it("renders: two takes whose tags name the source's key and the new tempo", async () => {
    const takes = await short.arrange([cover, { ...cover, index: 1 }])
    expect(takes).toHaveLength(2)
    for (const take of takes) {
      expect(take.tags).toContain("140 bpm")
      expect(take.tags).toContain("A minor")
      expect(take.lyrics).toBe(LYRICS)
      expect(take.mp3.length).toBeGreaterThan(10_000)
    }
  })
})

/** Each onset of a MIDI track in sixteenths from its bar line (at the file's tempo). */
function barPositions(midi: Midi, track: (name: string) => boolean): ReadonlyArray<number> {
  const bar = 240 / (midi.header.tempos[0]?.bpm ?? 120)
  const notes = midi.tracks.find((t) => track(t.name))?.notes ?? []
  return notes.map((n) => ((n.time / bar) % 1) * 16)
}

/**
 * The sixteenths of a bar on which a jazz tune falls (bossa nova is the engine's jazz): straight,
 * but for the off-beat eighths, which its swing of 0.3 delays by 0.6 of a sixteenth.
 */
const SWUNG_JAZZ = [0, 1, 2.6, 3].flatMap((s) => [s, s + 4, s + 8, s + 12])
const onGrid = (position: number, grid: ReadonlyArray<number>): boolean =>
  grid.some((g) => Math.abs(position - g) < 0.05 || Math.abs(position - 16 - g) < 0.05)

describe("audio_weight on a cover of an engine track", { timeout: 300_000 }, () => {
  const at = (weight: number): TrackSource => ({
    request: { ...song, style: "bossa nova, acoustic guitar, brass, 140 bpm", audio_weight: weight },
    taskId: "arrange-cover-weight",
    index: 0,
    derives: { kind: "cover", source }
  })

  it("1 keeps the source's note onsets; 0 sings the same notes in the new style's rhythm", async () => {
    const [original, kept, moved, half] = await Promise.all([
      midiOf(source),
      midiOf(at(1)),
      midiOf(at(0)),
      midiOf(at(0.25))
    ])
    const theirs = melodyOf(original)
    expect(theirs.length).toBeGreaterThan(20)
    // 1: every sung note on the source's bar and sixteenth, with the source's scale degree.
    expect(melodyOf(kept)).toEqual(theirs)

    // 0: the same scale degrees in the same order...
    const degrees = (m: Midi): ReadonlyArray<string> => melodyOf(m).map((n) => n.split(":")[2] ?? "")
    expect(degrees(moved)).toEqual(degrees(original))
    // ...on the new style's swung grid, the source's straight one having no swung off-beat...
    const vocals = (name: string): boolean => name === "vocals"
    const positions = barPositions(moved, vocals)
    expect(positions.every((p) => onGrid(p, SWUNG_JAZZ))).toBe(true)
    expect(positions.filter((p) => onGrid(p, [2.6, 6.6, 10.6, 14.6])).length / positions.length).toBeGreaterThan(0.1)
    expect(barPositions(original, vocals).every((p) => Math.abs(p - Math.round(p)) < 0.05)).toBe(true)
    // ...so that few notes fall where the source's did.
    const same = (m: Midi): number => {
      const ours = new Set(melodyOf(m))
      return theirs.filter((n) => ours.has(n)).length / theirs.length
    }
    expect(same(moved)).toBeLessThan(0.5)
    // 0.25 lies between: half of the phrases move.
    expect(same(half)).toBeGreaterThan(same(moved))
    expect(same(half)).toBeLessThan(1)
  })

  it("is deterministic", async () => {
    const [a, b] = await Promise.all([engine.export(at(0), "midi"), engine.export(at(0), "midi")])
    expect(Buffer.from(fileOf(a, "track.mid")).equals(Buffer.from(fileOf(b, "track.mid")))).toBe(true)
  })
})

describe("an edit of an engine track", { timeout: 300_000 }, () => {
  const straight: EngineRequest = { ...song, style: "synthpop, 120 bpm, in C major, synth, drums, bass" }
  const base: TrackSource = { request: straight, taskId: "arrange-edit-source", index: 0 }
  // At 120 bpm a bar is 2 s: the span runs from the bar line at 8 s to the one at 14 s (the songs
  // heard here are cut at 24 s, 10 s of the source after the span).
  const edit: TrackSource = {
    request: { ...straight, lyrics: "Glass and fire under the sky" },
    taskId: "arrange-edit",
    index: 0,
    derives: { kind: "edit", source: base, start: 8, end: 14 }
  }

  it("matches the source sample for sample outside the span, and differs inside it", async () => {
    const [before, after] = await Promise.all([samplesOf(base), samplesOf(edit)])
    expect(after.length).toBe(before.length)
    const rate = 44_100 * 2
    const outside = (i: number): boolean => i < 8 * rate || i >= 14 * rate
    let mismatches = 0
    let changed = 0
    for (let i = 0; i < before.length; i++) {
      if (before[i] === after[i]) continue
      if (outside(i)) mismatches++
      else changed++
    }
    expect(mismatches).toBe(0)
    expect(changed).toBeGreaterThan(rate)
  })

  it("its stems add up to its mix, the seams included", async () => {
    const [stems, mix] = await Promise.all([short.export(edit, "stems"), samplesOf(edit)])
    const parts = stems.files.map((f) => readPcm16(f.bytes).samples)
    let signal = 0
    let residual = 0
    for (let i = 0; i < mix.length; i++) {
      let sum = 0
      for (const p of parts) sum += p[i] as number
      signal += (mix[i] as number) ** 2
      residual += (sum - (mix[i] as number)) ** 2
    }
    expect(10 * Math.log10(residual / signal)).toBeLessThan(-60)
  })

  it("sings the new words in the span", async () => {
    const words = (await engine.export(edit, "timed_lyrics")).timedLyrics ?? []
    const inSpan = words.filter((w) => w.start >= 8 && w.start < 14).map((w) => w.text)
    expect(inSpan).toEqual(["Glass", "and", "fire", "under", "the", "sky"])
  })
})

describe("vocals over an instrumental engine track", { timeout: 300_000 }, () => {
  const bed: TrackSource = {
    request: { ...song, style: "synthpop, 100 bpm, in D major, synth, drums, bass", lyrics: null, instrumental: true },
    taskId: "arrange-bed",
    index: 0
  }
  const words =
    "Morning comes in silver light\nWe were dancing through the night\nEvery door is open wide\nCarry me along the tide"
  const vocals: TrackSource = {
    request: { ...bed.request, lyrics: words, instrumental: false, vocal_gender: "m" },
    taskId: "arrange-vocals",
    index: 0,
    derives: { kind: "vocals", source: bed }
  }

  it("times every word, in order, on the source's beat grid, in the source's key", async () => {
    const [sung, bedMidi, ownMidi] = await Promise.all([
      engine.export(vocals, "timed_lyrics"),
      midiOf(bed),
      midiOf(vocals)
    ])
    const timed = sung.timedLyrics ?? []
    expect(timed.map((w) => w.text)).toEqual(words.split(/\s+/))
    const sixteenth = 60 / 100 / 4
    for (const w of timed) {
      const off = w.start / sixteenth - Math.round(w.start / sixteenth)
      expect(Math.abs(off) * sixteenth).toBeLessThan(0.06)
    }
    expect(keyOf(ownMidi)).toEqual(keyOf(bedMidi))
    const { tonic } = keyOf(bedMidi)
    const notes = ownMidi.tracks.find((t) => t.name === "vocals")?.notes ?? []
    const inKey = notes.filter((n) => MAJOR.includes((((n.midi - tonic) % 12) + 12) % 12)).length
    expect(inKey / notes.length).toBeGreaterThanOrEqual(0.9)
    // The bed is still there under the voice: its drums, note for note.
    const drumsOf = (m: Midi) =>
      m.tracks.find((t) => t.name === "drums")?.notes.map((n) => Math.round(n.time * 1000)) ?? []
    expect(drumsOf(ownMidi)).toEqual(drumsOf(bedMidi))
  })
})

describe("an instrumental under an engine song", { timeout: 300_000 }, () => {
  const accompanied: TrackSource = {
    request: { ...song, style: "jazz, piano, upright bass, brushes" },
    taskId: "arrange-instrumental",
    index: 0,
    derives: { kind: "instrumental", source }
  }

  it("keeps the sung melody, tempo and key, under a band in the new style", async () => {
    const [original, arranged] = await Promise.all([midiOf(source), midiOf(accompanied)])
    expect(arranged.header.tempos.map((t) => Math.round(t.bpm))).toEqual([110])
    expect(keyOf(arranged)).toEqual(keyOf(original))
    expect(melodyOf(arranged)).toEqual(melodyOf(original))
    expect(arranged.tracks.some((t) => t.name.includes("piano"))).toBe(true)
  })
})

describe("a persona", { timeout: 300_000 }, () => {
  const singer: TrackSource = { request: { ...song, vocal_gender: "m" }, taskId: "arrange-persona", index: 0 }
  const withPersona: TrackSource = {
    request: { ...song, style: "folk, acoustic guitar", title: "Another Song", vocal_gender: undefined },
    taskId: "arrange-persona-song",
    index: 0,
    persona: singer
  }

  it("lends its voice's register and its palette to a later song", async () => {
    const [theirs, ours] = await Promise.all([midiOf(singer), midiOf(withPersona)])
    const centre = (m: Midi) => {
      const notes = m.tracks.find((t) => t.name === "vocals")?.notes ?? []
      return notes.reduce((sum, n) => sum + n.midi, 0) / notes.length
    }
    expect(Math.abs(centre(ours) - centre(theirs))).toBeLessThan(6)
    // The bass's sound and the drum kit are the genre's (a folk bass is upright; the MIDI export
    // names the kit it plays, by genre, since the SoundFont engine); the rest is the persona's palette.
    const programs = (m: Midi) =>
      new Set(m.tracks.filter((t) => !t.name.startsWith("bass") && t.name !== "drums").map((t) => t.instrument.number))
    expect([...programs(theirs)].filter((program) => !programs(ours).has(program))).toEqual([])
  })
})
