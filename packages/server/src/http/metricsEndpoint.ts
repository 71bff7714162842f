/**
 * `GET /metrics`: the Prometheus text of this process. With `METRICS_TOKEN` set, only a bearer of
 * that token may read it (401 otherwise, with the envelope). Without it, only a peer on the
 * loopback interface may (a co-located Prometheus or agent); any other peer gets 404, as if the
 * route did not exist, which is what the admin API does without its token.
 */
import { timingSafeEqual } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import { InvalidCredential, MethodNotAllowed, MissingCredential, renderError, RouteNotFound } from "@lyre/core"
import type { ApiError, MetricsShape } from "@lyre/core"
import { sendJson } from "@lyre/http"

const loopback = (address: string | undefined): boolean =>
  address !== undefined && (address === "::1" || address.startsWith("127.") || address.startsWith("::ffff:127."))

const sameToken = (given: string, expected: string): boolean => {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** The envelope; a 401 challenges for the metrics token (not the API's OAuth resource). */
const refuse = (res: ServerResponse, error: ApiError): void => {
  const rendered = renderError(error)
  const challenge: Record<string, string> =
    rendered.status === 401 ? { "www-authenticate": 'Bearer realm="metrics"' } : {}
  sendJson(res, rendered.status, rendered.body, { ...rendered.headers, ...challenge })
}

/** Who may scrape: null when allowed, else the error to answer. */
export const metricsAccess = (
  token: string | null,
  peer: string | undefined,
  authorization: string | undefined
): ApiError | null => {
  if (token === null) {
    return loopback(peer) ? null : new RouteNotFound({ message: "No route GET /metrics." })
  }
  const bearer = authorization?.startsWith("Bearer ") === true ? authorization.slice("Bearer ".length).trim() : ""
  if (bearer === "") return new MissingCredential({ message: "Send the metrics token as a bearer token." })
  return sameToken(bearer, token) ? null : new InvalidCredential({ message: "The metrics token is not valid." })
}

export const makeMetricsEndpoint =
  (options: {
    readonly metrics: MetricsShape
    /** Runs the scrape (the gauges read the database). */
    readonly render: () => Promise<string>
    readonly token: string | null
  }) =>
  async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    req.resume()
    const refused = metricsAccess(options.token, req.socket.remoteAddress, req.headers.authorization)
    if (refused !== null) return refuse(res, refused)
    if (req.method !== "GET" && req.method !== "HEAD") {
      return refuse(res, new MethodNotAllowed({ message: "Use GET for /metrics.", allow: ["GET", "HEAD"] }))
    }
    const text = await options.render()
    res.writeHead(200, { "content-type": options.metrics.contentType, "content-length": Buffer.byteLength(text) })
    res.end(req.method === "HEAD" ? undefined : text)
  }
