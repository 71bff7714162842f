/**
 * `/mcp` over Streamable HTTP, stateless: POST only, the Origin rule of the transport spec, the
 * credential challenge decided here rather than inside a tool result, then a fresh server and
 * transport for the request. JSON answers unless the one request (a tool call or `tasks/result`)
 * asks for progress while it runs.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { MethodNotAllowed, MissingCredential, OriginNotAllowed, renderError, wwwAuthenticateFor } from "@lyre/core"
import type { ApiError, CoreRuntime } from "@lyre/core"
import { maxAgentBodyBytes, readJsonBody, sendApiError, sendJson } from "@lyre/http"
import { originPolicy } from "./origin.ts"
import type { McpRequest } from "./procedures.ts"
import { makeMcpServer } from "./server.ts"

export interface McpHttpOptions {
  readonly runtime: CoreRuntime
  readonly publicUrl: string
}

/** The scope an agent needs for Lyre's tools, named in every 401 so it asks for the right one. */
export const requiredScope = "music:generate"

export const mcpResourceMetadataUrl = (publicUrl: string): string =>
  `${publicUrl}/.well-known/oauth-protected-resource/mcp`

interface JsonRpcRequestLike {
  readonly method: string
  readonly params?: { readonly _meta?: { readonly progressToken?: unknown } }
}

/** The methods that reach the procedures, and so need a credential. */
const methodsWithCredential: ReadonlySet<unknown> = new Set([
  "tools/call",
  "tasks/get",
  "tasks/result",
  "tasks/list",
  "tasks/cancel"
])

const needsCredential = (message: unknown): message is JsonRpcRequestLike =>
  typeof message === "object" &&
  message !== null &&
  "method" in message &&
  methodsWithCredential.has(message.method) &&
  "id" in message

/** The methods that wait and report progress while they do (a wait tool, `tasks/result`). */
const mayReportProgress = (message: JsonRpcRequestLike): boolean =>
  message.method === "tools/call" || message.method === "tasks/result"

const wantsProgress = (message: JsonRpcRequestLike): boolean => message.params?._meta?.progressToken !== undefined

const jsonRpcError = (res: ServerResponse, status: number, code: number, error: ApiError): void =>
  sendJson(res, status, {
    jsonrpc: "2.0",
    id: null,
    error: { code, message: error.message, data: renderError(error).body }
  })

const accepts = (req: IncomingMessage, type: string): boolean => {
  const accept = req.headers.accept
  return accept === undefined || accept.includes(type) || accept.includes("*/*")
}

export const makeMcpHandler = (options: McpHttpOptions) => {
  const { runtime, publicUrl } = options
  const endpoint = `${publicUrl}/mcp`
  const resourceMetadataUrl = mcpResourceMetadataUrl(publicUrl)
  const originAllowed = originPolicy(publicUrl)

  /** 401 for a missing or unusable credential (naming the scope to ask for), 403 for a missing scope. */
  const sendChallenge = (res: ServerResponse, error: ApiError): void => {
    const rendered = renderError(error)
    const challenge = wwwAuthenticateFor(error, resourceMetadataUrl) ?? ""
    sendJson(res, rendered.status, rendered.body, {
      ...rendered.headers,
      "www-authenticate": rendered.status === 401 ? `${challenge}, scope="${requiredScope}"` : challenge
    })
  }

  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!originAllowed(req.headers.origin)) {
      req.resume()
      return sendApiError(
        res,
        new OriginNotAllowed({ message: `Requests from the origin ${req.headers.origin} are not allowed.` }),
        resourceMetadataUrl
      )
    }
    // Stateless: no session stream to offer on GET, no session to end on DELETE.
    if (req.method !== "POST") {
      req.resume()
      const error = new MethodNotAllowed({
        message: `${req.method} is not allowed on /mcp; send JSON-RPC with POST.`,
        allow: ["POST"]
      })
      return sendApiError(res, error, resourceMetadataUrl)
    }
    const body = await readJsonBody(req, maxAgentBodyBytes)
    if (!body.ok) return jsonRpcError(res, 400, body.error._tag === "InvalidJson" ? -32700 : -32600, body.error)
    const messages: ReadonlyArray<unknown> = Array.isArray(body.value) ? body.value : [body.value]
    const calls = messages.filter(needsCredential)
    const authorization = req.headers.authorization
    if (calls.length > 0 && (authorization === undefined || authorization.trim() === "")) {
      return sendChallenge(
        res,
        new MissingCredential({
          message: "tools/call and tasks/* need a credential: `Authorization: Bearer <API key or access token>`."
        })
      )
    }

    const aborted = new AbortController()
    res.once("close", () => {
      if (!res.writableFinished) aborted.abort()
    })
    const request: McpRequest = {
      runtime,
      authorization,
      resource: endpoint,
      signal: aborted.signal,
      challenge: undefined,
      headers: {}
    }
    const [onlyCall] = calls
    const stream =
      messages.length === 1 &&
      onlyCall !== undefined &&
      mayReportProgress(onlyCall) &&
      wantsProgress(onlyCall) &&
      accepts(req, "text/event-stream")
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: !stream
    })
    const server = makeMcpServer(request, publicUrl)
    await server.connect(transport)
    // A JSON answer leaves nothing open: every handler has finished and no stream exists, so
    // the server is left to the garbage collector. Closing it anyway builds a "Connection
    // closed" error (a captured stack) for handlers that are all gone: a tenth of a tool call's
    // CPU in a profile. A stream, or a client gone mid-call, is closed as before.
    let open = true
    try {
      const headers = new Headers({
        // The mode is chosen above; the SDK insists on a client accepting both.
        accept:
          accepts(req, "application/json") || stream
            ? "application/json, text/event-stream"
            : (req.headers.accept ?? ""),
        "content-type": "application/json"
      })
      const version = req.headers["mcp-protocol-version"]
      if (typeof version === "string") headers.set("mcp-protocol-version", version)
      const response = await transport.handleRequest(new Request(endpoint, { method: "POST", headers }), {
        parsedBody: body.value ?? null
      })
      const answerHeaders = (): Record<string, string> => {
        const out: Record<string, string> = { ...request.headers }
        response.headers.forEach((value, name) => {
          out[name] = value
        })
        return out
      }
      if (!stream || response.body === null) {
        // JSON: the SDK answers once every handler has finished, so the verdict is in.
        if (request.challenge !== undefined) return sendChallenge(res, request.challenge)
        const text = await response.text()
        res.writeHead(response.status, { ...answerHeaders(), "content-length": Buffer.byteLength(text) })
        res.end(text)
        open = aborted.signal.aborted
        return
      }
      // A stream commits to 200 with its first event, and the first event follows the first
      // procedure call: hold the headers until then, so a refused credential is still a 401.
      const reader = response.body.getReader()
      aborted.signal.addEventListener("abort", () => void reader.cancel())
      let chunk = await reader.read()
      if (request.challenge !== undefined) {
        await reader.cancel()
        return sendChallenge(res, request.challenge)
      }
      res.writeHead(response.status, answerHeaders())
      for (; !chunk.done; chunk = await reader.read()) res.write(chunk.value)
      res.end()
    } finally {
      // Closes the transport too, ending any stream still open.
      if (open) await server.close()
    }
  }
}
