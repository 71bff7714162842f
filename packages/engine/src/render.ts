// One take, end to end: parse the style, compose, synthesize every part, mix, master,
// encode MP3 and draw the cover. Synchronous DSP (except the WASM encoder start-up);
// this is what each worker thread runs.

import { compose, type DrumHit, type Part, type Score } from "./compose.ts"
import { drawCover } from "./cover.ts"
import type { Genre } from "./genres.ts"
import { CEILING, TARGET_LUFS, master, reverb, sidechain, type MasterOptions, type MasterTrace } from "./mix.ts"
import { encodeMp3, type Mp3Sink } from "./mp3.ts"
import { Rng } from "./rng.ts"
import { parseStyle, type StyleSpec } from "./style.ts"
import { BASS_PROGRAM, DRUM_HOLD, KIT_PROGRAM, PROGRAM, drumKey, midiVelocity } from "./soundfont/programs.ts"
import { playNotes, type PlayedNote } from "./soundfont/sampler.ts"
import type { KitFlavour } from "./synth/drums.ts"
import {
  Noise,
  SR,
  airLiftInPlace,
  highShelfInPlace,
  highpassInPlace,
  lowpassInPlace,
  panGains,
  softClip
} from "./synth/dsp.ts"
import { renderNote, type BassVoice, type InstrumentContext } from "./synth/instruments.ts"
import { singerFor } from "./synth/voice/singer.ts"
import { colourVoice, type VoiceColour } from "./synth/voice/colour.ts"
import type { EngineRequest, EngineTrack, RenderOptions } from "./types.ts"

/** One part of the mix as it sounds in the track: `vocals`, `drums`, `bass`, `harmony`, `lead`, `vinyl`. */
export interface StemAudio {
  readonly name: string
  readonly left: Float32Array
  readonly right: Float32Array
}

export interface RenderedAudio {
  readonly left: Float32Array
  readonly right: Float32Array
  readonly score: Score
  readonly spec: StyleSpec
  readonly tags: string
  /** The voice stem before mixing (all zeros for instrumentals); tests analyse it. */
  readonly voice: Float32Array
  /** Each stem mixed and mastered exactly as in the mix (they add up to it); null unless asked for. */
  readonly stems: ReadonlyArray<StemAudio> | null
}

/** A composed take: everything the mixer needs. */
export interface Take {
  readonly spec: StyleSpec
  readonly score: Score
  readonly weirdness: number
  /** Positioned after composing: the mixer draws its noise, voice and master seeds from here. */
  readonly rng: Rng
  /** A persona's voice colour heard in an upload (brightness, vibrato), laid on the sung voice. */
  readonly voiceColour?: VoiceColour | undefined
}

/** Which stem each band role is heard in. */
const STEM_OF: Readonly<Record<Part["role"], string>> = {
  chords: "harmony",
  pad: "harmony",
  counter: "harmony",
  bass: "bass",
  lead: "lead",
  arp: "lead"
}

/** Canonical text of everything in the request that shapes the music. */
export function requestKey(r: EngineRequest): string {
  return JSON.stringify([
    r.style,
    r.title,
    r.lyrics,
    r.instrumental,
    r.model,
    r.vocal_gender ?? null,
    r.negative_tags ?? null,
    r.style_weight ?? null,
    r.weirdness_constraint ?? null,
    r.audio_weight ?? null
  ])
}

function clamp01(x: number | undefined, fallback: number): number {
  return x === undefined || !Number.isFinite(x) ? fallback : Math.min(1, Math.max(0, x))
}

export function bassVoiceFor(g: Genre): BassVoice {
  if (g.name === "trap" || g.name === "drum and bass" || g.name === "hip hop") return "sub"
  if (g.name === "jazz" || g.name === "blues" || g.name === "folk") return "upright"
  if (["synthwave", "techno", "house", "trance", "pop"].includes(g.name)) return "synth"
  return "electric"
}

export function kitFor(g: Genre): KitFlavour {
  if (g.name === "trap") return "808"
  if (g.name === "metal") return "metal"
  if (g.drums === "brush") return "brush"
  if (["house", "techno", "trance", "synthwave", "pop", "drum and bass"].includes(g.name)) return "electronic"
  return "acoustic"
}

/** The drum kinds made of metal: hats and cymbals (and the shaker's rattle). */
const METALS: ReadonlySet<DrumHit["kind"]> = new Set(["hat", "ohat", "ride", "crash", "shaker"])

/** Genres whose character is electronic: their synths, pads, plucks and basses stay the engine's own synthesis. */
const SYNTHETIC_GENRES: ReadonlySet<string> = new Set([
  "synthwave",
  "techno",
  "house",
  "trance",
  "drum and bass",
  "trap"
])
const SYNTHETIC_INSTRUMENTS: ReadonlySet<Part["instrument"]> = new Set(["synth", "pad", "pluck", "bass"])

/** Whether a part is the engine's own synthesis (a timbre the genre wants synthetic) or recorded samples from the GM bank. */
export function synthesized(g: Genre, instrument: Part["instrument"]): boolean {
  return SYNTHETIC_GENRES.has(g.name) && SYNTHETIC_INSTRUMENTS.has(instrument)
}

/** The General MIDI program a part is written and played with. */
export function programOf(g: Genre, instrument: Part["instrument"]): number {
  return instrument === "bass" ? BASS_PROGRAM[bassVoiceFor(g)] : PROGRAM[instrument]
}

/** Target RMS (dBFS) of each role before the master stage; the mix is balanced by these. */
const ROLE_DB: Readonly<Record<Part["role"], number>> = {
  chords: -21,
  pad: -25,
  bass: -19,
  lead: -21,
  arp: -28,
  counter: -25
}

function rmsOf(buf: Float32Array, from: number, to: number): number {
  let e = 0
  let count = 0
  // Only count where the part actually plays (skip silence), sampling every 4th sample.
  for (let i = from; i < to; i += 4) {
    const x = buf[i] as number
    if (x > 1e-5 || x < -1e-5) {
      e += x * x
      count++
    }
  }
  return count === 0 ? 0 : Math.sqrt(e / count)
}

export function voiceFor(request: EngineRequest, rng: Rng): "m" | "f" {
  if (request.vocal_gender !== undefined) return request.vocal_gender
  const s = request.style.toLowerCase()
  if (/(female|woman|women|girl|soprano|alto|diva|her voice)/.test(s)) return "f"
  if (/(\bmale|\bman\b|\bmen\b|\bboy|baritone|tenor|bass voice|his voice)/.test(s)) return "m"
  return rng.chance(0.5) ? "f" : "m"
}

/** The service validates requests; this guards the engine against what would make it misbehave. */
function checkRequest(r: EngineRequest): void {
  if (r.model !== "aether" && r.model !== "echo" && r.model !== "nocturne")
    throw new Error(`unknown model: ${String(r.model)}`)
  if (typeof r.style !== "string" || typeof r.title !== "string") throw new Error("style and title must be strings")
  if (r.lyrics !== null && typeof r.lyrics !== "string") throw new Error("lyrics must be a string or null")
}

/** The song-level choices of a task (tempo, key, instruments, voice), shared by both takes and by its extensions. */
export function songIdentity(
  request: EngineRequest,
  taskId: string
): { readonly spec: StyleSpec; readonly voice: "m" | "f" } {
  checkRequest(request)
  const songRng = new Rng(`song|${taskId}|${requestKey(request)}`)
  const spec = parseStyle(request.style, request.negative_tags, songRng, clamp01(request.style_weight, 0.5))
  return { spec, voice: voiceFor(request, songRng) }
}

/** The knobs of a request, with their defaults. */
export function knobs(request: EngineRequest): {
  readonly styleWeight: number
  readonly weirdness: number
  readonly audioWeight: number
} {
  return {
    styleWeight: clamp01(request.style_weight, 0.5),
    weirdness: clamp01(request.weirdness_constraint, 0.25),
    audioWeight: clamp01(request.audio_weight, 0.5)
  }
}

export function composeTake(request: EngineRequest, taskId: string, index: number): Take {
  // Song-level choices (tempo, key, instruments, voice) are shared by both takes;
  // take-level choices (progressions, tunes, patterns) differ per index.
  const { spec, voice } = songIdentity(request, taskId)
  const takeRng = new Rng(`take|${index}|${taskId}|${requestKey(request)}`)
  const { styleWeight, weirdness, audioWeight } = knobs(request)
  const score = compose(
    {
      spec,
      lyrics: request.lyrics,
      instrumental: request.instrumental,
      model: request.model,
      voice,
      styleWeight,
      weirdness,
      audioWeight
    },
    takeRng
  )
  return { spec, score, weirdness, rng: takeRng }
}

export function renderAudio(
  request: EngineRequest,
  taskId: string,
  index: number,
  options: RenderOptions = {}
): RenderedAudio {
  return mixTake(composeTake(request, taskId, index), options, false)
}

interface BandStem {
  readonly l: Float32Array
  readonly r: Float32Array
  readonly send: Float32Array
}

/** Synthesizes, mixes and masters a composed take; with `withStems`, also each stem as heard in the mix. */
export function mixTake(take: Take, options: RenderOptions, withStems: boolean): RenderedAudio {
  const { spec, score, weirdness } = take
  const takeRng = take.rng
  const seconds = Math.min(score.duration, options.maxSeconds ?? Infinity)
  const n = Math.max(SR, Math.round(seconds * SR))
  const musicL = new Float32Array(n)
  const musicR = new Float32Array(n)
  const drumsL = new Float32Array(n)
  const drumsR = new Float32Array(n)
  const send = new Float32Array(n)
  const part = new Float32Array(n)
  const voiceBuf = new Float32Array(n)
  const noise = new Noise(takeRng.seed32())
  const genre = score.genre
  const ctx: InstrumentContext = {
    noise,
    weird: weirdness,
    bass: bassVoiceFor(genre),
    bright: Math.min(1, 0.35 + 0.45 * spec.energy + 0.25 * score.richness)
  }
  const spaceScale = score.richness < 0.5 ? 0.5 : 1
  const band = new Map<string, BandStem>()

  // How far the previous part wrote into `part`: only that much is cleared for the next.
  let written = 0
  for (const p of score.parts) {
    part.fill(0, 0, written)
    let last = 0
    const synthetic = synthesized(genre, p.instrument)
    if (synthetic) {
      for (const note of p.notes) {
        if (note.start >= seconds) continue
        renderNote(p.instrument, note, part, ctx)
        // Covers every release tail (the longest, a bell, rings 2.5 s after its onset).
        last = Math.max(last, Math.min(n, Math.round((note.start + note.dur + 3) * SR)))
      }
    } else {
      // The notes the MIDI export writes, played by the GM bank's recording of the instrument.
      const played: PlayedNote[] = p.notes.map((note) => ({
        start: note.start,
        end: note.start + note.dur,
        key: note.pitch,
        velocity: midiVelocity(note.vel)
      }))
      // Mono: the part is panned again below, and the bank's instruments are mono recordings.
      last = playNotes(played, programOf(genre, p.instrument), false, { mono: part })
      // Above 4 kHz the bank's recordings carry hammer, pick and bow noise at full level; a mix
      // engineer tucks it under the voice (the accompaniment more than the lead), so the air is
      // there but the bands fall.
      if (p.role === "lead" || p.role === "bass") highShelfInPlace(part, 0, last, 4000, 0.45)
      else highShelfInPlace(part, 0, last, 2500, 0.3)
    }
    written = last
    if (last === 0) continue
    if (p.instrument === "eguitar" && synthetic) {
      // Amp and cabinet: high-pass, hard drive, then roll off the fizz.
      highpassInPlace(part, 0, last, 90)
      const drive = genre.name === "metal" ? 14 : 7
      for (let i = 0; i < last; i++) part[i] = softClip((part[i] as number) * drive)
      lowpassInPlace(part, 0, last, 3800)
      lowpassInPlace(part, 0, last, 4500)
    }
    if ((p.role === "lead" || p.role === "arp") && genre.space >= 0.5 && score.richness > 0.5) {
      // Dotted-eighth echo, the synthwave/trance signature.
      const d = Math.round(0.75 * (60 / score.bpm) * SR)
      for (let i = d; i < last; i++) part[i] = (part[i] as number) + (part[i - d] as number) * 0.32
    }
    const rms = rmsOf(part, 0, last)
    if (rms <= 0) continue
    // The lead is what audio_weight balances the band against; everything else is "the band".
    const weight = p.role === "lead" && score.vocal.length === 0 ? 1 / Math.sqrt(score.backing) : score.backing
    const gain =
      Math.min(40, Math.pow(10, ROLE_DB[p.role] / 20) / rms) *
      (p.gain / 0.5) *
      weight *
      (p.role === "chords" && score.parts.length > 4 ? 0.85 : 1)
    const [gl, gr] = panGains(p.pan * (score.richness > 0.5 ? 1 : 0.5))
    const sendGain = p.send * genre.space * spaceScale
    for (let i = 0; i < last; i++) {
      const raw = part[i] as number
      if (raw === 0) continue // most parts are silent most of the time
      const x = raw * gain
      musicL[i] = (musicL[i] as number) + x * gl
      musicR[i] = (musicR[i] as number) + x * gr
      send[i] = (send[i] as number) + x * sendGain
    }
    if (withStems) {
      const name = STEM_OF[p.role]
      let stem = band.get(name)
      if (stem === undefined) {
        stem = { l: new Float32Array(n), r: new Float32Array(n), send: new Float32Array(n) }
        band.set(name, stem)
      }
      for (let i = 0; i < last; i++) {
        const x = (part[i] as number) * gain
        stem.l[i] = (stem.l[i] as number) + x * gl
        stem.r[i] = (stem.r[i] as number) + x * gr
        stem.send[i] = (stem.send[i] as number) + x * sendGain
      }
    }
  }

  // Drum bus level: balanced by its RMS like the parts; applied in the final sum below.
  let drumGain = 0
  let drumSend = 0
  if (score.drums.length > 0) {
    const played = (h: DrumHit): PlayedNote => ({
      start: h.time,
      end: h.time + DRUM_HOLD,
      key: drumKey(h),
      velocity: midiVelocity(h.vel)
    })
    const kit = KIT_PROGRAM[kitFor(genre)]
    playNotes(score.drums.filter((h) => !METALS.has(h.kind)).map(played), kit, true, { left: drumsL, right: drumsR })
    // Hats and cymbals on their own pass, mixed under the skins as a drummer's overheads are:
    // the kits record them at the level of the snare, and their hiss would cover everything
    // between 1 and 16 kHz (the mix measures noise-like and its top bands rise).
    const sampledL = new Float32Array(n)
    const sampledR = new Float32Array(n)
    const metalEnd = playNotes(score.drums.filter((h) => METALS.has(h.kind)).map(played), kit, true, {
      left: sampledL,
      right: sampledR
    })
    for (const ch of [sampledL, sampledR]) highShelfInPlace(ch, 0, metalEnd, 3000, 0.6)
    const metalGain = 0.4
    for (let i = 0; i < metalEnd; i++) {
      drumsL[i] = (drumsL[i] as number) + (sampledL[i] as number) * metalGain
      drumsR[i] = (drumsR[i] as number) + (sampledR[i] as number) * metalGain
    }
    // The snare's wires are broadband noise too: the whole kit sits a little darker than recorded.
    for (const ch of [drumsL, drumsR]) highShelfInPlace(ch, 0, n, 2500, 0.4)
    // ...but the sizzle above 10 kHz, which tells a groove from a strummed chord, comes back.
    for (const ch of [drumsL, drumsR]) airLiftInPlace(ch, 0, n, 10000, 4.5)
    let e = 0
    let c = 0
    for (let i = 0; i < n; i += 4) {
      const x = (drumsL[i] as number) + (drumsR[i] as number)
      if (x !== 0) {
        e += x * x * 0.25
        c++
      }
    }
    const rms = c > 0 ? Math.sqrt(e / c) : 0
    if (rms > 0) {
      drumGain = (Math.pow(10, (genre.drums === "ambient" ? -30 : -20) / 20) * score.backing) / rms
      drumSend = 0.08 * genre.space * spaceScale
    }
  }
  if (genre.pump && score.kicks.length > 0) {
    sidechain(musicL, musicR, score.kicks, 0.45)
    for (const stem of band.values()) sidechain(stem.l, stem.r, score.kicks, 0.45)
  }

  // Seeds are drawn unconditionally so muting the voice changes nothing else.
  const voiceSeed = takeRng.seed32()
  let voiceGain = 0
  let voiceSend = 0
  if (score.vocal.length > 0 && options.muteVoice !== true) {
    const singer = singerFor([...score.vocal, ...score.harmony], score.voice)
    singer.sing(
      score.vocal.filter((v) => v.start < seconds),
      voiceBuf,
      voiceSeed
    )
    if (score.harmony.length > 0)
      singer.sing(
        score.harmony.filter((v) => v.start < seconds),
        voiceBuf,
        voiceSeed ^ 0x5a5a
      )
    if (take.voiceColour !== undefined) colourVoice(voiceBuf, take.voiceColour)
    highpassInPlace(voiceBuf, 0, n, 110)
    const rms = rmsOf(voiceBuf, 0, n)
    if (rms > 0) {
      // The voice sits on top; audio_weight pushes the band up relative to it.
      voiceGain = Math.pow(10, -14.5 / 20) / rms / Math.sqrt(score.backing)
      voiceSend = 0.25 * Math.max(0.4, genre.space)
    }
  }

  // One pass sums band, drums and voice and feeds the reverb send.
  const left = musicL
  const right = musicR
  for (let i = 0; i < n; i++) {
    const dl = (drumsL[i] as number) * drumGain
    const dr = (drumsR[i] as number) * drumGain
    const v = (voiceBuf[i] as number) * voiceGain
    left[i] = (left[i] as number) + dl + v
    right[i] = (right[i] as number) + dr + v
    send[i] = (send[i] as number) + (dl + dr) * drumSend + v * voiceSend
  }
  reverb(send, left, right, genre.space, 1)
  const truncated = seconds < score.duration
  const masterOptions: MasterOptions = {
    targetLufs: TARGET_LUFS,
    width: score.richness > 0.9 ? 1.15 : score.richness > 0.5 ? 1 : 0.6,
    lowpass: genre.lofi ? 5200 : score.richness < 0.5 ? 8500 : 0,
    crackle: genre.lofi ? 1 : 0,
    seed: takeRng.seed32(),
    fadeOut: truncated ? 1.5 : Math.min(4, (60 / score.bpm) * 4)
  }
  const trace: MasterTrace | null = withStems ? { gain: 1, limiter: new Float32Array(n) } : null
  master(left, right, masterOptions, trace === null ? undefined : { record: trace })
  const vocalTag = score.vocal.length > 0 ? [`${score.voice === "f" ? "female" : "male"} vocals`] : []
  let stems: StemAudio[] | null = null
  if (trace !== null) {
    stems = []
    // Each stem goes through the same reverb and the same master, with the mix's own loudness
    // gain and limiter curve: every stage is then linear, so the stems add up to the mix.
    const finish = (
      name: string,
      l: Float32Array,
      r: Float32Array,
      stemSend: Float32Array | null,
      crackle: boolean
    ): void => {
      if (stemSend !== null) reverb(stemSend, l, r, genre.space, 1)
      master(l, r, masterOptions, { replay: trace, crackle })
      stems?.push({ name, left: l, right: r })
    }
    if (drumGain > 0) {
      const l = new Float32Array(n)
      const r = new Float32Array(n)
      const s = new Float32Array(n)
      for (let i = 0; i < n; i++) {
        const dl = (drumsL[i] as number) * drumGain
        const dr = (drumsR[i] as number) * drumGain
        l[i] = dl
        r[i] = dr
        s[i] = (dl + dr) * drumSend
      }
      finish("drums", l, r, s, false)
    }
    for (const name of ["bass", "harmony", "lead"]) {
      const stem = band.get(name)
      if (stem !== undefined) finish(name, stem.l, stem.r, stem.send, false)
    }
    if (voiceGain > 0) {
      const l = new Float32Array(n)
      const s = new Float32Array(n)
      for (let i = 0; i < n; i++) {
        const v = (voiceBuf[i] as number) * voiceGain
        l[i] = v
        s[i] = v * voiceSend
      }
      finish("vocals", l, l.slice(), s, false)
    }
    if (masterOptions.crackle > 0) finish("vinyl", new Float32Array(n), new Float32Array(n), null, true)
  }
  return { left, right, score, spec, tags: [spec.tags, ...vocalTag].join(", "), voice: voiceBuf, stems }
}

export async function renderTrack(
  request: EngineRequest,
  taskId: string,
  index: number,
  options: RenderOptions = {}
): Promise<EngineTrack> {
  return finishTrack(request, index, renderAudio(request, taskId, index, options))
}

/** Encodes a rendered take (its MP3 also to `sink`, piece by piece, as it is made) and draws its cover. */
export async function finishTrack(
  request: EngineRequest,
  index: number,
  audio: RenderedAudio,
  sink?: Mp3Sink
): Promise<EngineTrack> {
  const mp3 = await encodeMp3(audio.left, audio.right, audio.score.richness < 0.5 ? 128 : 192, sink)
  const png = drawCover(request.title, request.style, audio.spec.genre.name, index)
  const sung = audio.score.vocal.length > 0
  return {
    index,
    mp3,
    png,
    duration: Math.round((audio.left.length / SR) * 1000) / 1000,
    title: request.title,
    lyrics: sung ? request.lyrics : null,
    tags: audio.tags
  }
}

export { CEILING }
