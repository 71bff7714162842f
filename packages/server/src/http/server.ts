/**
 * One HTTP server for every surface: REST under /api, tRPC under /trpc, MCP at /mcp, A2A at
 * /a2a, the admin API, the discovery documents, health. Every answer carries X-Request-Id, and every unmatched path gets
 * the interface's envelope.
 */
import { createServer, ServerResponse } from "node:http"
import type { IncomingMessage, OutgoingHttpHeader, OutgoingHttpHeaders, Server } from "node:http"
import { Server as NetServer } from "node:net"
import type { AddressInfo } from "node:net"
import { nodeHTTPRequestHandler } from "@trpc/server/adapters/node-http"
import { agentCardDocuments, agentCardPath, makeA2aHandler } from "@lyre/a2a"
import {
  appRouter,
  databaseUnavailable,
  fileRequestAllowed,
  InternalError,
  isDatabaseUnavailable,
  makeCallContext,
  Metrics,
  randomBase62,
  RouteNotFound,
  Settings,
  SigningKeys
} from "@lyre/core"
import { makeMcpHandler, serverCard, serverCardMediaType, serverCardPath } from "@lyre/mcp"
import { decodePathSegment, sendApiError, sendJson } from "@lyre/http"
import { makeRestHandler } from "@lyre/rest"
import { makeAdminHandler } from "../admin/handler.ts"
import { makeAuthorizeHandler } from "../oauth/authorize.ts"
import { authorizationServerMetadata } from "../oauth/metadata.ts"
import { makeTokenHandler } from "../oauth/token.ts"
import type { AppRuntime } from "../app.ts"
import { isReady, Readiness } from "../app.ts"
import type { Logger } from "../log.ts"
import { RequestTracing } from "../telemetry.ts"
import { defaultDashboardDir, makeDashboardHandler } from "./dashboard.ts"
import { readSessionToken } from "./session.ts"
import { serveFile } from "./files.ts"
import { serveStream } from "./streams.ts"
import { isTrpcUpload, makeTrpcUploadHandler } from "./trpcUpload.ts"
import { makeMetricsEndpoint } from "./metricsEndpoint.ts"
import { makeProviderCallbackHandler } from "./providerCallback.ts"
import { makeRouteLabeller } from "./routeTemplate.ts"
import { sendDiscoveryDocument } from "./discovery.ts"
import { makeDocsPageHandler } from "./docsPage.ts"
import { makeSignInHandler } from "./signin.ts"
import {
  apiCatalog,
  apiCatalogLink,
  apiCatalogMediaType,
  apiCatalogPath,
  protectedResourceMetadataDocuments
} from "./wellKnown.ts"
import { requestTarget } from "./requestTarget.ts"
import type { RequestTarget } from "./requestTarget.ts"

export interface HttpOptions {
  readonly runtime: AppRuntime
  readonly publicUrl: string
  readonly adminToken: string | null
  readonly logger: Logger
  /** `METRICS_TOKEN`: unset, `/metrics` answers loopback peers only. */
  readonly metricsToken?: string | null
  /** `CHECK_ANSWERS`: REST answers held to their output schemas (tests, staging). */
  readonly checkAnswers?: boolean
}

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>

export const makeRequestHandler = (options: HttpOptions): Handler => {
  const { runtime, publicUrl, logger } = options
  const resourceMetadataUrl = `${publicUrl}/.well-known/oauth-protected-resource`
  const rest = makeRestHandler({ runtime, publicUrl, checkAnswers: options.checkAnswers ?? false })
  const admin = makeAdminHandler({ runtime, adminToken: options.adminToken, resourceMetadataUrl })
  const resourceMetadata = protectedResourceMetadataDocuments(publicUrl)
  const catalog = JSON.stringify(apiCatalog(publicUrl))
  const docsPage = makeDocsPageHandler()
  const providerCallback = makeProviderCallbackHandler(runtime)
  const metrics = runtime.runSync(Metrics)
  const settings = runtime.runSync(Settings)
  const tracing = runtime.runSync(RequestTracing)
  const observed = metrics.enabled || tracing.enabled
  const routeOf = makeRouteLabeller()
  const metricsEndpoint = makeMetricsEndpoint({
    metrics,
    token: options.metricsToken ?? null,
    render: () => runtime.runPromise(metrics.render)
  })
  const mcp = makeMcpHandler({ runtime, publicUrl })
  const mcpServerCard = JSON.stringify(serverCard(publicUrl))
  const a2a = makeA2aHandler({ runtime, publicUrl })
  const a2aAgentCards = agentCardDocuments(publicUrl)
  const signIn = makeSignInHandler({ runtime, publicUrl })
  const authorize = makeAuthorizeHandler({ runtime, publicUrl })
  const token = makeTokenHandler({ runtime })
  const serverMetadata = JSON.stringify(authorizationServerMetadata(publicUrl))
  const trpcUpload = makeTrpcUploadHandler(runtime)
  const dashboard = makeDashboardHandler({
    dir: defaultDashboardDir,
    fail: (res, error) => sendApiError(res, error, resourceMetadataUrl)
  })

  const routeOtherSurfaces = async (
    req: IncomingMessage,
    res: ServerResponse,
    url: RequestTarget,
    requestId: string
  ): Promise<void> => {
    const path = url.pathname
    res.setHeader("x-request-id", requestId)
    // The API's one path `route` sends here: its documentation pages, else the API's own answer.
    if (path.startsWith("/api/docs")) {
      return docsPage(req, res, path.slice(4)) ? undefined : rest(req, res, path.slice(4), url, requestId)
    }
    if (path.startsWith("/trpc/")) {
      const procedurePath = path.slice("/trpc/".length)
      // The dashboard's upload sends the file itself, which tRPC's adapter (JSON only) cannot read.
      if (isTrpcUpload(req, procedurePath)) return trpcUpload(req, res, url.searchParams)
      return nodeHTTPRequestHandler({
        req,
        res,
        path: procedurePath,
        router: appRouter,
        createContext: ({ req: request }) =>
          makeCallContext(runtime, {
            authorization: request.headers.authorization,
            idempotencyKey:
              typeof request.headers["idempotency-key"] === "string" ? request.headers["idempotency-key"] : undefined,
            sessionToken: readSessionToken(request),
            csrfToken: typeof request.headers["x-csrf-token"] === "string" ? request.headers["x-csrf-token"] : undefined
          })
      })
    }
    if (path === "/mcp") return mcp(req, res)
    if (
      path === serverCardPath &&
      sendDiscoveryDocument(req, res, mcpServerCard, { mediaType: serverCardMediaType(req.headers.accept) })
    )
      return
    if (path === "/a2a") return a2a(req, res)
    if (path === agentCardPath) {
      const header = req.headers["a2a-version"]
      const card = a2aAgentCards.for(Array.isArray(header) ? header[0] : header)
      if (sendDiscoveryDocument(req, res, card, { vary: a2aAgentCards.vary })) return
    }
    if (path.startsWith("/admin/v1/")) return admin(req, res, path.slice("/admin/v1".length))
    if ((path === "/signin" || path === "/signout") && (await signIn(req, res, url))) return
    if (path === "/oauth/authorize" && (await authorize(req, res, url))) return
    if ((path === "/oauth/token" || path === "/oauth/revoke") && (await token(req, res, path))) return
    if (path === "/metrics" && metrics.enabled) return metricsEndpoint(req, res)
    if (path === "/dashboard" || path.startsWith("/dashboard/")) return dashboard(req, res, path)
    if (path.startsWith("/internal/provider/callback/")) {
      const taskId = path.slice("/internal/provider/callback/".length)
      return providerCallback(req, res, taskId, url.searchParams.get("token") ?? "")
    }
    if (path.startsWith("/files/") && (req.method === "GET" || req.method === "HEAD")) {
      req.resume()
      const key = path.slice("/files/".length)
      // A signed address (an upstream's `uploadUrl`) is answered only while its signature holds.
      // A key whose escapes do not decode is no file's: the 404 below, as for a key not kept.
      const signed = { expires: url.searchParams.get("expires"), signature: url.searchParams.get("signature") }
      const decoded = decodePathSegment(key)
      const allowed =
        decoded !== undefined && fileRequestAllowed(settings.secretKey, decoded, signed, Math.floor(Date.now() / 1000))
      // A track's audio while it is made (decision 0126): only by its signed address.
      const isSigned = signed.expires !== null && signed.signature !== null
      if (allowed && decoded?.startsWith("streams/") === true) {
        if (await serveStream(runtime, req, res, decoded, isSigned)) return
      } else if (allowed && (await serveFile(runtime, req, res, key))) return
    }
    req.resume()
    const metadata = resourceMetadata.get(path)
    if (metadata !== undefined && sendDiscoveryDocument(req, res, metadata)) return
    if (path === "/.well-known/oauth-authorization-server" && sendDiscoveryDocument(req, res, serverMetadata)) return
    if (path === "/.well-known/jwks.json") {
      const jwks = JSON.stringify(await runtime.runPromise(SigningKeys.use((keys) => keys.jwks)))
      // Shorter than the other documents: a rotated key must reach verifiers well within a token's life.
      if (sendDiscoveryDocument(req, res, jwks, { maxAgeSeconds: 300 })) return
    }
    if (
      path === apiCatalogPath &&
      sendDiscoveryDocument(req, res, catalog, { mediaType: apiCatalogMediaType, link: apiCatalogLink(publicUrl) })
    )
      return
    if (path === "/healthz") return sendJson(res, 200, { status: "ok" })
    if (path === "/readyz") {
      const checks = await runtime.runPromise(Readiness.use((readiness) => readiness.check))
      const ready = isReady(checks)
      return sendJson(res, ready ? 200 : 503, { status: ready ? "ready" : "not_ready", checks })
    }
    sendApiError(res, new RouteNotFound({ message: `No route ${req.method} ${path}.` }), resourceMetadataUrl)
  }

  /**
   * The REST API, most requests, straight to its handler: not from inside another async function,
   * whose returning a promise costs a promise and two turns of the microtask queue more. REST
   * writes the request id with the rest of its answer's headers: set before, every answer would
   * take Node's slower path of merging set headers with those of writeHead.
   */
  const route = (req: IncomingMessage, res: ServerResponse, url: RequestTarget, requestId: string): Promise<void> => {
    const path = url.pathname
    return (path === "/api" || path.startsWith("/api/")) && !path.startsWith("/api/docs")
      ? rest(req, res, path.slice(4), url, requestId)
      : routeOtherSurfaces(req, res, url, requestId)
  }

  return async (req, res) => {
    const started = performance.now()
    const requestId = `req_${randomBase62(24)}`
    const url = requestTarget(req.url)
    const label = observed ? routeOf(url.pathname) : null
    const span = label === null ? null : tracing.begin(requestId, req.method ?? "GET", label.route)
    try {
      await (span === null ? route(req, res, url, requestId) : span.run(() => route(req, res, url, requestId)))
    } catch (cause) {
      // The database out of reach is an outage, not a fault: 503 with Retry-After, no error logged.
      const outage = isDatabaseUnavailable(cause)
      if (!outage) logger.log("error", "unhandled", { request_id: requestId, error: String(cause) })
      if (!res.headersSent) {
        res.setHeader("x-request-id", requestId)
        sendApiError(
          res,
          outage ? databaseUnavailable() : new InternalError({ message: "An internal error occurred." }),
          resourceMetadataUrl
        )
      } else if (!res.writableEnded) {
        res.destroy()
      }
    }
    if (!logger.enabled("info") && label === null) return
    const observe = () => {
      const millis = performance.now() - started
      if (label !== null)
        metrics.httpRequest(label.surface, label.route, req.method ?? "GET", res.statusCode, millis / 1000)
      span?.end(res.statusCode)
      if (logger.enabled("info")) {
        logger.log("info", "request", {
          request_id: requestId,
          method: req.method,
          path: url.pathname,
          status: res.statusCode,
          duration_ms: Math.round(millis * 100) / 100
        })
      }
    }
    // Almost every answer has ended by the time routing returns: observed now, it needs no
    // listener and no event of its own (decision 0107 counted about 0.4 % of a request, within
    // the count's swing). A stream still going (a file, MCP's events) is observed at its
    // finish, as an answer cut off before its end never is.
    if (res.writableEnded) observe()
    else res.on("finish", observe)
  }
}

export interface RunningServer {
  readonly server: Server
  readonly port: number
  /**
   * Stops taking connections at once, lets the requests in flight finish (their answers say
   * `Connection: close`, so no client sends another on that connection), drops idle
   * connections half a second later, and after `graceMillis` (default 7 s, inside a 10 s drain)
   * cuts what is left.
   */
  readonly close: (graceMillis?: number) => Promise<void>
}

/**
 * Node's writeHead as it is written: three places, the second a status message or headers told
 * apart by type (its typings split that into two overloads, which a call by name cannot pick).
 */
const nodeWriteHead = ServerResponse.prototype.writeHead as (
  this: ServerResponse,
  statusCode: number,
  statusMessageOrHeaders?: string | OutgoingHttpHeaders | Array<OutgoingHttpHeader>,
  headers?: OutgoingHttpHeaders | Array<OutgoingHttpHeader>
) => ServerResponse

export const listen = (handler: Handler, port: number, host: string): Promise<RunningServer> =>
  new Promise((resolve, reject) => {
    let closing = false
    /**
     * An answer whose head goes out once the drain has begun says `Connection: close`, so its
     * client sends nothing more on that connection: the answer in flight when the drain began,
     * and one to a request that came in on a kept-alive connection after. Decided as the head is
     * written, not by keeping the answers in flight in a set: kept in one until their `close`,
     * answers and their requests outlived young-generation collections (1.7 KB a request at
     * 5,000 a second) and doubled the collector's work (decision 0115).
     */
    class DrainAwareResponse extends ServerResponse {
      override writeHead(
        statusCode: number,
        statusMessage?: string,
        headers?: OutgoingHttpHeaders | Array<OutgoingHttpHeader>
      ): this
      override writeHead(statusCode: number, headers?: OutgoingHttpHeaders | Array<OutgoingHttpHeader>): this
      override writeHead(
        statusCode: number,
        statusMessageOrHeaders?: string | OutgoingHttpHeaders | Array<OutgoingHttpHeader>,
        headers?: OutgoingHttpHeaders | Array<OutgoingHttpHeader>
      ): this {
        if (closing) this.shouldKeepAlive = false
        // Handed on by name, with no array made for them (a rest parameter would make one per
        // answer): Node's writeHead reads a status message, headers or both by their types, and
        // an argument not given reaches it as undefined either way.
        return nodeWriteHead.call(this, statusCode, statusMessageOrHeaders, headers) as this
      }
    }
    const server = createServer({ keepAliveTimeout: 5_000, ServerResponse: DrainAwareResponse }, (req, res) => {
      // The handler answers its own failures; a throw that escapes it anyway costs this
      // request its connection, never the process (an unhandled rejection would end it).
      handler(req, res).catch(() => res.destroy())
    })
    server.once("error", reject)
    server.listen(port, host, () => {
      const address = server.address() as AddressInfo
      resolve({
        server,
        port: address.port,
        close: (graceMillis = 7_000) =>
          new Promise<void>((done) => {
            closing = true
            // The listener's own close, not http.Server's: that one also drops every idle
            // connection at once, and to Node a kept-alive connection between two requests, the
            // next still on the wire, is idle too; dropping it loses a request the client
            // already sent. Half a second later such a request is in progress and is answered;
            // what is idle then is truly idle.
            NetServer.prototype.close.call(server, () => {
              // Only http.Server's close stops its timer of request timeouts, which holds the
              // server; with the listener closed and no connection left, that is all it does now.
              server.close()
              done()
            })
            setTimeout(() => server.closeIdleConnections(), 500).unref()
            setTimeout(() => server.closeAllConnections(), graceMillis).unref()
          })
      })
    })
  })
