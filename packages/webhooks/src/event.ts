/**
 * The event envelope of the interface's Events section. The same `id` is sent on every retry of
 * one event, so receivers dedupe by it.
 */
export interface WebhookEvent<Data = Record<string, unknown>> {
  readonly id: string
  readonly type: string
  /** Unix time in seconds. */
  readonly created: number
  readonly data: Data
}

/** The header that carries `t=<unix>,v1=<hex>`. */
export const SIGNATURE_HEADER = "X-Service-Signature"

/** A track as `job.completed` carries it: the interface's Track. */
export interface WebhookTrack {
  readonly id: string
  readonly audio_url: string
  readonly duration: number | null
  readonly title: string | null
  readonly lyrics: string | null
  readonly image_url: string | null
  readonly tags: string | null
  readonly index: number
}

/** A file of an export (DESIGN.md section 9). */
export interface WebhookExportFile {
  readonly name: string
  readonly url: string
  readonly content_type: string
  readonly bytes: number
  /** The part of a stems file (`vocals`, `drums`, ...); null otherwise. */
  readonly stem: string | null
}

/** An Export, as `export.completed` and `export.failed` carry it. */
export interface WebhookExport<Status extends "ready" | "failed"> {
  readonly id: string
  readonly track_id: string
  readonly task_id: string
  readonly format: "wav" | "midi" | "stems" | "timed_lyrics"
  readonly status: Status
  readonly credits_used: number
  readonly credits_refunded: number
  readonly error: Status extends "failed" ? { readonly code: string; readonly message: string } : null
  readonly files: ReadonlyArray<WebhookExportFile>
  readonly timed_lyrics: ReadonlyArray<{ readonly text: string; readonly start: number; readonly end: number }> | null
  readonly created_at: string
  readonly updated_at: string
}

/** An Upload, as `upload.ready` and `upload.failed` carry it (DESIGN.md section 11). */
export interface WebhookUpload<Status extends "ready" | "failed"> {
  readonly id: string
  readonly status: Status
  readonly title: string | null
  readonly content_type: "audio/mpeg" | "audio/wav" | "audio/flac" | "audio/ogg"
  readonly bytes: number
  readonly duration: number
  readonly track_id: Status extends "ready" ? string : null
  readonly analysis: Status extends "ready"
    ? {
        readonly bpm: number
        readonly key: string
        readonly time_signature: string
        readonly loudness_lufs: number
        readonly beats: ReadonlyArray<number>
        readonly chords: ReadonlyArray<{ readonly start: number; readonly end: number; readonly chord: string }>
      }
    : null
  readonly error: Status extends "failed" ? { readonly code: string; readonly message: string } : null
  readonly created_at: string
  readonly updated_at: string
}

/** A LyricsTask, as `lyrics.completed` and `lyrics.failed` carry it (DESIGN.md section 12). */
export interface WebhookLyrics<Status extends "ready" | "failed"> {
  readonly id: string
  readonly status: Status
  readonly prompt: string
  /** Two when ready, each `text` valid as a generation's `lyrics`; empty on failure. */
  readonly variations: ReadonlyArray<{ readonly title: string; readonly text: string }>
  readonly credits_used: number
  readonly credits_refunded: number
  readonly error: Status extends "failed" ? { readonly code: string; readonly message: string } : null
  readonly created_at: string
  readonly updated_at: string
}

/** `data` of each event kind the service sends (the interface's "Event kinds", and `ping`). */
export interface LyreEventData {
  readonly "job.completed": {
    readonly task_id: string
    readonly status: "ready"
    readonly tracks: ReadonlyArray<WebhookTrack>
    readonly credits_used: number
    readonly created_at: string
  }
  readonly "job.failed": {
    readonly task_id: string
    readonly status: "failed"
    readonly error: { readonly code: string; readonly message: string }
    readonly credits_refunded: number
    readonly created_at: string
  }
  /**
   * A pending task's audio can be heard while it is made (once per task, asked for by name):
   * Lyre's own stream address per track; the final files come with `job.completed`.
   */
  readonly "job.streaming": {
    readonly task_id: string
    readonly previews: ReadonlyArray<{ readonly index: number; readonly stream_url: string }>
    readonly created_at: string
  }
  readonly "credits.low": {
    readonly threshold: number
    readonly balance: number
    readonly subscription_credits: number
    readonly onetime_credits: number
  }
  readonly "key.expiring": {
    readonly api_key_id: string
    readonly prefix: string
    readonly name: string
    readonly expires_at: string
    readonly days_until_expiry: number
  }
  /** An export moved to `ready`: its files are at their lasting URLs. */
  readonly "export.completed": WebhookExport<"ready">
  /** An export moved to `failed`; its credits were refunded. */
  readonly "export.failed": WebhookExport<"failed">
  /** An upload was listened to: its analysis is there, and its track takes every song tool. */
  readonly "upload.ready": WebhookUpload<"ready">
  /** Listening to an upload failed. */
  readonly "upload.failed": WebhookUpload<"failed">
  /** A lyrics task was written: its two variations are there. */
  readonly "lyrics.completed": WebhookLyrics<"ready">
  /** Writing lyrics failed; the credits were refunded. */
  readonly "lyrics.failed": WebhookLyrics<"failed">
  /** Sent by the admin API's ping, to test an endpoint. */
  readonly ping: { readonly webhook_endpoint_id: string }
}

export type LyreEventType = keyof LyreEventData

/** Any event the service sends; `switch (event.type)` narrows `data`. */
export type LyreWebhookEvent = {
  readonly [T in LyreEventType]: WebhookEvent<LyreEventData[T]> & { readonly type: T }
}[LyreEventType]
