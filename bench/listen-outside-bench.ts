/**
 * Listening to recordings Lyre did not make (game music from Debian's packages, as the sound
 * lane's listening tests hear them: packages/engine/test/support/outsideRecordings.ts), judged
 * from outside, each figure beside a baseline computed in the same run on the same audio:
 *
 * - tempo: the engine's, against the chart's tempo (a Fret on Fire song's notes.mid) where
 *   there is one; the baseline is Essentia's RhythmExtractor2013 on the same excerpt;
 * - key: the engine's (the notes heard beat by beat, decision 0133), same or relative to
 *   Essentia's Krumhansl key; the baseline is the same notes' whole histogram (before 0133);
 * - chords: median length in beats, the share of the time among the three triads best matching
 *   a chroma of the spectrum, and in the key found (decision 0127); the baseline is one best
 *   triad a beat from the same beat chroma (before 0127).
 *
 * 40 s of each recording, from 40 s in (Wesnoth: 20 s). Installs the packages when missing, as
 * the test command does. Run: node bench/listen-outside-bench.ts (part of `pnpm bench`).
 */
import ensureDebianMusic from "../test/debianMusic.ts"
import ensureFfmpeg from "../test/ffmpeg.ts"
import { listen } from "../packages/engine/src/listen/analyse.ts"
import { beatChroma, keyOf } from "../packages/engine/src/listen/harmony.ts"
import { transcribe } from "../packages/engine/src/listen/transcribe.ts"
import type { ChordSpan, Listening } from "../packages/engine/src/listen/types.ts"
import { tempo } from "../packages/engine/test/support/analysis.ts"
import {
  bestTriads,
  chartTempo,
  chromagram,
  diatonicTriads,
  excerptWav,
  krumhanslKey,
  monoOf,
  present,
  recordings,
  sameOrRelative
} from "../packages/engine/test/support/outsideRecordings.ts"

const seconds = 40
const names = ["C", "C#", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B"]

/** The baseline chords: on each beat the triad whose three classes best match its chroma (cosine). */
function triadPerBeat(listening: Listening): Array<ChordSpan> {
  const { beats } = listening.analysis
  const chroma = beatChroma(listening.transcription.notes, beats, listening.duration)
  const spans: Array<ChordSpan> = []
  chroma.forEach((c, b) => {
    if (c.strength <= 0) return
    const norm = Math.sqrt(c.treble.reduce((s, v) => s + v * v, 0))
    let best = { score: -1, chord: "C" }
    for (let root = 0; root < 12; root++)
      for (const [third, suffix] of [
        [4, ""],
        [3, "m"]
      ] as const) {
        const inside = (c.treble[root] ?? 0) + (c.treble[(root + third) % 12] ?? 0) + (c.treble[(root + 7) % 12] ?? 0)
        const score = inside / (norm * Math.sqrt(3))
        if (score > best.score) best = { score, chord: `${names[root]}${suffix}` }
      }
    const start = beats[b] ?? 0
    const end = beats[b + 1] ?? listening.duration
    const last = spans[spans.length - 1]
    if (last !== undefined && last.chord === best.chord && last.end === start)
      spans[spans.length - 1] = { ...last, end }
    else spans.push({ start, end, chord: best.chord })
  })
  return spans
}

/** Median chord in beats, and the shares of the time among the chroma's three best triads and in `key`. */
function chordFigures(
  chords: ReadonlyArray<ChordSpan>,
  beats: ReadonlyArray<number>,
  key: string,
  chroma: ReturnType<typeof chromagram>
): { readonly median: number; readonly topThree: number; readonly inKey: number } {
  const lengths = chords
    .map((c) => beats.filter((b) => b >= c.start - 0.001 && b < c.end - 0.001).length)
    .sort((a, b) => a - b)
  const diatonic = diatonicTriads(key)
  let total = 0
  let top = 0
  let inKey = 0
  for (const c of chords) {
    const d = c.end - c.start
    total += d
    if (bestTriads(chroma, c.start, c.end).slice(0, 3).includes(c.chord)) top += d
    if (diatonic.has(c.chord)) inKey += d
  }
  return {
    median: lengths[Math.floor(lengths.length / 2)] ?? 0,
    topThree: total === 0 ? 0 : top / total,
    inKey: total === 0 ? 0 : inKey / total
  }
}

const pct = (x: number) => `${Math.round(x * 100)}%`.padStart(4)
const off = (bpm: number, chart: number | undefined) =>
  chart === undefined ? "   -  " : `${((100 * (bpm - chart)) / chart).toFixed(1).padStart(5)}%`

export async function listenOutsideBench(log: (line: string) => void = console.log): Promise<void> {
  ensureFfmpeg()
  ensureDebianMusic()
  const heard = recordings.filter(present)
  log(
    `Outside recordings (Debian's packages), ${seconds} s each; the baseline of each figure computed in the same run (see the file's header)`
  )
  log(
    "recording              kind                  | chart  engine bpm (off) | Essentia bpm (off) | Essentia key | engine key  | baseline key | chords, median beats / top three / in key: engine | baseline"
  )
  const totals = {
    engineKey: 0,
    baselineKey: 0,
    engineTempo: 0,
    essentiaTempo: 0,
    engineOctave: 0,
    essentiaOctave: 0,
    charted: 0
  }
  /** Within 2% of the chart; `octave`: or of its half or double (the pulse counted at another level). */
  const near = (bpm: number, chart: number, octave: boolean) =>
    (octave ? [chart / 2, chart, chart * 2] : [chart]).some((c) => Math.abs(bpm - c) / c <= 0.02)
  for (const recording of heard) {
    const wav = excerptWav(recording, seconds)
    const mono = monoOf(wav)
    const listening = await listen(wav, "audio/wav", transcribe)
    const { analysis } = listening
    const chart = chartTempo(recording)
    const outsideTempo = tempo(mono).bpm
    const judge = krumhanslKey(mono)
    const baselineKey = keyOf(listening.transcription.notes)
    const chroma = chromagram(mono)
    const engine = chordFigures(analysis.chords, analysis.beats, analysis.key, chroma)
    const baseline = chordFigures(triadPerBeat(listening), analysis.beats, baselineKey, chroma)
    const agrees = (key: string) => (sameOrRelative(key, judge) ? "+" : "-")
    if (sameOrRelative(analysis.key, judge)) totals.engineKey++
    if (sameOrRelative(baselineKey, judge)) totals.baselineKey++
    if (chart !== undefined) {
      totals.charted++
      if (near(analysis.bpm, chart, false)) totals.engineTempo++
      if (near(outsideTempo, chart, false)) totals.essentiaTempo++
      if (near(analysis.bpm, chart, true)) totals.engineOctave++
      if (near(outsideTempo, chart, true)) totals.essentiaOctave++
    }
    log(
      `${recording.name.padEnd(22)} ${recording.kind.padEnd(21)} | ${(chart?.toFixed(1) ?? "-").padStart(5)}  ${analysis.bpm.toFixed(1).padStart(6)} ${off(analysis.bpm, chart)} | ` +
        `${outsideTempo.toFixed(1).padStart(6)} ${off(outsideTempo, chart)}    | ${judge.padEnd(12)} | ${analysis.key.padEnd(9)} ${agrees(analysis.key)} | ` +
        `${baselineKey.padEnd(10)} ${agrees(baselineKey)} | ${engine.median.toFixed(1).padStart(4)} ${pct(engine.topThree)} ${pct(engine.inKey)} | ` +
        `${baseline.median.toFixed(1).padStart(4)} ${pct(baseline.topThree)} ${pct(baseline.inKey)}`
    )
  }
  log(
    `key same or relative to Essentia's Krumhansl: engine ${totals.engineKey}/${heard.length}, baseline (whole histogram) ${totals.baselineKey}/${heard.length}; ` +
      `tempo within 2% of the chart: engine ${totals.engineTempo}/${totals.charted}, Essentia ${totals.essentiaTempo}/${totals.charted}; ` +
      `of it, its half or its double: engine ${totals.engineOctave}/${totals.charted}, Essentia ${totals.essentiaOctave}/${totals.charted}`
  )
}

if (import.meta.main) await listenOutsideBench()
