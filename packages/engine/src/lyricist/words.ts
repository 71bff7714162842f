// The lyricist's words: a small bank of lyric vocabulary in themes, each theme named by the
// prompt words that call it, and the prompt's own words. Nouns are singular, verbs their base
// form (the gerund is made from it), adjectives plain.

import { Rng } from "../rng.ts"
import { FUNCTION_WORDS, soundOf } from "./sounds.ts"

export type Slot = "N" | "A" | "V" | "G"

interface Theme {
  /** Prompt words (or their beginnings) that call the theme. */
  readonly keys: ReadonlyArray<string>
  readonly N: string
  readonly A: string
  readonly V: string
}

const THEMES: ReadonlyArray<Theme> = [
  {
    keys: ["night", "moon", "star", "dark", "midnight", "evening", "late"],
    N: "night moon star sky dark midnight shadow light glow dawn street",
    A: "dark bright silver quiet electric endless blue late",
    V: "shine glow fade wake dream stay"
  },
  {
    keys: ["sea", "ocean", "wave", "beach", "shore", "coast", "sail", "island", "water"],
    N: "sea ocean wave shore tide sand water harbor island salt bay",
    A: "blue deep wide salty endless golden",
    V: "drift sail float swim breathe wash"
  },
  {
    keys: ["summer", "sun", "heat", "july", "warm", "holiday", "sunny"],
    N: "summer sun heat sky day gold afternoon sunlight",
    A: "golden warm bright young easy wild",
    V: "shine burn run play glow laugh"
  },
  {
    keys: ["drive", "road", "car", "highway", "ride", "travel", "journey", "wheel", "mile", "train"],
    N: "road highway wheel mile engine window radio town train station map",
    A: "open long fast empty endless restless",
    V: "drive ride run roll go leave chase"
  },
  {
    keys: ["love", "heart", "kiss", "romance", "lover", "darling", "together", "someone", "miss"],
    N: "heart love kiss hand touch lover name smile way arms",
    A: "tender sweet close true warm gentle",
    V: "hold stay love need kiss touch call find"
  },
  {
    keys: ["lost", "loss", "miss", "gone", "leave", "lonely", "alone", "goodbye", "memory", "grief", "sad", "broken"],
    N: "ghost memory silence picture letter tear goodbye distance echo",
    A: "empty lonely cold broken gone faded quiet",
    V: "miss remember fade cry wait fall forget"
  },
  {
    keys: ["rain", "storm", "thunder", "cloud", "grey", "gray", "weather"],
    N: "rain storm thunder cloud window river street",
    A: "grey heavy wet cold restless",
    V: "fall pour break wash drown"
  },
  {
    keys: ["fire", "flame", "burn", "spark", "heat", "passion"],
    N: "flame spark ember smoke heat light blaze",
    A: "wild bright burning hot golden",
    V: "burn ignite rise glow blaze"
  },
  {
    keys: ["home", "house", "family", "mother", "father", "return", "town", "child"],
    N: "home door window porch room kitchen town table mother father",
    A: "warm old safe familiar small",
    V: "return stay come rest remember"
  },
  {
    keys: ["city", "street", "neon", "urban", "crowd", "downtown", "club"],
    N: "city street neon crowd tower traffic corner skyline avenue",
    A: "electric loud bright restless crowded",
    V: "run move chase shine hustle"
  },
  {
    keys: ["dance", "party", "club", "beat", "rhythm", "floor", "move", "celebrate"],
    N: "beat rhythm floor bass crowd music song body",
    A: "alive loud free electric wild",
    V: "dance move jump sing spin shake"
  },
  {
    keys: ["winter", "snow", "cold", "ice", "frost", "december", "christmas"],
    N: "snow winter frost ice fire breath december",
    A: "cold white frozen silent pale",
    V: "freeze fall shiver melt glow"
  },
  {
    keys: ["dream", "sleep", "wish", "hope", "cloud", "fantasy"],
    N: "dream cloud wish sleep pillow heaven wonder",
    A: "soft silver gentle distant sweet",
    V: "dream float wish sleep believe wonder"
  },
  {
    keys: ["free", "freedom", "fly", "bird", "wing", "escape", "open"],
    N: "wing bird sky horizon wind freedom",
    A: "free open high wide wild",
    V: "fly rise soar run break escape"
  },
  {
    keys: ["war", "fight", "battle", "soldier", "army", "rebel", "strong", "power"],
    N: "battle soldier steel flag ground army drum",
    A: "brave strong proud fearless iron",
    V: "fight stand march rise hold win"
  },
  {
    keys: ["time", "clock", "year", "age", "young", "old", "past", "future", "forever"],
    N: "time clock hour year yesterday tomorrow moment",
    A: "young old slow precious forever",
    V: "wait turn change grow last remember"
  },
  {
    keys: ["god", "faith", "pray", "soul", "heaven", "church", "grace", "spirit"],
    N: "soul prayer heaven grace angel spirit light",
    A: "holy gentle bright eternal",
    V: "pray believe rise shine sing"
  },
  {
    keys: ["forest", "tree", "river", "mountain", "nature", "garden", "spring", "field", "flower"],
    N: "tree river mountain forest leaf field valley meadow",
    A: "green wild tall quiet golden",
    V: "grow bloom wander climb breathe"
  }
]

/** Words any song may take. */
const GENERAL: Theme = {
  keys: [],
  N:
    "heart night light sky day way song time world dream road rain home sun star place space face " +
    "grace line sign ground sound gold side door floor name flame sea tree stream train chain " +
    "wall call ring wing spring morning story view shore wind mind fate gate sight kind " +
    "soul goal stone bone sign eye hand land sand band start art dance chance",
  A: "bright wild free young slow new true alive blue gold high low strong long old cold bold kind",
  V:
    "run hold stay go fly shine feel know sing fall rise find say play pray show glow grow try " +
    "cry call heal see breathe believe remain wait stand land understand begin win spin shine " +
    "dance sway remember start hide ride"
}

export interface Vocabulary {
  /** Per slot, the words in order of preference for this draft (the prompt's, then its themes', then the rest). */
  readonly words: Readonly<Record<Slot, ReadonlyArray<string>>>
  /** The themes' nouns and the prompt's words: what a title is made of. */
  readonly theme: ReadonlyArray<string>
  /** The prompt's own words: a line that sings one is preferred. */
  readonly favoured: ReadonlySet<string>
}

/** The -ing form of a verb ("ride" riding, "run" running, "lie" lying). */
export function gerund(verb: string): string {
  if (verb.endsWith("ie")) return `${verb.slice(0, -2)}ying`
  if (verb.endsWith("e") && !verb.endsWith("ee")) return `${verb.slice(0, -1)}ing`
  if (/^[^aeiou]*[aeiou][bdgklmnprt]$/.test(verb)) return `${verb}${verb.slice(-1)}ing`
  return `${verb}ing`
}

const STOP = new Set(
  (
    "about song songs track music lyrics write written story theme mood feel feeling feelings " +
    "some someone something very really much many more most make makes made want wants get gets " +
    "one two three have has had been being over under after before again also only even ever never " +
    "who whom whose which your yours mine ours theirs itself myself yourself"
  ).split(" ")
)

const words = (s: string): string[] => s.split(" ").filter((w) => w !== "")

/** The prompt's own words, by what they look like: -ing words are gerunds, -ly and -ed words are left out, the rest nouns. */
export function promptWords(prompt: string): {
  readonly N: string[]
  readonly A: string[]
  readonly G: string[]
  readonly all: string[]
} {
  const N: string[] = []
  const A: string[] = []
  const G: string[] = []
  const all: string[] = []
  for (const raw of prompt.toLowerCase().split(/[^a-z']+/)) {
    const w = raw.replace(/^'+|'+$/g, "")
    if (w.length < 3 || FUNCTION_WORDS.has(w) || STOP.has(w) || w.includes("'") || all.includes(w)) continue
    if (soundOf(w) === null) continue
    all.push(w)
    if (w.endsWith("ing") && w.length > 5) G.push(w)
    else if (ADJECTIVES.has(w) || adjectiveOfNoun(w)) A.push(w)
    else if (!ADVERBS.has(w) && !w.endsWith("ly") && !w.endsWith("ed") && !/(ful|less|ous|ive|ish)$/.test(w)) N.push(w)
  }
  return { N, A, G, all }
}

const ADVERBS = new Set("alone away again together forever apart tonight today tomorrow yesterday always".split(" "))
const ADJECTIVES = new Set([
  "good",
  "bad",
  "last",
  "first",
  "best",
  "great",
  "little",
  "big",
  "same",
  "other",
  ...[...THEMES, GENERAL].flatMap((t) => t.A.split(" ")).filter((w) => w !== "")
])

/** "stormy", "sunny", "cloudy": a noun the dictionary knows, with -y. */
function adjectiveOfNoun(w: string): boolean {
  if (!/[^aeiou]y$/.test(w) || w.length < 5) return false
  const stem = w.slice(0, -1)
  const undoubled = stem.length > 2 && stem.at(-1) === stem.at(-2) ? stem.slice(0, -1) : stem
  return soundOf(stem) !== null || soundOf(undoubled) !== null
}

/** Themes the prompt calls, strongest first (none: the general words alone). */
function themesOf(promptAll: ReadonlyArray<string>): Theme[] {
  const scored = THEMES.map((t) => ({
    t,
    score: promptAll.filter((w) => t.keys.some((k) => w === k || (k.length >= 4 && w.startsWith(k)))).length
  }))
  return scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score)
    .map((s) => s.t)
}

/** The vocabulary of one draft: the prompt's words first, its themes' next, the general bank last, each group shuffled by the seed. */
export function vocabulary(prompt: string, extra: ReadonlyArray<string>, seed: string): Vocabulary {
  const rng = new Rng(`lyricist|words|${seed}`)
  const own = promptWords(prompt)
  // Words of lyrics being revised call themes, but are not taken as nouns.
  const themes = themesOf([...own.all, ...promptWords(extra.join(" ")).all])
  // The second draft leans on the second theme where there is one.
  const ordered =
    themes.length > 1 && seed.endsWith("|1") ? [themes[1] as Theme, themes[0] as Theme, ...themes.slice(2)] : themes
  const shuffled = (list: ReadonlyArray<string>): string[] => {
    const keyed = list.map((w) => ({ w, k: rng.next() }))
    return keyed.sort((a, b) => a.k - b.k).map((x) => x.w)
  }
  const collect = (slot: "N" | "A" | "V"): string[] => {
    const out: string[] = []
    const add = (w: string): void => {
      if (!out.includes(w) && soundOf(w) !== null) out.push(w)
    }
    if (slot === "N") for (const w of shuffled(own.N)) add(w)
    if (slot === "A") for (const w of shuffled(own.A)) add(w)
    for (const t of ordered) for (const w of shuffled(words(t[slot]))) add(w)
    for (const w of shuffled(words(GENERAL[slot]))) add(w)
    return out
  }
  const V = collect("V")
  const G: string[] = []
  for (const w of [...shuffled(own.G), ...V.map(gerund)]) if (!G.includes(w) && soundOf(w) !== null) G.push(w)
  const themeNouns = ordered.flatMap((t) => words(t.N))
  return {
    favoured: new Set([...own.N, ...own.A, ...own.G]),
    words: { N: collect("N"), A: collect("A"), V, G },
    theme: [...own.N, ...themeNouns, ...words(GENERAL.N)].filter((w) => soundOf(w) !== null)
  }
}
