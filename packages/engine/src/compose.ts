// The composer: turns a request into a Score (timed notes per part, drum hits and
// sung syllables). No sound is made here; the synth renders the Score.

import type { BassStyle, CompStyle, DrumStyle, Genre, Instrument, SectionKind } from "./genres.ts"
import { barSeconds, planForm, type SectionPlan } from "./form.ts"
import { lineSyllables, parseLyrics, type SungSyllable } from "./lyrics.ts"
import type { Rng } from "./rng.ts"
import type { StyleSpec } from "./style.ts"
import {
  borrowedChord,
  chordPitchClasses,
  diatonicChord,
  nearestIn,
  scaleOf,
  voiceChord,
  type Chord
} from "./theory.ts"
import type { ModelName } from "./types.ts"

export interface NoteEvent {
  readonly start: number
  readonly dur: number
  readonly pitch: number
  readonly vel: number
}

export type DrumKind = "kick" | "snare" | "clap" | "hat" | "ohat" | "ride" | "crash" | "tom" | "rim" | "shaker"
export interface DrumHit {
  readonly time: number
  readonly kind: DrumKind
  readonly vel: number
  /** Tom pitch or similar per-hit variation. */
  readonly tune: number
}

export interface VocalNote extends NoteEvent {
  readonly syllable: SungSyllable
}

export type Role = "chords" | "pad" | "bass" | "lead" | "arp" | "counter"
export interface Part {
  readonly role: Role
  readonly instrument: Instrument
  readonly notes: NoteEvent[]
  /** -1 (left) .. 1 (right). */
  readonly pan: number
  readonly gain: number
  /** Reverb send 0..1. */
  readonly send: number
}

export interface Score {
  readonly bpm: number
  readonly duration: number
  readonly parts: ReadonlyArray<Part>
  readonly drums: ReadonlyArray<DrumHit>
  readonly vocal: ReadonlyArray<VocalNote>
  /** A second, quieter voice a third or so above the tune in choruses (aether only). */
  readonly harmony: ReadonlyArray<VocalNote>
  readonly voice: "m" | "f"
  readonly sections: ReadonlyArray<{ readonly kind: SectionKind; readonly start: number; readonly end: number }>
  readonly genre: Genre
  readonly richness: number
  readonly weirdness: number
  /** Backing level relative to the voice, from audio_weight. */
  readonly backing: number
  readonly kicks: ReadonlyArray<number>
  /** The form as played, and one chord per bar: what a cover, vocals or an edit of the take re-use. */
  readonly plan?: ReadonlyArray<SectionPlan> | undefined
  readonly chords?: ReadonlyArray<Chord> | undefined
}

export interface ComposeInput {
  readonly spec: StyleSpec
  readonly lyrics: string | null
  readonly instrumental: boolean
  readonly model: ModelName
  readonly voice: "m" | "f"
  readonly styleWeight: number
  readonly weirdness: number
  readonly audioWeight: number
  /** The form to play instead of planning one from the lyrics (a continuation's). */
  readonly plan?: ReadonlyArray<SectionPlan> | undefined
  /** One chord per bar to play instead of the composed ones (a cover keeps its source's harmony). */
  readonly chords?: ReadonlyArray<Chord> | undefined
}

const RICHNESS: Readonly<Record<ModelName, number>> = { aether: 1, echo: 0.62, nocturne: 0.3 }

interface BarInfo {
  readonly start: number
  readonly chord: Chord
  readonly section: SectionPlan
  readonly indexInSection: number
  readonly sectionIndex: number
}

/** Drum patterns as 16-step strings: x = hit, o = accent-less ghost. */
const DRUM_PATTERNS: Readonly<Record<DrumStyle, ReadonlyArray<Partial<Record<DrumKind, string>>>>> = {
  backbeat: [
    { kick: "x.......x.......", snare: "....x.......x...", hat: "x.x.x.x.x.x.x.x." },
    { kick: "x.....x.x.......", snare: "....x.......x...", hat: "x.x.x.x.x.x.x.x." },
    { kick: "x.......x.x.....", snare: "....x.......x..o", hat: "xxxxxxxxxxxxxxxx" }
  ],
  rock: [
    { kick: "x.......x.x.....", snare: "....x.......x...", hat: "x.x.x.x.x.x.x.x." },
    { kick: "x.x.....x.x.....", snare: "....x.......x...", ride: "x.x.x.x.x.x.x.x." }
  ],
  four: [
    { kick: "x...x...x...x...", clap: "....x.......x...", ohat: "..x...x...x...x.", hat: "x.x.x.x.x.x.x.x." },
    { kick: "x...x...x...x...", snare: "....x.......x...", ohat: "..x...x...x...x.", shaker: "xxxxxxxxxxxxxxxx" }
  ],
  techno: [
    { kick: "x...x...x...x...", rim: "..x.....x.x...x.", ohat: "..x...x...x...x.", hat: "xxxxxxxxxxxxxxxx" },
    { kick: "x...x...x...x...", clap: "....x.......x...", ohat: "..x...x...x...x." }
  ],
  boombap: [
    { kick: "x.........x.....", snare: "....x.......x...", hat: "x.x.x.x.x.x.x.x." },
    { kick: "x......x..x.....", snare: "....x.......x...", hat: "x.x.x.x.x.x.x.xx" },
    { kick: "x.x.......x..x..", snare: "....x.......x...", hat: "x.x.x.x.x.x.x.x." }
  ],
  trap: [
    { kick: "x.......x.....x.", clap: "........x.......", hat: "x.x.x.x.x.xxx.x." },
    { kick: "x.....x...x.....", clap: "........x.......", hat: "xxx.x.x.x.x.xxxx" }
  ],
  breakbeat: [
    { kick: "x.........x.....", snare: "....x.......x...", hat: "x.x.x.x.x.x.x.x." },
    { kick: "x.........xx....", snare: "....x..o.o..x...", ride: "x.x.x.x.x.x.x.x." }
  ],
  jazz: [
    { ride: "x...x.x.x...x.x.", hat: "....x.......x...", kick: "x...............", rim: "..........o....." },
    { ride: "x...x.x.x...x.x.", hat: "....x.......x...", snare: ".......o......o." }
  ],
  metal: [
    { kick: "xxxxxxxxxxxxxxxx", snare: "....x.......x...", ride: "x.x.x.x.x.x.x.x." },
    { kick: "x.xxx.xxx.xxx.xx", snare: "....x.......x...", hat: "x.x.x.x.x.x.x.x." }
  ],
  onedrop: [
    { kick: "........x.......", rim: "........x.......", hat: "x.x.x.x.x.x.x.x." },
    { kick: "........x.......", snare: "........x.......", hat: "..x...x...x...x." }
  ],
  funk: [
    { kick: "x.....x...x..x..", snare: "....x..o.o..x..o", hat: "xxxxxxxxxxxxxxxx" },
    { kick: "x..x......x.....", snare: "....x.......x.o.", hat: "x.xxx.xxx.xxx.xx" }
  ],
  brush: [
    { kick: "x.......x.......", rim: "....x.......x...", shaker: "x.xxx.xxx.xxx.xx" },
    { kick: "x.........x.....", snare: "....o.......o...", shaker: "x.x.x.x.x.x.x.x." }
  ],
  ambient: [{ shaker: "x...x...x...x..." }, { rim: "..........x....." }]
}

export function compose(input: ComposeInput, rng: Rng): Score {
  const { spec } = input
  const genre = spec.genre
  const richness = RICHNESS[input.model]
  const sw = input.styleWeight
  const weird = input.weirdness
  const bpm = spec.bpm
  const bar = barSeconds(bpm)
  const step = bar / 16
  const lyrics = parseLyrics(input.lyrics)
  const vocal =
    !input.instrumental &&
    (input.plan !== undefined ? input.plan.some((s) => s.lines.length > 0) : lyrics.sections.length > 0)
  const progLen = genre.progressions[0]?.length ?? 4
  // The style's energy scales every section's intensity: calm songs comp in long notes,
  // energetic ones in eighths with open hats and fills.
  const energyScale = 0.55 + 0.9 * spec.energy
  // A cappella (every instrument negated, lyrics sung) has no instrumental sections to play.
  const acappella = vocal && spec.instruments.size === 0
  const planned = input.plan ?? planForm(genre, lyrics, vocal, bpm, rng.fork("form"), progLen)
  // A given plan is kept whole: its bars are laid on a grid the caller relies on.
  const played =
    input.plan === undefined && acappella && planned.some((s) => s.lines.length > 0)
      ? planned.filter((s) => s.lines.length > 0)
      : planned
  const sections = played.map((s) => ({ ...s, energy: Math.min(1, s.energy * energyScale) }))

  // Progressions: a high style_weight favours the genre's first (most idiomatic) ones.
  const pickProg = (r: Rng): ReadonlyArray<number> => {
    const n = genre.progressions.length
    const idx = r.chance(sw * 0.8) ? Math.min(n - 1, r.int(0, 1)) : r.int(0, n - 1)
    return genre.progressions[idx] ?? [0, 3, 4, 0]
  }
  const hr = rng.fork("harmony")
  const progs: Partial<Record<SectionKind, ReadonlyArray<number>>> = {}
  progs.verse = pickProg(hr)
  progs.chorus = pickProg(hr)
  progs.bridge = hr.chance(0.6) ? [3, 4, 5, 4].slice(0, progLen) : pickProg(hr)
  progs.prechorus = [3, 4, 3, 4]
  progs.solo = progs.chorus
  progs.intro = hr.chance(0.5) ? progs.chorus : progs.verse
  progs.outro = progs.chorus
  const seventhFor = new Map<string, boolean>()

  // The bar grid with one chord per bar.
  const bars: BarInfo[] = []
  let t = 0
  sections.forEach((s, si) => {
    const prog = progs[s.kind] ?? [0]
    for (let b = 0; b < s.bars; b++) {
      let deg = prog[b % prog.length] ?? 0
      // In minor, a phrase-ending VII becomes the major V: the leading tone makes the key unmistakable.
      if (spec.minor && deg === 6 && b % prog.length === prog.length - 1) deg = 4
      const key = `${s.kind}:${deg}`
      if (!seventhFor.has(key)) seventhFor.set(key, hr.chance(genre.sevenths))
      let chord = diatonicChord(spec.tonic, spec.minor, deg, seventhFor.get(key) ?? false)
      // Weirdness swaps in chromatic colour chords, but never on the tonic bar that opens a phrase.
      if (b % prog.length !== 0 && hr.chance(weird * weird * 0.45))
        chord = borrowedChord(spec.tonic, spec.minor, hr.int(0, 5))
      // The last bar of the song resolves to the tonic.
      if (si === sections.length - 1 && b === s.bars - 1) chord = diatonicChord(spec.tonic, spec.minor, 0, false)
      chord = input.chords?.[bars.length] ?? chord
      bars.push({ start: t, chord, section: s, indexInSection: b, sectionIndex: si })
      t += bar
    }
  })
  const duration = t + bar * 0.75 // room for the last chord and the reverb tail

  /** Time of 16th step s (0..15) in a bar, with swing applied to off-beats. */
  const at = (b: BarInfo, s: number): number => b.start + swungStep(genre, s) * step

  // Everything negated and nothing to sing: a solo piano rather than silence.
  const inst: ReadonlySet<Instrument> =
    spec.instruments.size === 0 && !vocal ? new Set<Instrument>(["piano"]) : spec.instruments
  const has = (i: Instrument): boolean => inst.has(i)
  const ar = rng.fork("arrangement")
  const parts: Part[] = []
  // audio_weight: the band's level against the lead (voice, or lead melody): 0.6x .. 1.4x.
  const backing = 0.6 + 0.8 * input.audioWeight

  // ---------------------------------------------------------------- chords
  const compCandidates: Instrument[] = [
    "piano",
    "epiano",
    "guitar",
    "eguitar",
    "organ",
    "synth",
    "strings",
    "pad",
    "pluck",
    "brass",
    "bells",
    "flute"
  ]
  const namedComp = compCandidates.find((i) => spec.named.has(i) && i !== "flute" && i !== "brass" && i !== "bells")
  const compInst = namedComp ?? compCandidates.find((i) => has(i)) ?? null
  const compStyle: CompStyle =
    compInst === "guitar" && genre.comp !== "skank"
      ? "strum"
      : compInst === "eguitar" && (genre.comp === "block" || genre.comp === "sustain" || genre.comp === "arp")
        ? "power"
        : (compInst === "pad" || compInst === "strings") && genre.comp !== "arp"
          ? "sustain"
          : genre.comp
  if (compInst !== null) {
    const notes: NoteEvent[] = []
    const variant = ar.chance(sw) ? 0 : ar.int(0, 2)
    for (const b of bars) {
      const e = b.section.energy
      if (
        b.section.kind === "intro" &&
        b.indexInSection < Math.min(2, b.section.bars / 2) &&
        richness > 0.5 &&
        compStyle !== "sustain"
      ) {
        // Aether opens with the chords alone, held, before the groove starts.
        for (const p of voiceChord(b.chord, 62, 4)) notes.push({ start: b.start, dur: bar * 0.98, pitch: p, vel: 0.5 })
        continue
      }
      addComp(notes, compStyle, b, at, step, e, variant, ar, richness)
    }
    parts.push({
      role: "chords",
      instrument: compInst,
      notes,
      pan: compInst === "guitar" || compInst === "eguitar" ? -0.35 : -0.15,
      gain: 0.55,
      send: 0.25
    })
    // Rock and metal double the rhythm guitar on the other side: the classic wide wall.
    if ((compStyle === "power" || compStyle === "strum") && richness >= 0.6) {
      parts.push({
        role: "chords",
        instrument: compInst,
        notes: notes.map((n) => ({ ...n, start: n.start + 0.012, pitch: n.pitch })),
        pan: 0.4,
        gain: 0.42,
        send: 0.2
      })
    }
  }

  // ---------------------------------------------------------------- pad
  const padInst: Instrument | null = has("pad")
    ? "pad"
    : has("strings") && compInst !== "strings"
      ? "strings"
      : has("organ") && compInst !== "organ"
        ? "organ"
        : null
  if (padInst !== null && padInst !== compInst && richness >= 0.5) {
    const notes: NoteEvent[] = []
    for (const b of bars) {
      // Energetic songs leave the first verse without the pad so the next section can lift.
      if (b.section.kind === "verse" && b.section.occurrence === 0 && spec.energy >= 0.5) continue
      for (const p of voiceChord(b.chord, 64, richness > 0.9 ? 4 : 3))
        notes.push({ start: b.start, dur: bar * 1.02, pitch: p, vel: 0.35 + 0.25 * b.section.energy })
    }
    parts.push({ role: "pad", instrument: padInst, notes, pan: 0.2, gain: 0.34, send: 0.6 })
  }

  // ---------------------------------------------------------------- bass
  if (has("bass")) {
    const notes: NoteEvent[] = []
    const style: BassStyle = genre.bass
    for (let i = 0; i < bars.length; i++) {
      const b = bars[i] as BarInfo
      const next = bars[i + 1]
      if (b.section.kind === "intro" && b.indexInSection < b.section.bars / 2 && genre.energy > 0.5) continue
      addBass(notes, style, b, next, at, step, ar, weird)
    }
    const bassInst: Instrument = "bass"
    parts.push({ role: "bass", instrument: bassInst, notes, pan: 0, gain: 0.7, send: 0.03 })
  }

  // ---------------------------------------------------------------- vocal melody
  const mr = rng.fork("melody")
  const centre = input.voice === "f" ? 67 : 55
  const vocalNotes: VocalNote[] = []
  const harmonyNotes: VocalNote[] = []
  const melodyCache = new Map<string, { offs: number[]; dur: number[]; pitch: number[] }>()
  const scale = scaleOf(spec.minor)
  const scalePcs = scale.map((s) => (s + spec.tonic) % 12)
  if (vocal) {
    let barIdx = 0
    for (const s of sections) {
      const sectionBars = bars.slice(barIdx, barIdx + s.bars)
      s.lines.forEach((line, li) => {
        const syl = lineSyllables(line)
        if (syl.length === 0) return
        const first = li * s.barsPerLine
        const lineBars = sectionBars.slice(first, first + s.barsPerLine)
        if (lineBars.length === 0) return
        // Repeated lines (a recurring chorus) get the same tune; verse lines share a rhythm by position.
        const key = s.kind === "chorus" ? `c:${line}` : `${s.kind}:${li % 4}:${syl.length}`
        let m = melodyCache.get(key)
        if (m === undefined) {
          m = makeMelody(
            syl.length,
            s.barsPerLine,
            lineBars,
            centre + (s.kind === "chorus" ? 3 : s.kind === "bridge" ? 1 : -1),
            scalePcs,
            mr,
            weird,
            syl.map((x) => x.wordEnd)
          )
          melodyCache.set(key, m)
        }
        const lineStart = lineBars[0]?.start ?? 0
        for (let k = 0; k < syl.length; k++) {
          const off = m.offs[k]
          const d = m.dur[k]
          const p = m.pitch[k]
          const sy = syl[k]
          if (off === undefined || d === undefined || p === undefined || sy === undefined) continue
          const barOf = lineBars[Math.min(lineBars.length - 1, Math.floor(off / 16))]
          // Fit the pitch to the chord under it when the tune was written over other chords.
          const pcs = barOf !== undefined ? chordPitchClasses(barOf.chord) : scalePcs
          const strong = off % 8 === 0
          const pitch = strong && !pcs.includes(((p % 12) + 12) % 12) ? nearestIn(p, pcs) : p
          // Sung notes follow the groove's swing like everything else.
          const start = barOf !== undefined ? at(barOf, off % 16) : lineStart + off * step
          const note = { start, dur: d * step * 0.94, pitch, vel: 0.8 + (strong ? 0.15 : 0), syllable: sy }
          vocalNotes.push(note)
          if (s.kind === "chorus" && richness > 0.9) {
            // The next chord tone at least a minor third up: parallel thirds and sixths.
            let h = pitch + 3
            while (!pcs.includes(((h % 12) + 12) % 12) && h < pitch + 9) h++
            harmonyNotes.push({ ...note, pitch: h, vel: note.vel * 0.5 })
          }
        }
      })
      barIdx += s.bars
    }
  }

  // ---------------------------------------------------------------- lead (instrumental melody / hooks)
  const melodic: ReadonlyArray<Instrument> = [
    "synth",
    "brass",
    "flute",
    "bells",
    "pluck",
    "eguitar",
    "guitar",
    "strings",
    "piano",
    "epiano",
    "organ"
  ]
  const leadInst: Instrument =
    [...spec.named].find((i) => melodic.includes(i) && i !== compInst) ??
    (has(genre.lead)
      ? genre.lead
      : (melodic.find((i) => has(i) && i !== compInst) ?? melodic.find((i) => has(i)) ?? "synth"))
  // A cappella (every instrument negated): the voice alone, no lead instrument either.
  if (inst.size > 0) {
    const notes: NoteEvent[] = []
    const lr = rng.fork("lead")
    const leadCentre = leadInst === "bass" ? 48 : 72
    const hooks = new Map<string, { offs: number[]; dur: number[]; pitch: number[] }>()
    for (let i = 0; i < bars.length; i += 2) {
      const b = bars[i] as BarInfo
      const k = b.section.kind
      // Without vocals the lead carries the tune in choruses/solos (and verses for fuller models);
      // with vocals it only answers in intros, solos and outros.
      const plays = vocal
        ? k === "solo" || (k === "intro" && richness > 0.5) || (k === "outro" && richness > 0.9)
        : k === "chorus" ||
          k === "solo" ||
          (k === "verse" && richness > 0.5 && b.section.occurrence > 0) ||
          (k === "bridge" && richness > 0.9)
      if (!plays) continue
      const pair = bars.slice(i, i + 2).filter((x) => x.sectionIndex === b.sectionIndex)
      const count = lr.int(4, genre.energy > 0.6 ? 9 : 7)
      const hk = `${k}:${(b.indexInSection / 2) % 4}`
      let m = hooks.get(hk)
      if (m === undefined) {
        m = makeMelody(count, pair.length, pair, leadCentre + (k === "chorus" ? 2 : 0), scalePcs, lr, weird, null)
        hooks.set(hk, m)
      }
      for (let n = 0; n < m.offs.length; n++) {
        const off = m.offs[n] ?? 0
        const bb = pair[Math.min(pair.length - 1, Math.floor(off / 16))]
        if (bb === undefined) continue
        notes.push({
          start: at(bb, off % 16),
          dur: (m.dur[n] ?? 2) * step * 0.9,
          pitch: m.pitch[n] ?? leadCentre,
          vel: 0.7
        })
      }
    }
    if (notes.length > 0)
      parts.push({ role: "lead", instrument: leadInst, notes, pan: 0.1, gain: vocal ? 0.38 : 0.46, send: 0.35 })
  }

  // ---------------------------------------------------------------- arpeggio / counter line (aether only)
  if (richness > 0.9 && genre.comp !== "arp" && (has("synth") || has("bells") || has("pluck") || has("piano"))) {
    const arpInst: Instrument = has("pluck") ? "pluck" : has("bells") ? "bells" : has("synth") ? "pluck" : "piano"
    const notes: NoteEvent[] = []
    for (const b of bars) {
      if (b.section.kind !== "chorus" && b.section.kind !== "solo") continue
      const tones = voiceChord(b.chord, 76, 4)
      for (let s = 0; s < 16; s += 2)
        notes.push({
          start: at(b, s),
          dur: step * 1.6,
          pitch: tones[(s / 2) % tones.length] ?? 76,
          vel: s % 4 === 0 ? 0.45 : 0.32
        })
    }
    parts.push({ role: "arp", instrument: arpInst, notes, pan: 0.45, gain: 0.22, send: 0.45 })
  }

  // ---------------------------------------------------------------- counter line: any instrument left unused
  const used = new Set<Instrument>(parts.map((p) => p.instrument))
  const spare = [...inst].find((i) => i !== "bass" && i !== "drums" && !used.has(i))
  if (spare !== undefined && richness >= 0.6) {
    // Guide tones (third, then seventh or fifth) in half notes over the fuller sections.
    const notes: NoteEvent[] = []
    let prev = 69
    for (const b of bars) {
      const k = b.section.kind
      if (k !== "chorus" && k !== "bridge" && k !== "solo" && !(k === "verse" && b.section.occurrence > 0)) continue
      const pcs = chordPitchClasses(b.chord)
      for (const [s, idx] of [
        [0, 1],
        [8, Math.min(pcs.length - 1, 3)]
      ] as const) {
        const p = nearestIn(prev, [pcs[idx] ?? pcs[0] ?? 0])
        notes.push({ start: at(b, s), dur: 8 * step * 0.95, pitch: p, vel: 0.5 })
        prev = p < 62 ? p + 12 : p > 79 ? p - 12 : p
      }
    }
    if (notes.length > 0) parts.push({ role: "counter", instrument: spare, notes, pan: -0.45, gain: 0.4, send: 0.45 })
  }

  // ---------------------------------------------------------------- drums
  const drums: DrumHit[] = []
  const kicks: number[] = []
  if (has("drums")) {
    const dr = rng.fork("drums")
    const patterns = DRUM_PATTERNS[genre.drums]
    const mainVar = dr.chance(sw) ? 0 : dr.int(0, patterns.length - 1)
    const altVar = Math.min(patterns.length - 1, mainVar + 1)
    const humanize = genre.drums === "four" || genre.drums === "techno" || genre.drums === "trap" ? 0 : 0.006
    for (const b of bars) {
      const s = b.section
      const e = s.energy
      const last = b.indexInSection === s.bars - 1
      const pat = patterns[s.kind === "chorus" && richness > 0.5 ? altVar : mainVar] ?? patterns[0] ?? {}
      // Intros and outros thin out; EDM bridges drop the kick (the breakdown).
      const breakdown = s.kind === "bridge" && (genre.drums === "four" || genre.drums === "techno")
      const sparse =
        (s.kind === "intro" && b.indexInSection < s.bars / 2) || (s.kind === "outro" && b.indexInSection >= s.bars - 2)
      for (const [kind, pattern] of Object.entries(pat) as [DrumKind, string][]) {
        if (sparse && kind !== "hat" && kind !== "shaker" && kind !== "ride") continue
        if (breakdown && kind === "kick") continue
        if (richness < 0.5 && (kind === "ohat" || kind === "shaker" || kind === "rim")) continue
        if (e < 0.5 && kind === "ohat") continue
        for (let st = 0; st < 16; st++) {
          const c = pattern[st]
          if (c !== "x" && c !== "o") continue
          // A fill replaces the last beat of a section's last bar.
          if (last && st >= 12 && richness > 0.5 && (kind === "snare" || kind === "hat" || kind === "clap")) continue
          const vel = (c === "o" ? 0.35 : st % 4 === 0 ? 0.95 : 0.75) * (0.85 + 0.15 * e) * (0.92 + 0.08 * dr.next())
          const time = at(b, st) + (humanize > 0 ? (dr.next() - 0.5) * humanize : 0)
          drums.push({ time, kind, vel, tune: 0 })
          if (kind === "kick") kicks.push(time)
          // Trap hats roll; weirdness adds stutters on any hat.
          if (
            (kind === "hat" && genre.drums === "trap" && dr.chance(0.12)) ||
            (kind === "hat" && dr.chance(weird * 0.15))
          ) {
            for (let r = 1; r < 3; r++) drums.push({ time: time + (r * step) / 3, kind, vel: vel * 0.7, tune: 0 })
          }
        }
      }
      if (last && richness > 0.5 && genre.drums !== "ambient") {
        const fill = dr.int(0, 2)
        for (let st = 12; st < 16; st++) {
          if (fill === 0) drums.push({ time: at(b, st), kind: "snare", vel: 0.5 + 0.1 * (st - 12), tune: 0 })
          else if (fill === 1) drums.push({ time: at(b, st), kind: "tom", vel: 0.8, tune: 3 - (st - 12) })
          else if (st % 2 === 0) drums.push({ time: at(b, st), kind: "snare", vel: 0.8, tune: 0 })
        }
      }
      if (b.indexInSection === 0 && b.sectionIndex > 0 && e >= 0.6 && richness > 0.5 && genre.drums !== "ambient") {
        drums.push({ time: b.start, kind: "crash", vel: 0.7, tune: 0 })
      }
    }
  }
  drums.sort((a, b) => a.time - b.time)

  const sectionsOut: { kind: SectionKind; start: number; end: number }[] = []
  let st = 0
  for (const s of sections) {
    sectionsOut.push({ kind: s.kind, start: st, end: st + s.bars * bar })
    st += s.bars * bar
  }
  return {
    bpm,
    duration,
    parts,
    drums,
    vocal: vocalNotes,
    harmony: harmonyNotes,
    voice: input.voice,
    sections: sectionsOut,
    genre,
    richness,
    weirdness: weird,
    backing,
    kicks,
    plan: played,
    chords: bars.map((b) => b.chord)
  }
}

function addComp(
  out: NoteEvent[],
  style: CompStyle,
  b: BarInfo,
  at: (b: BarInfo, s: number) => number,
  step: number,
  e: number,
  variant: number,
  r: Rng,
  richness: number
): void {
  const vel = 0.45 + 0.35 * e
  const push = (s: number, len: number, pitches: ReadonlyArray<number>, v: number, spread = 0): void => {
    pitches.forEach((p, i) => {
      out.push({ start: at(b, s) + i * spread, dur: len * step, pitch: p, vel: v })
    })
  }
  switch (style) {
    case "block": {
      const tones = voiceChord(b.chord, 62, 4)
      if (e >= 0.9 && richness > 0.5)
        for (const s of [0, 6, 8, 14]) push(s, s === 6 || s === 14 ? 2 : 5.5, tones, vel * (s % 8 === 0 ? 1 : 0.8))
      else if (e >= 0.6) {
        push(0, 7.5, tones, vel)
        push(8, 7.5, tones, vel * 0.85)
      } else push(0, 15.5, tones, vel)
      break
    }
    case "sustain":
      push(0, 16.2, voiceChord(b.chord, 62, 4), vel * 0.8)
      break
    case "stabs": {
      const tones = voiceChord(b.chord, 64, 4)
      const pats = [
        [2, 6, 10, 14],
        [0, 3, 6, 10, 12],
        [3, 6, 11, 14]
      ]
      const pat = pats[variant % pats.length] ?? [2, 6, 10, 14]
      for (const s of pat) push(s, 1.5, tones, vel * (0.85 + 0.15 * r.next()))
      break
    }
    case "strum": {
      const tones = voiceChord(b.chord, 57, 5)
      const pat = e > 0.7 ? [0, 4, 6, 10, 12, 14] : e > 0.4 ? [0, 6, 8, 12] : [0, 8]
      for (const s of pat) {
        const up = s % 4 === 2
        push(s, up ? 2 : 4, up ? [...tones].reverse().slice(0, 3) : tones, vel * (up ? 0.6 : 0.9), 0.009)
      }
      break
    }
    case "arp": {
      const tones = voiceChord(b.chord, 64, 4)
      const seq = [...tones, ...tones.map((p) => p + 12)]
      const rate = e >= 0.6 ? 1 : 2
      for (let s = 0, k = 0; s < 16; s += rate, k++) {
        const idx =
          variant === 1
            ? seq.length - 1 - (k % seq.length)
            : variant === 2
              ? ([0, 2, 1, 3, 2, 4, 3, 5][k % 8] ?? 0)
              : k % seq.length
        push(s, rate * 0.95, [seq[idx] ?? 64], vel * (s % 4 === 0 ? 0.9 : 0.7))
      }
      break
    }
    case "comp": {
      // Rootless jazz voicing: 3rd, 5th/7th, 9th above the root, syncopated hits.
      const tones = voiceChord(b.chord, 62, 4).slice(1)
      tones.push((tones[tones.length - 1] ?? 66) + 3)
      const pats = [
        [0, 6, 11],
        [3, 10],
        [0, 7, 10, 14],
        [2, 8, 14]
      ]
      const pat = pats[r.int(0, pats.length - 1)] ?? [0, 6]
      for (const s of pat) push(s, s === 0 ? 6 : 3, tones, vel * (0.8 + 0.2 * r.next()), 0.004)
      break
    }
    case "skank": {
      const tones = voiceChord(b.chord, 66, 3)
      for (const s of [4, 12]) push(s, 1.2, tones, vel)
      if (e > 0.7) for (const s of [2, 10, 14]) push(s, 0.8, tones, vel * 0.5)
      break
    }
    case "power": {
      const root = b.chord.root - 12 + (b.chord.root - 12 < 40 ? 12 : 0)
      const tones = [root, root + 7, root + 12]
      if (e >= 0.6) for (let s = 0; s < 16; s += 2) push(s, 1.8, tones, vel * (s % 4 === 0 ? 1 : 0.8))
      else push(0, 15.5, tones, vel * 0.8)
      break
    }
  }
}

function addBass(
  out: NoteEvent[],
  style: BassStyle,
  b: BarInfo,
  next: BarInfo | undefined,
  at: (b: BarInfo, s: number) => number,
  step: number,
  r: Rng,
  weird: number
): void {
  let root = b.chord.root - 24
  if (root > 43) root -= 12
  if (root < 28) root += 12
  const fifth = root + 7
  const e = b.section.energy
  const vel = 0.7 + 0.25 * e
  const n = (s: number, len: number, p: number, v = vel): void => {
    out.push({ start: at(b, s), dur: len * step, pitch: p, vel: v })
  }
  switch (style) {
    case "root":
      n(0, 7, root)
      n(8, 7, e > 0.6 ? fifth : root, vel * 0.85)
      break
    case "eighths":
      if (e < 0.5) {
        n(0, 15, root)
        break
      }
      for (let s = 0; s < 16; s += 2)
        n(s, 1.8, s === 14 && r.chance(0.3 + weird * 0.3) ? fifth : root, vel * (s % 4 === 0 ? 1 : 0.85))
      break
    case "octave":
      for (let s = 0; s < 16; s += 2) n(s, 1.7, s % 4 === 0 ? root : root + 12, vel * (s % 4 === 0 ? 1 : 0.8))
      break
    case "offbeat":
      for (const s of [2, 6, 10, 14]) n(s, 1.6, root)
      if (e >= 0.9) n(0, 1, root, vel * 0.6)
      break
    case "syncopated": {
      const pats: ReadonlyArray<ReadonlyArray<readonly [number, number, number]>> = [
        [
          [0, 3, 0],
          [3, 2, 0],
          [6, 2, 7],
          [10, 3, 0],
          [14, 2, 12]
        ],
        [
          [0, 5, 0],
          [7, 1, 0],
          [10, 4, 7],
          [14, 2, 10]
        ]
      ]
      const pat = pats[r.int(0, 1)] ?? []
      for (const [s, len, iv] of pat) n(s, len, root + iv)
      break
    }
    case "walking": {
      const target =
        next !== undefined ? (next.chord.root - 24 < 28 ? next.chord.root - 12 : next.chord.root - 24) : root
      const third = root + (b.chord.intervals[1] ?? 4)
      const approach = target + (r.chance(0.5) ? 1 : -1)
      const line = [root, r.chance(0.5) ? third : fifth, r.chance(0.5) ? fifth : third, approach]
      line.forEach((p, i) => {
        n(i * 4, 3.6, p, vel * (i === 0 ? 1 : 0.85))
      })
      break
    }
    case "sub":
      n(0, 6, root)
      n(6, 4, root)
      if (e > 0.7) n(10, 6, r.chance(0.3) ? root + 12 : root)
      break
    case "sustain":
      n(0, 16, root, vel * 0.8)
      break
  }
}

/**
 * A tune for `count` notes over `nBars` bars. Returns offsets and durations in 16th steps
 * and pitches. Strong beats land on chord tones, the rest moves by scale steps in an arch,
 * and the last note is held and resolved to a chord tone.
 */
/** Where 16th step `s` (0..15) of a bar falls, in sixteenths, once the genre's swing delays its off-beats. */
export function swungStep(genre: Genre, s: number): number {
  const swing = genre.swing
  if (swing <= 0) return s
  const swing16 =
    genre.drums === "boombap" ||
    genre.drums === "funk" ||
    genre.drums === "four" ||
    genre.drums === "trap" ||
    genre.drums === "onedrop"
  if (swing16 && s % 2 === 1) return s + swing * 1.0
  if (!swing16 && s % 4 === 2) return s + swing * 2.0
  return s
}

/**
 * The composer's rhythm for a phrase of `count` notes over `nBars` bars: each note's onset and
 * length in sixteenths from the phrase's start (eighths when they fit, the last note held, word
 * ends lengthened). Fewer than `count` when they do not all fit.
 */
export function phraseRhythm(
  count: number,
  nBars: number,
  r: Rng,
  wordEnds: ReadonlyArray<boolean> | null
): { offs: number[]; dur: number[] } {
  const slots = nBars * 16 - 2
  const unit = count * 2 <= slots - 4 ? 2 : 1
  const n = Math.min(count, Math.floor(slots / unit))
  const startOff = unit === 2 && n * 2 + 2 <= slots - 4 && r.chance(0.4) ? 2 : 0
  const dur = new Array<number>(n).fill(unit)
  let extra = slots - startOff - n * unit
  // The last note holds; word ends and random notes take the rest of the room.
  const hold = Math.min(extra, Math.max(unit, Math.floor(extra * 0.4)))
  if (n > 0) dur[n - 1] = (dur[n - 1] ?? unit) + hold - (hold % unit)
  extra -= hold - (hold % unit)
  let guard = 0
  while (extra >= unit && guard++ < 200) {
    const i = r.int(0, Math.max(0, n - 2))
    const prefer = wordEnds === null || (wordEnds[i] ?? false) || r.chance(0.35)
    if (!prefer) continue
    dur[i] = (dur[i] ?? unit) + unit
    extra -= unit
  }
  const offs: number[] = []
  let pos = startOff
  for (let i = 0; i < n; i++) {
    offs.push(pos)
    pos += dur[i] ?? unit
  }
  return { offs, dur }
}

function makeMelody(
  count: number,
  nBars: number,
  lineBars: ReadonlyArray<BarInfo>,
  centre: number,
  scalePcs: ReadonlyArray<number>,
  r: Rng,
  weird: number,
  wordEnds: ReadonlyArray<boolean> | null
): { offs: number[]; dur: number[]; pitch: number[] } {
  const { offs, dur } = phraseRhythm(count, nBars, r, wordEnds)
  const n = offs.length
  const pitch: number[] = []
  const scaleSet = [...scalePcs]
  const chordAt = (off: number): ReadonlyArray<number> => {
    const b = lineBars[Math.min(lineBars.length - 1, Math.floor(off / 16))]
    return b !== undefined ? chordPitchClasses(b.chord) : scaleSet
  }
  let p = nearestIn(centre + r.int(-2, 2), chordAt(0))
  const leap = 1 + Math.round(weird * 4)
  const lo = centre - 8
  const hi = centre + 9
  // Keep a note inside the singable range by octave folding toward the centre.
  const fold = (q: number): number => (q > hi ? q - 12 : q < lo ? q + 12 : q)
  let still = 0
  for (let i = 0; i < n; i++) {
    const off = offs[i] ?? 0
    if (i > 0) {
      const phase = i / Math.max(1, n - 1)
      // Arch: drift upward in the first half, downward in the second.
      const drift = phase < 0.5 ? 0.6 : -0.6
      let move = Math.round((r.next() - 0.5) * 2 * (r.chance(0.25) ? leap + 1 : 1.6) + drift)
      // Avoid droning on one pitch: after two repeats, step.
      if (move === 0 && still >= 2) move = r.chance(0.5) ? 1 : -1
      const base = scaleIndex(p, scaleSet)
      let q = scaleToMidi(base + move, scaleSet)
      if (q > hi || q < lo) q = scaleToMidi(base - move, scaleSet)
      if (off % 8 === 0) q = nearestIn(q, chordAt(off))
      if (i === n - 1) {
        // Phrases come home: the last note is the tonic when the chord allows, else the chord root.
        const pcs = chordAt(off)
        const tonicPc = scaleSet[0] ?? 0
        q = nearestIn(q, pcs.includes(tonicPc) ? [tonicPc] : [pcs[0] ?? tonicPc])
      }
      // Weirdness lets chromatic neighbour tones through on weak beats.
      if (off % 4 !== 0 && i !== n - 1 && r.chance(weird * weird * 0.3)) q += r.chance(0.5) ? 1 : -1
      q = fold(q)
      still = q === p ? still + 1 : 0
      p = q
    }
    pitch.push(p)
  }
  return { offs, dur, pitch }
}

function scaleIndex(p: number, scale: ReadonlyArray<number>): number {
  // Position of the scale tone at or below p, counting across octaves.
  for (let q = p; q > p - 12; q--) {
    const k = scale.indexOf(((q % 12) + 12) % 12)
    if (k >= 0) return Math.floor(q / 12) * 7 + sortedRank(scale, k)
  }
  return Math.floor(p / 12) * 7
}

function sortedRank(scale: ReadonlyArray<number>, k: number): number {
  const v = scale[k] ?? 0
  return [...scale].sort((a, b) => a - b).indexOf(v)
}

function scaleToMidi(idx: number, scale: ReadonlyArray<number>): number {
  const sorted = [...scale].sort((a, b) => a - b)
  const oct = Math.floor(idx / 7)
  const k = ((idx % 7) + 7) % 7
  return oct * 12 + (sorted[k] ?? 0)
}
