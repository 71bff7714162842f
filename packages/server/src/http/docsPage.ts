/**
 * `{base_url}/docs`: the human API reference, rendered in the browser by Redoc's standalone
 * bundle from our own OpenAPI document. The bundle comes from the npm registry with the server
 * and is served by the service itself, so the page works offline and sends nothing elsewhere.
 */
import { readFileSync } from "node:fs"
import type { IncomingMessage, ServerResponse } from "node:http"
import { createRequire } from "node:module"

const require = createRequire(import.meta.url)
const redocVersion = (require("redoc/package.json") as { readonly version: string }).version
/** Versioned, so the script can be cached for good and a new Redoc is a new address. */
const scriptName = `redoc.standalone.${redocVersion}.js`

/**
 * Only our own origin: Redoc's styled components need inline styles and its search runs in a
 * blob worker; nothing else is allowed, and no other host is ever contacted.
 */
const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

// Relative addresses: from /api/docs they name /api/openapi.json and /api/docs/<script>, so the
// page also works behind a proxy that mounts the site below a path.
const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Lyre API reference</title>
<link rel="icon" href="data:,">
<style>body { margin: 0; }</style>
</head>
<body>
<redoc spec-url="openapi.json" hide-hostname="false" path-in-middle-panel="true"></redoc>
<script src="docs/${scriptName}"></script>
</body>
</html>
`

/** Handles `/docs` and its script below the REST root; false for any other path. */
export const makeDocsPageHandler = () => {
  let script: Buffer | undefined
  return (req: IncomingMessage, res: ServerResponse, path: string): boolean => {
    const method = req.method ?? "GET"
    if (method !== "GET" && method !== "HEAD") return false
    if (path === "/docs") {
      req.resume()
      res.writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "content-length": Buffer.byteLength(page),
        "cache-control": "public, max-age=300",
        "content-security-policy": contentSecurityPolicy,
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer"
      })
      res.end(method === "HEAD" ? undefined : page)
      return true
    }
    if (path === `/docs/${scriptName}`) {
      req.resume()
      script ??= readFileSync(require.resolve("redoc/bundles/redoc.standalone.js"))
      res.writeHead(200, {
        "content-type": "text/javascript; charset=utf-8",
        "content-length": script.length,
        "cache-control": "public, max-age=31536000, immutable",
        "x-content-type-options": "nosniff"
      })
      res.end(method === "HEAD" ? undefined : script)
      return true
    }
    return false
  }
}
