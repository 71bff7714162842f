/**
 * `/a2a` over HTTP: JSON-RPC 2.0 in A2A 1.0 and 0.3 side by side. The version is negotiated
 * as the 1.0 specification says: the `A2A-Version` header names it, and a request without one
 * is 0.3's. The SDK's `JsonRpcTransportHandler` (1.0) or its compatibility layer's
 * `LegacyJsonRpcTransportHandler` (0.3) checks, translates and dispatches each request to the
 * one handler; a version the card does not list is refused by the SDK's `validateVersion`.
 * This layer owns what they do not: the credential, the body, batches, notifications and
 * Server-Sent Events.
 *
 * Credential first: without an Authorization header the answer is 401 before the body is read.
 * With one, it is judged by the first procedure the request runs (or by `me` when the request
 * never reaches one), and a 401 there replaces any JSON-RPC answer: so a bad credential always
 * gets HTTP 401 with the challenge, and each A2A request costs one admission, like REST.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { A2A_PROTOCOL_VERSION, formatSSEErrorEvent, formatSSEEvent } from "@a2a-js/sdk"
import { A2A_LEGACY_PROTOCOL_VERSION } from "@a2a-js/sdk/compat/v0_3"
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server"
import { JsonRpcTransportHandler, validateVersion } from "@a2a-js/sdk/server"
import type { ServerCallContext } from "@a2a-js/sdk/server"
import { MethodNotAllowed, renderError } from "@lyre/core"
import type { ApiError, CoreRuntime } from "@lyre/core"
import { maxAgentBodyBytes, readJsonBody, sendApiError, sendJson } from "@lyre/http"
import { Caller } from "./caller.ts"
import { agentCard } from "./card.ts"
import { a2aErrorFor, asA2aError, domainErrorOf, errorInfoOf, jsonRpcCodes } from "./errors.ts"
import { defaultWaitOptions, LyreRequestHandler } from "./handler.ts"
import type { WaitOptions } from "./handler.ts"

export interface A2aOptions {
  readonly runtime: CoreRuntime
  readonly publicUrl: string
  readonly wait?: Partial<WaitOptions>
}

/** More entries than this in one batch is an invalid request: each entry is a call. */
export const maxBatchEntries = 20

type Id = string | number | null

interface JsonRpcError {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

interface JsonRpcResponse {
  readonly jsonrpc: string
  readonly id: Id
  readonly result?: unknown
  readonly error?: unknown
}

/** What differs between the versions: the SDK's transport, its error rendering, its streaming methods. */
interface Wire {
  readonly handle: (
    request: Record<string, unknown>,
    context: ServerCallContext
  ) => Promise<JsonRpcResponse | AsyncGenerator<JsonRpcResponse, void, undefined>>
  readonly renderError: (cause: unknown) => JsonRpcError
  readonly streamingMethods: ReadonlySet<string>
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const idOf = (u: unknown): Id => {
  if (!isObject(u)) return null
  const id = u["id"]
  return typeof id === "string" || (typeof id === "number" && Number.isInteger(id)) ? id : null
}

/** A well-formed request without an `id` is a notification: it runs, and nothing answers it. */
const isNotification = (u: unknown): boolean =>
  isObject(u) && u["jsonrpc"] === "2.0" && typeof u["method"] === "string" && !("id" in u)

const isStream = (u: Record<string, unknown>, wire: Wire): boolean =>
  typeof u["method"] === "string" && wire.streamingMethods.has(u["method"]) && "id" in u

const protocolError = (id: Id, code: number, message: string): JsonRpcResponse => ({
  jsonrpc: "2.0",
  id,
  error: { code, message }
})

/** The version a request asks for: its `A2A-Version`, or 0.3 without one (1.0 specification, 3.6.2). */
const requestedVersion = (req: IncomingMessage): string => {
  const header = req.headers["a2a-version"]
  const value = (Array.isArray(header) ? header[0] : header)?.trim()
  return value === undefined || value === "" ? A2A_LEGACY_PROTOCOL_VERSION : value
}

const isAsyncIterable = <A>(u: object): u is AsyncGenerator<A, void, undefined> => Symbol.asyncIterator in u

/** The handler of `/a2a` (JSON-RPC over POST). */
export const makeA2aHandler = (options: A2aOptions): ((req: IncomingMessage, res: ServerResponse) => Promise<void>) => {
  const card = agentCard(options.publicUrl)
  const handler = new LyreRequestHandler(card, { ...defaultWaitOptions, ...options.wait })
  const v1 = new JsonRpcTransportHandler(handler)
  const legacy = new LegacyJsonRpcTransportHandler(handler)
  const wires: Readonly<Record<string, Wire>> = {
    [A2A_PROTOCOL_VERSION]: {
      handle: (request, context) => v1.handle(request, context),
      renderError: JsonRpcTransportHandler.mapToJSONRPCError,
      streamingMethods: new Set(["SendStreamingMessage", "SubscribeToTask"])
    },
    [A2A_LEGACY_PROTOCOL_VERSION]: {
      handle: (request, context) => legacy.handle(request, context),
      renderError: LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError,
      streamingMethods: new Set(["message/stream", "tasks/resubscribe"])
    }
  }
  const resourceMetadataUrl = `${options.publicUrl}/.well-known/oauth-protected-resource/a2a`

  const sendUnauthorized = (res: ServerResponse, error: ApiError) => sendApiError(res, error, resourceMetadataUrl)

  /** Every answer follows an admission: when no procedure ran, `me` judges the credential. */
  const admitted = async (caller: Caller): Promise<ApiError | undefined> => {
    if (caller.procedureCalls > 0) return undefined
    const me = await caller.call(undefined, (procedures) => procedures.me())
    return me.ok ? undefined : me.error
  }

  /** 1.0's error details end with Lyre's envelope as an ErrorInfo, when a domain error caused them. */
  const completed = (version: string, response: JsonRpcResponse, context: ServerCallContext): JsonRpcResponse => {
    const domainError = domainErrorOf(context)
    if (version !== A2A_PROTOCOL_VERSION || domainError === undefined || !isObject(response.error)) return response
    const given = response.error["data"]
    return {
      ...response,
      error: { ...response.error, data: [...(Array.isArray(given) ? given : []), errorInfoOf(domainError)] }
    }
  }

  /** A domain error answered outside the SDK's transport (the body, the admission), in the version's shape. */
  const domainErrorResponse = (
    caller: Caller,
    version: string,
    id: Id,
    error: ApiError,
    code?: number
  ): JsonRpcResponse => {
    const context = caller.context(version)
    const wire = wires[version] ?? wires[A2A_PROTOCOL_VERSION]
    const rendered = wire?.renderError(a2aErrorFor(error, context, code)) ?? {
      code: jsonRpcCodes.internal,
      message: error.message
    }
    return completed(version, { jsonrpc: "2.0", id, error: rendered }, context)
  }

  const answerOne = async (
    caller: Caller,
    version: string,
    wire: Wire,
    request: Record<string, unknown>
  ): Promise<JsonRpcResponse> => {
    const context = caller.context(version)
    const answer = await wire.handle(request, context)
    if (isAsyncIterable(answer)) {
      // Streaming methods are answered by writeStream; a batch refuses them before this.
      await answer.return()
      return protocolError(idOf(request), -32600, "This method streams; call it alone.")
    }
    return completed(version, answer, context)
  }

  const answerBatch = async (caller: Caller, version: string, wire: Wire, entries: ReadonlyArray<unknown>) => {
    if (entries.length === 0) return protocolError(null, -32600, "An empty batch is not a request.")
    if (entries.length > maxBatchEntries)
      return protocolError(null, -32600, `A batch holds at most ${maxBatchEntries} requests.`)
    const answers = await Promise.all(
      entries.map(async (entry) => {
        if (!isObject(entry)) return protocolError(null, -32600, "A batch entry must be a request object.")
        if (isStream(entry, wire))
          return protocolError(idOf(entry), -32600, `${String(entry["method"])} streams and cannot be batched.`)
        const answer = await answerOne(caller, version, wire, entry)
        return isNotification(entry) ? undefined : answer
      })
    )
    return answers.filter((answer) => answer !== undefined)
  }

  /**
   * A streaming call: Server-Sent Events once its first event is in hand, so a failure before
   * it (a refused credential included) is still answered as such. A call the transport refuses
   * outright, or a 1.0 stream failing before its first event, comes back as a JSON answer for
   * the caller to send after the admission.
   */
  const writeStream = async (
    res: ServerResponse,
    caller: Caller,
    version: string,
    wire: Wire,
    request: Record<string, unknown>
  ): Promise<JsonRpcResponse | undefined> => {
    const context = caller.context(version)
    const id = idOf(request)
    const answer = await wire.handle(request, context)
    if (!isAsyncIterable(answer)) return completed(version, answer, context)
    const errorEvent = (cause: unknown) =>
      formatSSEErrorEvent(
        completed(version, { jsonrpc: "2.0", id, error: wire.renderError(asA2aError(cause)) }, context)
      )
    let first: IteratorResult<JsonRpcResponse, void>
    try {
      first = await answer.next()
    } catch (cause) {
      // 1.0 answers a stream refused before its first event in JSON, as the SDK's own server
      // does (its client then throws the A2A error itself); 0.3 keeps its error event.
      if (version === A2A_PROTOCOL_VERSION) {
        return completed(version, { jsonrpc: "2.0", id, error: wire.renderError(asA2aError(cause)) }, context)
      }
      const denied = caller.authFailure ?? (await admitted(caller))
      if (denied !== undefined && renderError(denied).status === 401) return void sendUnauthorized(res, denied)
      res.writeHead(200, { ...caller.headers, "content-type": "text/event-stream", "cache-control": "no-cache" })
      res.end(errorEvent(denied === undefined ? cause : a2aErrorFor(denied, context)))
      return undefined
    }
    res.writeHead(200, {
      ...caller.headers,
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "x-accel-buffering": "no"
    })
    try {
      if (first.done !== true) res.write(formatSSEEvent(first.value))
      for (;;) {
        const next = await answer.next()
        if (next.done === true || caller.signal.aborted) break
        res.write(formatSSEEvent(next.value))
      }
    } catch (cause) {
      res.write(errorEvent(cause))
    }
    res.end()
    return undefined
  }

  const endpoint = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== "POST") {
      req.resume()
      return sendApiError(
        res,
        new MethodNotAllowed({
          message: `${req.method ?? "GET"} is not allowed on /a2a; send JSON-RPC with POST.`,
          allow: ["POST"]
        }),
        resourceMetadataUrl
      )
    }
    const abort = new AbortController()
    res.once("close", () => abort.abort())
    const caller = new Caller(options.runtime, req.headers.authorization, `${options.publicUrl}/a2a`, abort.signal)
    if (req.headers.authorization === undefined) {
      req.resume()
      const me = await caller.call(undefined, (procedures) => procedures.me())
      if (!me.ok) return sendUnauthorized(res, me.error)
    }

    const body = await readJsonBody(req, maxAgentBodyBytes)
    const version = requestedVersion(req)
    const wire = wires[version]
    let answer: JsonRpcResponse | Array<JsonRpcResponse> | undefined
    let requestId: Id = null
    if (!body.ok) {
      answer = domainErrorResponse(
        caller,
        version,
        null,
        body.error,
        body.error._tag === "InvalidJson" ? -32700 : -32600
      )
    } else if (wire === undefined) {
      requestId = idOf(body.value)
      try {
        validateVersion(version, card, "JSONRPC")
      } catch (cause) {
        answer = { jsonrpc: "2.0", id: requestId, error: JsonRpcTransportHandler.mapToJSONRPCError(cause) }
      }
    } else if (Array.isArray(body.value)) {
      answer = await answerBatch(caller, version, wire, body.value)
    } else if (!isObject(body.value)) {
      answer = protocolError(null, -32600, "The body must be a JSON-RPC request object or a batch.")
    } else if (isStream(body.value, wire)) {
      requestId = idOf(body.value)
      answer = await writeStream(res, caller, version, wire, body.value)
      if (answer === undefined) return
    } else {
      requestId = idOf(body.value)
      const one = await answerOne(caller, version, wire, body.value)
      answer = isNotification(body.value) ? undefined : one
    }

    const denied = caller.authFailure ?? (await admitted(caller))
    if (denied !== undefined && renderError(denied).status === 401) return sendUnauthorized(res, denied)
    // A request the guard refused (plan, rate) is answered with that, as the check order says.
    if (denied !== undefined) answer = domainErrorResponse(caller, version, requestId, denied)
    if (answer === undefined || (Array.isArray(answer) && answer.length === 0)) {
      res.writeHead(204, caller.headers)
      res.end()
      return
    }
    sendJson(res, 200, answer, caller.headers)
  }

  return endpoint
}
