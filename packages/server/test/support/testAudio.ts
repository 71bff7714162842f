/**
 * The audio the upload tests make and send: a chord of sines with a kick on every beat at
 * 120 bpm, written by wavefile as 16-bit PCM. One maker for the REST, dashboard, client, CLI,
 * MCP and A2A tests, so that each hears the same thing.
 */
import { createRequire } from "node:module"

const { WaveFile } = createRequire(import.meta.url)("wavefile") as typeof import("wavefile")

const rate = 44_100

/** Frequencies of the chord's three notes. */
export const aMinor = [220, 261.63, 329.63] as const
export const aMajor = [220, 277.18, 329.63] as const

export interface PulsedChord {
  readonly seconds: number
  readonly channels?: 1 | 2
  readonly chord?: ReadonlyArray<number>
}

export const pulsedChordWav = ({ seconds, channels = 1, chord = aMinor }: PulsedChord): Buffer => {
  const samples: Array<number> = []
  for (let i = 0; i < Math.round(rate * seconds); i++) {
    const t = i / rate
    const beat = t % 0.5
    const kick = beat < 0.06 ? Math.sin(2 * Math.PI * 70 * t) * (1 - beat / 0.06) * 0.5 : 0
    const tone = chord.reduce((sum, f) => sum + Math.sin(2 * Math.PI * f * t), 0) * 0.08
    const v = Math.round((tone + kick) * 32767)
    for (let c = 0; c < channels; c++) samples.push(v)
  }
  const wav = new WaveFile()
  wav.fromScratch(channels, rate, "16", samples)
  return Buffer.from(wav.toBuffer())
}
