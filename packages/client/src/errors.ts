/**
 * What a call can fail with: the interface's error envelope as a class (the server answered),
 * or a connection error (it did not, or not with something readable).
 */
import { errorTypes } from "@lyre/core/domain/errorTypes"
import type { ErrorBody, ErrorType } from "./types.ts"

export class LyreApiError extends Error {
  override readonly name = "LyreApiError"
  /** HTTP status of the answer. */
  readonly status: number
  readonly type: ErrorType
  readonly code: string
  /** The request field at fault, when one is. */
  readonly param: string | undefined
  /** The unavailable model, for `model_unavailable`. */
  readonly model: string | undefined
  /** From the envelope, or else the `Retry-After` header. */
  readonly retryAfterSeconds: number | undefined
  /** The answer's `X-Request-Id`, to quote when asking the operator. */
  readonly requestId: string | undefined

  constructor(
    status: number,
    body: ErrorBody,
    headers: { readonly retryAfterSeconds?: number | undefined; readonly requestId?: string | undefined } = {}
  ) {
    super(body.message)
    this.status = status
    this.type = body.type
    this.code = body.code
    this.param = body.param
    this.model = body.model
    this.retryAfterSeconds = body.retry_after_seconds ?? headers.retryAfterSeconds
    this.requestId = headers.requestId
  }
}

/** No answer (network failure, time-out) or an answer that is not the API's (a proxy's HTML page). */
export class LyreConnectionError extends Error {
  override readonly name = "LyreConnectionError"
  /** HTTP status when an unreadable answer came; undefined when none came. */
  readonly status: number | undefined

  constructor(message: string, options: { readonly cause?: unknown; readonly status?: number | undefined } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.status = options.status
  }
}

const knownTypes: ReadonlySet<string> = new Set<ErrorType>(errorTypes)

/** The envelope's `error` object when `json` is one, else undefined. */
export const errorBodyOf = (json: unknown): ErrorBody | undefined => {
  if (typeof json !== "object" || json === null || !("error" in json)) return undefined
  const error: unknown = json.error
  if (typeof error !== "object" || error === null) return undefined
  if (!("type" in error) || typeof error.type !== "string" || !knownTypes.has(error.type)) return undefined
  if (!("code" in error) || typeof error.code !== "string") return undefined
  if (!("message" in error) || typeof error.message !== "string") return undefined
  return error as ErrorBody
}
