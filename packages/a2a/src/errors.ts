/**
 * Domain failures in JSON-RPC: the code says which kind (A2A's own where it has one), and `data`
 * is always the REST envelope from core's one table, so an agent reads the same `type`, `code`,
 * `param` and `retry_after_seconds` as a REST client.
 */
import { A2AError } from "@a2a-js/sdk/server"
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

export const a2aErrorFor = (error: ApiError): A2AError => {
  const rendered = renderError(error)
  const code = codeByStatus[errorTable[error._tag].status] ?? jsonRpcCodes.internal
  return new A2AError(code, rendered.body.error.message, { ...rendered.body })
}

/**
 * Anything a method throws that is not an A2AError is a defect: it is logged (a JSON line, like
 * core's) and answered as a bare internal error, so no message of ours leaks to a client.
 */
export const asA2aError = (cause: unknown): A2AError => {
  if (cause instanceof A2AError) return cause
  console.error(JSON.stringify({ level: "error", msg: "a2a: unexpected failure", cause: String(cause) }))
  return A2AError.internalError("An internal error occurred.")
}

/** Runs a method so that whatever it throws reaches the SDK's transport as an A2AError. */
export const shielded = async <A>(work: () => Promise<A>): Promise<A> => {
  try {
    return await work()
  } catch (cause) {
    throw asA2aError(cause)
  }
}

/** A message the protocol cannot take, still answered with the envelope in `data`. */
export const a2aErrorForProblem = (problem: MessageProblem): A2AError => {
  switch (problem.kind) {
    case "invalid":
      return a2aErrorFor(new InvalidParameter({ message: problem.message, param: problem.param }))
    case "file_part":
      return new A2AError(
        jsonRpcCodes.contentTypeNotSupported,
        "Lyre takes a data part with the generation request, or text describing a style; not files.",
        { ...renderError(new InvalidParameter({ message: "File parts are not accepted.", param: "params.message.parts" })).body }
      )
    case "continues_task":
      return new A2AError(
        jsonRpcCodes.unsupportedOperation,
        "A generation takes one message; send a new message without taskId to start another.",
        { ...renderError(new InvalidParameter({ message: "taskId is not accepted.", param: "params.message.taskId" })).body }
      )
  }
}
