// Takes composed from another track's sheet: a cover (the source's melody, chords, form and
// words in a new style), an instrumental (a new accompaniment under the source's sung melody),
// vocals (a melody composed on the source's chords and beat, sung over its band), and any
// take under a persona (the voice and palette of the persona's track). Composition only: the
// takes are rendered with `mixTake` like any other.

import { compose, type DrumHit, type NoteEvent, type Part, type Score, type VocalNote } from "../compose.ts"
import { barSeconds, type SectionPlan } from "../form.ts"
import type { Instrument } from "../genres.ts"
import { lineSyllables, parseLyrics, type ParsedLyrics } from "../lyrics.ts"
import { composeTake, knobs, requestKey, songIdentity, voiceFor, type Take } from "../render.ts"
import { Rng } from "../rng.ts"
import type { TrackReader } from "../splice.ts"
import { parseStyle, PC_NAMES, type StyleSpec } from "../style.ts"
import type { VoiceColour } from "../synth/voice/colour.ts"
import type { RenderOptions, TrackSource } from "../types.ts"
import { coverLine, coverVocal } from "./coverRhythm.ts"
import { sheetOf, type Sheet } from "./sheet.ts"
import { breakEnergy } from "./uploadSheet.ts"

/** What a persona lends a take: the voice's register, the palette, and the voice's own seeds. */
interface PersonaVoice {
  readonly voice: "m" | "f"
  readonly instruments: StyleSpec["instruments"]
  readonly named: StyleSpec["named"]
  /** The persona track's take rng, positioned where its mixer drew the voice's seeds. */
  readonly rng: Rng
  /** Of an upload's track: the brightness and vibrato heard in its voice. */
  readonly colour: VoiceColour | undefined
}

export function personaVoice(persona: TrackSource, options: RenderOptions, tracks: TrackReader): PersonaVoice {
  const take = (tracks.segmentsOf(persona, options)[0] as { readonly take: Take }).take
  const plain = {
    voice: take.score.voice,
    instruments: take.spec.instruments,
    named: take.spec.named,
    rng: take.rng,
    colour: take.voiceColour
  }
  // An upload's track: its stand-in take is never heard; the voice is the one listening heard in it.
  const heard = isUploadRoot(persona) ? (persona.upload?.transcription.voice ?? null) : null
  if (heard === null) return plain
  return {
    ...plain,
    voice: heard.register,
    colour: { brightness: heard.brightness, vibratoRate: heard.vibrato.rate, vibratoDepth: heard.vibrato.depth }
  }
}

/** The spec's tags with its tempo and key as they now are (the tags name both, second and third). */
function retag(spec: StyleSpec): string {
  const tags = spec.tags.split(", ")
  tags[1] = `${spec.bpm} bpm`
  tags[2] = `${PC_NAMES[spec.tonic] ?? "C"} ${spec.minor ? "minor" : "major"}`
  return tags.join(", ")
}

function withPersona(spec: StyleSpec, persona: PersonaVoice | null): StyleSpec {
  return persona === null ? spec : { ...spec, instruments: persona.instruments, named: persona.named }
}

/** A generation under a persona: its own song, sung in the persona's voice with the persona's palette. */
export function personaTake(source: TrackSource, options: RenderOptions, tracks: TrackReader): Take {
  const plain = composeTake(source.request, source.taskId, source.index)
  if (source.persona === undefined) return plain
  const persona = personaVoice(source.persona, options, tracks)
  const { spec } = songIdentity(source.request, source.taskId)
  const own = withPersona(spec, persona)
  const takeRng = new Rng(`take|${source.index}|${source.taskId}|${requestKey(source.request)}`)
  const k = knobs(source.request)
  const score = compose(
    {
      spec: own,
      lyrics: source.request.lyrics,
      instrumental: source.request.instrumental,
      model: source.request.model,
      voice: persona.voice,
      ...k
    },
    takeRng
  )
  return { spec: own, score, weirdness: k.weirdness, rng: persona.rng, voiceColour: persona.colour }
}

/** An upload's own track (not an extension of it): its audio is not a take. */
export const isUploadRoot = (source: TrackSource): boolean =>
  source.extends === undefined && source.upload !== undefined

const CENTRE = { m: 55, f: 67 } as const

function scaled<N extends NoteEvent>(notes: ReadonlyArray<N>, ratio: number, shift: number): N[] {
  return notes.map((n) => ({ ...n, start: n.start * ratio, dur: n.dur * ratio, pitch: n.pitch + shift }))
}

/**
 * Semitones from one key to another, the nearer way (-5..6): a named key of the other mode moves
 * the source to that key's relative, so its chords keep their places in the scale (a major song
 * asked for in C minor is played in E flat major's chords, C minor's own).
 */
function transposition(
  from: { readonly tonic: number; readonly minor: boolean },
  to: { readonly tonic: number; readonly minor: boolean }
): number {
  const major = (k: typeof from) => (k.minor ? k.tonic + 3 : k.tonic)
  const up = (((major(to) - major(from)) % 12) + 12) % 12
  return up > 6 ? up - 12 : up
}

/** Hats, ride and shaker only: what a cover's drummer keeps playing in a break. */
const breakDrums: ReadonlySet<DrumHit["kind"]> = new Set(["hat", "ride", "shaker"])

/**
 * The source's breaks (its quiet runs, planned at `breakEnergy`) stay breaks: the kit but the
 * cymbals keeping time stops there, and with the kick the sidechain it pumps.
 */
function withBreaks(score: Score, plan: ReadonlyArray<SectionPlan>, bar: number): Score {
  const spans: Array<readonly [number, number]> = []
  let at = 0
  for (const s of plan) {
    if (s.kind === "bridge" && s.energy <= breakEnergy) spans.push([at * bar, (at + s.bars) * bar])
    at += s.bars
  }
  if (spans.length === 0) return score
  const inBreak = (t: number) => spans.some(([from, to]) => t >= from - 1e-6 && t < to - 1e-6)
  return {
    ...score,
    drums: score.drums.filter((d) => breakDrums.has(d.kind) || !inBreak(d.time)),
    kicks: score.kicks.filter((t) => !inBreak(t))
  }
}

/**
 * A cover or an instrumental: the source's form and chords played by a band in the new style,
 * with the source's sung melody (and words) and lead line on the same bars. At `audio_weight`
 * 0.5 or more the band keeps the source's groove (drum pattern, swing, bass and comping rhythm)
 * in the new style's sounds and the tune its rhythm; below it, the new style's own groove, and
 * a cover's tune moves phrase by phrase to the new style's rhythm (coverRhythm.ts). A cover takes
 * the style's tempo when it names one, and may change voice; an instrumental keeps both.
 */
export function arrangedTake(
  source: TrackSource,
  kind: "cover" | "instrumental",
  options: RenderOptions,
  tracks: TrackReader
): Take {
  const sheet = sheetOf((source.derives as NonNullable<TrackSource["derives"]>).source, options, tracks)
  const request = source.request
  const k = knobs(request)
  const persona = source.persona === undefined ? null : personaVoice(source.persona, options, tracks)
  const styled = parseStyle(
    request.style,
    request.negative_tags,
    new Rng(`${kind}|${source.taskId}|${requestKey(request)}`),
    k.styleWeight
  )
  const groove = sheet.spec.genre
  const genre =
    k.audioWeight >= 0.5
      ? { ...styled.genre, drums: groove.drums, swing: groove.swing, bass: groove.bass, comp: groove.comp }
      : styled.genre
  const bpm = kind === "cover" && styled.bpmExplicit ? styled.bpm : sheet.spec.bpm
  // The source's key, unless a cover's request names another: then everything moves by the step between them.
  const key = kind === "cover" && styled.keyExplicit ? styled : sheet.spec
  const step = transposition(sheet.spec, key)
  const base: StyleSpec = {
    ...withPersona(styled, persona),
    genre,
    bpm,
    tonic: key.tonic,
    minor: key.minor,
    keyExplicit: true
  }
  const spec: StyleSpec = { ...base, tags: retag(base) }
  const voice = kind === "instrumental" ? sheet.voice : (persona?.voice ?? request.vocal_gender ?? sheet.voice)
  const takeRng = new Rng(`${kind}|take|${source.index}|${source.taskId}|${requestKey(request)}`)
  const plan: SectionPlan[] = sheet.plan.map((s) => ({ ...s, lines: [] }))
  const chords = sheet.chords.map((c) => ({ ...c, root: 48 + ((c.root + step + 120) % 12) }))
  const composed = compose(
    { spec, lyrics: null, instrumental: true, model: request.model, voice, ...k, plan, chords },
    takeRng
  )
  const score = withBreaks(composed, plan, barSeconds(bpm))
  const ratio = barSeconds(bpm) / sheet.bar
  const shift = CENTRE[voice] - CENTRE[sheet.voice] + step
  // A cover's tune takes the rhythm audio_weight asks for (coverRhythm.ts); an instrumental keeps the source's.
  const rhythm = {
    bar: barSeconds(bpm),
    genre: styled.genre,
    audioWeight: kind === "cover" ? k.audioWeight : 1,
    seed: `cover|${source.index}|${source.taskId}|${requestKey(request)}`
  }
  const sung = coverVocal(scaled(sheet.vocal, ratio, shift), scaled(sheet.harmony, ratio, shift), sheet.plan, rhythm)
  const vocal: VocalNote[] = sung.vocal
  const lead = coverLine(scaled(sheet.lead, ratio, step), sheet.chords.length, rhythm)
  const leadInstrument: Instrument = score.parts.find((p) => p.role === "lead")?.instrument ?? styled.genre.lead
  // An instrumental of an upload is laid under the upload itself (song.ts), which carries its tune.
  const underUpload =
    kind === "instrumental" && isUploadRoot((source.derives as NonNullable<TrackSource["derives"]>).source)
  const leadPart: Part[] =
    lead.length === 0 || underUpload
      ? []
      : [
          {
            role: "lead",
            instrument: leadInstrument,
            notes: lead,
            pan: 0.1,
            gain: vocal.length > 0 ? 0.38 : 0.46,
            send: 0.35
          }
        ]
  const parts = [...score.parts.filter((p) => p.role !== "lead"), ...leadPart]
  return {
    spec,
    score: { ...score, parts, vocal, harmony: sung.harmony, voice },
    weirdness: k.weirdness,
    rng: persona?.rng ?? takeRng,
    voiceColour: kind === "instrumental" ? undefined : persona?.colour
  }
}

/**
 * A form with `lyrics` laid over its sections in order, two bars a line (four for long lines),
 * one when they would not all fit; intros and outros sing only when even that is not enough.
 */
export function withLines(plan: ReadonlyArray<SectionPlan>, lyrics: ParsedLyrics, everywhere: boolean): SectionPlan[] {
  const lines = lyrics.sections.flatMap((s) => s.lines)
  const long = lines.some((l) => lineSyllables(l).length > 14)
  const attempt = (barsPerLine: number, all: boolean): { readonly plan: SectionPlan[]; readonly placed: number } => {
    let placed = 0
    const out = plan.map((s) => {
      const sings = all || (s.kind !== "intro" && s.kind !== "outro")
      const room = sings ? Math.floor(s.bars / barsPerLine) : 0
      const own = lines.slice(placed, placed + room)
      placed += own.length
      return { ...s, lines: own, barsPerLine }
    })
    return { plan: out, placed }
  }
  const tries: ReadonlyArray<readonly [number, boolean]> = [
    [long ? 4 : 2, everywhere],
    [2, everywhere],
    [1, everywhere],
    [1, true]
  ]
  let best = attempt(1, true)
  for (const [barsPerLine, all] of tries) {
    const tried = attempt(barsPerLine, all)
    if (tried.placed === lines.length) return tried.plan
    if (tried.placed > best.placed) best = tried
  }
  return best.plan
}

/** Vocals: `lyrics` on a melody composed over the source's chords, on its beat, sung over its band. */
export function vocalsTake(source: TrackSource, options: RenderOptions, tracks: TrackReader): Take {
  const sheet: Sheet = sheetOf((source.derives as NonNullable<TrackSource["derives"]>).source, options, tracks)
  const request = source.request
  const k = knobs(request)
  const persona = source.persona === undefined ? null : personaVoice(source.persona, options, tracks)
  const voice = persona?.voice ?? voiceFor(request, new Rng(`vocals|${source.taskId}|${requestKey(request)}`))
  const plan = withLines(sheet.plan, parseLyrics(request.lyrics), false)
  const takeRng = new Rng(`vocals|take|${source.index}|${source.taskId}|${requestKey(request)}`)
  const sung = compose(
    {
      spec: sheet.spec,
      lyrics: request.lyrics,
      instrumental: false,
      model: request.model,
      voice,
      ...k,
      plan,
      chords: sheet.chords
    },
    takeRng
  )
  // Over an upload the band is the upload's own audio (song.ts lays the voice on it): the take is the voice alone.
  const derived = (source.derives as NonNullable<TrackSource["derives"]>).source
  const band = isUploadRoot(derived) ? { parts: [], drums: [], kicks: [] } : {}
  return {
    spec: sheet.spec,
    score: { ...sheet.score, ...band, vocal: sung.vocal, harmony: sung.harmony, voice },
    weirdness: k.weirdness,
    rng: persona?.rng ?? takeRng,
    voiceColour: persona?.colour
  }
}
