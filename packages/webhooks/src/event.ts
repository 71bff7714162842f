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
