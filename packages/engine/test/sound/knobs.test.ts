// Every genre renders, and the tuning knobs change the music in the documented ways.

import { describe, expect, it } from "vitest"
import { compose } from "../../src/compose.ts"
import { GENRES } from "../../src/genres.ts"
import { renderAudio } from "../../src/render.ts"
import { Rng } from "../../src/rng.ts"
import { parseStyle } from "../../src/style.ts"
import type { EngineRequest, ModelName } from "../../src/types.ts"
import { bandShare, key } from "../support/analysis.ts"

const LYRICS =
  "[Verse]\nNeon lights are calling me tonight\nRunning through the city burning bright\n[Chorus]\nHold on, hold on to the night\nWe are young and we are alive"

describe("every genre and model", { timeout: 120_000 }, () => {
  it("renders finite, bounded audio for every genre and model", () => {
    const firstWord = (g: (typeof GENRES)[number]) => g.name
    const jobs: Array<[string, ModelName]> = GENRES.map((g) => [firstWord(g), "aether"])
    jobs.push(["pop", "echo"], ["pop", "nocturne"], ["metal", "nocturne"])
    for (const [style, model] of jobs) {
      const a = renderAudio({ style, title: "t", lyrics: LYRICS, instrumental: false, model }, "genres", 0, {
        maxSeconds: 4
      })
      expect(a.spec.genre.name, style).toBe(style)
      let peak = 0
      let energy = 0
      let finite = true
      for (let i = 0; i < a.left.length; i++) {
        const l = a.left[i] as number
        const r = a.right[i] as number
        if (!Number.isFinite(l) || !Number.isFinite(r)) finite = false
        peak = Math.max(peak, Math.abs(l), Math.abs(r))
        energy += l * l
      }
      expect(finite, style).toBe(true)
      expect(peak, style).toBeLessThanOrEqual(0.8001)
      expect(energy, style).toBeGreaterThan(0)
    }
  })
})

describe("tuning knobs", { timeout: 120_000 }, () => {
  const req = (extra: Partial<EngineRequest>): EngineRequest => ({
    style: "pop, 110 bpm, in C major",
    title: "t",
    lyrics: null,
    instrumental: true,
    model: "aether",
    ...extra
  })
  const mono = (a: { left: Float32Array; right: Float32Array }) => {
    const m = new Float32Array(a.left.length)
    for (let i = 0; i < m.length; i++) m[i] = 0.5 * ((a.left[i] as number) + (a.right[i] as number))
    return m
  }

  it("weirdness_constraint blurs the key (Essentia's key strength drops)", () => {
    const tame = key(mono(renderAudio(req({ weirdness_constraint: 0 }), "knobs", 0, { maxSeconds: 30 })))
    const wild = key(mono(renderAudio(req({ weirdness_constraint: 1 }), "knobs", 0, { maxSeconds: 30 })))
    expect(tame.name).toBe("C major")
    expect(wild.strength).toBeLessThan(tame.strength)
  })

  it("audio_weight moves the band against the voice", () => {
    const share = (aw: number) => {
      const a = renderAudio(req({ lyrics: LYRICS, instrumental: false, audio_weight: aw }), "knobs", 0, {
        maxSeconds: 40
      })
      return bandShare(mono(a), 300, 3400)
    }
    // The voice lives in 300-3400 Hz: more band (audio_weight 1) means a smaller voice-band share.
    expect(share(0)).toBeGreaterThan(share(1) * 1.1)
  })

  it("style_weight narrows the choice of progressions and patterns across tasks", () => {
    const variety = (sw: number) => {
      const seen = new Set<string>()
      for (let t = 0; t < 16; t++) {
        const rng = new Rng(`sw-${t}`)
        const spec = parseStyle("house", undefined, rng, sw)
        const s = compose(
          {
            spec,
            lyrics: null,
            instrumental: true,
            model: "aether",
            voice: "f",
            styleWeight: sw,
            weirdness: 0,
            audioWeight: 0.5
          },
          rng
        )
        const bass =
          s.parts
            .find((p) => p.role === "bass")
            ?.notes.slice(0, 24)
            .map((n) => n.pitch - (s.parts[0]?.notes[0]?.pitch ?? 0)) ?? []
        seen.add(JSON.stringify(bass))
      }
      return seen.size
    }
    expect(variety(1)).toBeLessThan(variety(0))
  })

  it("vocal_gender sets the register of the sung melody", () => {
    const mean = (g: "m" | "f") => {
      const a = renderAudio(req({ lyrics: LYRICS, instrumental: false, vocal_gender: g }), "knobs", 0, {
        maxSeconds: 2
      })
      return a.score.vocal.reduce((s, v) => s + v.pitch, 0) / a.score.vocal.length
    }
    expect(mean("f") - mean("m")).toBeGreaterThanOrEqual(9)
  })
})

describe("energy", () => {
  it("energetic styles play busier parts than calm ones", () => {
    const count = (style: string) => {
      const rng = new Rng("energy")
      const spec = parseStyle(style, undefined, rng, 0.5)
      const s = compose(
        {
          spec,
          lyrics: null,
          instrumental: true,
          model: "aether",
          voice: "f",
          styleWeight: 0.5,
          weirdness: 0,
          audioWeight: 0.5
        },
        rng
      )
      const notes = s.parts
        .filter((p) => p.role === "chords" || p.role === "bass")
        .reduce((n, p) => n + p.notes.length, 0)
      return notes / s.duration
    }
    expect(count("energetic intense pop, 110 bpm")).toBeGreaterThan(count("calm gentle pop, 110 bpm"))
  })
})
