import { createHmac, timingSafeEqual } from "node:crypto"
import type { WebhookEvent } from "./event.ts"

/** A body as it came off the wire: verify the exact bytes, never a re-serialized object. */
export type RawBody = string | Uint8Array

const digest = (rawBody: RawBody, secret: string, timestampSeconds: number): Buffer =>
  createHmac("sha256", secret).update(`${timestampSeconds}.`).update(rawBody).digest()

const asList = (secrets: string | ReadonlyArray<string>): ReadonlyArray<string> =>
  typeof secrets === "string" ? [secrets] : secrets

/**
 * The `X-Service-Signature` value: `t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<rawBody>">`.
 * Given several secrets (a rotation's grace period) it carries one `v1` per secret, so a
 * receiver holding either the old or the new secret accepts the event.
 */
export const signWebhook = (
  rawBody: RawBody,
  secrets: string | ReadonlyArray<string>,
  timestampSeconds: number
): string => {
  const list = asList(secrets)
  if (list.length === 0) throw new TypeError("signWebhook needs at least one secret")
  if (!Number.isSafeInteger(timestampSeconds)) throw new TypeError("timestampSeconds must be an integer")
  const signatures = list.map((secret) => `v1=${digest(rawBody, secret, timestampSeconds).toString("hex")}`)
  return [`t=${timestampSeconds}`, ...signatures].join(",")
}

export type WebhookVerificationReason =
  | "missing_header"
  | "malformed_header"
  | "timestamp_outside_tolerance"
  | "signature_mismatch"
  | "invalid_payload"

/**
 * Thrown by `verifyWebhook`. Receivers are plain JavaScript servers, so this is an ordinary
 * `Error` (like Stripe's `constructEvent`), with a `reason` to branch on and log.
 */
export class WebhookVerificationError extends Error {
  readonly reason: WebhookVerificationReason
  constructor(reason: WebhookVerificationReason, message: string) {
    super(message)
    this.name = "WebhookVerificationError"
    this.reason = reason
  }
}

export interface VerifyOptions {
  /** How far the signed timestamp may be from now, either way. Default 300 (the interface's 5 minutes). */
  readonly toleranceSeconds?: number
  /** The receiver's clock, in Unix seconds; defaults to the system clock. */
  readonly nowSeconds?: number
}

interface ParsedHeader {
  readonly timestamp: number
  readonly signatures: ReadonlyArray<Buffer>
}

const HEX_SHA256 = /^[0-9a-f]{64}$/i

const parseHeader = (header: string): ParsedHeader | null => {
  let timestamp: number | null = null
  const signatures: Array<Buffer> = []
  for (const part of header.split(",")) {
    const eq = part.indexOf("=")
    if (eq < 0) continue
    const key = part.slice(0, eq).trim()
    const value = part.slice(eq + 1).trim()
    if (key === "t" && /^\d+$/.test(value)) timestamp = Number(value)
    // Unknown schemes and malformed digests are skipped, as Stripe does, so a future `v2`
    // can be added without breaking receivers of this version.
    else if (key === "v1" && HEX_SHA256.test(value)) signatures.push(Buffer.from(value, "hex"))
  }
  return timestamp === null || signatures.length === 0 ? null : { timestamp, signatures }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const parseEvent = (rawBody: RawBody): WebhookEvent => {
  const text = typeof rawBody === "string" ? rawBody : Buffer.from(rawBody).toString("utf8")
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new WebhookVerificationError("invalid_payload", "Webhook body is not JSON")
  }
  if (
    !isRecord(value) ||
    typeof value.id !== "string" ||
    typeof value.type !== "string" ||
    typeof value.created !== "number" ||
    !isRecord(value.data)
  ) {
    throw new WebhookVerificationError(
      "invalid_payload",
      "Webhook body is not an event envelope {id, type, created, data}"
    )
  }
  return { id: value.id, type: value.type, created: value.created, data: value.data }
}

/**
 * Checks an incoming webhook and returns its event, or throws `WebhookVerificationError`.
 * `rawBody` must be the bytes as received. `secrets` may list several secrets (during a
 * rotation); any one matching any `v1` signature is enough. The timestamp must lie within
 * `toleranceSeconds` of now in either direction, so an old capture cannot be replayed.
 * Only the envelope is checked: `verifyWebhook<LyreWebhookEvent>(...)` types the result as the
 * events the service sends, which a signature from your endpoint's secret vouches for.
 */
export const verifyWebhook = <Event extends WebhookEvent<unknown> = WebhookEvent>(
  rawBody: RawBody,
  header: string | null | undefined,
  secrets: string | ReadonlyArray<string>,
  options: VerifyOptions = {}
): Event => {
  const toleranceSeconds = options.toleranceSeconds ?? 300
  const nowSeconds = options.nowSeconds ?? Math.floor(Date.now() / 1000)
  if (header === null || header === undefined || header === "") {
    throw new WebhookVerificationError("missing_header", "No X-Service-Signature header")
  }
  const parsed = parseHeader(header)
  if (parsed === null) {
    throw new WebhookVerificationError("malformed_header", "X-Service-Signature must be t=<unix>,v1=<hex>")
  }
  if (Math.abs(nowSeconds - parsed.timestamp) > toleranceSeconds) {
    throw new WebhookVerificationError(
      "timestamp_outside_tolerance",
      `Webhook timestamp ${parsed.timestamp} is more than ${toleranceSeconds} s from now (${nowSeconds})`
    )
  }
  // Compare against every candidate without stopping early; timingSafeEqual needs equal
  // lengths, which the parser guarantees (32 bytes each).
  let matched = false
  for (const secret of asList(secrets)) {
    const expected = digest(rawBody, secret, parsed.timestamp)
    for (const signature of parsed.signatures) {
      if (timingSafeEqual(expected, signature)) matched = true
    }
  }
  if (!matched) {
    throw new WebhookVerificationError(
      "signature_mismatch",
      "No signature matches the expected signature for this body"
    )
  }
  return parseEvent(rawBody) as Event
}
