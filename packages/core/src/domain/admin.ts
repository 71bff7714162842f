/** Bodies of the operator's admin API (DESIGN.md section 8). */
import { z } from "zod"
import { Plan, Scope } from "./models.ts"

/** What an OAuth client id may look like (it appears in tokens, URLs and logs). */
export const clientIdShape = /^[A-Za-z0-9._-]{3,64}$/

const nonNegativeInt = z.int().min(0)
const email = z
  .string()
  .regex(/^[^\s@]+@[^\s@]+$/, "must be an email address")
  .max(320)

export const CreateAccountBody = z.strictObject({
  email,
  password: z.string().min(8).max(200).optional(),
  plan: Plan,
  subscription_credits: nonNegativeInt.optional(),
  onetime_credits: nonNegativeInt.optional(),
  credit_alert_threshold: nonNegativeInt.nullable().optional(),
  concurrency_limit: nonNegativeInt.nullable().optional(),
  requests_per_minute: z.int().min(1).nullable().optional()
})

export const UpdateAccountBody = z.strictObject({
  plan: Plan.optional(),
  credit_alert_threshold: nonNegativeInt.nullable().optional(),
  concurrency_limit: nonNegativeInt.nullable().optional(),
  requests_per_minute: z.int().min(1).nullable().optional()
})

export const ChangeCreditsBody = z.strictObject({
  subscription: z.int().optional(),
  onetime: z.int().optional(),
  reason: z.string().max(500).optional()
})

export const CreateKeyBody = z.strictObject({
  name: z.string().min(1).max(100),
  scopes: z.array(Scope).min(1),
  expires_at: z.iso.datetime({ offset: true }).nullable().optional()
})

export const SetModelAvailabilityBody = z.strictObject({
  available: z.boolean(),
  retry_after_seconds: z.int().min(0).max(86_400).optional()
})

/** The event kinds an endpoint may subscribe to (a `ping` goes to the endpoint it tests, whatever it wants). */
export const webhookEventTypes = [
  "job.completed",
  "job.failed",
  "credits.low",
  "key.expiring",
  "export.completed",
  "export.failed",
  "upload.ready",
  "upload.failed",
  "lyrics.completed",
  "lyrics.failed",
  "job.streaming"
] as const
/**
 * What an endpoint created without `events` subscribes to: every kind but `job.streaming`, which
 * is asked for by name (decision 0126: a hint while a task is made, not a result).
 */
export const defaultWebhookEventTypes = webhookEventTypes.filter((type) => type !== "job.streaming")
export const WebhookEventType = z.enum(webhookEventTypes)
export type WebhookEventType = z.infer<typeof WebhookEventType>

const webhookUrl = z.url({ protocol: /^https?$/ }).max(2048)
const webhookEvents = z.array(WebhookEventType).min(1).max(webhookEventTypes.length)

export const CreateWebhookEndpointBody = z.strictObject({
  url: webhookUrl,
  events: webhookEvents.optional()
})

export const UpdateWebhookEndpointBody = z.strictObject({
  url: webhookUrl.optional(),
  events: webhookEvents.optional(),
  enabled: z.boolean().optional()
})

/** How long the replaced secret keeps signing next to the new one (default one day, at most a week). */
export const RotateWebhookSecretBody = z.strictObject({
  grace_period_seconds: z
    .int()
    .min(0)
    .max(7 * 86_400)
    .optional()
})

export const RedeliverEventBody = z.strictObject({
  event_id: z.string().min(1).max(100)
})

export const SetPasswordBody = z.strictObject({
  password: z.string().min(8).max(200)
})

/** An exact redirect URI: absolute, no fragment; http only for loopback (RFC 8252 section 7.3). */
const redirectUri = z
  .string()
  .max(2000)
  .refine((value) => {
    if (!URL.canParse(value)) return false
    const url = new URL(value)
    if (url.hash !== "" || value.includes("#")) return false
    if (url.protocol === "http:") return ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname)
    return url.protocol !== "javascript:" && url.protocol !== "data:"
  }, "must be an absolute URI without a fragment; http only on loopback")

export const CreateOAuthClientBody = z.strictObject({
  client_id: z.string().regex(clientIdShape, "3 to 64 letters, digits, '.', '_' or '-'"),
  name: z.string().min(1).max(100),
  redirect_uris: z.array(redirectUri).min(1).max(20),
  refresh_tokens: z.boolean().optional()
})
export type CreateOAuthClientBody = z.infer<typeof CreateOAuthClientBody>
