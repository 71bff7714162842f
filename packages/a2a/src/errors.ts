/**
 * Domain failures in JSON-RPC, for both protocol versions. The code says which kind (A2A's own
 * where it has one, Lyre's shared ones otherwise) and is the same on 1.0 and 0.3. The REST
 * envelope from core's one table rides along in each version's way: 0.3's `data` is the
 * envelope itself, as before; 1.0's `data` is a list of typed details, so the envelope becomes a
 * `google.rpc.ErrorInfo` of Lyre's domain (reason the error code, metadata its fields) after the
 * one the SDK writes for A2A's own errors.
 */
import type { ServerCallContext } from "@a2a-js/sdk/server"
import {
  A2AError,
  ERROR_INFO_TYPE,
  JsonRpcContentTypeNotSupportedError,
  JsonRpcRequestMalformedError,
  JsonRpcTaskNotFoundError,
  JsonRpcTransportError,
  JsonRpcUnsupportedOperationError
} from "@a2a-js/sdk/errors"
import type { ErrorDetail } from "@a2a-js/sdk/errors"
import { errorTable, InvalidParameter, renderError } from "@lyre/core"
import type { ApiError } from "@lyre/core"
import { lyreJsonRpcCodes } from "@lyre/http"
import type { MessageProblem } from "./message.ts"

/** A2A's codes where it has one, Lyre's (shared with MCP) where it has none. */
export const jsonRpcCodes = {
  invalidParams: -32602,
  internal: -32603,
  taskNotFound: -32001,
  taskNotCancelable: -32002,
  unsupportedOperation: -32004,
  contentTypeNotSupported: -32005,
  ...lyreJsonRpcCodes
} as const

const codeByStatus: Readonly<Record<number, number>> = {
  400: jsonRpcCodes.invalidParams,
  401: jsonRpcCodes.unauthenticated,
  402: jsonRpcCodes.paymentRequired,
  403: jsonRpcCodes.forbidden,
  404: jsonRpcCodes.taskNotFound,
  429: jsonRpcCodes.rateLimited,
  503: jsonRpcCodes.unavailable
}

export const jsonRpcCodeFor = (error: ApiError): number =>
  codeByStatus[errorTable[error._tag].status] ?? jsonRpcCodes.internal

/** The domain of Lyre's ErrorInfo details, beside A2A's `a2a-protocol.org`. */
export const lyreErrorDomain = "lyre"

/** Where a call's domain error waits for the HTTP layer, which writes 1.0's details from it. */
const domainErrorKey = "lyre.domainError"

/** The envelope as a 1.0 error detail: `reason` is the code in capitals, every field a string. */
export const errorInfoOf = (error: ApiError): ErrorDetail => {
  const fields = renderError(error).body.error
  const metadata: Record<string, string> = {}
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined || value === null) continue
    metadata[key] = typeof value === "string" ? value : JSON.stringify(value)
  }
  return { "@type": ERROR_INFO_TYPE, reason: fields.code.toUpperCase(), domain: lyreErrorDomain, metadata }
}

/** The domain error a call failed with, if it failed with one. */
export const domainErrorOf = (context: ServerCallContext): ApiError | undefined => {
  const recorded = context.state.get(domainErrorKey)
  return recorded === undefined ? undefined : (recorded as ApiError)
}

/**
 * The error to throw for a domain failure, of the SDK's class for the A2A error it is (so 1.0
 * gets A2A's own detail too) and with the envelope as 0.3's `data`; the failure is recorded on
 * the call's context for 1.0's Lyre detail.
 */
export const a2aErrorFor = (error: ApiError, context: ServerCallContext, code = jsonRpcCodeFor(error)): A2AError => {
  context.state.set(domainErrorKey, error)
  const rendered = renderError(error).body
  const options = { envelopeCode: code, message: rendered.error.message, data: { ...rendered } }
  switch (code) {
    case jsonRpcCodes.invalidParams:
      return new JsonRpcRequestMalformedError(options)
    case jsonRpcCodes.taskNotFound:
      return new JsonRpcTaskNotFoundError(options)
    case jsonRpcCodes.unsupportedOperation:
      return new JsonRpcUnsupportedOperationError(options)
    case jsonRpcCodes.contentTypeNotSupported:
      return new JsonRpcContentTypeNotSupportedError(options)
    default:
      return new JsonRpcTransportError({
        jsonrpc: "2.0",
        id: null,
        error: { code, message: options.message, data: options.data }
      })
  }
}

/** A bare internal error: what a client is told of a defect. */
export const internalError = (): A2AError =>
  new JsonRpcTransportError({
    jsonrpc: "2.0",
    id: null,
    error: { code: jsonRpcCodes.internal, message: "An internal error occurred." }
  })

/**
 * Anything a method throws that is not an A2A error is a defect: it is logged (a JSON line, like
 * core's) and answered as a bare internal error, so no message of ours leaks to a client.
 */
export const asA2aError = (cause: unknown): A2AError => {
  if (cause instanceof A2AError) return cause
  console.error(JSON.stringify({ level: "error", msg: "a2a: unexpected failure", cause: String(cause) }))
  return internalError()
}

/** Runs a method so that whatever it throws reaches the SDK's transport as an A2A error. */
export const shielded = async <A>(work: () => Promise<A>): Promise<A> => {
  try {
    return await work()
  } catch (cause) {
    throw asA2aError(cause)
  }
}

/** A message the protocol cannot take, still answered with the envelope. */
export const a2aErrorForProblem = (problem: MessageProblem, context: ServerCallContext): A2AError => {
  switch (problem.kind) {
    case "invalid":
      return a2aErrorFor(new InvalidParameter({ message: problem.message, param: problem.param }), context)
    case "file_part":
      return a2aErrorFor(
        new InvalidParameter({
          message:
            `A file is an upload (operation upload_audio), not input to ${problem.operation}: upload it first, ` +
            "then send its track_id once it is ready.",
          param: "params.message.parts"
        }),
        context,
        jsonRpcCodes.contentTypeNotSupported
      )
    case "continues_task":
      return a2aErrorFor(
        new InvalidParameter({
          message: "A generation takes one message; send a new message without taskId to start another.",
          param: "params.message.taskId"
        }),
        context,
        jsonRpcCodes.unsupportedOperation
      )
  }
}
