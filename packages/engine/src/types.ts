// Public request/response shapes of the engine. Kept free of runtime code so that
// the worker, the pool and the callers can share them without pulling in the synth.

import type { AudioType } from "./listen/decode.ts"
import type { Analysis, Transcription } from "./listen/types.ts"

export type ModelName = "aether" | "echo" | "nocturne"

export interface EngineRequest {
  readonly style: string
  readonly title: string
  readonly lyrics: string | null
  readonly instrumental: boolean
  readonly model: ModelName
  readonly vocal_gender?: "m" | "f" | undefined
  readonly negative_tags?: string | undefined
  readonly style_weight?: number | undefined
  readonly weirdness_constraint?: number | undefined
  readonly audio_weight?: number | undefined
}

export interface EngineTrack {
  readonly index: number
  readonly mp3: Uint8Array
  readonly png: Uint8Array
  readonly duration: number
  readonly title: string
  readonly lyrics: string | null
  readonly tags: string
}

/**
 * A take's MP3 while it is made: each piece of frames as it is encoded, in order, by take index.
 * The pieces of a take joined are its final `mp3`, byte for byte.
 */
export type AudioPieces = (index: number, piece: Uint8Array) => void

export interface Engine {
  render(request: EngineRequest, taskId: string, onAudio?: AudioPieces): Promise<ReadonlyArray<EngineTrack>>
  /**
   * Two takes, each: the source up to `continueAt` seconds, then a continuation in the source's key,
   * tempo, instrumentation and voice to a proper ending. `request` is the extension's own (absent
   * fields already filled from the source's); its takes are the TrackSources
   * `{ request, taskId, index, extends: { source, continueAt } }`.
   */
  extend(
    source: TrackSource,
    continueAt: number,
    request: EngineRequest,
    taskId: string,
    onAudio?: AudioPieces
  ): Promise<ReadonlyArray<EngineTrack>>
  /**
   * Takes of tracks made from others or under a persona (each source's `derives` or `persona` set;
   * its `index` the take): covers, vocals, instrumentals, edits. An extension of such a track
   * goes through `extend`, whose source may be one.
   */
  arrange(sources: ReadonlyArray<TrackSource>, onAudio?: AudioPieces): Promise<ReadonlyArray<EngineTrack>>
  /** One track in another form, rendered again from its TrackSource alone (same source, same bytes). */
  export(source: TrackSource, format: ExportFormat): Promise<EngineExport>
  close(): Promise<void>
}

/** Internal knobs, used by tests and the benchmark; never needed by the service. */
export interface RenderOptions {
  /** Cut the song after this many seconds (with a short fade), to keep tests fast. */
  readonly maxSeconds?: number | undefined
  /** Leave the singing voice out of the mix (tests measure what the voice contributes). */
  readonly muteVoice?: boolean | undefined
}

/**
 * A track whose root is an upload (ENGINE-SEAMS.md rule 3): its audio (a file the engine reads)
 * and what listening heard in it, stored with it. The TrackSource's request carries the upload's
 * tempo and key in its style, so a continuation is composed in them.
 */
export interface UploadRoot {
  readonly id: string
  /** The upload's file on this machine. */
  readonly audioPath: string
  readonly contentType: AudioType
  /** Seconds. */
  readonly duration: number
  readonly analysis: Analysis
  readonly transcription: Transcription
}

export type { VoiceProfile } from "./listen/types.ts"

/**
 * How one track was made, which is all the engine needs to render it again sample for sample:
 * the request and task id seed every choice, and an extension names the track it continued.
 */
export interface TrackSource {
  readonly request: EngineRequest
  readonly taskId: string
  readonly index: number
  readonly extends?: { readonly source: TrackSource; readonly continueAt: number } | undefined
  /** The track is an upload's audio (its request's style names the upload's tempo and key). */
  readonly upload?: UploadRoot | undefined
  /** A track made from another (src/arrange/): a cover, vocals, an instrumental, or an edit of a span (seconds). */
  readonly derives?: TrackDerivation | undefined
  /** The track whose voice and arrangement palette this one takes (a persona). */
  readonly persona?: TrackSource | undefined
}

export type TrackDerivation =
  | { readonly kind: "cover" | "vocals" | "instrumental"; readonly source: TrackSource }
  | { readonly kind: "edit"; readonly source: TrackSource; readonly start: number; readonly end: number }

export type ExportFormat = "wav" | "midi" | "stems" | "timed_lyrics"

export interface EngineFile {
  readonly name: string
  readonly contentType: string
  /** `vocals`, `drums`, `bass`, `harmony`, `lead`, ... for a stem; null otherwise. */
  readonly stem: string | null
  readonly bytes: Uint8Array
}

/** One sung word, in seconds from the start of the track. */
export interface TimedWord {
  readonly text: string
  readonly start: number
  readonly end: number
}

/** A finished export: its files, and for `timed_lyrics` the words (with no files: the service writes those). */
export interface EngineExport {
  readonly files: ReadonlyArray<EngineFile>
  readonly timedLyrics: ReadonlyArray<TimedWord> | null
}
