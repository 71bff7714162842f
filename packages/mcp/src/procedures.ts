/**
 * How a tool reaches the domain: the tRPC procedures, through `createCaller`, with a call context
 * carrying the MCP request's credential. Never the services behind them, so the check order,
 * prices, limits and ledger are exactly REST's.
 */
import { getTRPCErrorFromUnknown } from "@trpc/server"
import { apiErrorFromTrpc, createCaller, makeCallContext, wwwAuthenticateFor } from "@lyre/core"
import type { ApiError, CallContext, CoreRuntime } from "@lyre/core"

/** What one HTTP request to /mcp carries into its tool calls, and what they leave behind. */
export interface McpRequest {
  readonly runtime: CoreRuntime
  readonly authorization: string | undefined
  /** `${PUBLIC_URL}/mcp`: the audience an OAuth access token must name to be accepted here. */
  readonly resource: string
  /** Aborted when the client goes away: a waiting tool stops polling. */
  readonly signal: AbortSignal
  /**
   * The first authentication or scope failure of any procedure call: the HTTP layer answers it
   * as a 401 or 403 challenge instead of a tool result.
   */
  challenge: ApiError | undefined
  /** Rate-limit headers of the latest procedure call, for the HTTP answer. */
  readonly headers: Record<string, string>
}

/**
 * The one place an MCP request becomes a procedure call context, with the token audience
 * (`resource: ${PUBLIC_URL}/mcp`).
 */
export const callContextFor = (request: McpRequest, idempotencyKey?: string): CallContext =>
  makeCallContext(request.runtime, { authorization: request.authorization, resource: request.resource, idempotencyKey })

export type Outcome<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly error: ApiError }

export type Caller = ReturnType<typeof createCaller>

/** Only the metadata URL's presence matters here: the question is whether the error is a challenge. */
const isChallenge = (error: ApiError): boolean => wwwAuthenticateFor(error, "") !== null

/** Calls one procedure and turns whatever it threw into the domain error from core's one table. */
export const invoke = async <A>(
  request: McpRequest,
  input: unknown,
  call: (caller: Caller) => Promise<A>,
  idempotencyKey?: string
): Promise<Outcome<A>> => {
  const ctx = callContextFor(request, idempotencyKey)
  try {
    const value = await call(createCaller(ctx))
    return { ok: true, value }
  } catch (cause) {
    const error = apiErrorFromTrpc(getTRPCErrorFromUnknown(cause), input)
    if (isChallenge(error)) request.challenge ??= error
    return { ok: false, error }
  } finally {
    Object.assign(request.headers, ctx.response.headers)
  }
}
