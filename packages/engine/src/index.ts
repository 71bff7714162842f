// @lyre/engine: the built-in offline music engine. Two takes per task, rendered in a
// worker_threads pool; same request + task id => the same bytes. Song tools (extensions and
// exports) run in the same pool, each deterministic from the track's TrackSource alone.

import { availableParallelism, tmpdir } from "node:os"
import { join } from "node:path"
import type { PcmCacheOptions } from "./pcm-cache.ts"
import { RenderPool } from "./pool.ts"
import type { JobResult } from "./jobs.ts"
import type { AudioType } from "./listen/decode.ts"
import type { Listening } from "./listen/types.ts"
import { extensionSources } from "./song.ts"
import type {
  AudioPieces,
  Engine,
  EngineExport,
  EngineRequest,
  EngineTrack,
  ExportFormat,
  RenderOptions,
  TrackSource
} from "./types.ts"

export type {
  AudioPieces,
  Engine,
  EngineExport,
  EngineFile,
  EngineRequest,
  EngineTrack,
  ExportFormat,
  ModelName,
  RenderOptions,
  TimedWord,
  TrackDerivation,
  TrackSource
} from "./types.ts"
export type { PcmCacheOptions } from "./pcm-cache.ts"
export { renderTrack } from "./render.ts"
export { parseStyle } from "./style.ts"
export { exportTrack, renderExtension } from "./song.ts"

/** Takes rendered per task: two audibly different versions of the same request. */
export const TAKES = 2

/** Where the engine keeps each take's PCM unless told otherwise, and how much of it. */
export const DEFAULT_PCM_CACHE: PcmCacheOptions = { dir: join(tmpdir(), "lyre-engine-pcm"), maxBytes: 4 * 1024 ** 3 }

export interface EngineOptions {
  readonly threads?: number | undefined
  readonly render?: RenderOptions | undefined
  /** The PCM cache (see pcm-cache.ts); `null` turns it off (every `wav` export renders again). */
  readonly pcmCache?: PcmCacheOptions | null | undefined
}

/** Listens to uploads in worker threads of its own, so no request or render waits on it. */
export interface Listener {
  listen(bytes: Uint8Array, type: AudioType): Promise<Listening>
  close(): Promise<void>
}

export function makeListener(options?: { readonly threads?: number | undefined }): Listener {
  const pool = new RenderPool(options?.threads ?? 1, {}, null)
  return {
    async listen(bytes: Uint8Array, type: AudioType): Promise<Listening> {
      const result = await pool.run({ kind: "listen", bytes, type })
      if (result.kind !== "listening") throw new Error("engine worker answered a listening with something else")
      return result.listening
    },
    close: () => pool.close()
  }
}

/** One take's pieces, for the pool: `onAudio` with the take's index. */
const piecesOf = (onAudio: AudioPieces | undefined, index: number) =>
  onAudio === undefined ? undefined : (piece: Uint8Array) => onAudio(index, piece)

function track(result: JobResult): EngineTrack {
  if (result.kind !== "track") throw new Error("engine worker answered a take with an export")
  return result.track
}

export function makeEngine(options?: EngineOptions): Engine {
  const pool = new RenderPool(
    options?.threads ?? availableParallelism(),
    options?.render ?? {},
    options?.pcmCache === undefined ? DEFAULT_PCM_CACHE : options.pcmCache
  )
  return {
    async render(request: EngineRequest, taskId: string, onAudio?: AudioPieces): Promise<ReadonlyArray<EngineTrack>> {
      const takes: Promise<EngineTrack>[] = []
      for (let index = 0; index < TAKES; index++)
        takes.push(pool.run({ kind: "render", request, taskId, index }, piecesOf(onAudio, index)).then(track))
      return Promise.all(takes)
    },
    async extend(
      source: TrackSource,
      continueAt: number,
      request: EngineRequest,
      taskId: string,
      onAudio?: AudioPieces
    ): Promise<ReadonlyArray<EngineTrack>> {
      return Promise.all(
        extensionSources(source, continueAt, request, taskId, TAKES).map((s) =>
          pool.run({ kind: "extend", source: s }, piecesOf(onAudio, s.index)).then(track)
        )
      )
    },
    async arrange(sources: ReadonlyArray<TrackSource>, onAudio?: AudioPieces): Promise<ReadonlyArray<EngineTrack>> {
      return Promise.all(
        sources.map((source) => pool.run({ kind: "arrange", source }, piecesOf(onAudio, source.index)).then(track))
      )
    },
    async export(source: TrackSource, format: ExportFormat): Promise<EngineExport> {
      const result = await pool.run({ kind: "export", source, format })
      if (result.kind !== "export") throw new Error("engine worker answered an export with a take")
      return result.export
    },
    close: () => pool.close()
  }
}
export { decodeAudio, UndecodableAudio } from "./listen/decode.ts"
export { listen } from "./listen/analyse.ts"
export type { Analysis, ChordSpan, Listening, TranscribedNote, Transcription, VoiceProfile } from "./listen/types.ts"
export type { AudioType, PcmSink } from "./listen/decode.ts"
export { LYRICS_SECTIONS, writeLyrics } from "./lyricist/index.ts"
export type { LyricsBrief, LyricsDraft, LyricsSection } from "./lyricist/index.ts"
