/**
 * Who an A2A request is, and its only way into Lyre: the router's procedures through
 * `createCaller`, each with a call context built in `a2aCallContext`. It remembers what the HTTP
 * layer needs afterwards: whether any procedure ran (so some admission judged the credential),
 * an authentication failure (answered as HTTP 401), and the rate-limit headers of the last call.
 */
import type { User } from "@a2a-js/sdk/server"
import { ServerCallContext } from "@a2a-js/sdk/server"
import { getTRPCErrorFromUnknown } from "@trpc/server"
import { apiErrorFromTrpc, createCaller, errorTable, makeCallContext, renderError } from "@lyre/core"
import type { ApiError, CallContext, CoreRuntime } from "@lyre/core"

/**
 * The one place an A2A request becomes a core call context, with the audience an OAuth access
 * token must name here: `resource`, `${PUBLIC_URL}/a2a`.
 */
export const a2aCallContext = (
  runtime: CoreRuntime,
  authorization: string | undefined,
  resource: string,
  idempotencyKey?: string
): CallContext => makeCallContext(runtime, { authorization, resource, idempotencyKey })

export type CallResult<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly error: ApiError }

export type Procedures = ReturnType<typeof createCaller>

export class Caller implements User {
  readonly runtime: CoreRuntime
  readonly authorization: string | undefined
  /** `${PUBLIC_URL}/a2a`: the audience of the access tokens accepted here. */
  readonly resource: string
  /** Aborted when the client goes away: waits and streams stop polling. */
  readonly signal: AbortSignal
  procedureCalls = 0
  authFailure: ApiError | undefined
  headers: Record<string, string> = {}

  constructor(runtime: CoreRuntime, authorization: string | undefined, resource: string, signal: AbortSignal) {
    this.runtime = runtime
    this.authorization = authorization
    this.resource = resource
    this.signal = signal
  }

  get isAuthenticated(): boolean {
    return this.procedureCalls > 0 && this.authFailure === undefined
  }

  get userName(): string {
    return ""
  }

  /** Calls one procedure; a failure comes back as the domain error, never thrown. */
  async call<A>(
    input: unknown,
    run: (procedures: Procedures) => Promise<A>,
    idempotencyKey?: string
  ): Promise<CallResult<A>> {
    const ctx = a2aCallContext(this.runtime, this.authorization, this.resource, idempotencyKey)
    this.procedureCalls += 1
    try {
      const value = await run(createCaller(ctx))
      this.headers = { ...ctx.response.headers }
      return { ok: true, value }
    } catch (cause) {
      const error = apiErrorFromTrpc(getTRPCErrorFromUnknown(cause), input)
      this.headers = { ...ctx.response.headers, ...renderError(error).headers }
      if (errorTable[error._tag].status === 401) this.authFailure ??= error
      return { ok: false, error }
    }
  }

  /** The SDK's context for one JSON-RPC call in the negotiated protocol version, carrying this caller. */
  context(requestedVersion: string): ServerCallContext {
    return new ServerCallContext({ user: this, requestedVersion })
  }
}

export const callerOf = (context: ServerCallContext | undefined): Caller | undefined =>
  context?.user instanceof Caller ? context.user : undefined
