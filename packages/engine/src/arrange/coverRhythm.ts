// audio_weight on a cover (DESIGN.md section 11: "how closely to follow the source"): it moves
// the cover between the source's rhythm and the new style's. The pitches, words, chords and
// form are the source's at every weight; what moves is when the notes fall.
//
// The rule, deterministic from the task:
// - From 0.5 up, the source's rhythm whole: every note of the tune on the source's bar position
//   (the band keeps the source's groove too, arrangedTake).
// - Below 0.5 the band takes the new style's groove, and a share 1 - 2·weight of the tune's
//   phrases (all of them at 0) takes the new style's rhythm: the composer's rhythm for that many
//   notes over the phrase's bars (`phraseRhythm`, as a new song in the style would be sung),
//   swung as the new style swings, at the cover's tempo. Each note keeps its pitch and syllable,
//   in order. A phrase is a sung line (over its bars in the form), or for an untexted tune (an
//   instrumental's lead, an upload's transcribed top line) two bars from bar 0. Which phrases
//   move is drawn per phrase from the task (a repeated chorus line moves, and moves the same
//   way, every time); a phrase with more notes than the style's rhythm holds keeps its own.

import { phraseRhythm, swungStep, type NoteEvent, type VocalNote } from "../compose.ts"
import type { SectionPlan } from "../form.ts"
import type { Genre } from "../genres.ts"
import { Rng } from "../rng.ts"

/** The share of a cover's phrases in the new style's rhythm at `audioWeight`. */
export const newRhythmShare = (audioWeight: number): number => Math.max(0, Math.min(1, 1 - 2 * audioWeight))

interface Phrase {
  /** First bar. */
  readonly bar: number
  readonly bars: number
  /** What draws its rhythm and whether it moves: equal keys move alike. */
  readonly key: string
}

/** The sung lines of a form, each over its bars. */
function linePhrases(plan: ReadonlyArray<SectionPlan>): Phrase[] {
  const out: Phrase[] = []
  let at = 0
  for (const s of plan) {
    s.lines.forEach((line, li) => {
      out.push({
        bar: at + li * s.barsPerLine,
        bars: Math.max(1, Math.min(s.barsPerLine, s.bars - li * s.barsPerLine)),
        key: `line:${s.kind}:${line}`
      })
    })
    at += s.bars
  }
  return out
}

/** Two-bar phrases from bar 0 over `bars` bars. */
function spanPhrases(bars: number): Phrase[] {
  return Array.from({ length: Math.ceil(bars / 2) }, (_, i) => ({
    bar: 2 * i,
    bars: Math.min(2, bars - 2 * i),
    key: `span:${i}`
  }))
}

export interface RhythmContext {
  /** Seconds per bar of the cover. */
  readonly bar: number
  /** The new style's genre (its swing). */
  readonly genre: Genre
  readonly audioWeight: number
  /** The task's seed: the take, the task id and the request. */
  readonly seed: string
}

const EPS = 1e-6

/** New onsets and lengths for `notes` (in the cover's time), keyed by each moved note's old start. */
function retimed<N extends NoteEvent>(
  notes: ReadonlyArray<N>,
  phrases: ReadonlyArray<Phrase>,
  context: RhythmContext,
  wordEnd: (note: N) => boolean
): Map<N, { readonly start: number; readonly dur: number }> {
  const share = newRhythmShare(context.audioWeight)
  const moved = new Map<N, { readonly start: number; readonly dur: number }>()
  if (share <= 0) return moved
  const step = context.bar / 16
  for (const phrase of phrases) {
    if (new Rng(`${context.seed}|moves|${phrase.key}`).next() >= share) continue
    const from = phrase.bar * context.bar - EPS
    const until = (phrase.bar + phrase.bars) * context.bar - EPS
    const own = notes.filter((n) => n.start >= from && n.start < until)
    if (own.length === 0) continue
    const rhythm = phraseRhythm(
      own.length,
      phrase.bars,
      new Rng(`${context.seed}|rhythm|${phrase.key}`),
      own.map(wordEnd)
    )
    if (rhythm.offs.length < own.length) continue
    own.forEach((note, k) => {
      const off = rhythm.offs[k] ?? 0
      const start = (phrase.bar + Math.floor(off / 16)) * context.bar + swungStep(context.genre, off % 16) * step
      moved.set(note, { start, dur: (rhythm.dur[k] ?? 2) * step * 0.94 })
    })
  }
  return moved
}

const byStart = <N extends NoteEvent>(a: N, b: N): number => a.start - b.start

/**
 * The sung tune (and the harmony voice, which moves with the note it doubles) in the rhythm
 * `audio_weight` asks for; `plan` is the form whose lines are sung.
 */
export function coverVocal(
  vocal: ReadonlyArray<VocalNote>,
  harmony: ReadonlyArray<VocalNote>,
  plan: ReadonlyArray<SectionPlan>,
  context: RhythmContext
): { readonly vocal: VocalNote[]; readonly harmony: VocalNote[] } {
  const moved = retimed(vocal, linePhrases(plan), context, (n) => n.syllable.wordEnd)
  if (moved.size === 0) return { vocal: [...vocal], harmony: [...harmony] }
  const byOldStart = new Map<number, { readonly start: number; readonly dur: number }>()
  for (const [note, to] of moved) byOldStart.set(Math.round(note.start * 1e6), to)
  const move = (n: VocalNote): VocalNote => {
    const to = byOldStart.get(Math.round(n.start * 1e6))
    return to === undefined ? n : { ...n, ...to }
  }
  return { vocal: vocal.map(move).sort(byStart), harmony: harmony.map(move).sort(byStart) }
}

/** An untexted tune (a lead line) over `bars` bars in the rhythm `audio_weight` asks for. */
export function coverLine(notes: ReadonlyArray<NoteEvent>, bars: number, context: RhythmContext): NoteEvent[] {
  const moved = retimed(notes, spanPhrases(bars), context, () => false)
  return notes.map((n) => ({ ...n, ...moved.get(n) })).sort(byStart)
}
