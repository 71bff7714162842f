/**
 * The REST surface: routes from core's procedure table, bodies read by @lyre/http, every
 * procedure called by the parts the router is built from (its stage, input, resolver and
 * answer: `restCallOf`), so the check order and validation are the router's, and every answer,
 * success or failure, rendered in the interface's shapes with the interface's headers.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { getTRPCErrorFromUnknown } from "@trpc/server"
import {
  apiErrorFromTrpc,
  InvalidParameter,
  makeCallContext,
  maxIdempotencyKeyLength,
  MethodNotAllowed,
  procedureTable,
  restCallOf,
  RouteNotFound
} from "@lyre/core"
import type { CoreRuntime, ValidationError } from "@lyre/core"
import { incomingAudio, lingerThenClose, readJsonBody, sendApiError, sendJson } from "@lyre/http"
import { openApiDocument } from "./openapi.ts"
import { matchRoute, routesOf } from "./routes.ts"

export interface RestOptions {
  readonly runtime: CoreRuntime
  readonly publicUrl: string
  /** Hold every answer to its output schema (`CHECK_ANSWERS`: tests, staging); off, send it as rendered. */
  readonly checkAnswers: boolean
}

/** A request's query, read only when it has one: most have none. */
export interface RequestQuery {
  /** As `URL`'s: the query with its `?`, or "" when there is none. */
  readonly search: string
  readonly searchParams: URLSearchParams
}

const queryObject = (query: RequestQuery): Record<string, string> => {
  const out: Record<string, string> = {}
  if (query.search === "") return out
  for (const [key, value] of query.searchParams) out[key] = value
  return out
}

/**
 * A body with the path's parameters (`track_id`), as trpc-to-openapi documents the input: an
 * absent body is the parameters alone, and a body that is not an object stays as sent, for the
 * schema to refuse. A body field of a parameter's name gives way to the path.
 */
const withPathParams = (body: unknown, params: Record<string, string>): unknown => {
  if (Object.keys(params).length === 0) return body
  if (body === undefined) return { ...params }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return body
  return { ...body, ...params }
}

/** Returns a handler for paths below `/api` (the path it receives has that prefix removed). */
export const makeRestHandler = (options: RestOptions) => {
  const routes = routesOf(procedureTable).map((route) => ({
    ...route,
    call: restCallOf(route.procedurePath, route.parts, { checkAnswers: options.checkAnswers })
  }))
  const resourceMetadataUrl = `${options.publicUrl}/.well-known/oauth-protected-resource`
  let document: string | undefined

  /** `requestId` goes out with every answer's headers (X-Request-Id). */
  return async (req: IncomingMessage, res: ServerResponse, path: string, query: RequestQuery, requestId: string) => {
    const method = req.method ?? "GET"
    if (path === "/openapi.json" && (method === "GET" || method === "HEAD")) {
      document ??= JSON.stringify(openApiDocument(options.publicUrl))
      res.writeHead(200, {
        "x-request-id": requestId,
        "content-type": "application/json; charset=utf-8",
        "cache-control": "public, max-age=300"
      })
      res.end(method === "HEAD" ? undefined : document)
      return
    }
    const { match, allowed } = matchRoute(routes, method, path)
    if (match === null) {
      req.resume()
      const error =
        allowed.length > 0
          ? new MethodNotAllowed({ message: `${method} is not allowed on ${path}.`, allow: allowed })
          : new RouteNotFound({ message: `No route ${method} /api${path}.` })
      sendApiError(res, error, resourceMetadataUrl, { "x-request-id": requestId })
      return
    }

    let bodyError: ValidationError | undefined
    let input: unknown
    // An upload's body is core's to read, after the guard; its own fields come in the query.
    const audio = match.route.meta.requestBody === "audio" ? incomingAudio(req) : undefined
    if (audio !== undefined) {
      input = { ...queryObject(query), ...match.params }
    } else if (match.route.type === "mutation") {
      const body = await readJsonBody(req)
      if (body.ok) input = withPathParams(body.value, match.params)
      else bodyError = body.error
    } else {
      // A query's body, if one was sent, is not read: Node drains it when the answer ends.
      input = { ...queryObject(query), ...match.params }
    }
    const idempotencyKey = req.headers["idempotency-key"]
    if (typeof idempotencyKey === "string" && idempotencyKey.length > maxIdempotencyKeyLength) {
      bodyError ??= new InvalidParameter({
        message: `Idempotency-Key must be at most ${maxIdempotencyKeyLength} characters.`,
        param: "Idempotency-Key"
      })
    }

    const ctx = makeCallContext(options.runtime, {
      authorization: req.headers.authorization,
      idempotencyKey: typeof idempotencyKey === "string" && idempotencyKey !== "" ? idempotencyKey : undefined,
      bodyError,
      audio
    })
    ctx.response.headers["x-request-id"] = requestId
    try {
      const output = await match.route.call(ctx, input)
      sendJson(res, ctx.response.status ?? match.route.meta.successStatus ?? 200, output, ctx.response.headers)
    } catch (cause) {
      const error = apiErrorFromTrpc(getTRPCErrorFromUnknown(cause), input)
      sendApiError(res, error, resourceMetadataUrl, ctx.response.headers)
      if (audio !== undefined && !req.complete) lingerThenClose(req, res)
    }
  }
}
