// Song tools: a track rendered again from its TrackSource alone, as WAV, stems, MIDI or timed
// lyrics, and extensions (the source up to a second, then a continuation). A track is a chain
// of takes: the original take, then one continuation per extension, each heard from the second
// its extension continued at, on the same bar grid (all takes share the root's tempo).

import { compose, type Part, type Score } from "./compose.ts"
import { layOnUpload, layStemsOnUpload, UPLOAD_STEM } from "./listen/overUpload.ts"
import { uploadGridStart, uploadMidi, uploadPcm } from "./listen/uploadRoot.ts"
import { drawCover } from "./cover.ts"
import { barSeconds, planContinuation } from "./form.ts"
import { parseLyrics } from "./lyrics.ts"
import { writeMidi, type MidiLyricInput, type MidiNoteInput, type MidiTrackInput } from "./midi.ts"
import { encodeMp3, type Mp3Sink } from "./mp3.ts"
import { cacheKey, readCached, writeCached, type PcmCacheOptions } from "./pcm-cache.ts"
import {
  editPcm,
  editSegments,
  editStems,
  identityOf,
  isUploadRoot,
  sourceTake,
  uploadStandIn
} from "./arrange/index.ts"
import { spliceStems, spliceStereo, type NamedStereo, type Segment, type Stereo, type TrackReader } from "./splice.ts"
import { DRUM_HOLD, KIT_PROGRAM, drumKey, midiVelocity } from "./soundfont/programs.ts"
import { kitFor, programOf, knobs, mixTake, requestKey, type StemAudio, type Take } from "./render.ts"
import { Rng } from "./rng.ts"
import { PC_NAMES } from "./style.ts"
import { SR } from "./synth/dsp.ts"
import type {
  EngineExport,
  EngineFile,
  EngineRequest,
  EngineTrack,
  ExportFormat,
  RenderOptions,
  TimedWord,
  TrackSource,
  UploadRoot
} from "./types.ts"
import { dequantize, quantize, wavFile, wavSamples } from "./wav.ts"

export { CROSSFADE_SECONDS, spliceStereo, type Segment, type Stereo } from "./splice.ts"

/** A continuation runs at least this long after the second it continues at. */
export const MIN_CONTINUATION_SECONDS = 24

/** This module's reading of tracks, handed to the arrangers (src/arrange/), which do not import it. */
const reader: TrackReader = {
  segmentsOf: (source, options) => segmentsOf(source, options),
  trackWav: (source, options, cache) => trackWav(source, options, cache)
}

function rootOf(source: TrackSource): TrackSource {
  return source.extends === undefined ? source : rootOf(source.extends.source)
}

/** Length in seconds of a take as the mixer renders it. */
function renderedSeconds(score: Score, options: RenderOptions): number {
  const seconds = Math.min(score.duration, options.maxSeconds ?? Infinity)
  return Math.max(SR, Math.round(seconds * SR)) / SR
}

/** The takes a track is made of, in order. Composition only: no sound is made here. */
export function segmentsOf(source: TrackSource, options: RenderOptions): ReadonlyArray<Segment> {
  if (source.extends === undefined && source.upload !== undefined) {
    // An upload's audio is not a take: this one, composed in its tempo and key on the upload's own
    // form and length, only gives what is made from it (a cover, a continuation) its bar grid and
    // sections. It is never heard.
    const take = uploadStandIn(source)
    return [{ take, offset: 0, from: 0, until: source.upload.duration, options }]
  }
  if (source.extends === undefined && source.derives?.kind === "edit") return editSegments(source, options, reader)
  if (isLayeredOnUpload(source)) {
    // Laid on the upload from its first beat, and heard as long as the upload lasts.
    const take = sourceTake(source, options, reader)
    const upload = (source.derives as NonNullable<TrackSource["derives"]>).source.upload as UploadRoot
    return [{ take, offset: uploadGridStart(upload), from: 0, until: upload.duration, options }]
  }
  if (source.extends === undefined) {
    const take = sourceTake(source, options, reader)
    return [{ take, offset: 0, from: 0, until: renderedSeconds(take.score, options), options }]
  }
  if (!Number.isFinite(source.extends.continueAt))
    throw new Error(`continueAt must be a number of seconds, got ${source.extends.continueAt}`)
  const parent = segmentsOf(source.extends.source, options)
  const parentEnd = (parent[parent.length - 1] as Segment).until
  const continueAt = Math.min(parentEnd, Math.max(1 / SR, source.extends.continueAt))
  const { take, offset } = continuationTake(source, parent, continueAt, options)
  const own: RenderOptions = { muteVoice: options.muteVoice }
  const kept = parent.filter((s) => s.from < continueAt).map((s) => ({ ...s, until: Math.min(s.until, continueAt) }))
  return [...kept, { take, offset, from: continueAt, until: offset + renderedSeconds(take.score, own), options: own }]
}

/** Track time of a root track's first bar line: an upload's first beat (also under a layer laid on it), else 0. */
function gridStartOf(root: TrackSource): number {
  if (root.upload !== undefined) return uploadGridStart(root.upload)
  if (isLayeredOnUpload(root))
    return uploadGridStart((root.derives as NonNullable<TrackSource["derives"]>).source.upload as UploadRoot)
  return 0
}

/** The continuation of an extension, composed on the source's bar grid from the bar `continueAt` falls in. */
function continuationTake(
  source: TrackSource,
  parent: ReadonlyArray<Segment>,
  continueAt: number,
  options: RenderOptions
): { take: Take; offset: number } {
  const ext = source.extends as NonNullable<TrackSource["extends"]>
  const root = rootOf(source)
  const { spec, voice } = identityOf(root, options, reader)
  const bar = barSeconds(spec.bpm)
  const grid = gridStartOf(root)
  const offset = grid + Math.floor(Math.max(0, continueAt - grid) / bar + 1e-9) * bar
  const at = [...parent].reverse().find((s) => s.from <= continueAt) ?? (parent[0] as Segment)
  const local = continueAt - at.offset
  const leadIn = at.take.score.sections.find((s) => s.start <= local && local < s.end)?.kind ?? "verse"
  const request = source.request
  const given = request.lyrics !== null && request.lyrics.trim() !== "" && request.lyrics !== ext.source.request.lyrics
  const sourceLyrics = parseLyrics(ext.source.request.lyrics)
  const reprise =
    request.instrumental || sourceLyrics.sections.length === 0
      ? []
      : ((
          [...sourceLyrics.sections].reverse().find((s) => s.kind === "chorus" && s.lines.length > 0) ??
          [...sourceLyrics.sections].reverse().find((s) => s.lines.length > 0)
        )?.lines ?? [])
  const plan = planContinuation({
    bpm: spec.bpm,
    unit: spec.genre.progressions[0]?.length ?? 4,
    leadIn,
    lyrics: given ? parseLyrics(request.lyrics) : null,
    reprise,
    minSeconds: continueAt - offset + MIN_CONTINUATION_SECONDS
  })
  const rng = new Rng(`extend|${source.index}|${source.taskId}|${requestKey(request)}|${continueAt}`)
  const k = knobs(request)
  const score = compose(
    { spec, lyrics: request.lyrics, instrumental: request.instrumental, model: request.model, voice, ...k, plan },
    rng
  )
  return { take: { spec, score, weirdness: k.weirdness, rng }, offset }
}

// ---------------------------------------------------------------- audio

/**
 * The track as a WAV file: the cached one when there is one, else rendered again (and cached).
 * An extension starts from its source's 16-bit PCM, so its first seconds are the source's WAV
 * sample for sample whether or not the source was cached.
 */
export async function trackWav(
  source: TrackSource,
  options: RenderOptions,
  cache: PcmCacheOptions | null
): Promise<Uint8Array> {
  const key = cacheKey(source, options)
  const cached = readCached(cache, key)
  if (cached !== null) return cached
  const pcm =
    source.extends !== undefined
      ? (await extensionAudio(source, options, cache)).pcm
      : source.upload !== undefined
        ? await uploadPcm(source.upload)
        : source.derives?.kind === "edit"
          ? await editPcm(source, options, cache, reader)
          : isLayeredOnUpload(source)
            ? await layeredOnUploadPcm(source, options, cache)
            : renderOriginalPcm(source, options)
  const wav = wavFile(pcm)
  await writeCached(cache, key, wav)
  return wav
}

/** Vocals or an accompaniment made on an upload: a layer laid on the upload's own audio. */
const isLayeredOnUpload = (source: TrackSource): boolean =>
  source.extends === undefined &&
  (source.derives?.kind === "vocals" || source.derives?.kind === "instrumental") &&
  isUploadRoot(source.derives.source)

/** Its stems: the layer's, and the upload's audio as the stem `upload`, each at its gain in the mix. */
async function layeredOnUploadStems(
  source: TrackSource,
  options: RenderOptions,
  cache: PcmCacheOptions | null
): Promise<ReadonlyArray<StemAudio>> {
  const derived = (source.derives as NonNullable<TrackSource["derives"]>).source
  const bed = dequantize(wavSamples(await trackWav(derived, options, cache)))
  const layer = mixTake(sourceTake(source, options, reader), options, true)
  return layStemsOnUpload(derived.upload as UploadRoot, bed, layer, layer.stems ?? [])
}

/** Vocals or an accompaniment of an upload: rendered alone, and laid with the upload's own audio. */
async function layeredOnUploadPcm(
  source: TrackSource,
  options: RenderOptions,
  cache: PcmCacheOptions | null
): Promise<Int16Array> {
  const derived = (source.derives as NonNullable<TrackSource["derives"]>).source
  const bed = dequantize(wavSamples(await trackWav(derived, options, cache)))
  const layer = mixTake(sourceTake(source, options, reader), options, false)
  const mix = layOnUpload(derived.upload as UploadRoot, bed, layer)
  return quantize(mix.left, mix.right)
}

function renderOriginalPcm(source: TrackSource, options: RenderOptions): Int16Array {
  const audio = mixTake(sourceTake(source, options, reader), options, false)
  return quantize(audio.left, audio.right)
}

async function extensionAudio(
  source: TrackSource,
  options: RenderOptions,
  cache: PcmCacheOptions | null
): Promise<{ readonly mix: Stereo; readonly pcm: Int16Array; readonly segments: ReadonlyArray<Segment> }> {
  const ext = source.extends as NonNullable<TrackSource["extends"]>
  const segments = segmentsOf(source, options)
  const last = segments[segments.length - 1] as Segment
  const head = dequantize(wavSamples(await trackWav(ext.source, options, cache)))
  const tail = mixTake(last.take, last.options, false)
  const mix = spliceStereo(head, tail, last.from, last.offset)
  return { mix, pcm: quantize(mix.left, mix.right), segments }
}

/** Renders one take of an extension (its MP3 also to `sink` as it is made), and leaves its PCM in the cache. */
export async function renderExtension(
  source: TrackSource,
  options: RenderOptions,
  cache: PcmCacheOptions | null,
  sink?: Mp3Sink
): Promise<EngineTrack> {
  const { mix, pcm, segments } = await extensionAudio(source, options, cache)
  const written = cache === null ? null : writeCached(cache, cacheKey(source, options), wavFile(pcm))
  const first = segments[0] as Segment
  const mp3 = await encodeMp3(mix.left, mix.right, first.take.score.richness < 0.5 ? 128 : 192, sink)
  await written
  const root = rootOf(source)
  const sung = segments.some((s) =>
    s.take.score.vocal.some((v) => s.offset + v.start >= s.from && s.offset + v.start < s.until)
  )
  const vocalTag = sung ? [`${first.take.score.voice === "f" ? "female" : "male"} vocals`] : []
  return {
    index: source.index,
    mp3,
    png: drawCover(source.request.title, root.request.style, first.take.spec.genre.name, source.index),
    duration: Math.round((mix.left.length / SR) * 1000) / 1000,
    title: source.request.title,
    lyrics: sung ? source.request.lyrics : null,
    tags: [first.take.spec.tags, ...vocalTag].join(", ")
  }
}

/**
 * Each stem of the track as heard in it, adding up to its mix: made as its PCM is (trackWav), from
 * its source's stems, so an upload anywhere in a track's chain is the stem `upload` there.
 */
async function stemsOf(
  source: TrackSource,
  options: RenderOptions,
  cache: PcmCacheOptions | null
): Promise<ReadonlyArray<NamedStereo>> {
  if (source.extends !== undefined) {
    const parent = await stemsOf(source.extends.source, options, cache)
    const segments = segmentsOf(source, options)
    const last = segments[segments.length - 1] as Segment
    const tail = mixTake(last.take, last.options, true).stems ?? []
    return spliceStems(parent, tail, (head, own) => spliceStereo(head, own, last.from, last.offset))
  }
  if (source.upload !== undefined)
    return [{ name: UPLOAD_STEM, ...dequantize(wavSamples(await trackWav(source, options, cache))) }]
  if (source.derives?.kind === "edit")
    return editStems(source, options, await stemsOf(source.derives.source, options, cache), reader)
  if (isLayeredOnUpload(source)) return layeredOnUploadStems(source, options, cache)
  return mixTake(sourceTake(source, options, reader), options, true).stems ?? []
}

const stemOrder = ["vocals", "drums", "bass", "harmony", "lead", "vinyl", UPLOAD_STEM]

// ---------------------------------------------------------------- words and notes

/** Every sung word with its start and end, in order, from the voice's own syllable schedule. */
export function timedLyrics(source: TrackSource, options: RenderOptions): ReadonlyArray<TimedWord> {
  const words: TimedWord[] = []
  for (const seg of segmentsOf(source, options)) {
    let current: { text: string; start: number; end: number } | null = null
    const flush = (): void => {
      if (current !== null && current.start >= seg.from) {
        // Millisecond times; a word that would start (after rounding) where its take stops is not heard.
        const start = round3(current.start)
        const end = round3(Math.min(current.end, seg.until))
        if (end > start) words.push({ text: current.text, start, end })
      }
      current = null
    }
    for (const note of seg.take.score.vocal) {
      const start = seg.offset + note.start
      const end = start + note.dur
      if (note.syllable.wordStart || current === null) {
        flush()
        current = { text: note.syllable.word, start, end }
      } else current.end = end
      if (note.syllable.wordEnd) flush()
    }
    flush()
  }
  return words
}

const round3 = (x: number): number => Math.round(x * 1000) / 1000

interface MidiTrackDraft {
  readonly name: string
  readonly program: number
  readonly notes: MidiNoteInput[]
  readonly lyrics: MidiLyricInput[] | null
}

/** Syllable texts of one word in its written case where the spelling split is known, else the word on its first syllable. */
function syllableTexts(word: string, fragments: ReadonlyArray<string>): ReadonlyArray<string> {
  const letters = [...word.normalize("NFC")].filter((ch) => /\p{L}/u.test(ch)).join("")
  if (fragments.every((f) => f !== "") && letters.toLowerCase() === fragments.join("")) {
    const out: string[] = []
    let at = 0
    for (const f of fragments) {
      out.push(letters.slice(at, at + f.length))
      at += f.length
    }
    return out
  }
  return fragments.map((_, i) => (i === 0 ? word : ""))
}

/** The score as a Standard MIDI File: one track per part, drums on channel 10, the sung syllables as lyrics. */
export function trackMidi(source: TrackSource, options: RenderOptions): Uint8Array {
  const segments = segmentsOf(source, options)
  const first = segments[0] as Segment
  const spec = first.take.spec
  const drafts = new Map<string, MidiTrackDraft>()
  const draft = (key: string, name: string, program: number, lyrics: boolean): MidiTrackDraft => {
    let d = drafts.get(key)
    if (d === undefined) {
      d = { name, program, notes: [], lyrics: lyrics ? [] : null }
      drafts.set(key, d)
    }
    return d
  }
  const heard = (seg: Segment, start: number): boolean => start >= seg.from && start < seg.until
  for (const seg of segments) {
    const score = seg.take.score
    const addPart = (p: Part, n: number): void => {
      const program = programOf(score.genre, p.instrument)
      const d = draft(`${p.role}|${p.instrument}|${n}`, `${p.role} (${p.instrument})`, program, false)
      for (const note of p.notes) {
        const start = seg.offset + note.start
        if (heard(seg, start))
          d.notes.push({
            pitch: note.pitch,
            start,
            end: Math.min(start + note.dur, seg.until),
            velocity: midiVelocity(note.vel)
          })
      }
    }
    // Parts of one role and instrument (a doubled guitar) stay apart, numbered in order.
    const seen = new Map<string, number>()
    for (const p of score.parts) {
      const k = `${p.role}|${p.instrument}`
      const n = seen.get(k) ?? 0
      seen.set(k, n + 1)
      addPart(p, n)
    }
    if (score.drums.length > 0) {
      const d = draft("drums", "drums", KIT_PROGRAM[kitFor(score.genre)], false)
      for (const hit of score.drums) {
        const start = seg.offset + hit.time
        if (!heard(seg, start)) continue
        d.notes.push({
          pitch: drumKey(hit),
          start,
          end: Math.min(start + DRUM_HOLD, seg.until),
          velocity: midiVelocity(hit.vel)
        })
      }
    }
    for (const [key, name, notes] of [
      ["vocals", "vocals", score.vocal],
      ["harmony vocals", "harmony vocals", score.harmony]
    ] as const) {
      if (notes.length === 0) continue
      const d = draft(key, name, 53, key === "vocals")
      let word: { readonly text: string; readonly notes: (typeof notes)[number][] } | null = null
      const flushWord = (): void => {
        if (word === null || d.lyrics === null) return
        const texts = syllableTexts(
          word.text,
          word.notes.map((n) => n.syllable.text)
        )
        word.notes.forEach((n, i) => {
          const text = texts[i] ?? ""
          const last = i === (word?.notes.length ?? 0) - 1
          if (text !== "") d.lyrics?.push({ text: last ? `${text} ` : text, time: seg.offset + n.start })
        })
        word = null
      }
      for (const note of notes) {
        const start = seg.offset + note.start
        if (!heard(seg, start)) continue
        d.notes.push({
          pitch: note.pitch,
          start,
          end: Math.min(start + note.dur, seg.until),
          velocity: midiVelocity(note.vel)
        })
        if (note.syllable.wordStart || word === null) {
          flushWord()
          word = { text: note.syllable.word, notes: [] }
        }
        word.notes.push(note)
        if (note.syllable.wordEnd) flushWord()
      }
      flushWord()
    }
  }
  const tracks: MidiTrackInput[] = []
  let channel = 0
  for (const [key, d] of drafts) {
    if (d.notes.length === 0) continue
    const isDrums = key === "drums"
    if (!isDrums && channel === 9) channel++
    tracks.push({
      name: d.name,
      program: d.program,
      channel: isDrums ? 9 : Math.min(15, channel),
      notes: d.notes,
      lyrics: d.lyrics ?? undefined
    })
    if (!isDrums) channel++
  }
  return writeMidi({
    bpm: spec.bpm,
    key: `${PC_NAMES[spec.tonic] ?? "C"} ${spec.minor ? "minor" : "major"}`,
    title: source.request.title,
    tracks
  })
}

// ---------------------------------------------------------------- exports

export async function exportTrack(
  source: TrackSource,
  format: ExportFormat,
  options: RenderOptions,
  cache: PcmCacheOptions | null
): Promise<EngineExport> {
  if (source.upload !== undefined && source.extends === undefined) return exportUpload(source, format, options, cache)
  switch (format) {
    case "wav":
      return {
        files: [
          { name: "track.wav", contentType: "audio/wav", stem: null, bytes: await trackWav(source, options, cache) }
        ],
        timedLyrics: null
      }
    case "stems": {
      const stems = [...(await stemsOf(source, options, cache))].sort(
        (a, b) => stemOrder.indexOf(a.name) - stemOrder.indexOf(b.name)
      )
      const files: EngineFile[] = stems.map((s) => ({
        name: `${s.name}.wav`,
        contentType: "audio/wav",
        stem: s.name,
        bytes: wavFile(quantize(s.left, s.right))
      }))
      return { files, timedLyrics: null }
    }
    case "midi":
      return {
        files: [{ name: "track.mid", contentType: "audio/midi", stem: null, bytes: trackMidi(source, options) }],
        timedLyrics: null
      }
    case "timed_lyrics":
      return { files: [], timedLyrics: timedLyrics(source, options) }
    default:
      throw new Error(`unknown export format: ${String(format satisfies never)}`)
  }
}

/**
 * An upload's own track: its audio as WAV (and as its one stem), its transcription as MIDI; it
 * has no words to time (the service refuses that before asking).
 */
async function exportUpload(
  source: TrackSource,
  format: ExportFormat,
  options: RenderOptions,
  cache: PcmCacheOptions | null
): Promise<EngineExport> {
  const root = source.upload as NonNullable<TrackSource["upload"]>
  switch (format) {
    case "wav":
      return {
        files: [
          { name: "track.wav", contentType: "audio/wav", stem: null, bytes: await trackWav(source, options, cache) }
        ],
        timedLyrics: null
      }
    case "stems":
      return {
        files: [
          { name: "mix.wav", contentType: "audio/wav", stem: "mix", bytes: await trackWav(source, options, cache) }
        ],
        timedLyrics: null
      }
    case "midi":
      return {
        files: [
          { name: "track.mid", contentType: "audio/midi", stem: null, bytes: uploadMidi(root, source.request.title) }
        ],
        timedLyrics: null
      }
    case "timed_lyrics":
      throw new Error("an upload has no timed words")
    default:
      throw new Error(`unknown export format: ${String(format satisfies never)}`)
  }
}

/** The TrackSources of an extension's takes. */
export function extensionSources(
  source: TrackSource,
  continueAt: number,
  request: EngineRequest,
  taskId: string,
  takes: number
): ReadonlyArray<TrackSource> {
  return Array.from({ length: takes }, (_, index) => ({ request, taskId, index, extends: { source, continueAt } }))
}
