/**
 * An upload's loudness against an outside meter: Debian's ffmpeg and its `ebur128` filter
 * (installed by the sound lane's global setup) measure the same files, mono, stereo and 5.1, at
 * 44.1 and 48 kHz, with loud and quiet passages for the gates to work on. Within 0.5 LU.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { decodeWhole } from "../../src/listen/analyse.ts"
import { ffmpegPath } from "../../../../test/ffmpeg.ts"

const require = createRequire(import.meta.url)
const { WaveFile } = require("wavefile") as typeof import("wavefile")

const dir = mkdtempSync(join(tmpdir(), "lyre-loudness-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A channel of chords and noise bursts, its level stepping every second (so the gates matter). */
const channel = (seconds: number, rate: number, seed: number): Float32Array => {
  const out = new Float32Array(Math.round(seconds * rate))
  let noise = seed
  for (let i = 0; i < out.length; i++) {
    const t = i / rate
    const level = [0.3, 0.05, 0.2, 0.005, 0.4][Math.floor(t) % 5] ?? 0.1
    noise = (noise * 1_103_515_245 + 12_345) % 2_147_483_648
    const hiss = (noise / 2_147_483_648 - 0.5) * 0.3
    const tones = Math.sin(2 * Math.PI * (110 + seed * 55) * t) + 0.5 * Math.sin(2 * Math.PI * 2400 * t)
    out[i] = level * (0.6 * tones + hiss)
  }
  return out
}

/** ffmpeg's integrated loudness of a file, from the summary `ebur128` writes at its end. */
const ffmpegLufs = (path: string): number => {
  const run = spawnSync(ffmpegPath, ["-hide_banner", "-nostats", "-i", path, "-af", "ebur128", "-f", "null", "-"], {
    encoding: "utf8"
  })
  const summary = run.stderr.slice(run.stderr.lastIndexOf("Summary:"))
  return Number(/I:\s+(-?[\d.]+) LUFS/.exec(summary)?.[1] ?? Number.NaN)
}

const measured = (channels: number, rate: number) => {
  const samples = Array.from({ length: channels }, (_, c) => channel(12, rate, c + 1))
  const wav = new WaveFile()
  const ints = samples.map((s) => Array.from(s, (v) => Math.round(Math.max(-1, Math.min(1, v)) * 32767)))
  wav.fromScratch(channels, rate, "16", channels === 1 ? (ints[0] ?? []) : ints)
  const path = join(dir, `${channels}-${rate}.wav`)
  const bytes = wav.toBuffer()
  writeFileSync(path, bytes)
  return { bytes, path }
}

describe("integrated loudness, against ffmpeg's ebur128", () => {
  for (const [channels, rate] of [
    [1, 44_100],
    [1, 48_000],
    [2, 44_100],
    [2, 48_000],
    [6, 48_000]
  ] as const) {
    it(`${channels} channel(s) at ${rate} Hz: within 0.5 LU`, async () => {
      const { bytes, path } = measured(channels, rate)
      const ours = (await decodeWhole(bytes, "audio/wav")).lufs
      const theirs = ffmpegLufs(path)
      expect(Number.isFinite(theirs)).toBe(true)
      expect(Math.abs(ours - theirs), `ours ${ours.toFixed(2)}, ffmpeg ${theirs}`).toBeLessThan(0.5)
    })
  }
})
