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
  /** Sent by the admin API's ping, to test an endpoint. */
  readonly ping: { readonly webhook_endpoint_id: string }
}

export type LyreEventType = keyof LyreEventData

/** Any event the service sends; `switch (event.type)` narrows `data`. */
export type LyreWebhookEvent = {
  readonly [T in LyreEventType]: WebhookEvent<LyreEventData[T]> & { readonly type: T }
}[LyreEventType]
