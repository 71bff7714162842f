/**
 * One HTTP server for every surface: REST under /api, tRPC under /trpc, the admin API, the
 * discovery documents, health. Every answer carries X-Request-Id, and every unmatched path gets
 * the interface's envelope.
 */
import { createServer } from "node:http"
import type { IncomingMessage, Server, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { nodeHTTPRequestHandler } from "@trpc/server/adapters/node-http"
import { appRouter, InternalError, makeCallContext, randomBase62, RouteNotFound } from "@lyre/core"
import { makeRestHandler, sendApiError, sendJson } from "@lyre/rest"
import { makeAdminHandler } from "../admin/handler.ts"
import type { AppRuntime } from "../app.ts"
import { Readiness } from "../app.ts"
import type { Logger } from "../log.ts"
import { serveFile } from "./files.ts"
import { makeProviderCallbackHandler } from "./providerCallback.ts"
import { protectedResourceMetadata } from "./wellKnown.ts"

export interface HttpOptions {
  readonly runtime: AppRuntime
  readonly publicUrl: string
  readonly adminToken: string | null
  readonly logger: Logger
}

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>

export const makeRequestHandler = (options: HttpOptions): Handler => {
  const { runtime, publicUrl, logger } = options
  const resourceMetadataUrl = `${publicUrl}/.well-known/oauth-protected-resource`
  const rest = makeRestHandler({ runtime, publicUrl })
  const admin = makeAdminHandler({ runtime, adminToken: options.adminToken, resourceMetadataUrl })
  const resourceMetadata = JSON.stringify(protectedResourceMetadata(publicUrl))
  const providerCallback = makeProviderCallbackHandler(runtime)

  const route = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const path = url.pathname
    if (path === "/api" || path.startsWith("/api/")) return rest(req, res, path.slice(4), url.searchParams)
    if (path.startsWith("/trpc/")) {
      return nodeHTTPRequestHandler({
        req,
        res,
        path: path.slice("/trpc/".length),
        router: appRouter,
        createContext: ({ req: request }) =>
          makeCallContext(runtime, {
            authorization: request.headers.authorization,
            idempotencyKey: typeof request.headers["idempotency-key"] === "string"
              ? request.headers["idempotency-key"]
              : undefined
          })
      })
    }
    if (path.startsWith("/admin/v1/")) return admin(req, res, path.slice("/admin/v1".length))
    if (path.startsWith("/internal/provider/callback/")) {
      const taskId = path.slice("/internal/provider/callback/".length)
      return providerCallback(req, res, taskId, url.searchParams.get("token") ?? "")
    }
    if (path.startsWith("/files/") && (req.method === "GET" || req.method === "HEAD")) {
      req.resume()
      if (await serveFile(runtime, req, res, path.slice("/files/".length))) return
    }
    req.resume()
    if (path === "/.well-known/oauth-protected-resource") {
      res.writeHead(200, { "content-type": "application/json; charset=utf-8", "cache-control": "public, max-age=3600" })
      res.end(resourceMetadata)
      return
    }
    if (path === "/healthz") return sendJson(res, 200, { status: "ok" })
    if (path === "/readyz") {
      const checks = await runtime.runPromise(Readiness.use((readiness) => readiness.check))
      const ready = checks.database && checks.redis !== false
      return sendJson(res, ready ? 200 : 503, { status: ready ? "ready" : "not_ready", checks })
    }
    sendApiError(res, new RouteNotFound({ message: `No route ${req.method} ${path}.` }), resourceMetadataUrl)
  }

  return async (req, res) => {
    const started = performance.now()
    const requestId = `req_${randomBase62(24)}`
    res.setHeader("x-request-id", requestId)
    const url = new URL(req.url ?? "/", "http://localhost")
    // Listen before routing: most answers are finished by the time routing returns.
    if (logger.enabled("info")) {
      res.once("finish", () =>
        logger.log("info", "request", {
          request_id: requestId,
          method: req.method,
          path: url.pathname,
          status: res.statusCode,
          duration_ms: Math.round((performance.now() - started) * 100) / 100
        }))
    }
    try {
      await route(req, res, url)
    } catch (cause) {
      logger.log("error", "unhandled", { request_id: requestId, error: String(cause) })
      if (!res.headersSent) {
        sendApiError(res, new InternalError({ message: "An internal error occurred." }), resourceMetadataUrl)
      }
    }
  }
}

export interface RunningServer {
  readonly server: Server
  readonly port: number
  readonly close: () => Promise<void>
}

/** Listens, and closes gracefully: no new connections, in-flight requests finish, idle ones drop. */
export const listen = (handler: Handler, port: number, host: string): Promise<RunningServer> =>
  new Promise((resolve, reject) => {
    const server = createServer({ keepAliveTimeout: 5_000 }, (req, res) => void handler(req, res))
    server.once("error", reject)
    server.listen(port, host, () => {
      const address = server.address() as AddressInfo
      resolve({
        server,
        port: address.port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done())
            server.closeIdleConnections()
            setTimeout(() => server.closeAllConnections(), 10_000).unref()
          })
      })
    })
  })
