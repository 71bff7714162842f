// Shared by the audio test files: render a take (cut short), decode it back with mpg123,
// and check what every render must satisfy (duration, no clipping, sane loudness).

import { expect } from "vitest"
import { finishTrack, renderAudio, type RenderedAudio } from "../../src/render.ts"
import type { EngineRequest, EngineTrack } from "../../src/types.ts"
import { decodeMp3, loudness, mono, peak, type Decoded } from "./analysis.ts"

export const SECONDS = 30

export const req = (style: string, extra: Partial<EngineRequest> = {}): EngineRequest => ({
  style,
  title: "Test Song",
  lyrics: null,
  instrumental: true,
  model: "aether",
  ...extra
})

/** Every render through here is also checked for clipping, loudness and duration. */
export async function render(
  r: EngineRequest,
  taskId = "audio-test",
  seconds = SECONDS
): Promise<{ track: EngineTrack; audio: Decoded; signal: Float32Array }> {
  return finish(r, renderAudio(r, taskId, 0, { maxSeconds: seconds }))
}

/**
 * Take 0 of a request made into its track from audio a test already rendered (`renderTrack` is
 * `renderAudio` then this), checked as `render` checks it.
 */
export async function finish(
  r: EngineRequest,
  rendered: RenderedAudio
): Promise<{ track: EngineTrack; audio: Decoded; signal: Float32Array }> {
  const track = await finishTrack(r, 0, rendered)
  const audio = await decodeMp3(track.mp3)
  expect(audio.sampleRate).toBe(44100)
  // The decoder adds the encoder's priming/padding (about one frame): allow 0.1 s.
  expect(Math.abs(audio.seconds - track.duration)).toBeLessThan(0.1)
  expect(peak(audio)).toBeLessThan(0.99)
  const lufs = loudness(audio)
  expect(lufs).toBeGreaterThan(-22)
  expect(lufs).toBeLessThan(-9)
  return { track, audio, signal: mono(audio) }
}
