// Tracks made from other tracks (DESIGN.md section 11): which take a TrackSource is, and its
// render. A cover, an instrumental or vocals is one take composed from the source's sheet; an
// edit is the source's takes with one span of a new take between them (edit.ts); a generation
// under a persona is its own take in the persona's voice. Every one renders with `mixTake`.

import { drawCover } from "../cover.ts"
import { encodeMp3, type Mp3Sink } from "../mp3.ts"
import type { PcmCacheOptions } from "../pcm-cache.ts"
import { composeTake, songIdentity, type Take } from "../render.ts"
import type { Segment, TrackReader } from "../splice.ts"
import type { StyleSpec } from "../style.ts"
import { SR } from "../synth/dsp.ts"
import type { EngineRequest, EngineTrack, RenderOptions, TrackSource } from "../types.ts"
import { dequantize, wavSamples } from "../wav.ts"
import { arrangedTake, personaTake, vocalsTake } from "./takes.ts"

export { isUploadRoot } from "./takes.ts"

export { uploadStandIn } from "./uploadSheet.ts"

export { editPcm, editSegments, editStems } from "./edit.ts"

/** True when a source is made by this module rather than by `composeTake` alone. */
export const isArranged = (source: TrackSource): boolean => source.derives !== undefined || source.persona !== undefined

/** The one take of a track that is not an extension nor an edit. */
export function sourceTake(source: TrackSource, options: RenderOptions, tracks: TrackReader): Take {
  const derived = source.derives
  if (derived === undefined)
    return source.persona === undefined
      ? composeTake(source.request, source.taskId, source.index)
      : personaTake(source, options, tracks)
  switch (derived.kind) {
    case "cover":
    case "instrumental":
      return arrangedTake(source, derived.kind, options, tracks)
    case "vocals":
      return vocalsTake(source, options, tracks)
    case "edit":
      throw new Error("an edit is several takes: read it with segmentsOf")
  }
}

/** The key, tempo, instruments and voice a track's continuation keeps: those of the take it starts with. */
export function identityOf(
  root: TrackSource,
  options: RenderOptions,
  tracks: TrackReader
): { readonly spec: StyleSpec; readonly voice: "m" | "f" } {
  if (!isArranged(root)) return songIdentity(root.request, root.taskId)
  const take = (tracks.segmentsOf(root, options)[0] as Segment).take
  return { spec: take.spec, voice: take.score.voice }
}

/** The words a made track sings: its own request's (a cover's, an instrumental's and an edit's default to the source's). */
function lyricsOf(request: EngineRequest): string | null {
  return request.instrumental ? null : request.lyrics
}

/** Renders one take of a cover, vocals, an instrumental, an edit or a persona's song, and leaves its PCM in the cache. */
export async function renderArranged(
  source: TrackSource,
  options: RenderOptions,
  cache: PcmCacheOptions | null,
  tracks: TrackReader,
  sink?: Mp3Sink
): Promise<EngineTrack> {
  const mix = dequantize(wavSamples(await tracks.trackWav(source, options, cache)))
  const segments = tracks.segmentsOf(source, options)
  const first = (segments[0] as Segment).take
  const mp3 = await encodeMp3(mix.left, mix.right, first.score.richness < 0.5 ? 128 : 192, sink)
  const sung = segments.some((s) =>
    s.take.score.vocal.some((v) => s.offset + v.start >= s.from && s.offset + v.start < s.until)
  )
  const voice = segments.find((s) => s.take.score.vocal.length > 0)?.take.score.voice ?? first.score.voice
  const vocalTag = sung ? [`${voice === "f" ? "female" : "male"} vocals`] : []
  return {
    index: source.index,
    mp3,
    png: drawCover(source.request.title, source.request.style, first.spec.genre.name, source.index),
    duration: Math.round((mix.left.length / SR) * 1000) / 1000,
    title: source.request.title,
    lyrics: sung ? lyricsOf(source.request) : null,
    tags: [first.spec.tags, ...vocalTag].join(", ")
  }
}
