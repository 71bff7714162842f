// The sound goals of issue 25 as properties of the rendered take, on two prompts the bench does
// not use: octave bands from 2 kHz up fall, the mix is tonal (flatness 1-8 kHz at most 0.08),
// it lands at -14 LUFS within 1 LU with a true peak of at most -1 dBTP, and its stems add up to
// it. The long measurements (8 prompts, old against new, speech recognition) live in
// bench/sound-bench.ts.

import { describe, expect, it } from "vitest"
import { composeTake, mixTake } from "../../src/render.ts"
import type { EngineRequest } from "../../src/types.ts"
import { soundMeasures } from "../support/sound-measures.ts"

const LYRICS =
  "[Verse]\nMorning trains are rolling past the yard\nEvery light is blinking like a star\n[Chorus]\nCarry me, carry me along\nSinging out the words of every song"

const PROMPTS: ReadonlyArray<EngineRequest> = [
  {
    style: "pop, 110 bpm, in C major, piano, drums, female vocals",
    title: "Morning Trains",
    lyrics: LYRICS,
    instrumental: false,
    model: "aether"
  },
  {
    style: "funk, 108 bpm, in E minor, guitar, bass, drums, male vocals",
    title: "Yard Light",
    lyrics: LYRICS,
    instrumental: false,
    model: "echo"
  }
]

describe("the sound of a take (issue 25's goals)", { timeout: 120_000 }, () => {
  for (const request of PROMPTS) {
    it(`${request.style}: bands fall from 2 kHz up, tonal, -14 LUFS, under -1 dBTP, stems exact`, () => {
      const audio = mixTake(composeTake(request, "sound-goals", 0), { maxSeconds: 30 }, true)
      const m = soundMeasures(audio.left, audio.right)
      for (let b = 1; b < m.bandsDb.length; b++)
        expect(m.bandsDb[b], `bands ${m.bandsDb.map((x) => x.toFixed(1)).join(" ")}`).toBeLessThanOrEqual(
          m.bandsDb[b - 1] as number
        )
      expect(m.flatness).toBeLessThanOrEqual(0.08)
      expect(Math.abs(m.lufs + 14)).toBeLessThanOrEqual(1)
      expect(m.truePeakDb).toBeLessThanOrEqual(-1)

      const stems = audio.stems ?? []
      expect(stems.map((s) => s.name).sort()).toEqual(
        ["bass", "drums", "harmony", "lead", "vocals"].filter((name) => stems.some((s) => s.name === name)).sort()
      )
      expect(stems.some((s) => s.name === "vocals")).toBe(true)
      let residual = 0
      let signal = 0
      for (let i = 0; i < audio.left.length; i++) {
        let l = 0
        let r = 0
        for (const s of stems) {
          l += s.left[i] as number
          r += s.right[i] as number
        }
        residual += (l - (audio.left[i] as number)) ** 2 + (r - (audio.right[i] as number)) ** 2
        signal += (audio.left[i] as number) ** 2 + (audio.right[i] as number) ** 2
      }
      expect(10 * Math.log10(residual / signal)).toBeLessThan(-60)
    })
  }
})
