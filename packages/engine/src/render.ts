// One take, end to end: parse the style, compose, synthesize every part, mix, master,
// encode MP3 and draw the cover. Synchronous DSP (except the WASM encoder start-up);
// this is what each worker thread runs.

import { compose, type DrumHit, type NoteEvent, type Part, type Score } from "./compose.ts"
import { drawCover } from "./cover.ts"
import type { Genre } from "./genres.ts"
import { ScoreLoudness, openingToWhole, stepPowers, type Layer, type Sounding } from "./loudness-ahead.ts"
import {
  CEILING,
  LOUDNESS_WINDOW,
  Mastering,
  Reverb,
  TARGET_LUFS,
  master,
  reverb,
  sidechain,
  type MasterOptions,
  type MasterTrace
} from "./mix.ts"
import { Mp3Stream, encodeMp3, type Mp3Sink } from "./mp3.ts"
import { Rng } from "./rng.ts"
import { parseStyle, type StyleSpec } from "./style.ts"
import { BASS_PROGRAM, DRUM_HOLD, KIT_PROGRAM, PROGRAM, drumKey, midiVelocity } from "./soundfont/programs.ts"
import { NotePlayer, type PlayedNote } from "./soundfont/sampler.ts"
import type { KitFlavour } from "./synth/drums.ts"
import { Noise, SR, highpassInPlace, panGains, softClip } from "./synth/dsp.ts"
import { RunningAirLift, RunningHighpass, RunningLowpass, RunningShelf } from "./synth/dsp.ts"
import { renderNote, type BassVoice, type InstrumentContext } from "./synth/instruments.ts"
import { drumEnergy, noteEnvelope, notePowers } from "./note-loudness.ts"
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

/** How far the synthesis runs ahead of the mix: a part's level is decided from its first this many samples. */
const LEVEL_WINDOW = Math.round(2 * SR)
/** How long before its first note the voice may sound (a breath, a consonant), at most. */
const VOICE_LEAD = SR

/** The synthesis's step: every part plays the notes struck in it, then the mix takes what is final. */
const STEP = 1 << 14

/** Where the mix goes as it is made: samples `from` to `to` of `left` and `right` are final. */
export type MixBlocks = (left: Float32Array, right: Float32Array, from: number, to: number) => void

/**
 * One part of the band, synthesized forward in time into a buffer of its own: `playTo(t)` plays
 * every note struck before sample `t` and runs the part's own filters up to it, so the part is
 * final up to `t`.
 */
class PartTrack {
  readonly buf: Float32Array
  /** The first sample the part can sound at (the take's length when it never does). */
  readonly first: number
  private readonly notes: ReadonlyArray<NoteEvent>
  private next = 0
  private readonly player: NotePlayer | null
  private readonly filters: ReadonlyArray<(buf: Float32Array, from: number, to: number) => void>
  private readonly echo: number
  private filteredTo = 0
  readonly part: Part
  /** What the score says of the part's power, step by step (loudness-ahead.ts). */
  readonly steps: Float64Array
  private readonly ctx: InstrumentContext

  constructor(part: Part, genre: Genre, score: Score, seconds: number, ctx: InstrumentContext, n: number) {
    this.part = part
    this.ctx = ctx
    this.buf = new Float32Array(n)
    const synthetic = synthesized(genre, part.instrument)
    // By onset, stable: the notes struck in a step are played in the score's order.
    this.notes = part.notes.filter((note) => note.start < seconds).sort((a, b) => onsetOf(a) - onsetOf(b))
    this.first = this.notes.length === 0 ? n : Math.min(n, onsetOf(this.notes[0] as NoteEvent))
    this.steps = stepPowers(soundingsOf(part, genre, ctx, synthetic), n)
    const filters: Array<(buf: Float32Array, from: number, to: number) => void> = []
    if (synthetic) {
      this.player = null
      if (part.instrument === "eguitar") {
        // Amp and cabinet: high-pass, hard drive, then roll off the fizz.
        const drive = genre.name === "metal" ? 14 : 7
        const high = new RunningHighpass(90)
        const low1 = new RunningLowpass(3800)
        const low2 = new RunningLowpass(4500)
        filters.push(
          (b, from, to) => high.run(b, from, to),
          (b, from, to) => {
            for (let i = from; i < to; i++) b[i] = softClip((b[i] as number) * drive)
          },
          (b, from, to) => low1.run(b, from, to),
          (b, from, to) => low2.run(b, from, to)
        )
      }
    } else {
      // The notes the MIDI export writes, played by the GM bank's recording of the instrument.
      const played: PlayedNote[] = part.notes.map((note) => ({
        start: note.start,
        end: note.start + note.dur,
        key: note.pitch,
        velocity: midiVelocity(note.vel)
      }))
      // Mono: the part is panned again below, and the bank's instruments are mono recordings.
      this.player = new NotePlayer(played, programOf(genre, part.instrument), false, { mono: this.buf })
      // Above 4 kHz the bank's recordings carry hammer, pick and bow noise at full level; a mix
      // engineer tucks it under the voice (the accompaniment more than the lead), so the air is
      // there but the bands fall.
      const shelf =
        part.role === "lead" || part.role === "bass" ? new RunningShelf(4000, 0.45) : new RunningShelf(2500, 0.3)
      filters.push((b, from, to) => shelf.run(b, from, to))
    }
    this.filters = filters
    // Dotted-eighth echo, the synthwave/trance signature.
    this.echo =
      (part.role === "lead" || part.role === "arp") && genre.space >= 0.5 && score.richness > 0.5
        ? Math.round(0.75 * (60 / score.bpm) * SR)
        : 0
  }

  playTo(to: number): void {
    if (this.player !== null) this.player.playTo(to)
    else {
      while (this.next < this.notes.length && onsetOf(this.notes[this.next] as NoteEvent) < to) {
        renderNote(this.part.instrument, this.notes[this.next] as NoteEvent, this.buf, this.ctx)
        this.next++
      }
    }
    const from = this.filteredTo
    if (to <= from) return
    for (const filter of this.filters) filter(this.buf, from, to)
    const d = this.echo
    if (d > 0)
      for (let i = Math.max(d, from); i < to; i++)
        this.buf[i] = (this.buf[i] as number) + (this.buf[i - d] as number) * 0.32
    this.filteredTo = to
  }
}

/**
 * A part's notes as the score has them: each as loud as its instrument's note is, step by step,
 * held as long as it is held, as hard as it is struck (the engine's synthesis is linear in
 * velocity; the bank's recordings fall about as its square, the SoundFont's default curve).
 */
function soundingsOf(part: Part, genre: Genre, ctx: InstrumentContext, synthetic: boolean): Sounding[] {
  if (part.notes.length === 0) return []
  const pitches = part.notes.map((note) => note.pitch).sort((a, b) => a - b)
  const pitch = pitches[pitches.length >> 1] as number
  const envelope = noteEnvelope(
    synthetic
      ? { instrument: part.instrument, bass: ctx.bass, bright: ctx.bright }
      : { program: programOf(genre, part.instrument) },
    pitch
  )
  return part.notes.map((note) => ({
    start: note.start,
    powers: notePowers(envelope, note.dur, synthetic ? note.vel : (midiVelocity(note.vel) / 127) ** 2)
  }))
}

/** The drum hits as the score has them: each its key's energy through the kit's colour, as hard as it is struck. */
function drumSoundings(score: Score, kit: number): Sounding[] {
  return score.drums.map((h) => {
    const amplitude = (midiVelocity(h.vel) / 127) ** 2
    // A hit is heard over about three steps.
    const power = (amplitude * amplitude * drumEnergy(kit, drumKey(h), METALS.has(h.kind))) / 3
    return { start: h.time, powers: [power, power, power] }
  })
}

/** The sample a note is struck on, as the synthesizers place it. */
function onsetOf(note: NoteEvent): number {
  return Math.max(0, Math.round(note.start * SR))
}

/**
 * The drum kit, played forward in time like a part: the skins, and the hats and cymbals on their own
 * pass mixed under them as a drummer's overheads are, then the kit's colour.
 */
class DrumTrack {
  readonly left: Float32Array
  readonly right: Float32Array
  readonly first: number
  readonly steps: Float64Array
  private readonly skins: NotePlayer
  private readonly metals: NotePlayer
  private readonly metalL: Float32Array
  private readonly metalR: Float32Array
  private readonly shelves: ReadonlyArray<RunningShelf>
  private readonly airs: ReadonlyArray<RunningAirLift>
  private doneTo = 0

  constructor(score: Score, n: number) {
    this.left = new Float32Array(n)
    this.right = new Float32Array(n)
    this.metalL = new Float32Array(n)
    this.metalR = new Float32Array(n)
    const played = (h: DrumHit): PlayedNote => ({
      start: h.time,
      end: h.time + DRUM_HOLD,
      key: drumKey(h),
      velocity: midiVelocity(h.vel)
    })
    const kit = KIT_PROGRAM[kitFor(score.genre)]
    this.skins = new NotePlayer(score.drums.filter((h) => !METALS.has(h.kind)).map(played), kit, true, {
      left: this.left,
      right: this.right
    })
    this.metals = new NotePlayer(score.drums.filter((h) => METALS.has(h.kind)).map(played), kit, true, {
      left: this.metalL,
      right: this.metalR
    })
    let first = n
    for (const h of score.drums) first = Math.min(first, Math.max(0, Math.round(h.time * SR)))
    this.first = first
    this.steps = stepPowers(drumSoundings(score, kit), n)
    // Hats and cymbals darker (3 kHz shelf), then the whole kit (the snare's wires are broadband
    // noise too) at 2.5 kHz, each channel with its own filter state.
    this.shelves = [
      new RunningShelf(3000, 0.6),
      new RunningShelf(3000, 0.6),
      new RunningShelf(2500, 0.4),
      new RunningShelf(2500, 0.4)
    ]
    this.airs = [new RunningAirLift(10000, 4.5), new RunningAirLift(10000, 4.5)]
  }

  playTo(to: number): void {
    this.skins.playTo(to)
    this.metals.playTo(to)
    const from = this.doneTo
    if (to <= from) return
    const [metalShelfL, metalShelfR, kitShelfL, kitShelfR] = this.shelves as [
      RunningShelf,
      RunningShelf,
      RunningShelf,
      RunningShelf
    ]
    metalShelfL.run(this.metalL, from, to)
    metalShelfR.run(this.metalR, from, to)
    // The kits record hats and cymbals at the level of the snare, and their hiss would cover
    // everything between 1 and 16 kHz (the mix measures noise-like and its top bands rise).
    const metalGain = 0.4
    for (let i = from; i < to; i++) {
      this.left[i] = (this.left[i] as number) + (this.metalL[i] as number) * metalGain
      this.right[i] = (this.right[i] as number) + (this.metalR[i] as number) * metalGain
    }
    kitShelfL.run(this.left, from, to)
    kitShelfR.run(this.right, from, to)
    // ...but the sizzle above 10 kHz, which tells a groove from a strummed chord, comes back.
    ;(this.airs[0] as RunningAirLift).run(this.left, from, to)
    ;(this.airs[1] as RunningAirLift).run(this.right, from, to)
    this.doneTo = to
  }
}

/** The take's layers at the levels the mix balances them to, for the master's look ahead (loudness-ahead.ts). */
function layersOf(
  score: Score,
  parts: ReadonlyArray<PartTrack>,
  drums: DrumTrack | null,
  voice: Float64Array | null
): Layer[] {
  const layers: Layer[] = parts.map(({ part: p, steps }) => {
    const weight = p.role === "lead" && score.vocal.length === 0 ? 1 / Math.sqrt(score.backing) : score.backing
    const level =
      Math.pow(10, ROLE_DB[p.role] / 20) *
      (p.gain / 0.5) *
      weight *
      (p.role === "chords" && score.parts.length > 4 ? 0.85 : 1)
    return { power: level * level, steps }
  })
  if (drums !== null) {
    const level = Math.pow(10, (score.genre.drums === "ambient" ? -30 : -20) / 20) * score.backing
    layers.push({ power: level * level, steps: drums.steps })
  }
  if (voice !== null) layers.push({ power: Math.pow(10, -14.5 / 10) / score.backing, steps: voice })
  return layers
}

/**
 * Synthesizes, mixes and masters a composed take; with `withStems`, also each stem as heard in the
 * mix. The take is made forward in time (decision 0129): the band is synthesized a step at a time,
 * the mix follows it `LEVEL_WINDOW` behind (each part's level is decided from its first seconds),
 * and the master follows the mix, so `blocks` receives the take's final samples, in order, from
 * its first seconds on.
 */
export function mixTake(take: Take, options: RenderOptions, withStems: boolean, blocks?: MixBlocks): RenderedAudio {
  const { spec, score, weirdness } = take
  const takeRng = take.rng
  const seconds = Math.min(score.duration, options.maxSeconds ?? Infinity)
  const n = Math.max(SR, Math.round(seconds * SR))
  const left = new Float32Array(n)
  const right = new Float32Array(n)
  const send = new Float32Array(n)
  const voiceBuf = new Float32Array(n)
  // Seeds in the order they were always drawn: the noise, the voice, the master.
  const noise = new Noise(takeRng.seed32())
  const voiceSeed = takeRng.seed32()
  const genre = score.genre
  const ctx: InstrumentContext = {
    noise,
    weird: weirdness,
    bass: bassVoiceFor(genre),
    bright: Math.min(1, 0.35 + 0.45 * spec.energy + 0.25 * score.richness)
  }
  const spaceScale = score.richness < 0.5 ? 0.5 : 1
  const band = new Map<string, BandStem>()
  const parts = score.parts.map((p) => new PartTrack(p, genre, score, seconds, ctx, n))
  /** Each part's gain and pans, once decided. */
  const levels = new Map<
    PartTrack,
    { readonly gain: number; readonly gl: number; readonly gr: number; readonly send: number }
  >()
  const drums = score.drums.length > 0 ? new DrumTrack(score, n) : null
  let drumGain = 0
  let drumSend = 0
  let drumsDecided = false

  // The voice is sung whole (its level is its whole), once the mix comes near its first note.
  const sung = score.vocal.length > 0 && options.muteVoice !== true
  let firstVocal = n
  if (sung)
    for (const v of [...score.vocal, ...score.harmony]) firstVocal = Math.min(firstVocal, Math.round(v.start * SR))
  let voiceSung = !sung
  let voiceGain = 0
  let voiceSend = 0
  const sing = (): void => {
    voiceSung = true
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
  const space = new Reverb(send, left, right, genre.space, 1)
  let ahead: ScoreLoudness | null = null
  const mastering = new Mastering(left, right, masterOptions, trace, LOUDNESS_WINDOW, (to) => {
    ahead ??= new ScoreLoudness(
      layersOf(
        score,
        parts,
        drums,
        sung
          ? stepPowers(
              score.vocal.map((v) => ({
                start: v.start,
                powers: new Float64Array(Math.max(1, Math.round(v.dur * 10))).fill(1)
              })),
              n
            )
          : null
      ),
      n
    )
    return ahead.aheadOf(to)
  })

  /** Decides a part's level from its first `LEVEL_WINDOW` samples, which the synthesis has played. */
  const levelOf = (track: PartTrack) => {
    const p = track.part
    // The opening's level, scaled by what the score says the whole part plays at.
    const end = Math.min(n, track.first + LEVEL_WINDOW)
    const rms = rmsOf(track.buf, track.first, end) * openingToWhole(track.steps, track.first, end)
    // The lead is what audio_weight balances the band against; everything else is "the band".
    const weight = p.role === "lead" && score.vocal.length === 0 ? 1 / Math.sqrt(score.backing) : score.backing
    const gain =
      rms <= 0
        ? 0
        : Math.min(40, Math.pow(10, ROLE_DB[p.role] / 20) / rms) *
          (p.gain / 0.5) *
          weight *
          (p.role === "chords" && score.parts.length > 4 ? 0.85 : 1)
    const [gl, gr] = panGains(p.pan * (score.richness > 0.5 ? 1 : 0.5))
    return { gain, gl, gr, send: p.send * genre.space * spaceScale }
  }

  /** Mixes samples `from` to `to` (final in every part) into the bus, and the bus into the master. */
  const mixRange = (from: number, to: number): void => {
    for (const track of parts) {
      if (track.first >= to) continue
      let level = levels.get(track)
      if (level === undefined) {
        level = levelOf(track)
        levels.set(track, level)
      }
      const { gain, gl, gr } = level
      if (gain === 0) continue
      const sendGain = level.send
      const part = track.buf
      for (let i = Math.max(from, track.first); i < to; i++) {
        const raw = part[i] as number
        if (raw === 0) continue // most parts are silent most of the time
        const x = raw * gain
        left[i] = (left[i] as number) + x * gl
        right[i] = (right[i] as number) + x * gr
        send[i] = (send[i] as number) + x * sendGain
      }
      if (withStems) {
        const name = STEM_OF[track.part.role]
        let stem = band.get(name)
        if (stem === undefined) {
          stem = { l: new Float32Array(n), r: new Float32Array(n), send: new Float32Array(n) }
          band.set(name, stem)
        }
        for (let i = Math.max(from, track.first); i < to; i++) {
          const x = (part[i] as number) * gain
          stem.l[i] = (stem.l[i] as number) + x * gl
          stem.r[i] = (stem.r[i] as number) + x * gr
          stem.send[i] = (stem.send[i] as number) + x * sendGain
        }
      }
    }
    if (genre.pump && score.kicks.length > 0) sidechain(left, right, score.kicks, 0.45, from, to)
    // Drum bus level: balanced by its RMS over its first seconds, like the parts.
    if (drums !== null && !drumsDecided && drums.first < to) {
      drumsDecided = true
      let e = 0
      let c = 0
      const end = Math.min(n, drums.first + LEVEL_WINDOW)
      for (let i = drums.first; i < end; i += 4) {
        const x = (drums.left[i] as number) + (drums.right[i] as number)
        if (x !== 0) {
          e += x * x * 0.25
          c++
        }
      }
      const rms = c > 0 ? Math.sqrt(e / c) * openingToWhole(drums.steps, drums.first, end) : 0
      if (rms > 0) {
        drumGain = (Math.pow(10, (genre.drums === "ambient" ? -30 : -20) / 20) * score.backing) / rms
        drumSend = 0.08 * genre.space * spaceScale
      }
    }
    // One pass sums band, drums and voice and feeds the reverb send.
    const drumsL = drums?.left
    const drumsR = drums?.right
    for (let i = from; i < to; i++) {
      const dl = drumsL === undefined ? 0 : (drumsL[i] as number) * drumGain
      const dr = drumsR === undefined ? 0 : (drumsR[i] as number) * drumGain
      const v = (voiceBuf[i] as number) * voiceGain
      left[i] = (left[i] as number) + dl + v
      right[i] = (right[i] as number) + dr + v
      send[i] = (send[i] as number) + (dl + dr) * drumSend + v * voiceSend
    }
  }

  let synthTo = 0
  let mixedTo = 0
  let heardTo = 0
  while (heardTo < n) {
    if (synthTo < n) {
      synthTo = Math.min(n, synthTo + STEP)
      for (const track of parts) track.playTo(synthTo)
      drums?.playTo(synthTo)
    }
    // The mix follows the synthesis a level window behind, in whole reverb (even) samples.
    const mixTo = synthTo >= n ? n : Math.max(0, synthTo - LEVEL_WINDOW) & ~1
    // The voice is sung whole before the mix comes near its first note (a consonant starts a little before it).
    if (!voiceSung && mixTo > firstVocal - VOICE_LEAD) sing()
    if (mixTo > mixedTo) {
      mixRange(mixedTo, mixTo)
      mixedTo = mixTo
    }
    const reverbTo = space.run(mixedTo)
    const masteredTo = mastering.run(reverbTo)
    if (masteredTo > heardTo) {
      blocks?.(left, right, heardTo, masteredTo)
      heardTo = masteredTo
    }
  }

  const vocalTag = score.vocal.length > 0 ? [`${score.voice === "f" ? "female" : "male"} vocals`] : []
  let stems: StemAudio[] | null = null
  if (trace !== null) {
    stems = []
    // Each stem goes through the same reverb and the same master, with the mix's own gain at every
    // sample: every stage is then linear, so the stems add up to the mix.
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
    // The band's stems are ducked as the bus was, before their reverb.
    if (genre.pump && score.kicks.length > 0)
      for (const stem of band.values()) sidechain(stem.l, stem.r, score.kicks, 0.45)
    if (drumGain > 0 && drums !== null) {
      const l = new Float32Array(n)
      const r = new Float32Array(n)
      const s = new Float32Array(n)
      for (let i = 0; i < n; i++) {
        const dl = (drums.left[i] as number) * drumGain
        const dr = (drums.right[i] as number) * drumGain
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
  return (await renderTake(request, taskId, index, options)).track
}

/** The MP3 bitrate of a take: the sparse, lo-fi ones need less. */
const kbpsOf = (score: Score): 128 | 192 => (score.richness < 0.5 ? 128 : 192)

/**
 * Renders a take and encodes its MP3 as it is mixed (decision 0129): the pieces reach `sink` from
 * the take's first seconds on, long before it is done. Returns the audio (for the PCM cache) and the track.
 */
export async function renderTake(
  request: EngineRequest,
  taskId: string,
  index: number,
  options: RenderOptions = {},
  sink?: Mp3Sink
): Promise<{ readonly audio: RenderedAudio; readonly track: EngineTrack }> {
  const take = composeTake(request, taskId, index)
  const mp3 = await Mp3Stream.open(kbpsOf(take.score), sink)
  const audio = mixTake(take, options, false, (left, right, from, to) => mp3.write(left, right, from, to))
  return { audio, track: trackOf(request, index, audio, mp3.end()) }
}

/** Encodes a rendered take (its MP3 also to `sink`, piece by piece, as it is made) and draws its cover. */
export async function finishTrack(
  request: EngineRequest,
  index: number,
  audio: RenderedAudio,
  sink?: Mp3Sink
): Promise<EngineTrack> {
  return trackOf(request, index, audio, await encodeMp3(audio.left, audio.right, kbpsOf(audio.score), sink))
}

function trackOf(request: EngineRequest, index: number, audio: RenderedAudio, mp3: Uint8Array): EngineTrack {
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
