/**
 * The envelope's `type` values, in a module of their own with no imports, so a client (in a
 * browser too) can recognise an envelope without loading zod or Effect.
 */
export const errorTypes = [
  "invalid_request_error",
  "authentication_error",
  "permission_error",
  "insufficient_credits",
  "rate_limit_error",
  "not_found",
  "api_error",
  "service_unavailable"
] as const

export type ErrorType = (typeof errorTypes)[number]
