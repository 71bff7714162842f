// The SoundFont sampler's note cache (each distinct key, velocity and hold played once and added
// at every onset) against the synthesizer playing the same notes as one live sequence.

import { describe, expect, it } from "vitest"
import { playNotes, playNotesLive, type PlayedNote } from "../../src/soundfont/sampler.ts"

const SR = 44100

/** Energy of a - b over the energy of b, in dB. */
function residualDb(a: Float32Array, b: Float32Array): number {
  let e = 0
  let d = 0
  for (let i = 0; i < b.length; i++) {
    const x = b[i] as number
    const y = (a[i] as number) - x
    e += x * x
    d += y * y
  }
  return 10 * Math.log10(d / e)
}

function energy(x: Float32Array, from: number, to: number): number {
  let e = 0
  for (let i = from; i < to; i++) e += (x[i] as number) ** 2
  return e
}

/** Four bars of a I-V-vi-IV piano part at 100 bpm, each chord struck on beats 1 and 3, with a held top note that the next bar strikes again before releasing it. */
function chordPart(): PlayedNote[] {
  const beat = 0.6
  const chords = [
    [60, 64, 67],
    [59, 62, 67],
    [57, 60, 64],
    [57, 60, 65]
  ]
  const notes: PlayedNote[] = []
  chords.forEach((chord, bar) => {
    for (const half of [0, 2]) {
      const start = (bar * 4 + half) * beat
      for (const key of chord) notes.push({ start, end: start + 1.9 * beat, key, velocity: half === 0 ? 90 : 70 })
    }
    // Overlaps the same key of the next bar: a key's releases pair with its strikes in order.
    notes.push({ start: bar * 4 * beat, end: (bar * 4 + 5) * beat, key: 72, velocity: 60 })
  })
  return notes
}

/** Two bars of kick, snare and toms in sixteenths with humanised velocities. */
function skinsPart(): PlayedNote[] {
  const step = 0.15
  const notes: PlayedNote[] = []
  for (let s = 0; s < 32; s++) {
    const start = s * step
    if (s % 8 === 0) notes.push({ start, end: start + 0.1, key: 36, velocity: 100 + (s % 3) })
    if (s % 8 === 4) notes.push({ start, end: start + 0.1, key: 38, velocity: 90 + (s % 2) })
    if (s >= 28) notes.push({ start, end: start + 0.1, key: 45 - (s - 28), velocity: 80 })
  }
  return notes
}

describe("SoundFont sampler", () => {
  it("plays a chord part from its note cache as the synthesizer plays it live (residual under -40 dB)", () => {
    const notes = chordPart()
    const cached = new Float32Array(SR * 12)
    const live = new Float32Array(SR * 12)
    const end = playNotes(notes, 0, false, { mono: cached })
    playNotesLive(notes, 0, false, { mono: live })
    expect(end).toBeGreaterThan(SR * 9.6)
    expect(energy(cached, 0, cached.length)).toBeGreaterThan(1)
    expect(residualDb(cached, live)).toBeLessThan(-40)
  })

  /** A drum part played through the cache and by the synthesizer live, `seconds` long: each channel within -40 dB. */
  const expectStereoAsLive = (notes: ReadonlyArray<PlayedNote>, seconds: number): void => {
    const n = SR * seconds
    const cached = { left: new Float32Array(n), right: new Float32Array(n) }
    const live = { left: new Float32Array(n), right: new Float32Array(n) }
    playNotes(notes, 0, true, cached)
    playNotesLive(notes, 0, true, live)
    expect(residualDb(cached.left, live.left)).toBeLessThan(-40)
    expect(residualDb(cached.right, live.right)).toBeLessThan(-40)
  }

  it("plays a drum kit in stereo as the synthesizer plays it live (residual under -40 dB)", () => {
    expectStereoAsLive(skinsPart(), 8)
  })

  it("lets a closed hi-hat choke the open one it follows, exactly as live (exclusive classes)", () => {
    const n = SR * 3
    const open: PlayedNote = { start: 0, end: 0.1, key: 46, velocity: 100 }
    const closed: PlayedNote = { start: 0.4, end: 0.5, key: 42, velocity: 20 }
    const alone = { left: new Float32Array(n), right: new Float32Array(n) }
    const choked = { left: new Float32Array(n), right: new Float32Array(n) }
    const live = { left: new Float32Array(n), right: new Float32Array(n) }
    playNotes([open], 0, true, alone)
    playNotes([open, closed], 0, true, choked)
    playNotesLive([open, closed], 0, true, live)
    // A second after the closed hat the open one rings on alone, and is gone once choked.
    const from = Math.round(1.4 * SR)
    expect(energy(choked.left, from, n)).toBeLessThan(energy(alone.left, from, n) * 0.01)
    expect(Array.from(choked.left)).toEqual(Array.from(live.left))
  })

  it("plays a hi-hat groove (eighths, an open hat, a triplet roll) over a ride and a crash as live (residual under -40 dB)", () => {
    const step = 0.15
    const notes: PlayedNote[] = []
    for (let s = 0; s < 32; s += 2) {
      const start = s * step
      notes.push({ start, end: start + 0.1, key: s % 8 === 6 ? 46 : 42, velocity: 70 + (s % 6) })
      if (s === 20)
        for (let r = 1; r < 3; r++)
          notes.push({
            start: start + (r * 2 * step) / 3,
            end: start + (r * 2 * step) / 3 + 0.1,
            key: 42,
            velocity: 50
          })
    }
    // No exclusive class: these two come from the cache, the hats from the live sequence.
    notes.push({ start: 0, end: 0.1, key: 49, velocity: 90 }, { start: 1.2, end: 1.3, key: 51, velocity: 80 })
    expectStereoAsLive(notes, 7)
  })

  it("adds onto what the buffer holds and cuts notes at its end", () => {
    const notes: PlayedNote[] = [{ start: 0.5, end: 4, key: 60, velocity: 100 }]
    const base = new Float32Array(SR)
    base.fill(0.25)
    const end = playNotes(notes, 0, false, { mono: base })
    expect(end).toBe(SR)
    expect(base[0]).toBe(0.25)
    expect(base.some((x) => x !== 0.25)).toBe(true)
  })

  it("gives the same samples every time", () => {
    const notes = chordPart()
    const a = new Float32Array(SR * 10)
    const b = new Float32Array(SR * 10)
    playNotes(notes, 0, false, { mono: a })
    playNotes(notes, 0, false, { mono: b })
    expect(Buffer.from(a.buffer).equals(Buffer.from(b.buffer))).toBe(true)
  })
})
