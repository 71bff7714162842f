// A cover of an upload follows the upload's own form (issue 51): as long as it within a bar, its
// quiet start an intro, its quiet run a break, its quiet end an outro, in its key unless the
// request names another. Composition only (segmentsOf, sourceTake): no sound is made.

import { describe, expect, it } from "vitest"
import { sourceTake } from "../../src/arrange/index.ts"
import { sheetOf } from "../../src/arrange/sheet.ts"
import { segmentsOf, trackWav } from "../../src/song.ts"
import type { TrackSource, UploadRoot } from "../../src/types.ts"

const tracks = { segmentsOf, trackWav }
const bar = 2 // 120 bpm
const seconds = 215
const first = 0.4
const bars = Math.floor((seconds - first) / bar)
/** Quiet (-34 dB) for four bars at the start, bars 40-45 (a break) and the last four; full (-14 dB) elsewhere. */
const levels = Array.from({ length: bars }, (_, i) => (i < 4 || (i >= 40 && i < 46) || i >= bars - 4 ? -34 : -14))

const root: UploadRoot = {
  id: "upl_form",
  audioPath: "/nonexistent/never-read-by-composition.wav",
  contentType: "audio/wav",
  duration: seconds,
  analysis: {
    bpm: 120,
    key: "A major",
    time_signature: "4/4",
    loudness_lufs: -14,
    beats: Array.from({ length: bars * 4 }, (_, i) => first + i * 0.5),
    chords: [
      { start: first, end: first + 4, chord: "A" },
      { start: first + 4, end: seconds, chord: "D" }
    ]
  },
  transcription: { notes: [{ pitch: 69, start: first, end: first + 1, velocity: 0.7 }], levels }
}
const upload: TrackSource = {
  request: { style: "120 bpm, in A major", title: "Long upload", lyrics: null, instrumental: true, model: "aether" },
  taskId: root.id,
  index: 0,
  upload: root
}
const coverOf = (style: string): TrackSource => ({
  request: { style, title: "Covered", lyrics: null, instrumental: true, model: "aether" },
  taskId: "cover-form",
  index: 0,
  derives: { kind: "cover", source: upload }
})

describe("a cover of an upload", () => {
  it("lasts as long as the upload within a bar when nothing caps the render; a render's maxSeconds cuts it as any take", () => {
    const cover = coverOf("rock, electric guitar")
    const whole = segmentsOf(cover, {})
    const end = whole[whole.length - 1]?.until ?? 0
    expect(Math.abs(end - seconds), `${end} s`).toBeLessThanOrEqual(bar)
    const capped = segmentsOf(cover, { maxSeconds: 30 })
    expect(capped[capped.length - 1]?.until).toBe(30)
  })

  it("keeps its form: the quiet start an intro, the quiet run a break where the kit stops, the quiet end an outro", () => {
    const cover = coverOf("rock, electric guitar")
    const plan = sheetOf(cover, {}, tracks).plan
    expect(plan[0]).toMatchObject({ kind: "intro", bars: 4 })
    expect(plan[plan.length - 1]).toMatchObject({ kind: "outro", bars: 4 })
    let at = 0
    const starts = plan.map((s) => {
      const start = at
      at += s.bars
      return { ...s, start }
    })
    const breaks = starts.filter((s) => s.kind === "bridge")
    expect(breaks.map((s) => [s.start, s.bars])).toEqual([[40, 6]])
    const take = sourceTake(cover, {}, tracks)
    const inBreak = (t: number) => t >= 40 * bar && t < 46 * bar
    const kit = take.score.drums.filter((d) => d.kind === "kick" || d.kind === "snare")
    expect(kit.filter((d) => inBreak(d.time))).toEqual([])
    expect(kit.filter((d) => d.time >= 30 * bar && d.time < 36 * bar).length).toBeGreaterThan(10)
  })

  it("keeps the upload's key, or moves everything to the key the request names", () => {
    const kept = sourceTake(coverOf("rock, electric guitar"), {}, tracks)
    expect([kept.spec.tonic, kept.spec.minor]).toEqual([9, false])
    expect(kept.score.chords?.slice(0, 3).map((c) => c.root % 12)).toEqual([9, 9, 2])
    const moved = sourceTake(coverOf("rock, electric guitar, in C major"), {}, tracks)
    expect([moved.spec.tonic, moved.spec.minor]).toEqual([0, false])
    // A major to C major: up three semitones, the chords and the tune with it.
    expect(moved.score.chords?.slice(0, 3).map((c) => c.root % 12)).toEqual([0, 0, 5])
    const tune = (t: typeof kept) => t.score.parts.find((p) => p.role === "lead")?.notes[0]?.pitch ?? 0
    expect(tune(moved) - tune(kept)).toBe(3)
  })
})
