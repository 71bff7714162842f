// Key and chords read from a transcription's notes, and beats from audio the test makes: the
// rules of `listen/harmony.ts` and `listen/rhythm.ts` on material whose answer is written here.

import { describe, expect, it } from "vitest"
import { chordsOn, keyOf } from "../../src/listen/harmony.ts"
import { beatsAndTempo } from "../../src/listen/rhythm.ts"
import type { TranscribedNote } from "../../src/listen/types.ts"
import { decodeWhole } from "../../src/listen/analyse.ts"
import { writeOutsideSong, writeOutsideWaltz } from "../../../server/test/support/outsideSong.ts"

const note = (pitch: number, start: number, end: number, velocity = 0.8): TranscribedNote => ({
  pitch,
  start,
  end,
  velocity
})

/** Each chord a bar of four beats at 1 s a beat: bass root, then the triad held. */
const progression = (chords: ReadonlyArray<readonly [number, number, number]>): Array<TranscribedNote> =>
  chords.flatMap(([root, third, fifth], bar) => {
    const at = bar * 4
    return [
      note(root - 12, at, at + 4),
      note(root, at, at + 4, 0.6),
      note(third, at, at + 4, 0.6),
      note(fifth, at, at + 4, 0.6)
    ]
  })

describe("key and chords from notes", () => {
  it("hears G major from I-vi-IV-V, and each chord on the beat grid", () => {
    const notes = progression([
      [55, 59, 62],
      [52, 55, 59],
      [48, 52, 55],
      [50, 54, 57]
    ])
    expect(keyOf(notes)).toBe("G major")
    const beats = Array.from({ length: 16 }, (_, i) => i)
    expect(chordsOn(notes, beats, 16)).toEqual([
      { start: 0, end: 4, chord: "G" },
      { start: 4, end: 8, chord: "Em" },
      { start: 8, end: 12, chord: "C" },
      { start: 12, end: 16, chord: "D" }
    ])
  })

  it("hears a minor key as minor: i-iv-v-i in E minor", () => {
    const notes = progression([
      [52, 55, 59],
      [57, 60, 64],
      [59, 62, 66],
      [52, 55, 59]
    ])
    expect(keyOf(notes)).toBe("E minor")
    expect(chordsOn(notes, [0, 4, 8, 12], 16).map((c) => c.chord)).toEqual(["Em", "Am", "Bm", "Em"])
  })

  it("holds a chord through a beat of passing notes, and changes where the harmony does", () => {
    // C for two bars, a beat of it taken by D-F-A passing notes over the C bass; then G for two bars.
    const held = [
      ...progression([[60, 64, 67]]),
      ...progression([[60, 64, 67]]).map((n) => ({ ...n, start: n.start + 4, end: n.end + 4 }))
    ]
    const passing = [note(62, 5, 6), note(65, 5, 6), note(69, 5, 6)]
    const g = progression([[55, 59, 62]]).flatMap((n) => [
      { ...n, start: n.start + 8, end: n.end + 8 },
      { ...n, start: n.start + 12, end: n.end + 12 }
    ])
    const notes = [...held.filter((n) => n.pitch < 60 || n.start !== 4), ...passing, ...g]
    const beats = Array.from({ length: 16 }, (_, i) => i)
    expect(chordsOn(notes, beats, 16, "C major").map((c) => c.chord)).toEqual(["C", "G"])
  })

  it("keeps a chord outside the key where the notes hold it for a bar, not a beat's neighbour chord", () => {
    const bar = (root: number, third: number, at: number, beats: number) => [
      note(root - 12, at, at + beats),
      note(root, at, at + beats, 0.6),
      note(root + third, at, at + beats, 0.6),
      note(root + 7, at, at + beats, 0.6)
    ]
    const beats = Array.from({ length: 12 }, (_, i) => i)
    // C major; a whole bar of Ab (bVI, borrowed) is heard as Ab.
    const borrowed = [...bar(60, 4, 0, 4), ...bar(56, 4, 4, 4), ...bar(60, 4, 8, 4)]
    expect(chordsOn(borrowed, beats, 12, "C major").map((c) => c.chord)).toEqual(["C", "Ab", "C"])
    // One beat of Db-F-Ab over C's held bass is a neighbour chord on a pedal, not a change.
    const passing = [
      ...bar(60, 4, 0, 5),
      note(48, 5, 6),
      note(61, 5, 6, 0.6),
      note(65, 5, 6, 0.6),
      note(68, 5, 6, 0.6),
      ...bar(60, 4, 6, 6)
    ]
    expect(chordsOn(passing, beats, 12, "C major").map((c) => c.chord)).toEqual(["C"])
  })

  it("lets a chord ring on through beats where nothing starts, and names nothing without notes", () => {
    const notes = [note(48, 0, 1), note(52, 0, 1), note(55, 0, 1)]
    expect(chordsOn(notes, [0, 1, 2, 3], 4)).toEqual([{ start: 0, end: 4, chord: "C" }])
    expect(chordsOn([], [0, 1, 2], 3)).toEqual([])
    expect(keyOf([])).toBe("C major")
  })
})

const rate = 44_100

/** Clicks of decaying noise on every beat, the counted ones louder; `seconds` long. */
function clicks(bpm: number, seconds: number, accent: (beat: number) => number): Float32Array {
  const out = new Float32Array(seconds * rate)
  let seed = 7
  const noise = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
    return seed / 1_073_741_824 - 1
  }
  for (let beat = 0; ; beat++) {
    const at = Math.round(((beat * 60) / bpm) * rate)
    if (at >= out.length) break
    for (let i = 0; i < 2_000 && at + i < out.length; i++) out[at + i] = accent(beat) * noise() * Math.exp(-i / 300)
  }
  return out
}

describe("beats and tempo", () => {
  it("follows a steady pulse within 2%, its beats on the clicks", () => {
    const rhythm = beatsAndTempo(clicks(120, 20, () => 0.8))
    expect(Math.abs(rhythm.bpm - 120) / 120).toBeLessThanOrEqual(0.02)
    expect(rhythm.beats.length).toBeGreaterThan(30)
    for (const beat of rhythm.beats.slice(2, -2)) expect(Math.abs(beat * 2 - Math.round(beat * 2))).toBeLessThan(0.03)
  })

  it("counts the strong half when every other onset is weak (eighths under a 90 bpm pulse)", () => {
    const rhythm = beatsAndTempo(clicks(180, 20, (beat) => (beat % 2 === 0 ? 0.9 : 0.15)))
    expect(Math.abs(rhythm.bpm - 90) / 90).toBeLessThanOrEqual(0.02)
  })

  it("hears three beats a bar when every third is the strong one, and four under a backbeat", () => {
    const waltz = beatsAndTempo(clicks(120, 20, (beat) => (beat % 3 === 0 ? 0.9 : 0.35)))
    expect(waltz.meter).toBe("3/4")
    const backbeat = beatsAndTempo(clicks(120, 20, (beat) => (beat % 4 === 0 ? 0.9 : beat % 2 === 1 ? 0.7 : 0.4)))
    expect(backbeat.meter).toBe("4/4")
    expect(beatsAndTempo(clicks(120, 20, () => 0.8)).meter).toBe("4/4")
  })

  it("hears FluidSynth's waltzes in 3/4 at their tempo, with drums or without, and the outside 4/4 song in 4/4", {
    timeout: 60_000
  }, async () => {
    const monoOf = async (wav: Buffer): Promise<Float32Array> => {
      const audio = await decodeWhole(new Uint8Array(wav), "audio/wav")
      return Float32Array.from(audio.left, (l, i) => 0.5 * (l + (audio.right[i] ?? 0)))
    }
    for (const [bpm, drums] of [
      [90, true],
      [150, false]
    ] as const) {
      const waltz = beatsAndTempo(await monoOf(writeOutsideWaltz(bpm, drums)))
      expect(
        [waltz.meter, Math.abs(waltz.bpm - bpm) / bpm <= 0.02],
        `${bpm} bpm, drums ${drums}: ${waltz.bpm}`
      ).toEqual(["3/4", true])
    }
    const song = writeOutsideSong()
    const four = beatsAndTempo(await monoOf(song.wav))
    expect([four.meter, Math.abs(four.bpm - song.bpm) / song.bpm <= 0.02]).toEqual(["4/4", true])
  })
})
