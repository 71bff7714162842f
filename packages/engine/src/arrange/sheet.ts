// A track as one lead sheet: its key, tempo, form, one chord per bar, its sung melody (with
// the words) and its lead line, and the band's parts, all in track time. A track is a chain of
// takes (song.ts `segmentsOf`) that share the root's bar grid, so the sheet reads each bar from
// the take heard in it. Covers, vocals, instrumentals and edits are composed from it.

import type { DrumHit, NoteEvent, Part, Score, VocalNote } from "../compose.ts"
import type { SectionPlan } from "../form.ts"
import type { Take } from "../render.ts"
import type { Segment, TrackReader } from "../splice.ts"
import type { StyleSpec } from "../style.ts"
import { diatonicChord, type Chord } from "../theory.ts"
import type { RenderOptions, TrackSource } from "../types.ts"
import { uploadGridStart } from "../listen/uploadRoot.ts"
import { uploadChords, uploadLead } from "./uploadSheet.ts"

export interface Sheet {
  readonly spec: StyleSpec
  readonly voice: "m" | "f"
  /** Seconds per bar (every take of a track shares the root's tempo). */
  readonly bar: number
  /**
   * Track time of the first bar line: an upload's first beat (its chords are heard bar by bar
   * from there), 0 for the engine's own songs.
   */
  readonly start: number
  /** One chord per bar, the whole track. */
  readonly chords: ReadonlyArray<Chord>
  /** The form in bars, covering every bar once, in order. */
  readonly plan: ReadonlyArray<SectionPlan>
  readonly vocal: ReadonlyArray<VocalNote>
  readonly harmony: ReadonlyArray<VocalNote>
  /** The lead line (the tune of an instrumental, the hooks of a song). */
  readonly lead: ReadonlyArray<NoteEvent>
  /** Everything heard, as one score in track time (what vocals are sung over). */
  readonly score: Score
  /** The first take: its rng position and knobs stand for the track's sound. */
  readonly first: Take
}

const EPS = 1e-6

/** The section of a plan that local bar `b` falls in, with its index. */
function sectionAt(
  plan: ReadonlyArray<SectionPlan>,
  b: number
): { readonly section: SectionPlan; readonly index: number } | null {
  let at = 0
  for (const [index, section] of plan.entries()) {
    if (b < at + section.bars) return { section, index }
    at += section.bars
  }
  return null
}

/** The segment heard in the middle of the bar starting at `t`. */
function segmentAt(segments: ReadonlyArray<Segment>, t: number): Segment {
  return [...segments].reverse().find((s) => s.from <= t + EPS) ?? (segments[0] as Segment)
}

export function sheetOf(source: TrackSource, options: RenderOptions, tracks: TrackReader): Sheet {
  const segments = tracks.segmentsOf(source, options)
  const first = (segments[0] as Segment).take
  const bar = (4 * 60) / first.score.bpm
  const end = (segments[segments.length - 1] as Segment).until
  const last = segments[segments.length - 1] as Segment
  const composedBars = Math.round(last.offset / bar) + (last.take.score.chords?.length ?? 0)
  const bars = Math.max(1, Math.min(composedBars, Math.ceil(end / bar - EPS)))

  const chords: Chord[] = []
  const plan: SectionPlan[] = []
  let open: {
    key: string
    kind: SectionPlan["kind"]
    bars: number
    lines: ReadonlyArray<string>
    barsPerLine: number
    energy: number
    whole: number
  } | null = null
  const occurrences = new Map<SectionPlan["kind"], number>()
  const close = (): void => {
    if (open === null) return
    const occurrence = occurrences.get(open.kind) ?? 0
    occurrences.set(open.kind, occurrence + 1)
    // A section cut short (by the splice of an extension) keeps no words: its lines no longer fit it.
    const lines = open.bars === open.whole ? open.lines : []
    plan.push({
      kind: open.kind,
      bars: open.bars,
      lines,
      barsPerLine: open.barsPerLine,
      energy: open.energy,
      occurrence
    })
    open = null
  }
  for (let i = 0; i < bars; i++) {
    const t = i * bar
    const seg = segmentAt(segments, t + bar / 2)
    const local = Math.round((t - seg.offset) / bar)
    const score = seg.take.score
    chords.push(score.chords?.[local] ?? diatonicChord(first.spec.tonic, first.spec.minor, 0, false))
    const found = sectionAt(score.plan ?? [], local)
    const key = `${segments.indexOf(seg)}:${found?.index ?? -1}`
    if (open === null || open.key !== key) {
      close()
      const section = found?.section
      open = {
        key,
        kind: section?.kind ?? "verse",
        bars: 0,
        lines: section?.lines ?? [],
        barsPerLine: section?.barsPerLine ?? 2,
        energy: section?.energy ?? 0.6,
        whole: section?.bars ?? 0
      }
    }
    open.bars++
  }
  close()

  const heard = (seg: Segment, start: number): boolean => start >= seg.from - EPS && start < seg.until
  const parts = new Map<string, Part>()
  const vocal: VocalNote[] = []
  const harmony: VocalNote[] = []
  const drums: DrumHit[] = []
  const kicks: number[] = []
  for (const seg of segments) {
    const score = seg.take.score
    const seen = new Map<string, number>()
    for (const p of score.parts) {
      const k = `${p.role}|${p.instrument}`
      const n = seen.get(k) ?? 0
      seen.set(k, n + 1)
      const key = `${k}|${n}`
      const merged = parts.get(key) ?? { ...p, notes: [] }
      parts.set(key, merged)
      for (const note of p.notes)
        if (heard(seg, seg.offset + note.start)) merged.notes.push({ ...note, start: seg.offset + note.start })
    }
    for (const note of score.vocal)
      if (heard(seg, seg.offset + note.start)) vocal.push({ ...note, start: seg.offset + note.start })
    for (const note of score.harmony)
      if (heard(seg, seg.offset + note.start)) harmony.push({ ...note, start: seg.offset + note.start })
    for (const hit of score.drums)
      if (heard(seg, seg.offset + hit.time)) drums.push({ ...hit, time: seg.offset + hit.time })
    for (const kick of score.kicks) if (heard(seg, seg.offset + kick)) kicks.push(seg.offset + kick)
  }
  // An upload's stand-in take gives its form; its chords and its tune are what was heard in it.
  const upload = source.extends === undefined ? source.upload : undefined
  if (upload !== undefined)
    uploadChords(upload, chords.length).forEach((heard, i) => {
      if (heard !== undefined) chords[i] = heard
    })
  const allParts = [...parts.values()].filter((p) => p.notes.length > 0)
  const lead =
    upload !== undefined
      ? uploadLead(upload, bar)
      : allParts
          .filter((p) => p.role === "lead")
          .flatMap((p) => p.notes)
          .sort((a, b) => a.start - b.start)
  const sections: { kind: SectionPlan["kind"]; start: number; end: number }[] = []
  let at = 0
  for (const s of plan) {
    sections.push({ kind: s.kind, start: at * bar, end: (at + s.bars) * bar })
    at += s.bars
  }
  const score: Score = {
    ...first.score,
    duration: Math.max(first.score.duration, end),
    parts: allParts,
    drums,
    vocal,
    harmony,
    kicks,
    sections,
    plan,
    chords
  }
  const start = upload === undefined ? 0 : uploadGridStart(upload)
  return { spec: first.spec, voice: first.score.voice, bar, start, chords, plan, vocal, harmony, lead, score, first }
}
