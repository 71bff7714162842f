// An edit: one span of a track composed again (new words sung when given) in the song's key,
// tempo and instrumentation, on its chords; outside it, the track sample for sample. The span
// is widened to the bar lines around it: the new take fades in over CROSSFADE_SECONDS just
// after the first and hands back over the same time just before the last, so the source is
// exact before the first bar line and from the last one on.

import { compose, type Score } from "../compose.ts"
import type { SectionPlan } from "../form.ts"
import { parseLyrics } from "../lyrics.ts"
import { knobs, mixTake, requestKey, type Take } from "../render.ts"
import { Rng } from "../rng.ts"
import {
  CROSSFADE_SECONDS,
  spliceStems,
  spliceStereo,
  type NamedStereo,
  type Segment,
  type TrackReader
} from "../splice.ts"
import type { PcmCacheOptions } from "../pcm-cache.ts"
import type { RenderOptions, TrackSource } from "../types.ts"
import { SR } from "../synth/dsp.ts"
import { dequantize, quantize, wavSamples } from "../wav.ts"
import { sheetOf } from "./sheet.ts"
import { withLines } from "./takes.ts"

interface EditTake {
  readonly take: Take
  /** Track time (s) of the take's own time 0: the source's first bar line. */
  readonly offset: number
  /** Track time (s) of the bar lines the span was widened to. */
  readonly from: number
  readonly until: number
}

type Edit = Extract<NonNullable<TrackSource["derives"]>, { readonly kind: "edit" }>

/** The form cut at the span's bar lines: inside, the span's words (new ones, or the source's lines that fall in it). */
function spanPlan(
  plan: ReadonlyArray<SectionPlan>,
  first: number,
  last: number,
  words: ReturnType<typeof parseLyrics> | null
): SectionPlan[] {
  const out: SectionPlan[] = []
  let at = 0
  for (const s of plan) {
    const a = at
    const b = at + s.bars
    at = b
    for (const [from, to, inside] of [
      [a, Math.min(b, first), false],
      [Math.max(a, first), Math.min(b, last), true],
      [Math.max(a, last), b, false]
    ] as const) {
      if (to <= from) continue
      const lines = inside
        ? s.lines.filter((_, li) => a + li * s.barsPerLine >= from && a + (li + 1) * s.barsPerLine <= to)
        : []
      out.push({ ...s, bars: to - from, lines })
    }
  }
  if (words === null) return out
  // New words: laid over the span's sections alone.
  let bar = 0
  const inside = out.map((s) => {
    const a = bar
    bar += s.bars
    return a >= first && a < last
  })
  const sung = withLines(
    out.filter((_, i) => inside[i]),
    words,
    true
  )
  let k = 0
  return out.map((s, i) => (inside[i] ? (sung[k++] as SectionPlan) : { ...s, lines: [] }))
}

function editTake(source: TrackSource, edit: Edit, options: RenderOptions, tracks: TrackReader): EditTake {
  const sheet = sheetOf(edit.source, options, tracks)
  const bars = sheet.chords.length
  // Bars count from the source's first bar line (an upload's first beat).
  const first = Math.min(bars - 1, Math.max(0, Math.floor((edit.start - sheet.start) / sheet.bar + 1e-6)))
  const last = Math.min(bars, Math.max(first + 1, Math.ceil((edit.end - sheet.start) / sheet.bar - 1e-6)))
  const request = source.request
  const given =
    !request.instrumental &&
    request.lyrics !== null &&
    request.lyrics.trim() !== "" &&
    request.lyrics !== edit.source.request.lyrics
  const plan = spanPlan(sheet.plan, first, last, given ? parseLyrics(request.lyrics) : null)
  const k = knobs(request)
  const rng = new Rng(`edit|${source.index}|${source.taskId}|${requestKey(request)}|${edit.start}|${edit.end}`)
  const score: Score = compose(
    {
      spec: sheet.spec,
      lyrics: request.lyrics,
      instrumental: request.instrumental && !given,
      model: request.model,
      voice: sheet.voice,
      ...k,
      plan,
      chords: sheet.chords
    },
    rng
  )
  return {
    take: { spec: sheet.spec, score, weirdness: k.weirdness, rng },
    offset: sheet.start,
    from: sheet.start + first * sheet.bar,
    until: sheet.start + last * sheet.bar
  }
}

function clip(segments: ReadonlyArray<Segment>, from: number, until: number): Segment[] {
  return segments
    .filter((s) => s.from < until && s.until > from)
    .map((s) => ({ ...s, from: Math.max(s.from, from), until: Math.min(s.until, until) }))
}

/** The takes an edited track is made of: the source's before the span, the new take, the source's again. */
export function editSegments(source: TrackSource, options: RenderOptions, tracks: TrackReader): ReadonlyArray<Segment> {
  const edit = source.derives as Edit
  const parent = tracks.segmentsOf(edit.source, options)
  const end = (parent[parent.length - 1] as Segment).until
  const { take, offset, from, until } = editTake(source, edit, options, tracks)
  const resume = Math.min(end, until) - CROSSFADE_SECONDS
  const own: RenderOptions = { muteVoice: options.muteVoice }
  // The source's takes composed again for after the span: a take's rng is drawn on as it is
  // mixed, so one take object mixed twice would not sound the same twice.
  const after = tracks.segmentsOf(edit.source, options)
  return [...clip(parent, 0, from), { take, offset, from, until: resume, options: own }, ...clip(after, resume, end)]
}

/** The edited track's PCM: the source's own 16-bit PCM outside the span, so it is exact there. */
export async function editPcm(
  source: TrackSource,
  options: RenderOptions,
  cache: PcmCacheOptions | null,
  tracks: TrackReader
): Promise<Int16Array> {
  const edit = source.derives as Edit
  const head = dequantize(wavSamples(await tracks.trackWav(edit.source, options, cache)))
  const end = head.left.length / SR
  const { take, offset, from, until } = editTake(source, edit, options, tracks)
  const resume = Math.min(end, until) - CROSSFADE_SECONDS
  const mix = mixTake(take, { muteVoice: options.muteVoice }, false)
  const spliced = spliceStereo(spliceStereo(head, mix, from, offset), head, resume, 0)
  return quantize(spliced.left, spliced.right)
}

/**
 * The edited track's stems, made as its PCM is: the source's stems outside the span, the new
 * take's inside, spliced at the same places, so they add up to the edited mix.
 */
export function editStems(
  source: TrackSource,
  options: RenderOptions,
  parent: ReadonlyArray<NamedStereo>,
  tracks: TrackReader
): ReadonlyArray<NamedStereo> {
  const edit = source.derives as Edit
  const end = (parent[0]?.left.length ?? 0) / SR
  const { take, offset, from, until } = editTake(source, edit, options, tracks)
  const resume = Math.min(end, until) - CROSSFADE_SECONDS
  const own = mixTake(take, { muteVoice: options.muteVoice }, true).stems ?? []
  return spliceStems(parent, own, (head, mix) => spliceStereo(spliceStereo(head, mix, from, offset), head, resume, 0))
}
