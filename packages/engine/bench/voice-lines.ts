// The voice alone, quickly: each held-out prompt's lyrics sung on a plain tune (no band, no
// reverb, no master), recognised by pocketsphinx, in about a minute where the sound bench takes
// half an hour. For trying a change to the voice before measuring it with the sound bench.
// SPEAK=0.2 speaks instead (0.2 s a syllable, a low monotone); LOWP=1 sings the tune an octave-ish lower.
// Run: pnpm exec node packages/engine/bench/voice-lines.ts
import { execFileSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PROMPTS, words, lcs } from "./sound-bench.ts"
import { lineSyllables } from "../src/lyrics.ts"
import { singerFor } from "../src/synth/voice/singer.ts"
import { highpassInPlace } from "../src/synth/dsp.ts"
import { quantize, wavFile } from "../src/wav.ts"
import type { VocalNote } from "../src/compose.ts"

const work = mkdtempSync(join(tmpdir(), "voice-lines-"))
const recognise = (wav: string): string[] => {
  const pcm = join(work, "16k.wav")
  execFileSync("sox", ["-R", wav, "-r", "16000", "-c", "1", "-b", "16", pcm])
  return words(
    execFileSync("/usr/bin/pocketsphinx_continuous", ["-infile", pcm, "-logfn", "/dev/null"], { encoding: "utf8" })
  )
}
let sum = 0,
  cpu = 0
const scale = [0, 2, 4, 5, 7, 9, 11, 12]
for (const [pi, p] of PROMPTS.entries()) {
  const female = /female/.test(p.style)
  const notes: VocalNote[] = []
  let t = 0.5
  const beat = 60 / p.bpm
  let k = 0
  const speak0 = process.env["SPEAK"] !== undefined
  const lines = (p.lyrics ?? "").split("\n").filter((l) => !l.startsWith("[") && l.trim() !== "")
  for (const line of lines) {
    for (const sy of lineSyllables(line)) {
      const speak = process.env["SPEAK"] !== undefined
      const dur = speak
        ? Number(process.env["SPEAK"]) * (sy.stressed === true ? 1.3 : 0.8)
        : (k % 3 === 0 ? 1 : 0.5) * beat
      notes.push({
        start: t,
        dur: dur * 0.94,
        pitch:
          process.env["LOWP"] !== undefined
            ? (female ? 57 : 47) + (scale[(k * 3) % 5] ?? 0)
            : speak
              ? female
                ? 57
                : 47
              : (female ? 64 : 52) + (scale[(k * 3) % 5] ?? 0),
        vel: 0.8 + (k % 2 === 0 ? 0.15 : 0),
        syllable: sy
      })
      t += dur
      k++
    }
    t += speak0 ? 0.4 : 2 * beat
  }
  const buf = new Float32Array(Math.ceil((t + 0.5) * 44100))
  const c0 = process.threadCpuUsage()
  singerFor(notes, female ? "f" : "m").sing(notes, buf, 99)
  const c = process.threadCpuUsage(c0)
  cpu += (c.user + c.system) / 1e6
  highpassInPlace(buf, 0, buf.length, 110)
  let peak = 0
  for (const x of buf) peak = Math.max(peak, Math.abs(x))
  for (let i = 0; i < buf.length; i++) buf[i] = ((buf[i] as number) * 0.5) / peak
  const wav = join(work, `l${pi}.wav`)
  writeFileSync(wav, wavFile(quantize(buf, buf)))
  const said = words(p.lyrics ?? "")
  const heard = recognise(wav)
  const m = lcs(heard, said)
  sum += m / said.length
  console.log(`${p.label.padEnd(10)} ${m}/${said.length} | ${heard.join(" ")}`)
}
console.log(`mean ${((100 * sum) / PROMPTS.length).toFixed(1)}% voice cpu ${cpu.toFixed(2)}s dir ${work}`)
