// Measures rendered audio with independent tools: mpg123 decodes the MP3, Essentia
// measures loudness and band energies. Renders are cut to 30 s to keep the suite fast;
// the properties tested do not depend on the song's length. Tempo and key are in
// audio-tempo-key.test.ts.

import { describe, expect, it } from "vitest"
import { renderAudio, renderTrack, type RenderedAudio } from "../../src/render.ts"
import { bandEnvelope, bandShare, decodeMp3, peak, percussiveStrength } from "../support/analysis.ts"
import { finish, render, req } from "../support/render.ts"

describe("rendered audio, measured with essentia.js", { timeout: 120_000 }, () => {
  it("a 'no drums' request has no percussive onset pattern", async () => {
    const withDrums = await render(req("pop, 110 bpm, in C major"), "drums", 20)
    const without = await render(req("pop, 110 bpm, in C major, no drums"), "drums", 20)
    const negative = await render(req("house, 124 bpm", { negative_tags: "drums" }), "drums", 20)
    const hiphop = await render(req("hip hop, 90 bpm, without drums"), "drums", 20)
    const p1 = percussiveStrength(withDrums.signal)
    expect(p1.pattern).toBeGreaterThan(0.5)
    expect(p1.strength).toBeGreaterThan(5)
    for (const r of [without, negative, hiphop]) {
      const p = percussiveStrength(r.signal)
      expect(p.strength, JSON.stringify(p)).toBeLessThan(1)
    }
  })

  it("the singing voice fills the voice band; an instrumental has none of it", async () => {
    const lyrics =
      "[Verse]\nNeon lights are calling me tonight\nRunning through the city burning bright\n[Chorus]\nHold on, hold on to the night\nWe are young and we are alive"
    const share = (a: RenderedAudio): number => {
      const m = new Float32Array(a.left.length)
      for (let i = 0; i < m.length; i++) m[i] = 0.5 * ((a.left[i] as number) + (a.right[i] as number))
      return bandShare(m, 300, 3400)
    }
    const vocal = req("pop, female vocals", { lyrics, instrumental: false })
    const instrumental = req("pop, female vocals", { lyrics, instrumental: true })
    const instrumentalAudio = renderAudio(instrumental, "voice", 0, { maxSeconds: 45 })
    const withVoice = share(renderAudio(vocal, "voice", 0, { maxSeconds: 45 }))
    const voiceless = share(renderAudio(vocal, "voice", 0, { maxSeconds: 45, muteVoice: true }))
    const instrumentalShare = share(instrumentalAudio)
    // With vocals, removing the voice takes a large part of the 300-3400 Hz band away.
    expect(withVoice).toBeGreaterThan(voiceless * 1.5)
    // The instrumental's voice band looks like the band with the voice removed, not like the sung mix.
    expect(instrumentalShare).toBeLessThan(voiceless * 1.15)
    expect(instrumentalShare).toBeLessThan(withVoice / 1.5)
    // And the voice contributes exactly nothing to it: the voice the mixer adds to the band (at
    // whatever gain) is silence, sample for sample, so muting it would change no sample of the mix.
    expect(instrumentalAudio.voice.every((x) => x === 0)).toBe(true)
    // The same render made into the track a task gives out.
    const track = await finish(instrumental, instrumentalAudio)
    expect(track.track.lyrics).toBeNull()
    expect(track.track.tags).not.toMatch(/vocals/)
  })

  it("the singing voice shapes its vowels with formants (ee vs ah)", () => {
    const spectrum = (word: string) => {
      const lyrics = `[Verse]\n${Array.from({ length: 4 }, () => `${word} ${word} ${word} ${word}`).join("\n")}`
      const a = renderAudio(
        req("ambient, 80 bpm, in C major", { lyrics, instrumental: false, model: "nocturne", vocal_gender: "m" }),
        "vowels",
        0,
        { maxSeconds: 30 }
      )
      const sum = (x: Float32Array) => x.reduce((t, v) => t + v, 0)
      // Second-formant region of /i/ against the F1/F2 region of /a/.
      return sum(bandEnvelope(a.voice, 1900, 3000)) / sum(bandEnvelope(a.voice, 700, 1400))
    }
    expect(spectrum("me")).toBeGreaterThan(1)
    expect(spectrum("la")).toBeLessThan(0.2)
  })

  it("the MP3 decodes to the stated duration for a full-length song", async () => {
    const track = await renderTrack(req("ambient, 70 bpm, pads"), "full", 1)
    const audio = await decodeMp3(track.mp3)
    expect(track.duration).toBeGreaterThanOrEqual(60)
    expect(track.duration).toBeLessThanOrEqual(185)
    expect(Math.abs(audio.seconds - track.duration)).toBeLessThan(0.1)
    expect(peak(audio)).toBeLessThan(0.99)
  })

  it("is deterministic: same request and task id give the same bytes", async () => {
    const r = req("lofi hip hop, rainy", {
      lyrics: "[Verse]\nRain on the window\n[Chorus]\nStay a while",
      instrumental: false,
      vocal_gender: "m"
    })
    const a = await renderTrack(r, "same", 0, { maxSeconds: 8 })
    const b = await renderTrack(r, "same", 0, { maxSeconds: 8 })
    const c = await renderTrack(r, "other", 0, { maxSeconds: 8 })
    const d = await renderTrack(r, "same", 1, { maxSeconds: 8 })
    expect(Buffer.from(a.mp3).equals(Buffer.from(b.mp3))).toBe(true)
    expect(Buffer.from(a.png).equals(Buffer.from(b.png))).toBe(true)
    expect(Buffer.from(a.mp3).equals(Buffer.from(c.mp3))).toBe(false)
    expect(Buffer.from(a.mp3).equals(Buffer.from(d.mp3))).toBe(false)
  })
})
