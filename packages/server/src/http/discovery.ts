/**
 * How every discovery document is served: public, cacheable, readable from any origin (CORS for
 * GET, HEAD and the preflight), with its own media type. One helper, so the protected-resource
 * metadata, the authorization-server metadata, the key set, the API catalog and the agent cards
 * cannot drift apart in their headers.
 */
import type { IncomingMessage, ServerResponse } from "node:http"

export interface DiscoveryOptions {
  /** Defaults to `application/json; charset=utf-8`. */
  readonly mediaType?: string
  /** `Cache-Control: public, max-age=N`; an hour unless the document changes more often. */
  readonly maxAgeSeconds?: number
  /** A `Link` header sent with GET and HEAD (the API catalog announces itself with one). */
  readonly link?: string
  /** A `Vary` header, for a document chosen by a request header (the agent card by `A2A-Version`). */
  readonly vary?: string
}

const corsHeaders = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, HEAD, OPTIONS",
  "access-control-allow-headers": "Accept, Content-Type, MCP-Protocol-Version, A2A-Version"
} as const

/**
 * Answers GET, HEAD and OPTIONS for a document whose body is already serialized; returns false
 * for any other method, so the caller can answer 405 or fall through to its 404.
 */
export const sendDiscoveryDocument = (
  req: IncomingMessage,
  res: ServerResponse,
  body: string,
  options: DiscoveryOptions = {}
): boolean => {
  const method = req.method ?? "GET"
  if (method === "OPTIONS") {
    req.resume()
    res.writeHead(204, { ...corsHeaders, "access-control-max-age": "86400" })
    res.end()
    return true
  }
  if (method !== "GET" && method !== "HEAD") return false
  req.resume()
  const headers: Record<string, string | number> = {
    ...corsHeaders,
    "content-type": options.mediaType ?? "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    "cache-control": `public, max-age=${options.maxAgeSeconds ?? 3600}`
  }
  if (options.link !== undefined) headers["link"] = options.link
  if (options.vary !== undefined) headers["vary"] = options.vary
  res.writeHead(200, headers)
  res.end(method === "HEAD" ? undefined : body)
  return true
}
