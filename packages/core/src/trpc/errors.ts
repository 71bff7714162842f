import type { TRPCError } from "@trpc/server"
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc"
import {
  errorTable,
  InternalError,
  InvalidContentType,
  InvalidJson,
  isApiError,
  RouteNotFound
} from "../domain/errors.ts"
import type { ApiError } from "../domain/errors.ts"
import { validationErrorFrom } from "../domain/validation.ts"
import type { SchemaIssue } from "../domain/validation.ts"

const trpcCodeByStatus: Readonly<Record<number, TRPC_ERROR_CODE_KEY>> = {
  400: "BAD_REQUEST",
  401: "UNAUTHORIZED",
  402: "PAYMENT_REQUIRED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  405: "METHOD_NOT_SUPPORTED",
  413: "PAYLOAD_TOO_LARGE",
  429: "TOO_MANY_REQUESTS",
  500: "INTERNAL_SERVER_ERROR",
  503: "SERVICE_UNAVAILABLE"
}

export const trpcCodeFor = (error: ApiError): TRPC_ERROR_CODE_KEY =>
  trpcCodeByStatus[errorTable[error._tag].status] ?? "INTERNAL_SERVER_ERROR"

const issuesOf = (cause: unknown): ReadonlyArray<SchemaIssue> | undefined =>
  typeof cause === "object" && cause !== null && "issues" in cause && Array.isArray(cause.issues)
    ? (cause.issues as ReadonlyArray<SchemaIssue>)
    : undefined

/**
 * Recovers the domain error behind whatever a tRPC call threw: our tagged error, an input
 * validation failure (judged against the raw input, to tell a missing field from a bad one),
 * an unknown procedure, or else an internal error.
 */
export const apiErrorFromTrpc = (error: TRPCError, rawInput: unknown): ApiError => {
  if (isApiError(error.cause)) return error.cause
  const issues = issuesOf(error.cause)
  if (error.code === "BAD_REQUEST" && issues !== undefined) return validationErrorFrom(issues, rawInput)
  if (error.code === "PARSE_ERROR") return new InvalidJson({ message: "The request body is not valid JSON." })
  // A form post (what a cross-site page can send) is not a tRPC call.
  if (error.code === "UNSUPPORTED_MEDIA_TYPE") {
    return new InvalidContentType({ message: "tRPC calls are JSON: send Content-Type: application/json." })
  }
  if (error.code === "NOT_FOUND") return new RouteNotFound({ message: error.message })
  // A procedure path whose percent-escapes do not decode names no procedure.
  if (error.code === "BAD_REQUEST" && error.cause instanceof URIError) {
    return new RouteNotFound({ message: error.message })
  }
  return new InternalError({ message: "An internal error occurred." })
}
