/**
 * The port through which lyrics are written (DESIGN.md section 12). Core decides what is asked
 * and keeps what comes back; the composition root chooses the writer as it chooses the provider:
 * the upstream's lyrics endpoint (`PROVIDER=http`), an OpenAI-compatible chat completions server
 * (`LYRICS_MODEL_URL`), or the built-in lyricist of the engine. Each is a layer of this service in
 * `@lyre/worker`, so core knows neither HTTP nor the engine.
 */
import { Context } from "effect"
import type { Effect } from "effect"
import type { SourceTrack } from "../provider/outcomes.ts"
import type { LyricsRequest, LyricsVariation } from "./model.ts"

/** One lyrics task as a writer sees it. */
export interface LyricsJob {
  /** The task's id (`lyt_...`): the seed, so the same request and id give the same words. */
  readonly id: string
  readonly request: LyricsRequest
  /** `track_id`'s source, when the words are to fit its melody. */
  readonly fit: SourceTrack | null
  /** The upstream's task id once it took the job (an asynchronous writer), else null. */
  readonly providerTaskId: string | null
  /** `{site_url}/internal/provider/callback/{lyt_...}?token=...` */
  readonly callbackUrl: string
}

/**
 * One step of writing: the words (checked by `keptVariations` before they are kept), the job
 * taken by an asynchronous writer (asked again later under `providerTaskId`), not yet known
 * (asked again later), or a definite failure (the task fails and is refunded).
 */
export type LyricsStep =
  | { readonly _tag: "Written"; readonly variations: ReadonlyArray<LyricsVariation> }
  | { readonly _tag: "Taken"; readonly providerTaskId: string }
  | { readonly _tag: "NotYet"; readonly message: string }
  | { readonly _tag: "Failed"; readonly code: string; readonly detail: string }

export class LyricsWriter extends Context.Service<
  LyricsWriter,
  {
    /** Which writer this is, in log lines and the start banner: `upstream`, `model`, `built-in`. */
    readonly name: string
    readonly step: (job: LyricsJob) => Effect.Effect<LyricsStep>
  }
>()("lyre/core/lyrics/LyricsWriter") {}
