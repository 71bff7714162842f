// Sung words, quickly: the vocal stem of the sound bench's held-out prompts (the same take, the
// same 45 s cut, the same recogniser and alignment), without the other measures or the base
// engine. For trying a change to the voice before measuring it with the sound bench.
// PROMPTS=0,3 picks prompts by index; DRY=1 scores the dry lead voice (no harmony, reverb, master);
// TAKES=3 scores the first three takes of each prompt: the recogniser turns a small change of sound
// into a word or two more or less on one take, so comparing two voices needs more than one take.
// Run: pnpm exec node packages/engine/bench/sung-words.ts
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PROMPTS, lcs, pooledShare, recognise, spokenMatch, stemWords, sungWordsOf } from "./sound-bench.ts"
import { composeTake, mixTake } from "../src/render.ts"
import { singerFor } from "../src/synth/voice/singer.ts"
import { highpassInPlace } from "../src/synth/dsp.ts"
import { quantize, wavFile } from "../src/wav.ts"

const SECONDS = 45
const work = mkdtempSync(join(tmpdir(), "sung-words-"))
const picked = (process.env["PROMPTS"] ?? "")
  .split(",")
  .filter((s) => s !== "")
  .map(Number)
const takes = Number(process.env["TAKES"] ?? "1")
let sung = 0,
  spoken = 0,
  count = 0
/** Words over every take, for the pooled share and its standard error. */
let sungMatched = 0,
  sungTotal = 0,
  spokenMatched = 0,
  spokenTotal = 0
for (const [pi, p] of PROMPTS.entries()) {
  if (picked.length > 0 && !picked.includes(pi)) continue
  const espeak = process.env["NOESPEAK"] === undefined ? spokenMatch(p.lyrics ?? "", work) : { matched: 0, said: 1 }
  if (process.env["NOESPEAK"] === undefined) {
    spokenMatched += espeak.matched
    spokenTotal += espeak.said
  }
  for (let index = 0; index < takes; index++) {
    const take = composeTake(p, "sound-bench", index)
    let m: number, sungWords: number, heard: ReadonlyArray<string>
    if (process.env["DRY"] !== undefined) {
      const wav = join(work, `p${pi}.wav`)
      const buf = new Float32Array(SECONDS * 44100)
      singerFor(take.score.vocal, take.score.voice).sing(
        take.score.vocal.filter((v) => v.start < SECONDS),
        buf,
        99
      )
      highpassInPlace(buf, 0, buf.length, 110)
      let peak = 0
      for (const x of buf) peak = Math.max(peak, Math.abs(x))
      for (let i = 0; i < buf.length; i++) buf[i] = ((buf[i] as number) * 0.5) / peak
      writeFileSync(wav, wavFile(quantize(buf, buf)))
      const sungList = sungWordsOf(take.score.vocal, SECONDS)
      heard = recognise(wav, work)
      m = lcs(heard, sungList)
      sungWords = sungList.length
    } else {
      const w = stemWords(mixTake(take, { maxSeconds: SECONDS }, true), `p${pi}.wav`, work)
      m = w.matched
      sungWords = w.sung
      heard = w.heard
    }
    sung += m / sungWords
    sungMatched += m
    sungTotal += sungWords
    spoken += espeak.matched / espeak.said
    count++
    console.log(
      `${p.label.padEnd(10)} take ${index} sung ${m}/${sungWords} espeak ${espeak.matched}/${espeak.said} | ${heard.join(" ")}`
    )
  }
}
console.log(`mean sung ${((100 * sung) / count).toFixed(1)}% espeak-ng ${((100 * spoken) / count).toFixed(1)}%`)
console.log(
  `pooled sung ${pooledShare(sungMatched, sungTotal)}` +
    (spokenTotal > 0 ? `; espeak-ng ${pooledShare(spokenMatched, spokenTotal)} (once per prompt)` : "")
)
if (process.env["KEEP"] === undefined) rmSync(work, { recursive: true, force: true })
else console.log(work)
