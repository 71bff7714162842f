// The jobs the engine's worker threads run: a take, an extension's take or an export. Kept apart
// from the worker entry so that benchmarks can run them on the calling thread.

import { listen } from "./listen/analyse.ts"
import type { AudioType } from "./listen/decode.ts"
import { transcribe } from "./listen/transcribe.ts"
import type { Listening } from "./listen/types.ts"
import { cacheKey, writeCached, type PcmCacheOptions } from "./pcm-cache.ts"
import { renderArranged } from "./arrange/index.ts"
import type { Mp3Sink } from "./mp3.ts"
import { renderTake } from "./render.ts"
import { exportTrack, renderExtension, segmentsOf, trackWav } from "./song.ts"
import type { EngineExport, EngineRequest, EngineTrack, ExportFormat, RenderOptions, TrackSource } from "./types.ts"
import { quantize, wavFile } from "./wav.ts"

export type JobBody =
  | { readonly kind: "render"; readonly request: EngineRequest; readonly taskId: string; readonly index: number }
  | { readonly kind: "extend"; readonly source: TrackSource }
  | { readonly kind: "export"; readonly source: TrackSource; readonly format: ExportFormat }
  | { readonly kind: "listen"; readonly bytes: Uint8Array; readonly type: AudioType }
  /** A track made from another, or under a persona (src/arrange/). */
  | { readonly kind: "arrange"; readonly source: TrackSource }

export type JobMessage = JobBody & {
  readonly id: number
  readonly options: RenderOptions
  readonly cache: PcmCacheOptions | null
}

export type JobResult =
  | { readonly kind: "track"; readonly track: EngineTrack }
  | { readonly kind: "export"; readonly export: EngineExport }
  | { readonly kind: "listening"; readonly listening: Listening }

/** Runs one job; a take's MP3 also goes to `sink`, piece by piece, as it is encoded. */
export async function runJob(msg: JobMessage, sink?: Mp3Sink): Promise<JobResult> {
  switch (msg.kind) {
    case "render": {
      // Encoded as it is mixed: the first pieces reach `sink` within the take's first seconds.
      const { audio, track } = await renderTake(msg.request, msg.taskId, msg.index, msg.options, sink)
      // The PCM is kept beside the MP3 so that a `wav` export or an extension need not render it
      // again; with the cache off its WAV file (~0.1 s of CPU per take) is not built at all.
      if (msg.cache !== null)
        await writeCached(
          msg.cache,
          cacheKey({ request: msg.request, taskId: msg.taskId, index: msg.index }, msg.options),
          wavFile(quantize(audio.left, audio.right))
        )
      return { kind: "track", track }
    }
    case "extend":
      return { kind: "track", track: await renderExtension(msg.source, msg.options, msg.cache, sink) }
    case "export":
      return { kind: "export", export: await exportTrack(msg.source, msg.format, msg.options, msg.cache) }
    case "listen":
      return { kind: "listening", listening: await listen(msg.bytes, msg.type, transcribe) }
    case "arrange":
      return {
        kind: "track",
        track: await renderArranged(msg.source, msg.options, msg.cache, { segmentsOf, trackWav }, sink)
      }
  }
}

export function transferables(result: JobResult): ArrayBuffer[] {
  if (result.kind === "listening") return []
  const buffers =
    result.kind === "track"
      ? [result.track.mp3.buffer, result.track.png.buffer]
      : result.export.files.map((f) => f.bytes.buffer)
  return [...new Set(buffers)].filter((b): b is ArrayBuffer => b instanceof ArrayBuffer)
}
