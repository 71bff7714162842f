/**
 * `/a2a` over HTTP: JSON-RPC 2.0 in the A2A 0.3 binding. The SDK's `JsonRpcTransportHandler`
 * checks and dispatches each request; this layer owns what it does not: the credential, the
 * body, batches, notifications and Server-Sent Events.
 *
 * Credential first: without an Authorization header the answer is 401 before the body is read.
 * With one, it is judged by the first procedure the request runs (or by `me` when the request
 * never reaches one), and a 401 there replaces any JSON-RPC answer: so a bad credential always
 * gets HTTP 401 with the challenge, and each A2A request costs one admission, like REST.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type { JSONRPCErrorResponse, JSONRPCResponse, MessageSendParams, TaskIdParams } from "@a2a-js/sdk"
import { A2AError, JsonRpcTransportHandler } from "@a2a-js/sdk/server"
import { MethodNotAllowed, renderError } from "@lyre/core"
import type { ApiError, CoreRuntime } from "@lyre/core"
import { readJsonBody, sendApiError, sendJson } from "@lyre/http"
import { Caller } from "./caller.ts"
import { agentCard } from "./card.ts"
import { a2aErrorFor, asA2aError } from "./errors.ts"
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

const streamingMethods = new Set(["message/stream", "tasks/resubscribe"])

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const idOf = (u: unknown): Id => {
  if (!isObject(u)) return null
  const id = u["id"]
  return typeof id === "string" || (typeof id === "number" && Number.isInteger(id)) ? id : null
}

/** A well-formed request without an `id` is a notification: it runs, and nothing answers it. */
const isNotification = (u: unknown): boolean =>
  isObject(u) && u["jsonrpc"] === "2.0" && typeof u["method"] === "string" && !("id" in u)

/** A well-formed call of a streaming method; anything else goes to the SDK's transport to be judged. */
const isStreamCall = (u: unknown): u is { id: Id; method: string; params: Record<string, unknown> } =>
  isObject(u) && u["jsonrpc"] === "2.0" && typeof u["method"] === "string" && streamingMethods.has(u["method"]) &&
  isObject(u["params"]) && (idOf(u) !== null || u["id"] === null)

const errorResponse = (id: Id, error: A2AError): JSONRPCErrorResponse => ({ jsonrpc: "2.0", id, error: error.toJSONRPCError() })

const sseEvent = (payload: JSONRPCResponse, event?: string) =>
  `${event === undefined ? "" : `event: ${event}\n`}data: ${JSON.stringify(payload)}\n\n`

/** The handler of `/a2a` (JSON-RPC over POST). */
export const makeA2aHandler = (options: A2aOptions): (req: IncomingMessage, res: ServerResponse) => Promise<void> => {
  const card = agentCard(options.publicUrl)
  const handler = new LyreRequestHandler(card, { ...defaultWaitOptions, ...options.wait })
  const transport = new JsonRpcTransportHandler(handler)
  const resourceMetadataUrl = `${options.publicUrl}/.well-known/oauth-protected-resource/a2a`

  const sendUnauthorized = (res: ServerResponse, error: ApiError) => sendApiError(res, error, resourceMetadataUrl)

  /** Every answer follows an admission: when no procedure ran, `me` judges the credential. */
  const admitted = async (caller: Caller): Promise<ApiError | undefined> => {
    if (caller.procedureCalls > 0) return undefined
    const me = await caller.call(undefined, (procedures) => procedures.me())
    return me.ok ? undefined : me.error
  }

  const answerOne = async (caller: Caller, request: unknown): Promise<JSONRPCResponse> => {
    const answer = await transport.handle(request, caller.context())
    if (Symbol.asyncIterator in answer) {
      // Only streaming methods stream, and those never reach here (see isStreamCall and batches).
      return errorResponse(idOf(request), A2AError.invalidRequest("This method streams; call it alone."))
    }
    return answer
  }

  const answerBatch = async (caller: Caller, entries: ReadonlyArray<unknown>): Promise<JSONRPCResponse | Array<JSONRPCResponse>> => {
    if (entries.length === 0) return errorResponse(null, A2AError.invalidRequest("An empty batch is not a request."))
    if (entries.length > maxBatchEntries) {
      return errorResponse(null, A2AError.invalidRequest(`A batch holds at most ${maxBatchEntries} requests.`))
    }
    const answers = await Promise.all(entries.map(async (entry) => {
      if (!isObject(entry)) return errorResponse(null, A2AError.invalidRequest("A batch entry must be a request object."))
      if (typeof entry["method"] === "string" && streamingMethods.has(entry["method"])) {
        return errorResponse(idOf(entry), A2AError.invalidRequest(`${entry["method"]} streams and cannot be batched.`))
      }
      const answer = await answerOne(caller, entry)
      return isNotification(entry) ? undefined : answer
    }))
    return answers.filter((answer) => answer !== undefined)
  }

  const writeStream = async (res: ServerResponse, caller: Caller, call: { id: Id; method: string; params: Record<string, unknown> }) => {
    const context = caller.context()
    const events = call.method === "message/stream"
      ? handler.sendMessageStream(call.params as unknown as MessageSendParams, context)
      : handler.resubscribe(call.params as unknown as TaskIdParams, context)
    let first: IteratorResult<unknown>
    try {
      first = await events.next()
    } catch (cause) {
      const denied = caller.authFailure ?? await admitted(caller)
      if (denied !== undefined && renderError(denied).status === 401) return sendUnauthorized(res, denied)
      const error = denied === undefined ? asA2aError(cause) : a2aErrorFor(denied)
      res.writeHead(200, { ...caller.headers, "content-type": "text/event-stream", "cache-control": "no-cache" })
      res.end(sseEvent(errorResponse(call.id, error), "error"))
      return
    }
    res.writeHead(200, {
      ...caller.headers,
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "x-accel-buffering": "no"
    })
    const write = (result: unknown) => res.write(sseEvent({ jsonrpc: "2.0", id: call.id, result } as JSONRPCResponse))
    try {
      if (first.done !== true) write(first.value)
      for (;;) {
        const next = await events.next()
        if (next.done === true || caller.signal.aborted) break
        write(next.value)
      }
    } catch (cause) {
      res.write(sseEvent(errorResponse(call.id, asA2aError(cause)), "error"))
    }
    res.end()
  }

  const endpoint = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== "POST") {
      req.resume()
      return sendApiError(
        res,
        new MethodNotAllowed({ message: `${req.method ?? "GET"} is not allowed on /a2a; send JSON-RPC with POST.`, allow: ["POST"] }),
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

    const body = await readJsonBody(req)
    let answer: JSONRPCResponse | Array<JSONRPCResponse> | undefined
    let requestId: Id = null
    if (!body.ok) {
      const rendered = renderError(body.error).body
      answer = errorResponse(
        null,
        body.error._tag === "InvalidJson"
          ? A2AError.parseError(rendered.error.message, { ...rendered })
          : A2AError.invalidRequest(rendered.error.message, { ...rendered })
      )
    } else if (Array.isArray(body.value)) {
      answer = await answerBatch(caller, body.value)
    } else if (isStreamCall(body.value)) {
      return writeStream(res, caller, body.value)
    } else if (!isObject(body.value)) {
      answer = errorResponse(null, A2AError.invalidRequest("The body must be a JSON-RPC request object or a batch."))
    } else {
      requestId = idOf(body.value)
      const one = await answerOne(caller, body.value)
      answer = isNotification(body.value) ? undefined : one
    }

    const denied = caller.authFailure ?? await admitted(caller)
    if (denied !== undefined && renderError(denied).status === 401) return sendUnauthorized(res, denied)
    // A request the guard refused (plan, rate) is answered with that, as the check order says.
    if (denied !== undefined) answer = errorResponse(requestId, a2aErrorFor(denied))
    if (answer === undefined || (Array.isArray(answer) && answer.length === 0)) {
      res.writeHead(204, caller.headers)
      res.end()
      return
    }
    sendJson(res, 200, answer, caller.headers)
  }

  return endpoint
}
