/**
 * Audio the upload tests make: a chord with a kick on every beat at 120 bpm, as a 16-bit WAV
 * written by wavefile (the server's tests' own encoder, resolved from @lyre/server).
 */
import { createRequire } from "node:module"

const require = createRequire(new URL("../../../server/package.json", import.meta.url))
// Typed here by the two calls made: the package is the server's, not this one's.
const { WaveFile } = require("wavefile") as {
  readonly WaveFile: new () => {
    fromScratch(channels: number, sampleRate: number, bitDepth: string, samples: ReadonlyArray<number>): void
    toBuffer(): Uint8Array
  }
}

const rate = 44_100

export const songWav = (seconds = 8): Buffer => {
  const samples: Array<number> = []
  for (let i = 0; i < rate * seconds; i++) {
    const t = i / rate
    const beat = t % 0.5
    const kick = beat < 0.06 ? Math.sin(2 * Math.PI * 70 * t) * (1 - beat / 0.06) * 0.5 : 0
    const chord = (Math.sin(2 * Math.PI * 220 * t) + Math.sin(2 * Math.PI * 261.63 * t) + Math.sin(2 * Math.PI * 329.63 * t)) * 0.08
    samples.push(Math.round((chord + kick) * 32767))
  }
  const wav = new WaveFile()
  wav.fromScratch(1, rate, "16", samples)
  return Buffer.from(wav.toBuffer())
}
