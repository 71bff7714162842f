/**
 * The built-in lyricist (the embedded default, offline): the engine's `writeLyrics`, which writes
 * to the form the engine would compose for the style, or to `track_id`'s own melody, the same
 * words for the same request and task id (docs/decisions/0122-one-engine-four-hands.md). Core
 * knows nothing of how the words are found; a throw of the lyricist is a failed task, refunded.
 */
import { Effect, Layer } from "effect"
import { LyricsWriter } from "@lyre/core"
import type { LyricsJob, LyricsStep } from "@lyre/core"
import { writeLyrics } from "@lyre/engine"
import type { LyricsBrief } from "@lyre/engine"
import { trackSourceOf } from "../provider/EngineProvider.ts"
import { Storage } from "../storage/Storage.ts"

export const builtInLyricsWriterLayer: Layer.Layer<LyricsWriter, never, Storage> = Layer.effect(
  LyricsWriter,
  Effect.gen(function* () {
    const storage = yield* Storage
    const briefOf = (job: LyricsJob): LyricsBrief => ({
      prompt: job.request.prompt,
      style: job.request.style ?? null,
      title: job.request.title ?? null,
      language: job.request.language ?? null,
      sections: job.request.sections ?? null,
      // An upload's file is read where storage keeps it on this machine; the lyricist reads the
      // stored listening, not the audio.
      fit: job.fit === null ? null : trackSourceOf(job.fit, (upload) => storage.localPath(upload.storageKey) ?? ""),
      revise:
        job.request.lyrics !== undefined && job.request.instruction !== undefined
          ? { lyrics: job.request.lyrics, instruction: job.request.instruction }
          : null,
      seed: job.id
    })
    const step = (job: LyricsJob): Effect.Effect<LyricsStep> =>
      Effect.try({
        try: () => writeLyrics(briefOf(job)),
        catch: (error) => (error instanceof Error ? error.message : String(error))
      }).pipe(
        Effect.map((drafts): LyricsStep => ({ _tag: "Written", variations: drafts })),
        Effect.catch((detail) => Effect.succeed<LyricsStep>({ _tag: "Failed", code: "lyrics_failed", detail }))
      )
    return LyricsWriter.of({ name: "built-in", step })
  })
)
