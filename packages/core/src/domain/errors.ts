/**
 * Every failure a client can see, one tagged error per error `code`, and the one table that
 * turns each into the interface's envelope and HTTP status. Adapters render this table in
 * their own protocol; none of them decides a status or a code on its own.
 */
import { Schema } from "effect"
import type { ErrorType } from "./errorTypes.ts"
import type { ErrorEnvelope } from "./models.ts"

const Param = Schema.optional(Schema.String)

// 400 invalid_request_error
export class InvalidJson extends Schema.TaggedError<InvalidJson>()("InvalidJson", { message: Schema.String }) {}
export class MissingParameter extends Schema.TaggedError<MissingParameter>()("MissingParameter", {
  message: Schema.String,
  param: Param
}) {}
export class InvalidParameter extends Schema.TaggedError<InvalidParameter>()("InvalidParameter", {
  message: Schema.String,
  param: Param
}) {}
export class UnknownParameter extends Schema.TaggedError<UnknownParameter>()("UnknownParameter", {
  message: Schema.String,
  param: Param
}) {}
export class ParameterNotSupportedForModel extends Schema.TaggedError<ParameterNotSupportedForModel>()(
  "ParameterNotSupportedForModel",
  { message: Schema.String, param: Param }
) {}
export class RequestTooLarge extends Schema.TaggedError<RequestTooLarge>()("RequestTooLarge", {
  message: Schema.String
}) {}
export class InvalidContentType extends Schema.TaggedError<InvalidContentType>()("InvalidContentType", {
  message: Schema.String
}) {}
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()("IdempotencyKeyReused", {
  message: Schema.String
}) {}
/** A song tool asked of a track that has nothing to give (timed lyrics of an instrumental). */
export class TrackHasNoLyrics extends Schema.TaggedError<TrackHasNoLyrics>()("TrackHasNoLyrics", {
  message: Schema.String,
  param: Param
}) {}
/** An upload that is not audio of its declared type, does not decode, is silent, or is too short or long. */
export class InvalidAudio extends Schema.TaggedError<InvalidAudio>()("InvalidAudio", {
  message: Schema.String,
  param: Param
}) {}
/** An upload past its size limit: refused on its declared length before reading, or cut while streamed (413). */
export class UploadTooLarge extends Schema.TaggedError<UploadTooLarge>()("UploadTooLarge", {
  message: Schema.String
}) {}
export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()("MethodNotAllowed", {
  message: Schema.String,
  allow: Schema.Array(Schema.String)
}) {}

// 401 authentication_error
export class MissingCredential extends Schema.TaggedError<MissingCredential>()("MissingCredential", {
  message: Schema.String
}) {}
export class InvalidCredential extends Schema.TaggedError<InvalidCredential>()("InvalidCredential", {
  message: Schema.String
}) {}
export class CredentialExpired extends Schema.TaggedError<CredentialExpired>()("CredentialExpired", {
  message: Schema.String
}) {}
export class CredentialRevoked extends Schema.TaggedError<CredentialRevoked>()("CredentialRevoked", {
  message: Schema.String
}) {}

// 402 insufficient_credits
export class InsufficientCredits extends Schema.TaggedError<InsufficientCredits>()("InsufficientCredits", {
  message: Schema.String
}) {}

// 403 permission_error
export class TierInsufficient extends Schema.TaggedError<TierInsufficient>()("TierInsufficient", {
  message: Schema.String
}) {}
export class InsufficientScope extends Schema.TaggedError<InsufficientScope>()("InsufficientScope", {
  message: Schema.String,
  scope: Schema.String
}) {}
/** The account keeps as many uploads as its plan allows (DESIGN.md section 11). */
export class UploadQuotaExceeded extends Schema.TaggedError<UploadQuotaExceeded>()("UploadQuotaExceeded", {
  message: Schema.String
}) {}
/** A browser page of another site calling an endpoint that checks Origin (MCP's transport rule). */
export class OriginNotAllowed extends Schema.TaggedError<OriginNotAllowed>()("OriginNotAllowed", {
  message: Schema.String
}) {}

/** A signed-in session's change without its CSRF token (a cross-site request, or a stale page). */
export class CsrfTokenInvalid extends Schema.TaggedError<CsrfTokenInvalid>()("CsrfTokenInvalid", {
  message: Schema.String
}) {}

// 404 not_found
export class TaskNotFound extends Schema.TaggedError<TaskNotFound>()("TaskNotFound", { message: Schema.String }) {}
/** A track of another account, unknown, malformed, or of a task not `ready`: `param` names it. */
export class TrackNotFound extends Schema.TaggedError<TrackNotFound>()("TrackNotFound", {
  message: Schema.String,
  param: Param
}) {}
export class ExportNotFound extends Schema.TaggedError<ExportNotFound>()("ExportNotFound", {
  message: Schema.String,
  param: Param
}) {}
export class UploadNotFound extends Schema.TaggedError<UploadNotFound>()("UploadNotFound", {
  message: Schema.String,
  param: Param
}) {}
/** A persona of another account, unknown, malformed or deleted: `param` names it. */
export class PersonaNotFound extends Schema.TaggedError<PersonaNotFound>()("PersonaNotFound", {
  message: Schema.String,
  param: Param
}) {}
/** A lyrics task of another account, unknown or malformed. */
export class LyricsNotFound extends Schema.TaggedError<LyricsNotFound>()("LyricsNotFound", {
  message: Schema.String,
  param: Param
}) {}
export class RouteNotFound extends Schema.TaggedError<RouteNotFound>()("RouteNotFound", { message: Schema.String }) {}
/** Admin resources (accounts, keys); the admin API shares the envelope. */
export class ResourceNotFound extends Schema.TaggedError<ResourceNotFound>()("ResourceNotFound", {
  message: Schema.String
}) {}

// 400 for the admin API's uniqueness rules (an email already registered).
export class AlreadyExists extends Schema.TaggedError<AlreadyExists>()("AlreadyExists", {
  message: Schema.String,
  param: Param
}) {}

// 429 rate_limit_error
export class RpmExceeded extends Schema.TaggedError<RpmExceeded>()("RpmExceeded", {
  message: Schema.String,
  retryAfterSeconds: Schema.Number,
  limit: Schema.Number,
  resetAtSeconds: Schema.Number
}) {}
export class ConcurrentLimitExceeded extends Schema.TaggedError<ConcurrentLimitExceeded>()("ConcurrentLimitExceeded", {
  message: Schema.String,
  retryAfterSeconds: Schema.Number
}) {}

// 500 api_error
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", { message: Schema.String }) {}
export class ProviderError extends Schema.TaggedError<ProviderError>()("ProviderError", { message: Schema.String }) {}

// 503 service_unavailable
export class ModelUnavailable extends Schema.TaggedError<ModelUnavailable>()("ModelUnavailable", {
  message: Schema.String,
  model: Schema.String,
  retryAfterSeconds: Schema.Number
}) {}
/**
 * The database is out of reach (down, restarting, failing over). The request may be sent again
 * after `retryAfterSeconds`; a create sent again with its `Idempotency-Key` is charged once
 * whether or not the first attempt's statement committed before the connection dropped.
 */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", {
  message: Schema.String,
  retryAfterSeconds: Schema.Number
}) {}

export type ValidationError =
  | InvalidJson
  | MissingParameter
  | InvalidParameter
  | UnknownParameter
  | ParameterNotSupportedForModel
  | RequestTooLarge
  | InvalidContentType
  | IdempotencyKeyReused
  | MethodNotAllowed

export type AuthenticationError = MissingCredential | InvalidCredential | CredentialExpired | CredentialRevoked

export type ApiError =
  | ValidationError
  | TrackHasNoLyrics
  | InvalidAudio
  | UploadTooLarge
  | UploadQuotaExceeded
  | UploadNotFound
  | AuthenticationError
  | InsufficientCredits
  | TierInsufficient
  | InsufficientScope
  | OriginNotAllowed
  | CsrfTokenInvalid
  | TaskNotFound
  | TrackNotFound
  | ExportNotFound
  | PersonaNotFound
  | LyricsNotFound
  | RouteNotFound
  | ResourceNotFound
  | AlreadyExists
  | RpmExceeded
  | ConcurrentLimitExceeded
  | InternalError
  | ProviderError
  | ModelUnavailable
  | ServiceUnavailable

export type { ErrorType } from "./errorTypes.ts"

interface Row {
  readonly status: number
  readonly type: ErrorType
  readonly code: string
}

/** The table: tag -> status, type, code. */
export const errorTable: { readonly [K in ApiError["_tag"]]: Row } = {
  InvalidJson: { status: 400, type: "invalid_request_error", code: "invalid_json" },
  MissingParameter: { status: 400, type: "invalid_request_error", code: "missing_parameter" },
  InvalidParameter: { status: 400, type: "invalid_request_error", code: "invalid_parameter" },
  UnknownParameter: { status: 400, type: "invalid_request_error", code: "unknown_parameter" },
  ParameterNotSupportedForModel: {
    status: 400,
    type: "invalid_request_error",
    code: "parameter_not_supported_for_model"
  },
  RequestTooLarge: { status: 400, type: "invalid_request_error", code: "request_too_large" },
  InvalidContentType: { status: 400, type: "invalid_request_error", code: "invalid_content_type" },
  IdempotencyKeyReused: { status: 400, type: "invalid_request_error", code: "idempotency_key_reused" },
  TrackHasNoLyrics: { status: 400, type: "invalid_request_error", code: "track_has_no_lyrics" },
  InvalidAudio: { status: 400, type: "invalid_request_error", code: "invalid_audio" },
  UploadTooLarge: { status: 413, type: "invalid_request_error", code: "request_too_large" },
  UploadQuotaExceeded: { status: 403, type: "permission_error", code: "upload_quota_exceeded" },
  MethodNotAllowed: { status: 405, type: "invalid_request_error", code: "method_not_allowed" },
  MissingCredential: { status: 401, type: "authentication_error", code: "missing_credential" },
  InvalidCredential: { status: 401, type: "authentication_error", code: "invalid_credential" },
  CredentialExpired: { status: 401, type: "authentication_error", code: "credential_expired" },
  CredentialRevoked: { status: 401, type: "authentication_error", code: "credential_revoked" },
  InsufficientCredits: { status: 402, type: "insufficient_credits", code: "insufficient_credits" },
  TierInsufficient: { status: 403, type: "permission_error", code: "tier_insufficient" },
  InsufficientScope: { status: 403, type: "permission_error", code: "insufficient_scope" },
  OriginNotAllowed: { status: 403, type: "permission_error", code: "origin_not_allowed" },
  CsrfTokenInvalid: { status: 403, type: "permission_error", code: "csrf_token_invalid" },
  TaskNotFound: { status: 404, type: "not_found", code: "task_not_found" },
  TrackNotFound: { status: 404, type: "not_found", code: "track_not_found" },
  ExportNotFound: { status: 404, type: "not_found", code: "export_not_found" },
  UploadNotFound: { status: 404, type: "not_found", code: "upload_not_found" },
  PersonaNotFound: { status: 404, type: "not_found", code: "persona_not_found" },
  LyricsNotFound: { status: 404, type: "not_found", code: "lyrics_not_found" },
  RouteNotFound: { status: 404, type: "not_found", code: "route_not_found" },
  ResourceNotFound: { status: 404, type: "not_found", code: "resource_not_found" },
  AlreadyExists: { status: 400, type: "invalid_request_error", code: "already_exists" },
  RpmExceeded: { status: 429, type: "rate_limit_error", code: "rpm_exceeded" },
  ConcurrentLimitExceeded: { status: 429, type: "rate_limit_error", code: "concurrent_limit_exceeded" },
  InternalError: { status: 500, type: "api_error", code: "internal_error" },
  ProviderError: { status: 500, type: "api_error", code: "provider_error" },
  ModelUnavailable: { status: 503, type: "service_unavailable", code: "model_unavailable" },
  ServiceUnavailable: { status: 503, type: "service_unavailable", code: "service_unavailable" }
}

const apiErrorTags = new Set<string>(Object.keys(errorTable))

export const isApiError = (u: unknown): u is ApiError =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" && apiErrorTags.has(u._tag)

export interface RenderedError {
  readonly status: number
  readonly body: ErrorEnvelope
  /** Protocol headers the error implies (Retry-After, Allow); WWW-Authenticate is the adapter's. */
  readonly headers: Readonly<Record<string, string>>
}

/** The one place an error becomes an envelope. */
export const renderError = (error: ApiError): RenderedError => {
  const row = errorTable[error._tag]
  const headers: Record<string, string> = {}
  const body: {
    type: ErrorType
    code: string
    message: string
    param?: string
    model?: string
    retry_after_seconds?: number
  } = { type: row.type, code: row.code, message: error.message }
  if ("param" in error && error.param !== undefined) body.param = error.param
  if (error._tag === "ModelUnavailable") body.model = error.model
  if ("retryAfterSeconds" in error) {
    const seconds = Math.max(0, Math.ceil(error.retryAfterSeconds))
    body.retry_after_seconds = seconds
    headers["retry-after"] = String(seconds)
  }
  if (error._tag === "MethodNotAllowed") headers["allow"] = error.allow.join(", ")
  if (error._tag === "RpmExceeded") Object.assign(headers, rateLimitHeaders(error.limit, 0, error.resetAtSeconds))
  return { status: row.status, body: { error: body }, headers }
}

/** The X-RateLimit-* trio every answer to an identified credential carries. */
export const rateLimitHeaders = (limit: number, remaining: number, resetAtSeconds: number) => ({
  "x-ratelimit-limit": String(limit),
  "x-ratelimit-remaining": String(remaining),
  "x-ratelimit-reset": String(resetAtSeconds)
})

/**
 * RFC 6750 / RFC 9728 challenge for 401s and for a missing scope; null for every other error.
 * `invalid_token` only when a credential was actually sent.
 */
export const wwwAuthenticateFor = (error: ApiError, resourceMetadataUrl: string): string | null => {
  const metadata = `resource_metadata="${resourceMetadataUrl}"`
  switch (error._tag) {
    case "MissingCredential":
      return `Bearer ${metadata}`
    case "InvalidCredential":
    case "CredentialExpired":
    case "CredentialRevoked":
      return `Bearer error="invalid_token", error_description="${error.message}", ${metadata}`
    case "InsufficientScope":
      return `Bearer error="insufficient_scope", scope="${error.scope}", ${metadata}`
    default:
      return null
  }
}

/**
 * The authorization server's own errors. RFC 6749 section 5.2 (and RFC 7009, RFC 8707) fix their
 * format, `{ error, error_description }` with `Cache-Control: no-store`, so they are not the
 * envelope: the token and revocation endpoints answer them, and the authorize endpoint sends
 * them back in the redirect (section 4.1.2.1).
 */
export const oauthErrorTable = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  invalid_target: 400,
  unsupported_response_type: 400,
  access_denied: 400,
  unsupported_token_type: 400
} as const
export type OAuthErrorCode = keyof typeof oauthErrorTable

export class OAuthProtocolError extends Schema.TaggedError<OAuthProtocolError>()("OAuthProtocolError", {
  error: Schema.Literals([
    "invalid_request",
    "invalid_client",
    "invalid_grant",
    "unauthorized_client",
    "unsupported_grant_type",
    "invalid_scope",
    "invalid_target",
    "unsupported_response_type",
    "access_denied",
    "unsupported_token_type"
  ]),
  description: Schema.String
}) {}

export const renderOAuthError = (error: OAuthProtocolError) => ({
  status: oauthErrorTable[error.error],
  body: { error: error.error, error_description: error.description }
})
