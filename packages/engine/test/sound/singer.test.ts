// The singing voice (decision 0102): Flite's words, spoken once per take, put on the notes by
// TD-PSOLA. What a listener and the song tools rely on: the notes sound at their pitch, a take
// sounds the same on every render (whatever else the thread rendered, cut short or whole), and a
// word Flite cannot say is still sung.

import { describe, expect, it } from "vitest"
import type { VocalNote } from "../../src/compose.ts"
import { lineSyllables } from "../../src/lyrics.ts"
import { SR } from "../../src/synth/dsp.ts"
import { FLITE_VOICES, isVowel, speakWords, speakable } from "../../src/synth/voice/flite.ts"
import { singerFor } from "../../src/synth/voice/singer.ts"

/** A line sung a syllable per beat at 100 bpm, on the given MIDI pitches in turn. */
function sungLine(line: string, pitches: ReadonlyArray<number>, from = 0.5): VocalNote[] {
  return lineSyllables(line).map((syllable, i) => ({
    start: from + i * 0.6,
    dur: 0.55,
    pitch: pitches[i % pitches.length] as number,
    vel: 0.9,
    syllable
  }))
}

/** The pitch (Hz) of a stretch by autocorrelation, searched between 80 and 1000 Hz. */
function pitchOf(x: Float32Array): number {
  let best = 0
  let lag = 0
  for (let l = Math.floor(SR / 1000); l <= Math.ceil(SR / 80); l++) {
    let r = 0
    for (let i = 0; i + l < x.length; i++) r += (x[i] as number) * (x[i + l] as number)
    if (r > best) {
      best = r
      lag = l
    }
  }
  return SR / lag
}

describe("the singing voice", { timeout: 60_000 }, () => {
  it("Flite speaks each word with its phones, vowels among them; what it cannot say is left to the formant voice", () => {
    expect(speakable("Don't,")).toBe("don't")
    expect(speakable("—")).toBe("")
    const said = speakWords(["sail", "away"], FLITE_VOICES.f)
    const sail = said.get("sail")
    expect(sail?.phones.map((p) => p.name)).toEqual(["s", "ey", "l"])
    expect(sail?.phones.filter(isVowel).length).toBe(1)
    expect(said.get("away")?.phones.filter(isVowel).length).toBe(2)
  })

  it("a batch of words is spoken the same whatever order they were asked in", () => {
    const a = speakWords(["thunder", "rolling", "iron", "road"], FLITE_VOICES.m)
    const b = speakWords(["road", "iron", "rolling", "thunder", "road"], FLITE_VOICES.m)
    for (const word of ["thunder", "rolling", "iron", "road"])
      expect(b.get(word)?.samples).toEqual(a.get(word)?.samples)
  })

  it("sings each note at its pitch", () => {
    for (const [register, pitch] of [
      ["f", 69],
      ["m", 50]
    ] as const) {
      const notes = sungLine("Oh oh oh", [pitch]).map((n) => ({ ...n, dur: 1.2, start: n.start * 2 }))
      const out = new Float32Array(Math.ceil(5 * SR))
      singerFor(notes, register).sing(notes, out, 1)
      const note = notes[1] as VocalNote
      // The middle of the held vowel, before the vibrato has bloomed.
      const at = Math.round((note.start + 0.08) * SR)
      const heard = pitchOf(out.subarray(at, at + Math.round(0.1 * SR)))
      const asked = 440 * Math.pow(2, (pitch - 69) / 12)
      expect(Math.abs(heard / asked - 1)).toBeLessThan(0.02)
    }
  })

  it("a render cut short sounds as the whole take does, up to the last word it sings", () => {
    const notes = [
      ...sungLine("We folded paper boats and let them go", [60, 62, 64, 65]),
      ...sungLine("Down the river where the willows grow", [67, 65, 64], 6)
    ]
    const whole = new Float32Array(Math.ceil(12 * SR))
    const cut = new Float32Array(whole.length)
    singerFor(notes, "f").sing(notes, whole, 7)
    // Another take in between: the thread's kept words must not change this one.
    singerFor(sungLine("Sail away with me", [70]), "f").sing(
      sungLine("Sail away with me", [70]),
      new Float32Array(whole.length),
      7
    )
    const heard = notes.filter((n) => n.start < 6.5)
    singerFor(notes, "f").sing(heard, cut, 7)
    const lastWord = heard.findLast((n) => n.syllable.wordStart) as VocalNote
    const until = Math.floor((lastWord.start - 0.2) * SR)
    let energy = 0
    for (let i = 0; i < until; i++) {
      expect(cut[i]).toBe(whole[i])
      energy += (whole[i] as number) ** 2
    }
    expect(energy).toBeGreaterThan(0)
  })

  it("a word Flite cannot say is sung by the formant voice, not left silent", () => {
    const notes = sungLine("音楽", [64])
    const out = new Float32Array(Math.ceil(3 * SR))
    singerFor(notes, "m").sing(notes, out, 3)
    expect(out.some((x) => Math.abs(x) > 1e-3)).toBe(true)
  })
})
