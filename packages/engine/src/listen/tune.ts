// What the tune of an upload is, one rule for every reader (a cover's lead, uploadSheet.ts; the
// voice a persona sings with, voiceProfile.ts). Decision 0132.
//
// Over a band the tune is the skyline: of notes starting together the highest, above the bass
// and the comping's low notes. A tune alone (a hummed or sung melody, one voice) is every note
// it sings down to a bass's register: a man's hum goes well under G3. Its transcription holds short ghost
// notes beside the sung ones (a vowel's first formant near 700 Hz heard as an E5 for a tenth of a
// second at each attack), which the skyline would take for the tune; alone, the tune is the
// notes that carry the most sound, each keeping the time no stronger one holds.

export interface Note {
  readonly pitch: number
  readonly start: number
  readonly end: number
  /** 0..1; a note without one counts as full. */
  readonly velocity?: number
}

/** How much sound a note carries: its length times its velocity. */
const weightOf = (n: Note): number => (n.end - n.start) * (n.velocity ?? 1)

/** Over a band the tune is sung above the bass and the comping's low notes. */
export const lowest = 55
/** Alone, a voice sings from here (A2, low in a bass's hum) up; under it is a bass line, not a tune. */
export const lowestSung = 45
/** Notes this close together start together: of them the highest is the tune. */
export const together = 0.05
/** A transcription with no more than this share of its sounding time under two notes or more is one voice. */
const aloneBelow = 0.15
/** A note alone sharing more than this share of its time with a stronger one is its ghost. */
const ghostShare = 0.5

/** The share of the time anything sounds during which two notes or more do. */
export function overlapShare(notes: ReadonlyArray<Note>): number {
  const edges = notes
    .filter((n) => n.end > n.start)
    .flatMap((n) => [
      { t: n.start, d: 1 },
      { t: n.end, d: -1 }
    ])
    .sort((a, b) => a.t - b.t || a.d - b.d)
  let sounding = 0
  let over = 0
  let count = 0
  let last = 0
  for (const e of edges) {
    if (count >= 1) sounding += e.t - last
    if (count >= 2) over += e.t - last
    count += e.d
    last = e.t
  }
  return sounding === 0 ? 0 : over / sounding
}

/** True when the notes are one voice: a tune alone, with no band under it. */
export const isTuneAlone = (notes: ReadonlyArray<Note>): boolean =>
  notes.length > 0 && overlapShare(notes) <= aloneBelow

/** A tune alone: the strongest notes (length × velocity), each kept unless mostly under a stronger one kept. */
function lineAlone<N extends Note>(notes: ReadonlyArray<N>): Array<N> {
  const kept: Array<N> = []
  const strongestFirst = [...notes].sort((a, b) => weightOf(b) - weightOf(a) || a.start - b.start)
  for (const n of strongestFirst) {
    const shared = kept.reduce((s, k) => s + Math.max(0, Math.min(n.end, k.end) - Math.max(n.start, k.start)), 0)
    if (shared <= ghostShare * (n.end - n.start)) kept.push(n)
  }
  return kept.sort((a, b) => a.start - b.start)
}

/** Over a band: of notes starting together the highest, above `lowest`. */
function skyline<N extends Note>(notes: ReadonlyArray<N>): Array<N> {
  const sorted = notes.filter((n) => n.pitch >= lowest).sort((a, b) => a.start - b.start || b.pitch - a.pitch)
  const tops: Array<N> = []
  for (const n of sorted) {
    const last = tops[tops.length - 1]
    if (last !== undefined && n.start - last.start < together) continue
    tops.push(n)
  }
  return tops
}

/** The tune of the transcription, in time order, each note cut where the next begins. */
export function tuneOf<N extends Note>(notes: ReadonlyArray<N>): Array<N> {
  const sounding = notes.filter((n) => n.end > n.start)
  const line = isTuneAlone(sounding) ? lineAlone(sounding.filter((n) => n.pitch >= lowestSung)) : skyline(sounding)
  return line.map((n, i) => ({ ...n, end: Math.min(n.end, line[i + 1]?.start ?? n.end) }))
}
