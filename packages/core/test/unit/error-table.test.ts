/**
 * The seed's error table, a test per row, and every code DESIGN.md section 4 adds where the seed
 * says "not shown", a test per code: each failure renders to the envelope, status and headers
 * the interface gives it, through core's one table (`renderError`).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  ConcurrentLimitExceeded,
  CredentialExpired,
  CredentialRevoked,
  IdempotencyKeyReused,
  InsufficientCredits,
  InsufficientScope,
  InternalError,
  InvalidContentType,
  InvalidCredential,
  InvalidJson,
  InvalidParameter,
  MissingCredential,
  MissingParameter,
  ModelUnavailable,
  ParameterNotSupportedForModel,
  ProviderError,
  renderError,
  RequestTooLarge,
  RouteNotFound,
  RpmExceeded,
  TaskNotFound,
  TierInsufficient,
  UnknownParameter,
  wwwAuthenticateFor
} from "../../src/domain/errors.ts"
import type { ApiError, ErrorType } from "../../src/domain/errors.ts"

const metadataUrl = "https://lyre.test/.well-known/oauth-protected-resource"

interface SeedRow {
  readonly status: number
  readonly condition: string
  readonly error: ApiError
  /** What the seed states for the row (`type` / `code`), or DESIGN.md where the seed says "not shown". */
  readonly type: ErrorType
  readonly code: string
  /** The body's fields beyond type, code and message. */
  readonly extra?: Readonly<Record<string, unknown>>
  /** Headers the row's answer must carry. */
  readonly headers?: Readonly<Record<string, string>>
}

/** The seed's "Errors" table, row by row (the 401 row once per kind of credential it names). */
const seedRows: ReadonlyArray<SeedRow> = [
  {
    status: 400,
    condition: "Invalid request body or parameters",
    error: new InvalidParameter({ message: "style: too long", param: "style" }),
    type: "invalid_request_error",
    code: "invalid_parameter",
    extra: { param: "style" }
  },
  {
    status: 401,
    condition: "Missing credential",
    error: new MissingCredential({ message: "m" }),
    type: "authentication_error",
    code: "missing_credential"
  },
  {
    status: 401,
    condition: "Invalid credential",
    error: new InvalidCredential({ message: "m" }),
    type: "authentication_error",
    code: "invalid_credential"
  },
  {
    status: 401,
    condition: "Expired credential",
    error: new CredentialExpired({ message: "m" }),
    type: "authentication_error",
    code: "credential_expired"
  },
  {
    status: 401,
    condition: "Revoked credential",
    error: new CredentialRevoked({ message: "m" }),
    type: "authentication_error",
    code: "credential_revoked"
  },
  {
    status: 402,
    condition: "Not enough credits",
    error: new InsufficientCredits({ message: "m" }),
    type: "insufficient_credits",
    code: "insufficient_credits"
  },
  {
    status: 403,
    condition: "Valid credential but account below the Pro tier",
    error: new TierInsufficient({ message: "m" }),
    type: "permission_error",
    code: "tier_insufficient"
  },
  {
    status: 404,
    condition: "Task not found or not accessible by this credential",
    error: new TaskNotFound({ message: "m" }),
    type: "not_found",
    code: "task_not_found"
  },
  {
    status: 429,
    condition: "Concurrent generation limit exceeded",
    error: new ConcurrentLimitExceeded({ message: "m", retryAfterSeconds: 5 }),
    type: "rate_limit_error",
    code: "concurrent_limit_exceeded",
    extra: { retry_after_seconds: 5 },
    headers: { "retry-after": "5" }
  },
  {
    status: 429,
    condition: "Requests-per-minute limit exceeded",
    error: new RpmExceeded({ message: "m", retryAfterSeconds: 12.2, limit: 60, resetAtSeconds: 1_700_000_060 }),
    type: "rate_limit_error",
    code: "rpm_exceeded",
    extra: { retry_after_seconds: 13 },
    headers: {
      "retry-after": "13",
      "x-ratelimit-limit": "60",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": "1700000060"
    }
  },
  {
    status: 500,
    condition: "Internal error",
    error: new InternalError({ message: "m" }),
    type: "api_error",
    code: "internal_error"
  },
  {
    status: 500,
    condition: "Upstream provider failure",
    error: new ProviderError({ message: "m" }),
    type: "api_error",
    code: "provider_error"
  },
  {
    status: 503,
    condition: "Selected model temporarily unavailable",
    error: new ModelUnavailable({ message: "m", model: "echo", retryAfterSeconds: 30 }),
    type: "service_unavailable",
    code: "model_unavailable",
    extra: { model: "echo", retry_after_seconds: 30 },
    headers: { "retry-after": "30" }
  }
]

/** DESIGN.md section 4's codes beyond the seed's rows: status, type and code each. */
const designRows: ReadonlyArray<readonly [ApiError, number, ErrorType, string]> = [
  [new InvalidJson({ message: "m" }), 400, "invalid_request_error", "invalid_json"],
  [new MissingParameter({ message: "m", param: "style" }), 400, "invalid_request_error", "missing_parameter"],
  [new UnknownParameter({ message: "m", param: "tempo" }), 400, "invalid_request_error", "unknown_parameter"],
  [
    new ParameterNotSupportedForModel({ message: "m", param: "vocal_gender" }),
    400,
    "invalid_request_error",
    "parameter_not_supported_for_model"
  ],
  [new RequestTooLarge({ message: "m" }), 400, "invalid_request_error", "request_too_large"],
  [new InvalidContentType({ message: "m" }), 400, "invalid_request_error", "invalid_content_type"],
  [new IdempotencyKeyReused({ message: "m" }), 400, "invalid_request_error", "idempotency_key_reused"],
  [new InsufficientScope({ message: "m", scope: "music:generate" }), 403, "permission_error", "insufficient_scope"],
  [new RouteNotFound({ message: "m" }), 404, "not_found", "route_not_found"]
]

describe("the seed's error table", () => {
  it.effect.each(seedRows)("$status $condition: $type / $code", (row) =>
    Effect.sync(() => {
      const rendered = renderError(row.error)
      assert.strictEqual(rendered.status, row.status)
      assert.deepStrictEqual(rendered.body, {
        error: { type: row.type, code: row.code, message: row.error.message, ...row.extra }
      })
      assert.deepStrictEqual(rendered.headers, row.headers ?? {})
      // 401s challenge with the resource metadata's address; no other row of the table does.
      const challenge = wwwAuthenticateFor(row.error, metadataUrl)
      if (row.status === 401) assert.include(challenge ?? "", `resource_metadata="${metadataUrl}"`)
      else assert.isNull(challenge)
    })
  )
})

describe("DESIGN.md's codes where the seed says not shown", () => {
  it.effect.each(designRows.map(([error, status, type, code]) => ({ error, status, type, code })))(
    "$status $type / $code",
    ({ error, status, type, code }) =>
      Effect.sync(() => {
        const rendered = renderError(error)
        assert.deepStrictEqual(
          [rendered.status, rendered.body.error.type, rendered.body.error.code],
          [status, type, code]
        )
        if ("param" in error) assert.strictEqual(rendered.body.error.param, error.param)
      })
  )

  it.effect("a missing scope challenges with the scope it needs", () =>
    Effect.sync(() => {
      assert.strictEqual(
        wwwAuthenticateFor(new InsufficientScope({ message: "m", scope: "music:generate" }), metadataUrl),
        `Bearer error="insufficient_scope", scope="music:generate", resource_metadata="${metadataUrl}"`
      )
    })
  )
})
