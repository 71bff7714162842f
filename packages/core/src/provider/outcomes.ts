/**
 * The provider port's vocabulary. Every provider (the HTTP adapter for the Suno-style upstream,
 * the built-in engine) answers in these terms, so the worker never learns whose provider it is.
 */
import type { ExportFormat, ModelName, TimedWord } from "../domain/models.ts"
import type { UploadContentType } from "../domain/contentTypes.ts"
import type { Transcription, UploadAnalysis } from "../domain/listening.ts"

/** What a submission told us. `Unknown` means we cannot tell whether the provider took it. */
export type SubmitOutcome =
  | { readonly _tag: "Accepted"; readonly providerTaskId: string }
  | {
      readonly _tag: "Rejected"
      /** Our error code for the task: `provider_error` or `content_policy`. */
      readonly code: string
      readonly message: string
      /** Upstream said "too frequent" or "maintenance": the model's circuit should hear of it. */
      readonly countsTowardCircuit: boolean
    }
  | { readonly _tag: "Unknown"; readonly message: string }

/** One finished track as the provider describes it, before we re-host its files. */
export interface ProviderTrack {
  readonly providerTrackId: string
  readonly audioUrl: string
  readonly imageUrl: string | null
  readonly lyrics: string | null
  readonly title: string | null
  readonly tags: string | null
  readonly duration: number | null
}

/**
 * A track's audio while it is made, as the provider offers it: a `file:` the built-in engine is
 * still writing, or the upstream's stream address (its `first` stage).
 */
export interface ProviderPreview {
  readonly index: number
  readonly url: string
}

/** What a status query told us. */
export type PollOutcome =
  | {
      readonly _tag: "Pending"
      /** The tracks' audio while it is made, once there is some (DESIGN.md section 14). */
      readonly previews?: ReadonlyArray<ProviderPreview> | undefined
    }
  | {
      readonly _tag: "Succeeded"
      readonly tracks: ReadonlyArray<ProviderTrack>
      /** The streams it offered while pending, when no look saw them then: `job.streaming` still goes out once. */
      readonly previews?: ReadonlyArray<ProviderPreview> | undefined
    }
  | { readonly _tag: "Failed"; readonly code: string; readonly message: string }
  | { readonly _tag: "Unknown"; readonly message: string }

/** A submission as the provider receives it: the validated request plus where to call back. */
export interface ProviderSubmission {
  readonly taskId: string
  readonly model: ModelName
  readonly style: string
  readonly title: string
  readonly lyrics: string | null
  readonly instrumental: boolean
  readonly vocal_gender?: "m" | "f" | undefined
  readonly negative_tags?: string | undefined
  readonly style_weight?: number | undefined
  readonly weirdness_constraint?: number | undefined
  readonly audio_weight?: number | undefined
  /** A persona named by `persona_id`: the voice and palette of its track. */
  readonly persona?: PersonaSource | undefined
  /** `{site_url}/internal/provider/callback/{task_id}?token=...`, or null when callbacks are off. */
  readonly callbackUrl: string | null
  /** Set when the task extends a track: the provider continues that track from `continueAt`. */
  readonly extend?: Extension | undefined
  /** Set when the task is a cover, vocals, an instrumental or an edit of a track. */
  readonly derive?: TrackDerivation | undefined
}

/** The stages a provider's callback announces. */
export type CallbackStage = "text" | "first" | "complete" | "error"

/** What a provider callback tells us: which provider task moved, and how far. Only a hint to poll now. */
export interface ProviderCallback {
  readonly providerTaskId: string
  readonly stage: CallbackStage
}

/**
 * The track a song tool works on, as a provider needs it: the upstream finds it by its own ids
 * (`audioId`, `taskId`), the built-in engine renders it again from the request and seed that
 * made it, following the chain of extensions back to the original song.
 */
export interface SourceTrack {
  /** Lyre's id of the track (`trk_...`). */
  readonly trackId: string
  /** The provider's id of the track: the upstream's `audioId`. */
  readonly providerTrackId: string
  /** The provider's id of the task that made the track: the upstream's `taskId`. */
  readonly providerTaskId: string
  /** Lyre's task that made the track, and the track's place in it. */
  readonly taskId: string
  readonly index: number
  readonly duration: number | null
  /** The track's audio as Lyre hosts it (`{site_url}/files/...`): what an upstream is handed, signed, as `uploadUrl`. */
  readonly audioUrl: string | null
  /** The request of that task, as its provider received it. */
  readonly request: Omit<ProviderSubmission, "taskId" | "callbackUrl" | "extend" | "derive">
  /** When that task was an extension: the track it continued, and from which second. */
  readonly extends: Extension | null
  /** When the track is an upload's: its file and what listening heard (DESIGN.md section 11). */
  readonly upload?: UploadSource | undefined
  /** When that task was a cover, vocals, an instrumental or an edit: of which track. */
  readonly derives: TrackDerivation | null
}

/** An upload at the root of a track: where its file is kept, and its stored listening. */
export interface UploadSource {
  readonly uploadId: string
  /** Its key in storage (`upl_.../source.mp3`). */
  readonly storageKey: string
  readonly contentType: UploadContentType
  readonly duration: number
  readonly analysis: UploadAnalysis
  /** Its notes, and the voice heard along their top line, for a persona of the upload's track. */
  readonly transcription: Transcription
}

/** The task kinds made from a track beside extension (DESIGN.md section 11). */
export type DerivationKind = "cover" | "vocals" | "instrumental" | "edit"

/** What a task on a track derives from it: the source, and for an edit the span made again (seconds). */
export type TrackDerivation =
  | { readonly kind: "cover" | "vocals" | "instrumental"; readonly source: SourceTrack }
  | { readonly kind: "edit"; readonly source: SourceTrack; readonly start: number; readonly end: number }

/** A persona as a provider needs it: Lyre's id, the upstream's, and the track whose voice it keeps. */
export interface PersonaSource {
  readonly personaId: string
  /** The upstream's `personaId`; null on the built-in engine, which needs only the track. */
  readonly providerPersonaId: string | null
  readonly source: SourceTrack
}

/** A persona to make at the provider from a track. */
export interface PersonaSubmission {
  readonly personaId: string
  readonly name: string
  readonly description: string
  readonly source: SourceTrack
}

/** What making a persona told us: its id at the provider (null when the provider keeps none), or why not. */
export type PersonaOutcome =
  | { readonly _tag: "Created"; readonly providerPersonaId: string | null }
  | { readonly _tag: "Rejected"; readonly message: string }

/** Where an extension starts: the source track and the second its continuation begins at. */
export interface Extension {
  readonly source: SourceTrack
  readonly continueAt: number
}

/** The song tools' file formats (DESIGN.md section 9): the API's own enum, one schema per shape. */
export type { ExportFormat } from "../domain/models.ts"

/** An export as the provider receives it. */
export interface ExportSubmission {
  readonly exportId: string
  readonly format: ExportFormat
  readonly source: SourceTrack
  /** `{site_url}/internal/provider/callback/{export_id}?token=...`, or null when callbacks are off. */
  readonly callbackUrl: string | null
}

/** One sung word and when it is sung, in seconds from the start of the track: the API's own shape. */
export type { TimedWord } from "../domain/models.ts"

/** One file of a finished export, before re-hosting: where to fetch it, or its bytes. */
export interface ProviderExportFile {
  readonly name: string
  readonly contentType: string
  /** The part of a stems export (`vocals`, `drums`, `instrumental`, ...); null otherwise. */
  readonly stem: string | null
  readonly content:
    | { readonly _tag: "Url"; readonly url: string }
    | { readonly _tag: "Bytes"; readonly bytes: Uint8Array }
}

/**
 * What a status query of an export told us. A `timed_lyrics` export succeeds with the words and
 * no files: core writes the `.lrc` and WebVTT files from the words, for every provider alike.
 */
export type ExportPollOutcome =
  | {
      readonly _tag: "Pending"
      /**
       * Set when the provider moved the export on to a task of its own: poll it under this id from
       * now on. The upstream's MIDI is two tasks (a stem separation, then a transcription of it),
       * and the second exists only once the first is done.
       */
      readonly providerExportId?: string | undefined
    }
  | {
      readonly _tag: "Succeeded"
      readonly files: ReadonlyArray<ProviderExportFile>
      readonly timedLyrics: ReadonlyArray<TimedWord> | null
    }
  | { readonly _tag: "Failed"; readonly code: string; readonly message: string }
  | { readonly _tag: "Unknown"; readonly message: string }
