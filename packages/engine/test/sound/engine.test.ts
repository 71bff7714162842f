// The public API: a worker-thread pool that renders two takes per task.

import { afterAll, describe, expect, it } from "vitest"
import { makeEngine, renderTrack, type EngineRequest, type EngineTrack } from "../../src/index.ts"
import { decodeMp3, mono } from "../support/analysis.ts"

const engine = makeEngine({ threads: 2, render: { maxSeconds: 12 } })
afterAll(() => engine.close())

const request: EngineRequest = {
  style: "synthwave, 110 bpm, in A minor, synth, drums",
  title: "Neon Nights",
  lyrics: "[Verse]\nNeon lights are calling me tonight\n[Chorus]\nHold on to the night",
  instrumental: false,
  model: "aether",
  vocal_gender: "f"
}

/** The first task's two takes, rendered once by the pool and read by the first two tests. */
let firstTask: Promise<ReadonlyArray<EngineTrack>> | undefined
const renderFirstTask = (): Promise<ReadonlyArray<EngineTrack>> => {
  firstTask ??= engine.render(request, "task-engine-1")
  return firstTask
}

describe("makeEngine", { timeout: 120_000 }, () => {
  it("renders two tracks off the main thread, with all fields filled", async () => {
    let ticks = 0
    const timer = setInterval(() => {
      ticks++
    }, 10)
    const started = performance.now()
    const tracks = await renderFirstTask()
    const elapsed = performance.now() - started
    clearInterval(timer)
    expect(tracks.map((t) => t.index)).toEqual([0, 1])
    for (const t of tracks) {
      expect(t.title).toBe("Neon Nights")
      expect(t.lyrics).toBe(request.lyrics)
      expect(t.tags).toMatch(/^synthwave, 110 bpm, A minor/)
      expect(t.tags).toContain("female vocals")
      expect(t.duration).toBeCloseTo(12, 1)
      // MPEG-1 Layer III frame sync, and the PNG signature.
      expect(t.mp3[0]).toBe(0xff)
      expect((t.mp3[1] ?? 0) & 0xe0).toBe(0xe0)
      expect([...t.png.subarray(0, 8)]).toEqual([137, 80, 78, 71, 13, 10, 26, 10])
    }
    // The event loop kept ticking while the workers rendered: the API stays responsive.
    // (Loose bound: on a busy shared machine timers fire late, but a blocked loop would not fire at all.)
    expect(ticks).toBeGreaterThan((elapsed / 10) * 0.2)
  })

  it("gives the same bytes for the same request and task id, and two different takes", async () => {
    const a = await renderFirstTask()
    // The second render streams its takes as they are encoded (issue 54): the same bytes again.
    const pieces: Uint8Array[][] = [[], []]
    const b = await engine.render(request, "task-engine-1", (index, piece) => pieces[index]?.push(piece))
    expect(Buffer.from(a[0]?.mp3 ?? []).equals(Buffer.from(b[0]?.mp3 ?? []))).toBe(true)
    expect(Buffer.from(a[1]?.mp3 ?? []).equals(Buffer.from(b[1]?.mp3 ?? []))).toBe(true)
    for (const [index, take] of b.entries()) {
      const streamed = pieces[index] ?? []
      // Many pieces, each whole frames, joined: the final file to the byte.
      expect(streamed.length).toBeGreaterThan(4)
      expect(Buffer.concat(streamed).equals(Buffer.from(take.mp3))).toBe(true)
      // A listener who has only the first half of the pieces hears the final audio's first half,
      // sample for sample, but for the last frame (the encoder's own alignment: 1152 samples).
      const half = await decodeMp3(Buffer.concat(streamed.slice(0, streamed.length >> 1)))
      const whole = await decodeMp3(take.mp3)
      const heard = half.left.length - 1152
      expect(heard).toBeGreaterThan(whole.left.length / 4)
      expect(Buffer.from(half.left.buffer, 0, heard * 4).equals(Buffer.from(whole.left.buffer, 0, heard * 4))).toBe(
        true
      )
    }
    // A worker thread and the calling thread produce the same bytes.
    const local = await renderTrack(request, "task-engine-1", 1, { maxSeconds: 12 })
    expect(Buffer.from(local.mp3).equals(Buffer.from(a[1]?.mp3 ?? []))).toBe(true)
    // The two takes are different music, not the same audio: their waveforms do not correlate.
    const x = mono(await decodeMp3(a[0]?.mp3 ?? new Uint8Array()))
    const y = mono(await decodeMp3(a[1]?.mp3 ?? new Uint8Array()))
    let xy = 0,
      xx = 0,
      yy = 0
    const n = Math.min(x.length, y.length)
    for (let i = 0; i < n; i++) {
      const p = x[i] as number,
        q = y[i] as number
      xy += p * q
      xx += p * p
      yy += q * q
    }
    expect(Math.abs(xy / Math.sqrt(xx * yy))).toBeLessThan(0.5)
  })

  it("reports a failed render as a rejection and keeps serving", async () => {
    const bad = { ...request, model: "bogus" } as unknown as EngineRequest
    await expect(engine.render(bad, "task-bad")).rejects.toThrow(/unknown model/)
    const ok = await engine.render({ ...request, instrumental: true, lyrics: null }, "task-after-bad")
    expect(ok.length).toBe(2)
  })

  it("renders tasks concurrently and rejects after close", async () => {
    const other = makeEngine({ threads: 1, render: { maxSeconds: 3 } })
    const [a, b] = await Promise.all([
      other.render({ ...request, model: "nocturne", vocal_gender: undefined }, "c1"),
      other.render({ ...request, instrumental: true, lyrics: null }, "c2")
    ])
    expect(a.length + b.length).toBe(4)
    expect(b[0]?.lyrics).toBeNull()
    await other.close()
    await expect(other.render(request, "c3")).rejects.toThrow(/closed/)
  })
})
