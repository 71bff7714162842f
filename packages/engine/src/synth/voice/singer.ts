// The singing voice: words spoken by Flite (flite.ts) put on the melody's notes by TD-PSOLA
// (decision 0102). Flite speaks each word as a monotone at a known pitch, so its glottal pulses
// lie one period apart; a grain two periods long, cut around a pulse, carries the word's vocal
// tract at that instant. Laying the grains one *sung* period apart gives the note's pitch with
// the speaker's formants; choosing which grain from a time map places each syllable on its note:
// the onset consonants just before the beat, the vowel held through the note, the coda at its
// end, at speaking speed. The voice's vibrato and glides are in the spacing of the grains.

import type { VocalNote } from "../../compose.ts"
import { FLITE_RATE, FLITE_VOICES, isVowel, speakable, speakWords, type Phone, type SpokenWord } from "./flite.ts"
import { SR, biquadInPlace, highShelfInPlace, midiHz, peakingBiquad } from "../dsp.ts"
import { renderFormantVoice } from "./formant.ts"
import { ONSET_LEAD, VIBRATO, VIBRATO_RATE, vibratoBloom, WORD_GAP } from "./phrasing.ts"

/** Pitch glides between notes with this time constant (seconds). */
const GLIDE = 0.025
/** Phones without voicing: their grains are taken where the time map says, not at a pulse. */
const UNVOICED: ReadonlySet<string> = new Set(["p", "t", "k", "f", "th", "s", "sh", "hh", "ch"])

/**
 * The singer's presence, laid on each spoken word once: everything above 2 kHz lifted 6 dB (a
 * first-order shelf) and a 9 dB peak at 3 kHz (the singer's formant, where trained voices gather
 * their upper formants). A speaking voice is duller than a sung one; without the lift the band's
 * cymbals filled 1-8 kHz and the mix measured noise-like (flatness 0.086 where the goal is 0.08),
 * with it 0.073, and the words were heard as well or better (decision 0102).
 */
const PRESENCE_SHELF_HZ = 2000
const PRESENCE_SHELF_GAIN = 2
const SINGERS_FORMANT = peakingBiquad(3000, 9, 1.2, FLITE_RATE)
const presenceOf = new WeakMap<SpokenWord, Float32Array>()

function withPresence(word: SpokenWord): Float32Array {
  let lifted = presenceOf.get(word)
  if (lifted === undefined) {
    lifted = word.samples.slice()
    highShelfInPlace(lifted, 0, lifted.length, PRESENCE_SHELF_HZ, PRESENCE_SHELF_GAIN, FLITE_RATE)
    biquadInPlace(lifted, SINGERS_FORMANT)
    presenceOf.set(word, lifted)
  }
  return lifted
}

/** A stretch of the output (seconds) sounding a stretch of a spoken word (its samples). */
interface Piece {
  readonly word: SpokenWord
  readonly from: number
  readonly to: number
  readonly srcFrom: number
  readonly srcTo: number
  readonly level: number
}

/** A unit of alignment: the notes one stretch of a word is sung on, and that stretch's onset, vowel and coda (samples). */
interface Unit {
  readonly notes: ReadonlyArray<VocalNote>
  readonly onset: number
  readonly vowel: number
  readonly vowelEnd: number
  readonly end: number
}

/** The indices of a word's vowels among its phones. */
const vowelsOf = (phones: ReadonlyArray<Phone>): number[] => phones.flatMap((p, i) => (isVowel(p) ? [i] : []))

/**
 * The units a word's notes are sung in: one per note when Flite's vowels match the syllables
 * (the consonants between two vowels split as the engine's syllables split them), otherwise one
 * for the whole word, its middle spread over all its notes.
 */
function unitsOf(notes: ReadonlyArray<VocalNote>, word: SpokenWord): Unit[] {
  const phones = word.phones
  const vowels = vowelsOf(phones)
  const last = phones[phones.length - 1] as Phone
  if (vowels.length !== notes.length) {
    return [
      {
        notes,
        onset: 0,
        vowel: (phones[vowels[0] as number] as Phone).start,
        vowelEnd: (phones[vowels[vowels.length - 1] as number] as Phone).end,
        end: last.end
      }
    ]
  }
  const units: Unit[] = []
  let onset = 0
  for (const [i, note] of notes.entries()) {
    const v = vowels[i] as number
    const nextVowel = vowels[i + 1]
    const between = nextVowel === undefined ? phones.length - 1 - v : nextVowel - v - 1
    const coda = nextVowel === undefined ? between : Math.min(between, note.syllable.coda.length)
    const end = (phones[v + coda] as Phone).end
    units.push({ notes: [note], onset, vowel: (phones[v] as Phone).start, vowelEnd: (phones[v] as Phone).end, end })
    onset = end
  }
  return units
}

/**
 * The pieces a unit sounds as, after the previous unit's sound ended at `prevEnd` (seconds);
 * returns where this one ends. A word's last unit before another word leaves the breath of 0100.
 */
function layUnit(unit: Unit, word: SpokenWord, prevEnd: number, beforeNextWord: boolean, pieces: Piece[]): number {
  const first = unit.notes[0] as VocalNote
  const lastNote = unit.notes[unit.notes.length - 1] as VocalNote
  const start = first.start
  const end = lastNote.start + lastNote.dur
  const dur = end - start
  const onsetLen = (unit.vowel - unit.onset) / FLITE_RATE
  const before = Math.min(onsetLen, Math.max(0, start - prevEnd) * 0.8, ONSET_LEAD)
  const within = Math.min(onsetLen - before, dur * 0.3)
  const codaLen = (unit.end - unit.vowelEnd) / FLITE_RATE
  const codaOut = Math.min(codaLen, dur * 0.35)
  const vowelFrom = start + within
  const gapped = end - WORD_GAP
  const soundEnd = beforeNextWord && gapped - codaOut - vowelFrom > 0.06 ? gapped : end
  const vowelTo = Math.max(vowelFrom + 0.02, soundEnd - codaOut)
  const level = first.vel
  const piece = (from: number, to: number, srcFrom: number, srcTo: number): void => {
    if (to - from > 1e-4 && srcTo > srcFrom) pieces.push({ word, from, to, srcFrom, srcTo, level })
  }
  piece(start - before, vowelFrom, unit.onset, unit.vowel)
  // The vowel keeps its own beginning and end (the transitions from and into the consonants) at
  // speaking speed where the note is long enough, and holds its middle.
  const srcLen = (unit.vowelEnd - unit.vowel) / FLITE_RATE
  const outLen = vowelTo - vowelFrom
  if (outLen > srcLen) {
    const edge = 0.3 * srcLen
    const a = unit.vowel + Math.round(edge * FLITE_RATE)
    const b = unit.vowelEnd - Math.round(edge * FLITE_RATE)
    piece(vowelFrom, vowelFrom + edge, unit.vowel, a)
    piece(vowelFrom + edge, vowelTo - edge, a, Math.max(a + 1, b))
    piece(vowelTo - edge, vowelTo, b, unit.vowelEnd)
  } else piece(vowelFrom, vowelTo, unit.vowel, unit.vowelEnd)
  piece(vowelTo, vowelTo + codaOut, unit.vowelEnd, unit.end)
  return vowelTo + codaOut
}

/** The notes grouped by the word they sing, in order. */
function wordsOf(notes: ReadonlyArray<VocalNote>): VocalNote[][] {
  const words: VocalNote[][] = []
  for (const note of notes) {
    const current = words[words.length - 1]
    if (note.syllable.wordStart || current === undefined) words.push([note])
    else current.push(note)
  }
  return words
}

const textOf = (word: ReadonlyArray<VocalNote>): string => speakable((word[0] as VocalNote).syllable.word)

/** The voice a take sings with. */
export interface Singer {
  /** Sings `notes` (the take's, or the part a cut render plays) into `out`. */
  readonly sing: (notes: ReadonlyArray<VocalNote>, out: Float32Array, seed: number) => void
}

/**
 * The singer of a take: Flite speaks every word of `allNotes` (the take's whole vocal and
 * harmony, however much of it a render plays) in one run, so every render of the take hears
 * the same words. A word Flite cannot say is sung by the formant voice.
 */
export function singerFor(allNotes: ReadonlyArray<VocalNote>, register: "m" | "f"): Singer {
  const voice = FLITE_VOICES[register]
  const texts = wordsOf(allNotes)
    .map(textOf)
    .filter((t) => t !== "")
  const said = texts.length === 0 ? new Map<string, SpokenWord | null>() : speakWords(texts, voice)
  return {
    sing: (notes, out, seed) => {
      const words = wordsOf(notes)
      const pieces: Piece[] = []
      const unsung: VocalNote[] = []
      let prevEnd = 0
      for (const [i, wordNotes] of words.entries()) {
        const text = textOf(wordNotes)
        const word = text === "" ? null : (said.get(text) ?? null)
        if (word === null) {
          unsung.push(...wordNotes)
          continue
        }
        const units = unitsOf(wordNotes, word)
        const anotherWord = words[i + 1] !== undefined
        for (const [k, unit] of units.entries())
          prevEnd = layUnit(unit, word, prevEnd, anotherWord && k === units.length - 1, pieces)
      }
      overlapAdd(pieces, notes, out, voice.pitch)
      if (unsung.length > 0) renderFormantVoice(unsung, out, register, seed)
    }
  }
}

/** The sung pitch (Hz) at time t, from the note sounding or next to sound. */
class PitchTrack {
  private index = 0
  private hz = 0
  private at = -1
  private readonly notes: ReadonlyArray<VocalNote>
  constructor(notes: ReadonlyArray<VocalNote>) {
    this.notes = notes
  }
  next(t: number): number {
    const notes = this.notes
    while (
      this.index < notes.length - 1 &&
      t >= (notes[this.index] as VocalNote).start + (notes[this.index] as VocalNote).dur
    )
      this.index++
    const note = notes[this.index] as VocalNote
    const target = midiHz(note.pitch)
    // A glide from the last note, unless the voice has been silent a while.
    this.hz =
      this.at < 0 || t - this.at > 0.1 ? target : this.hz + (1 - Math.exp(-(t - this.at) / GLIDE)) * (target - this.hz)
    this.at = t
    return this.hz * (1 + VIBRATO * vibratoBloom(t - note.start) * Math.sin(2 * Math.PI * VIBRATO_RATE * t))
  }
}

/** TD-PSOLA: a grain two source periods long laid at every sung period, read from where the pieces say. */
function overlapAdd(
  pieces: ReadonlyArray<Piece>,
  notes: ReadonlyArray<VocalNote>,
  out: Float32Array,
  sourceHz: number
): void {
  if (pieces.length === 0) return
  const period = FLITE_RATE / sourceHz
  const half = period / FLITE_RATE
  const pitch = new PitchTrack(notes)
  const step = FLITE_RATE / SR
  const cos = Math.cos(Math.PI / (half * SR))
  const sin = Math.sin(Math.PI / (half * SR))
  let t = (pieces[0] as Piece).from
  for (let p = 0; p < pieces.length; ) {
    const piece = pieces[p] as Piece
    if (t >= piece.to) {
      p++
      const next = pieces[p]
      if (next !== undefined && next.from > t) t = next.from
      continue
    }
    if (t < piece.from) t = piece.from
    const src = piece.srcFrom + ((t - piece.from) / (piece.to - piece.from)) * (piece.srcTo - piece.srcFrom)
    const phone = phoneAt(piece.word.phones, src)
    const centre =
      phone === undefined || UNVOICED.has(phone.name)
        ? src
        : phone.pulse + Math.round((src - phone.pulse) / period) * period
    const hz = pitch.next(t)
    // Laid closer than they were cut, grains add up louder (and further apart, softer): keep the power.
    const gain = piece.level * Math.sqrt(sourceHz / hz)
    const samples = withPresence(piece.word)
    const last = samples.length - 1
    const i0 = Math.max(0, Math.ceil((t - half) * SR))
    const i1 = Math.min(out.length - 1, Math.floor((t + half) * SR))
    // The grain's Hann window as a rotating phasor, its source read by linear interpolation
    // (which also takes Flite's 16 kHz to the mix's rate): no transcendental call per sample.
    const u0 = i0 / SR - t
    let x = centre + u0 * FLITE_RATE
    let c = Math.cos((Math.PI * u0) / half)
    let s = Math.sin((Math.PI * u0) / half)
    const g = 0.5 * gain
    for (let i = i0; i <= i1; i++) {
      const j = Math.floor(x)
      if (j >= 0 && j < last) {
        const a = samples[j] as number
        out[i] = (out[i] as number) + g * (1 + c) * (a + ((samples[j + 1] as number) - a) * (x - j))
      }
      x += step
      const turned = c * cos - s * sin
      s = s * cos + c * sin
      c = turned
    }
    t += 1 / hz
  }
}

function phoneAt(phones: ReadonlyArray<Phone>, sample: number): Phone | undefined {
  for (const p of phones) if (sample < p.end) return p
  return phones[phones.length - 1]
}
