// The genre table: what each genre sounds like by default. The composer and the
// arranger read only this table, so adding a genre is adding a row.

export type Instrument =
  | "piano"
  | "epiano"
  | "guitar"
  | "eguitar"
  | "strings"
  | "synth"
  | "bass"
  | "drums"
  | "pad"
  | "brass"
  | "organ"
  | "flute"
  | "bells"
  | "pluck"

export type DrumStyle =
  | "backbeat"
  | "rock"
  | "four"
  | "techno"
  | "boombap"
  | "trap"
  | "breakbeat"
  | "jazz"
  | "metal"
  | "onedrop"
  | "funk"
  | "brush"
  | "ambient"
export type BassStyle = "root" | "eighths" | "walking" | "offbeat" | "syncopated" | "sub" | "octave" | "sustain"
export type CompStyle = "block" | "stabs" | "strum" | "arp" | "comp" | "skank" | "power" | "sustain"

export type SectionKind = "intro" | "verse" | "prechorus" | "chorus" | "bridge" | "solo" | "outro"

export interface Genre {
  readonly name: string
  /** Matched against the lowercased style text; earlier rows win. */
  readonly words: RegExp
  readonly bpm: readonly [number, number]
  /** Probability of a major key when no mood word or explicit key decides. */
  readonly major: number
  readonly instruments: ReadonlyArray<Instrument>
  readonly drums: DrumStyle
  readonly bass: BassStyle
  readonly comp: CompStyle
  readonly lead: Instrument
  /** Swing amount for off-beat 8ths/16ths (0 straight, 0.33 full triplet). */
  readonly swing: number
  /** Probability that a chord carries a 7th (jazz and lo-fi colour). */
  readonly sevenths: number
  /** Chord progressions as scale degrees (0 = tonic), one chord per bar. */
  readonly progressions: ReadonlyArray<ReadonlyArray<number>>
  readonly form: ReadonlyArray<SectionKind>
  readonly energy: number
  /** Reverb amount 0..1 (room size and send). */
  readonly space: number
  /** Sidechain pumping of the music bus by the kick. */
  readonly pump: boolean
  /** Tape-ish low-pass and noise on the master (lo-fi). */
  readonly lofi: boolean
}

const POP_PROGS = [
  [0, 4, 5, 3],
  [5, 3, 0, 4],
  [0, 5, 3, 4],
  [3, 4, 0, 5],
  [0, 3, 5, 4]
]
const MINOR_PROGS = [
  [0, 5, 2, 6],
  [0, 3, 4, 0],
  [0, 6, 5, 6],
  [0, 5, 3, 4],
  [0, 3, 6, 2]
]
const JAZZ_PROGS = [
  [1, 4, 0, 0],
  [0, 5, 1, 4],
  [1, 4, 0, 5],
  [0, 3, 1, 4]
]
const LOOP_PROGS = [
  [0, 0, 5, 5],
  [0, 6, 5, 6],
  [0, 3, 0, 4],
  [0, 2, 3, 4]
]
const CLASSIC_PROGS = [
  [0, 3, 4, 0],
  [0, 5, 3, 4],
  [0, 4, 5, 2],
  [3, 4, 2, 5],
  [0, 1, 4, 0]
]
const STD_FORM: ReadonlyArray<SectionKind> = [
  "intro",
  "verse",
  "chorus",
  "verse",
  "chorus",
  "bridge",
  "chorus",
  "outro"
]
const EDM_FORM: ReadonlyArray<SectionKind> = ["intro", "verse", "prechorus", "chorus", "bridge", "chorus", "outro"]
const LOOP_FORM: ReadonlyArray<SectionKind> = ["intro", "verse", "chorus", "verse", "chorus", "outro"]

export const GENRES: ReadonlyArray<Genre> = [
  {
    name: "lofi hip hop",
    words: /lo-?fi|chillhop|study beats/,
    bpm: [70, 90],
    major: 0.5,
    instruments: ["epiano", "bass", "drums", "pad"],
    drums: "boombap",
    bass: "sustain",
    comp: "comp",
    lead: "epiano",
    swing: 0.22,
    sevenths: 0.9,
    progressions: [...JAZZ_PROGS, ...LOOP_PROGS],
    form: LOOP_FORM,
    energy: 0.35,
    space: 0.45,
    pump: false,
    lofi: true
  },
  {
    name: "synthwave",
    words: /synth-?wave|retrowave|outrun|vaporwave|darkwave/,
    bpm: [84, 118],
    major: 0.3,
    instruments: ["synth", "bass", "drums", "pad"],
    drums: "backbeat",
    bass: "octave",
    comp: "arp",
    lead: "synth",
    swing: 0,
    sevenths: 0.15,
    progressions: [
      [0, 5, 3, 4],
      [0, 6, 5, 6],
      [5, 3, 0, 4]
    ],
    form: STD_FORM,
    energy: 0.6,
    space: 0.7,
    pump: false,
    lofi: false
  },
  {
    name: "trap",
    words: /\btrap\b|drill/,
    bpm: [130, 150],
    major: 0.2,
    instruments: ["bells", "bass", "drums", "pad"],
    drums: "trap",
    bass: "sub",
    comp: "arp",
    lead: "bells",
    swing: 0,
    sevenths: 0.2,
    progressions: MINOR_PROGS,
    form: LOOP_FORM,
    energy: 0.7,
    space: 0.4,
    pump: false,
    lofi: false
  },
  {
    name: "hip hop",
    words: /hip-? ?hop|\brap\b|boom-? ?bap/,
    bpm: [84, 98],
    major: 0.35,
    instruments: ["piano", "bass", "drums", "strings"],
    drums: "boombap",
    bass: "syncopated",
    comp: "stabs",
    lead: "piano",
    swing: 0.15,
    sevenths: 0.5,
    progressions: [...LOOP_PROGS, ...MINOR_PROGS],
    form: LOOP_FORM,
    energy: 0.6,
    space: 0.3,
    pump: false,
    lofi: false
  },
  {
    name: "drum and bass",
    words: /drum ?(and|&|n) ?bass|\bdnb\b|jungle|liquid/,
    bpm: [170, 176],
    major: 0.35,
    instruments: ["pad", "bass", "drums", "synth"],
    drums: "breakbeat",
    bass: "sub",
    comp: "sustain",
    lead: "synth",
    swing: 0,
    sevenths: 0.4,
    progressions: MINOR_PROGS,
    form: EDM_FORM,
    energy: 0.85,
    space: 0.55,
    pump: false,
    lofi: false
  },
  {
    name: "house",
    words: /house|uk garage/,
    bpm: [120, 126],
    major: 0.55,
    instruments: ["piano", "bass", "drums", "pad"],
    drums: "four",
    bass: "offbeat",
    comp: "stabs",
    lead: "synth",
    swing: 0.05,
    sevenths: 0.5,
    progressions: [...LOOP_PROGS, ...POP_PROGS],
    form: EDM_FORM,
    energy: 0.75,
    space: 0.45,
    pump: true,
    lofi: false
  },
  {
    name: "techno",
    words: /techno|minimal techno|industrial/,
    bpm: [126, 134],
    major: 0.15,
    instruments: ["synth", "bass", "drums", "pad"],
    drums: "techno",
    bass: "offbeat",
    comp: "stabs",
    lead: "pluck",
    swing: 0,
    sevenths: 0.1,
    progressions: [
      [0, 0, 0, 0],
      [0, 0, 5, 5],
      [0, 6, 0, 6]
    ],
    form: EDM_FORM,
    energy: 0.8,
    space: 0.5,
    pump: true,
    lofi: false
  },
  {
    name: "trance",
    words: /trance|edm|big room|eurodance/,
    bpm: [132, 140],
    major: 0.3,
    instruments: ["synth", "bass", "drums", "pad"],
    drums: "four",
    bass: "offbeat",
    comp: "arp",
    lead: "synth",
    swing: 0,
    sevenths: 0.05,
    progressions: [
      [5, 3, 0, 4],
      [0, 5, 3, 4],
      [0, 6, 5, 4]
    ],
    form: EDM_FORM,
    energy: 0.85,
    space: 0.65,
    pump: true,
    lofi: false
  },
  {
    name: "ambient",
    words: /ambient|drone|meditat|new age|atmospheric|soundscape/,
    bpm: [60, 80],
    major: 0.55,
    instruments: ["pad", "bells", "strings"],
    drums: "ambient",
    bass: "sustain",
    comp: "sustain",
    lead: "bells",
    swing: 0,
    sevenths: 0.5,
    progressions: [
      [0, 3, 0, 3],
      [0, 5, 3, 0],
      [0, 2, 3, 0]
    ],
    form: ["intro", "verse", "chorus", "verse", "chorus", "outro"],
    energy: 0.15,
    space: 0.95,
    pump: false,
    lofi: false
  },
  {
    name: "jazz",
    words: /jazz|swing|bebop|bossa|lounge/,
    bpm: [100, 150],
    major: 0.65,
    instruments: ["piano", "bass", "drums", "brass"],
    drums: "jazz",
    bass: "walking",
    comp: "comp",
    lead: "brass",
    swing: 0.3,
    sevenths: 1,
    progressions: JAZZ_PROGS,
    form: ["intro", "verse", "chorus", "solo", "verse", "chorus", "outro"],
    energy: 0.45,
    space: 0.35,
    pump: false,
    lofi: false
  },
  {
    name: "blues",
    words: /blues/,
    bpm: [70, 110],
    major: 0.7,
    instruments: ["guitar", "piano", "bass", "drums", "organ"],
    drums: "backbeat",
    bass: "walking",
    comp: "comp",
    lead: "eguitar",
    swing: 0.28,
    sevenths: 1,
    progressions: [[0, 0, 0, 0, 3, 3, 0, 0, 4, 3, 0, 4]],
    form: ["intro", "verse", "chorus", "solo", "verse", "chorus", "outro"],
    energy: 0.5,
    space: 0.35,
    pump: false,
    lofi: false
  },
  {
    name: "orchestral",
    words: /orchestra|classical|cinematic|symphon|film score|baroque|chamber/,
    bpm: [66, 100],
    major: 0.5,
    instruments: ["strings", "piano", "brass", "flute"],
    drums: "ambient",
    bass: "sustain",
    comp: "arp",
    lead: "strings",
    swing: 0,
    sevenths: 0.1,
    progressions: CLASSIC_PROGS,
    form: ["intro", "verse", "chorus", "bridge", "chorus", "outro"],
    energy: 0.4,
    space: 0.85,
    pump: false,
    lofi: false
  },
  {
    name: "metal",
    words: /metal|djent|thrash|hardcore|screamo/,
    bpm: [140, 180],
    major: 0.05,
    instruments: ["eguitar", "bass", "drums"],
    drums: "metal",
    bass: "eighths",
    comp: "power",
    lead: "eguitar",
    swing: 0,
    sevenths: 0,
    progressions: [
      [0, 5, 6, 0],
      [0, 1, 0, 6],
      [0, 3, 5, 4],
      [0, 6, 5, 6]
    ],
    form: STD_FORM,
    energy: 0.95,
    space: 0.25,
    pump: false,
    lofi: false
  },
  {
    name: "rock",
    words: /rock|punk|grunge|indie|alternative|garage rock/,
    bpm: [100, 140],
    major: 0.55,
    instruments: ["eguitar", "bass", "drums"],
    drums: "rock",
    bass: "eighths",
    comp: "power",
    lead: "eguitar",
    swing: 0,
    sevenths: 0.05,
    progressions: [
      [0, 4, 5, 3],
      [0, 3, 4, 3],
      [0, 6, 3, 0],
      [5, 3, 0, 4]
    ],
    form: STD_FORM,
    energy: 0.8,
    space: 0.3,
    pump: false,
    lofi: false
  },
  {
    name: "country",
    words: /country|bluegrass|americana|western/,
    bpm: [90, 125],
    major: 0.85,
    instruments: ["guitar", "bass", "drums", "piano"],
    drums: "backbeat",
    bass: "root",
    comp: "strum",
    lead: "guitar",
    swing: 0.05,
    sevenths: 0.05,
    progressions: [
      [0, 3, 4, 0],
      [0, 0, 3, 4],
      [0, 4, 5, 3]
    ],
    form: STD_FORM,
    energy: 0.55,
    space: 0.3,
    pump: false,
    lofi: false
  },
  {
    name: "folk",
    words: /folk|acoustic|singer-? ?songwriter|unplugged|campfire/,
    bpm: [80, 112],
    major: 0.6,
    instruments: ["guitar", "bass", "strings"],
    drums: "brush",
    bass: "root",
    comp: "strum",
    lead: "flute",
    swing: 0.08,
    sevenths: 0.1,
    progressions: [
      [0, 4, 5, 3],
      [0, 3, 0, 4],
      [5, 3, 0, 4],
      [0, 5, 3, 4]
    ],
    form: STD_FORM,
    energy: 0.35,
    space: 0.4,
    pump: false,
    lofi: false
  },
  {
    name: "reggae",
    words: /reggae|\bdub\b|\bska\b|dancehall/,
    bpm: [70, 90],
    major: 0.6,
    instruments: ["organ", "guitar", "bass", "drums"],
    drums: "onedrop",
    bass: "syncopated",
    comp: "skank",
    lead: "organ",
    swing: 0.1,
    sevenths: 0.2,
    progressions: [
      [0, 3, 0, 4],
      [0, 5, 3, 4],
      [0, 6, 0, 6]
    ],
    form: LOOP_FORM,
    energy: 0.45,
    space: 0.45,
    pump: false,
    lofi: false
  },
  {
    name: "funk",
    words: /funk|disco|groove|boogie/,
    bpm: [100, 120],
    major: 0.5,
    instruments: ["guitar", "bass", "drums", "brass", "epiano"],
    drums: "funk",
    bass: "syncopated",
    comp: "skank",
    lead: "brass",
    swing: 0.1,
    sevenths: 0.8,
    progressions: [
      [0, 0, 3, 3],
      [0, 3, 0, 3],
      [1, 4, 1, 4]
    ],
    form: STD_FORM,
    energy: 0.75,
    space: 0.3,
    pump: false,
    lofi: false
  },
  {
    name: "r&b",
    words: /r ?& ?b|rnb|soul|neo-?soul|gospel|motown/,
    bpm: [66, 96],
    major: 0.5,
    instruments: ["epiano", "bass", "drums", "pad"],
    drums: "boombap",
    bass: "syncopated",
    comp: "comp",
    lead: "epiano",
    swing: 0.15,
    sevenths: 0.85,
    progressions: [...JAZZ_PROGS, [0, 5, 3, 4]],
    form: STD_FORM,
    energy: 0.5,
    space: 0.45,
    pump: false,
    lofi: false
  },
  {
    name: "pop",
    words: /pop|dance|radio|k-?pop|j-?pop|electropop|chart/,
    bpm: [96, 124],
    major: 0.65,
    instruments: ["piano", "synth", "bass", "drums", "pad"],
    drums: "backbeat",
    bass: "eighths",
    comp: "block",
    lead: "synth",
    swing: 0,
    sevenths: 0.15,
    progressions: POP_PROGS,
    form: STD_FORM,
    energy: 0.65,
    space: 0.45,
    pump: false,
    lofi: false
  }
]

/** Pop is the fallback when no genre word is found. */
export const DEFAULT_GENRE: Genre = GENRES[GENRES.length - 1] as Genre
