// Reads the free-text style (and negative_tags) into a structured StyleSpec:
// genre, tempo, key, mode, instruments, energy and mood. Pure function of the text;
// where the text leaves a choice open the request-level rng decides, so both takes
// of a task agree on tempo, key and instrumentation.

import { DEFAULT_GENRE, GENRES, type Genre, type Instrument } from "./genres.ts"
import type { Rng } from "./rng.ts"

export interface StyleSpec {
  readonly genre: Genre
  readonly bpm: number
  readonly bpmExplicit: boolean
  /** Tonic pitch class, 0 = C. */
  readonly tonic: number
  readonly minor: boolean
  readonly keyExplicit: boolean
  readonly instruments: ReadonlySet<Instrument>
  /** Instruments the caller named (they get a prominent role). */
  readonly named: ReadonlySet<Instrument>
  readonly energy: number
  readonly tags: string
}

const NOTE_PC: Readonly<Record<string, number>> = { c: 0, d: 2, e: 4, f: 5, g: 7, a: 9, b: 11 }
export const PC_NAMES: ReadonlyArray<string> = ["C", "C#", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B"]

/** Words that name each instrument, most specific first (e.g. electric piano before piano). */
const INSTRUMENT_WORDS: ReadonlyArray<readonly [Instrument, RegExp]> = [
  ["epiano", /(electric piano|e-piano|rhodes|wurlitzer|\bkeys\b)/],
  ["eguitar", /(electric guitar|distorted guitar|guitar riff|power chords?|shred)/],
  ["guitar", /(acoustic guitar|guitars?\b|ukulele|banjo|mandolin)/],
  ["piano", /(piano|keyboard)/],
  ["strings", /(strings|violins?|cellos?|viola|orchestral strings|string section)/],
  ["synth", /(synths?\b|synthesizers?|lead synth|arpeggiat)/],
  ["bass", /(bass(?!oon)|808s?\b|sub-?bass)/],
  ["drums", /(drums?\b|beats?\b|percussion|drum machine|breakbeats?)/],
  ["pad", /(pads?\b|atmospheres?|drones?|choir)/],
  ["brass", /(brass|horns?\b|trumpets?|trombones?|saxophones?|\bsax\b)/],
  ["organ", /(organ|hammond)/],
  ["flute", /(flutes?|woodwinds?|clarinet|oboe|whistle)/],
  ["bells", /(bells?\b|glockenspiel|celesta|music box|chimes|marimba|vibraphone)/],
  ["pluck", /(plucks?\b|harp|kalimba|pizzicato)/]
]

const DISPLAY: Readonly<Record<Instrument, string>> = {
  piano: "piano",
  epiano: "electric piano",
  guitar: "acoustic guitar",
  eguitar: "electric guitar",
  strings: "strings",
  synth: "synth",
  bass: "bass",
  drums: "drums",
  pad: "pads",
  brass: "brass",
  organ: "organ",
  flute: "flute",
  bells: "bells",
  pluck: "pluck"
}

const MINOR_MOOD =
  /(sad|dark|melanchol|moody|gloomy|somber|sombre|haunting|tragic|lonely|heartbreak|brooding|mysterious|eerie|angry|tense|ominous|nostalgic|bittersweet|\bminor\b)/
const MAJOR_MOOD =
  /(happy|bright|uplifting|joyful|joyous|sunny|cheerful|playful|feel-? ?good|triumphant|hopeful|optimistic|fun\b|summer|euphoric|romantic|\bmajor\b)/
const SLOW_WORDS = /(slow|downtempo|ballad|lazy|calm|relax|sleepy|gentle|laid-? ?back|chill)/
const FAST_WORDS = /(fast|upbeat|up-?tempo|energetic|driving|frantic|hyper|rapid|danceable|party|intense)/
const LOW_ENERGY = /(calm|soft|gentle|quiet|mellow|chill|relax|peaceful|sleepy|dreamy|intimate|minimal)/
const HIGH_ENERGY = /(energetic|aggressive|intense|powerful|hard|heavy|loud|explosive|anthem|epic|driving|banger|hype)/

/** Finds an explicit key such as "in D minor", "F# major", "Bb min", "key of A". */
export function parseKey(text: string): { tonic: number; minor: boolean | null } | null {
  const m =
    /(?:\bin |key of |^|[\s,(])([a-g])(#|♯|b|♭|-sharp| sharp|-flat| flat)?\s*(major|minor|maj\b|min\b)/.exec(text) ??
    // "in Am", "key of F#m": the short minor form only right after "in"/"key of" (not "i am").
    /(?:\bin |key of )([a-g])(#|♯|b|♭)?(m)\b/.exec(text) ??
    /key of ([a-g])(#|♯|b|♭| sharp| flat)?(?![a-z])()/.exec(text)
  if (m === null) return null
  const base = NOTE_PC[m[1] ?? ""]
  if (base === undefined) return null
  const acc = m[2] ?? ""
  const shift =
    acc.includes("#") || acc.includes("♯") || acc.includes("sharp")
      ? 1
      : acc === "b" || acc.includes("♭") || acc.includes("flat")
        ? -1
        : 0
  const q = m[3] ?? ""
  const minor = q === "" ? null : q.startsWith("min") || q === "m"
  return { tonic: (base + shift + 12) % 12, minor }
}

/** Instruments excluded by "no X" / "without X" in style, or named anywhere in negative_tags. */
function excluded(style: string, negative: string): Set<Instrument> {
  const out = new Set<Instrument>()
  const negated = [...style.matchAll(NEGATION)].map((m) => m[1] ?? "")
  const sources = [negative, ...negated]
  for (const src of sources) for (const [inst, re] of INSTRUMENT_WORDS) if (re.test(src)) out.add(inst)
  // "no guitar" should remove both guitar kinds; "no piano" also the electric one.
  if (out.has("guitar") || /guitar/.test(sources.join(" "))) {
    out.add("guitar")
    out.add("eguitar")
  }
  if (/piano|keys/.test(sources.join(" "))) {
    out.add("piano")
    out.add("epiano")
  }
  return out
}

/** "no drums", "without piano or synth" — the negated phrase ends at a comma, "and", "with" or "but". */
const NEGATION =
  /\b(?:no|without|minus|zero|not any)\s+((?:(?!\b(?:and|with|but)\b)[a-z0-9 &/-]){2,30}?)(?=,|;|\.|\band\b|\bwith\b|\bbut\b|$)/g

function stripNegations(style: string): string {
  return style.replace(NEGATION, " ")
}

export function findGenre(text: string): Genre {
  for (const g of GENRES) if (g.words.test(text)) return g
  return DEFAULT_GENRE
}

export function parseStyle(style: string, negativeTags: string | undefined, rng: Rng, styleWeight: number): StyleSpec {
  const raw = style.toLowerCase()
  const negative = (negativeTags ?? "").toLowerCase()
  // Mood words are read from the text without the key phrase ("in A minor" is not sad).
  const positive = stripNegations(raw).replace(/\b[a-g](#|♯|b|♭)?\s*(major|minor|maj|min)\b/g, " ")
  // A genre named only in negative_tags (e.g. "rock") must not be chosen.
  let genre = findGenre(positive)
  if (negative !== "" && genre.words.test(negative))
    genre = GENRES.find((g) => !g.words.test(negative) && g.words.test(positive)) ?? DEFAULT_GENRE

  // Tempo: an explicit number wins exactly; otherwise genre range nudged by words.
  const bpmMatch =
    /(\d{2,3}(?:\.\d+)?)\s*-?\s*bpm/.exec(raw) ??
    /\bbpm\s*[:=]?\s*(\d{2,3})/.exec(raw) ??
    /tempo\s*[:=]?\s*(\d{2,3})/.exec(raw)
  let bpm: number
  let bpmExplicit = false
  if (bpmMatch !== null) {
    bpm = Math.min(240, Math.max(40, Number(bpmMatch[1])))
    bpmExplicit = true
  } else {
    const [lo, hi] = genre.bpm
    let pos = rng.next()
    // High style_weight keeps the tempo near the genre's centre.
    pos = 0.5 + (pos - 0.5) * (1.15 - styleWeight)
    if (SLOW_WORDS.test(positive)) pos = Math.min(pos, 0.15) - 0.25
    if (FAST_WORDS.test(positive)) pos = Math.max(pos, 0.85) + 0.2
    bpm = Math.round(lo + (hi - lo) * pos)
    bpm = Math.min(200, Math.max(50, bpm))
  }

  // Key and mode: explicit beats mood words, mood words beat the genre's bias.
  const key = parseKey(stripNegations(raw))
  let minor: boolean
  const moodMinor = MINOR_MOOD.test(positive)
  const moodMajor = MAJOR_MOOD.test(positive)
  if (key !== null && key.minor !== null) minor = key.minor
  else if (moodMinor !== moodMajor) minor = moodMinor
  else minor = !rng.chance(genre.major)
  const tonic = key !== null ? key.tonic : rng.int(0, 11)

  // Instruments: the genre's set plus what is named, minus what is excluded.
  const named = new Set<Instrument>()
  for (const [inst, re] of INSTRUMENT_WORDS) if (re.test(positive)) named.add(inst)
  if (named.has("epiano")) named.delete("piano")
  if (named.has("eguitar") && !/acoustic/.test(positive)) named.delete("guitar")
  const gone = excluded(raw, negative)
  if (/\b(a cappella|acapella)\b/.test(raw)) for (const inst of INSTRUMENT_WORDS) gone.add(inst[0])
  const instruments = new Set<Instrument>([...genre.instruments, ...named])
  // A low style_weight lets a colour from outside the genre in (the same for both takes).
  if (styleWeight < 0.35)
    instruments.add(rng.pick<Instrument>(["bells", "pluck", "organ", "brass", "flute", "strings", "epiano"]))
  for (const g of gone) {
    instruments.delete(g)
    named.delete(g)
  }

  let energy = genre.energy
  if (LOW_ENERGY.test(positive)) energy -= 0.25
  if (HIGH_ENERGY.test(positive)) energy += 0.25
  energy += (bpm - 110) / 300
  energy = Math.min(1, Math.max(0.05, energy))

  const order: ReadonlyArray<Instrument> = [
    "piano",
    "epiano",
    "guitar",
    "eguitar",
    "synth",
    "strings",
    "pad",
    "brass",
    "organ",
    "flute",
    "bells",
    "pluck",
    "bass",
    "drums"
  ]
  const instList = order.filter((i) => instruments.has(i)).map((i) => DISPLAY[i])
  const mood =
    moodMinor && !moodMajor
      ? (/(dark|ominous|eerie|haunting)/.exec(positive)?.[1] ?? "melancholic")
      : moodMajor && !moodMinor
        ? (/(happy|uplifting|bright|joyful|euphoric|romantic)/.exec(positive)?.[1] ?? "bright")
        : null
  const tags = [
    genre.name,
    `${bpm} bpm`,
    `${PC_NAMES[tonic] ?? "C"} ${minor ? "minor" : "major"}`,
    ...(mood !== null ? [mood] : []),
    ...instList
  ].join(", ")
  return { genre, bpm, bpmExplicit, tonic, minor, keyExplicit: key !== null, instruments, named, energy, tags }
}
