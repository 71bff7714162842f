// Recordings Lyre did not make, from Debian's packages (installed by the sound lane's setup,
// test/debianMusic.ts), cut with ffmpeg, and judged with what the engine does not use: Essentia's
// Krumhansl key profile and a chroma of the spectrum written here (Hann frames, each spectral
// peak's energy to its pitch class, 55 Hz to 2 kHz). Nothing here reuses engine code.

import { execFileSync } from "node:child_process"
import { createRequire } from "node:module"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gamesDir } from "../../../../test/debianMusic.ts"
import { ffmpegPath } from "../../../../test/ffmpeg.ts"
import { getEssentia } from "./analysis.ts"

const fretsonfire = `${gamesDir}/fretsonfire/data/songs`
const wesnoth = `${gamesDir}/wesnoth/1.16/data/core/music`

export interface OutsideRecording {
  readonly name: string
  readonly kind: string
  /** The files heard together (a Fret on Fire song is its band and its guitar). */
  readonly files: ReadonlyArray<string>
  /** Where the excerpt starts, seconds. */
  readonly from: number
}

const fof = (pack: string, song: string, kind: string, from: number): OutsideRecording => ({
  name: song,
  kind,
  files: [`${fretsonfire}/${pack}/${song}/song.ogg`, `${fretsonfire}/${pack}/${song}/guitar.ogg`],
  from
})

/** Every kind the packages hold: metal with a growled voice, rock, orchestral, folk. */
export const recordings: ReadonlyArray<OutsideRecording> = [
  fof("sectoid", "Feelings", "rock ballad", 40),
  fof("sectoid", "Escape from chaosland", "rock", 40),
  fof("sectoid", "War of freedom", "rock", 40),
  fof("sectoid", "Metal madness", "metal", 40),
  fof("muldjord", "chaos_god", "metal, growled voice", 40),
  fof("muldjord", "armygeddon", "metal", 40),
  fof("muldjord", "internal_degeneration", "metal", 40),
  fof("muldjord", "mutilated_mime", "metal", 40),
  { name: "battle", kind: "orchestral", files: [`${wesnoth}/battle.ogg`], from: 20 },
  { name: "elvish-theme", kind: "orchestral, folk", files: [`${wesnoth}/elvish-theme.ogg`], from: 20 },
  { name: "traveling_minstrels", kind: "folk", files: [`${wesnoth}/traveling_minstrels.ogg`], from: 20 },
  { name: "knalgan_theme", kind: "orchestral", files: [`${wesnoth}/knalgan_theme.ogg`], from: 20 },
  { name: "nunc_dimittis", kind: "orchestral, slow", files: [`${wesnoth}/nunc_dimittis.ogg`], from: 20 }
]

const { Midi } = createRequire(import.meta.url)("@tonejs/midi") as typeof import("@tonejs/midi")

/** The tempo its chart was written at (a Fret on Fire song's `notes.mid`), where the recording has one. */
export function chartTempo(r: OutsideRecording): number | undefined {
  const chart = r.files[0]?.replace(/song\.ogg$/, "notes.mid")
  if (chart === undefined || chart === r.files[0] || !existsSync(chart)) return undefined
  return new Midi(readFileSync(chart)).header.tempos[0]?.bpm
}

export const present = (r: OutsideRecording): boolean => r.files.every((f) => existsSync(f))

/** `seconds` of the recording from `from`, its files mixed, as a 16-bit stereo 44.1 kHz WAV. */
export function excerptWav(r: OutsideRecording, seconds: number): Uint8Array {
  const inputs = r.files.flatMap((f) => ["-ss", String(r.from), "-t", String(seconds), "-i", f])
  const mix =
    r.files.length > 1 ? ["-filter_complex", `amix=inputs=${r.files.length}:normalize=0`] : ([] as Array<string>)
  // To a file: on a pipe ffmpeg cannot go back to write the header's lengths.
  const dir = mkdtempSync(join(tmpdir(), "lyre-outside-"))
  try {
    const file = join(dir, "excerpt.wav")
    execFileSync(ffmpegPath, ["-v", "error", ...inputs, ...mix, "-ac", "2", "-ar", "44100", "-c:a", "pcm_s16le", file])
    return new Uint8Array(readFileSync(file))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The WAV's two channels averaged, as floats (a plain RIFF as ffmpeg writes it: data after the header chunks). */
export function monoOf(wav: Uint8Array): Float32Array {
  const view = new DataView(wav.buffer, wav.byteOffset, wav.byteLength)
  let at = 12
  while (at + 8 <= wav.length) {
    const id = String.fromCharCode(...wav.subarray(at, at + 4))
    const size = view.getUint32(at + 4, true)
    if (id === "data") {
      const frames = Math.floor(Math.min(size, wav.length - at - 8) / 4)
      const out = new Float32Array(frames)
      for (let i = 0; i < frames; i++)
        out[i] = (view.getInt16(at + 8 + i * 4, true) + view.getInt16(at + 10 + i * 4, true)) / 65_536
      return out
    }
    at += 8 + size
  }
  return new Float32Array(0)
}

const pitchNames = ["C", "C#", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B"]
const essentiaNames: Readonly<Record<string, number>> = { Db: 1, "D#": 3, Gb: 6, "G#": 8, "A#": 10 }

/** Essentia's key with Krumhansl's profile: `A major`, spelled as the engine spells keys. */
export function krumhanslKey(mono: Float32Array): string {
  const e = getEssentia()
  const v = e.arrayToVector(mono)
  const r = e.KeyExtractor(v, true, 4096, 4096, 12, 3500, 60, 25, 0.2, "krumhansl")
  v.delete()
  const pc = pitchNames.indexOf(r.key) >= 0 ? pitchNames.indexOf(r.key) : (essentiaNames[r.key] ?? 0)
  return `${pitchNames[pc]} ${r.scale}`
}

/** Same key, or its relative (A minor for C major). */
export function sameOrRelative(a: string, b: string): boolean {
  if (a === b) return true
  const parse = (k: string) => ({ pc: pitchNames.indexOf(k.split(" ")[0] ?? ""), minor: k.endsWith("minor") })
  const x = parse(a)
  const y = parse(b)
  if (x.minor === y.minor) return false
  const major = x.minor ? y : x
  const minor = x.minor ? x : y
  return (major.pc + 9) % 12 === minor.pc
}

/** In-place radix-2 FFT of (re, im), length a power of two. */
function fft(re: Float64Array, im: Float64Array): void {
  const n = re.length
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1
    for (; j & bit; bit >>= 1) j ^= bit
    j ^= bit
    if (i < j) {
      ;[re[i], re[j]] = [re[j] as number, re[i] as number]
      ;[im[i], im[j]] = [im[j] as number, im[i] as number]
    }
  }
  for (let len = 2; len <= n; len <<= 1) {
    const angle = (-2 * Math.PI) / len
    for (let i = 0; i < n; i += len)
      for (let k = 0; k < len / 2; k++) {
        const wr = Math.cos(angle * k)
        const wi = Math.sin(angle * k)
        const a = i + k
        const b = a + len / 2
        const tr = (re[b] as number) * wr - (im[b] as number) * wi
        const ti = (re[b] as number) * wi + (im[b] as number) * wr
        re[b] = (re[a] as number) - tr
        im[b] = (im[a] as number) - ti
        re[a] = (re[a] as number) + tr
        im[a] = (im[a] as number) + ti
      }
  }
}

const rate = 44_100
const frame = 8192
const hop = 4096

/** A chroma every `hop` samples: each local spectral peak's energy to its pitch class, 55 Hz to 2 kHz. */
export function chromagram(mono: Float32Array): { readonly frames: Array<Float64Array>; readonly hop: number } {
  const window = Float64Array.from({ length: frame }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / frame))
  const frames: Array<Float64Array> = []
  const lo = Math.ceil((55 * frame) / rate)
  const hi = Math.floor((2000 * frame) / rate)
  for (let start = 0; start + frame <= mono.length; start += hop) {
    const re = new Float64Array(frame)
    const im = new Float64Array(frame)
    for (let i = 0; i < frame; i++) re[i] = (mono[start + i] ?? 0) * (window[i] ?? 0)
    fft(re, im)
    const power = (k: number) => (re[k] ?? 0) ** 2 + (im[k] ?? 0) ** 2
    const chroma = new Float64Array(12)
    for (let k = lo; k <= hi; k++) {
      const p = power(k)
      if (p < power(k - 1) || p < power(k + 1)) continue
      const midi = 69 + 12 * Math.log2((k * rate) / frame / 440)
      const pc = ((Math.round(midi) % 12) + 12) % 12
      chroma[pc] = (chroma[pc] ?? 0) + Math.sqrt(p)
    }
    frames.push(chroma)
  }
  return { frames, hop: hop / rate }
}

const triadNames = pitchNames.flatMap((n) => [n, `${n}m`])
const triadClasses = (name: string): ReadonlyArray<number> => {
  const root = pitchNames.indexOf(name.replace(/m$/, ""))
  return [root, (root + (name.endsWith("m") ? 3 : 4)) % 12, (root + 7) % 12]
}

/** The triads ranked by how well the chroma summed over [start, end) matches them (cosine to the triad's three classes). */
export function bestTriads(chroma: ReturnType<typeof chromagram>, start: number, end: number): Array<string> {
  const sum = new Float64Array(12)
  const from = Math.floor(start / chroma.hop)
  const to = Math.max(from + 1, Math.floor(end / chroma.hop))
  for (let f = from; f < to && f < chroma.frames.length; f++)
    chroma.frames[f]?.forEach((v, pc) => {
      sum[pc] = (sum[pc] ?? 0) + v
    })
  const norm = Math.sqrt(sum.reduce((s, v) => s + v * v, 0)) || 1
  const score = (name: string) => triadClasses(name).reduce((s, pc) => s + (sum[pc] ?? 0), 0) / (norm * Math.sqrt(3))
  return [...triadNames].sort((a, b) => score(b) - score(a))
}

/** Triads of a key's scale (natural minor, and the harmonic minor's major V). */
export function diatonicTriads(key: string): ReadonlySet<string> {
  const tonic = pitchNames.indexOf(key.split(" ")[0] ?? "")
  const steps: ReadonlyArray<readonly [number, string]> = key.endsWith("minor")
    ? [
        [0, "m"],
        [3, ""],
        [5, "m"],
        [7, "m"],
        [7, ""],
        [8, ""],
        [10, ""]
      ]
    : [
        [0, ""],
        [2, "m"],
        [4, "m"],
        [5, ""],
        [7, ""],
        [9, "m"]
      ]
  return new Set(steps.map(([s, q]) => `${pitchNames[(tonic + s) % 12]}${q}`))
}
