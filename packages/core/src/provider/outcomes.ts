/**
 * The provider port's vocabulary. Every provider (the HTTP adapter for the Suno-style upstream,
 * the built-in engine) answers in these terms, so the worker never learns whose provider it is.
 */

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

/** What a status query told us. */
export type PollOutcome =
  | { readonly _tag: "Pending" }
  | { readonly _tag: "Succeeded"; readonly tracks: ReadonlyArray<ProviderTrack> }
  | { readonly _tag: "Failed"; readonly code: string; readonly message: string }
  | { readonly _tag: "Unknown"; readonly message: string }

/** A submission as the provider receives it: the validated request plus where to call back. */
export interface ProviderSubmission {
  readonly taskId: string
  readonly model: "aether" | "echo" | "nocturne"
  readonly style: string
  readonly title: string
  readonly lyrics: string | null
  readonly instrumental: boolean
  readonly vocal_gender?: "m" | "f" | undefined
  readonly negative_tags?: string | undefined
  readonly style_weight?: number | undefined
  readonly weirdness_constraint?: number | undefined
  readonly audio_weight?: number | undefined
  /** `{site_url}/internal/provider/callback/{task_id}?token=...`, or null when callbacks are off. */
  readonly callbackUrl: string | null
}

/** The stages a provider's callback announces. */
export type CallbackStage = "text" | "first" | "complete" | "error"

/** What a provider callback tells us: which provider task moved, and how far. Only a hint to poll now. */
export interface ProviderCallback {
  readonly providerTaskId: string
  readonly stage: CallbackStage
}
