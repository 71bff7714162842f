/**
 * `{site_url}/dashboard`: the account holder's page, served from the build that the install made
 * (`packages/dashboard/dist`). Hashed assets are cached for a year; every other path under
 * /dashboard is the page itself (its routes are the client's), never cached, under a CSP that
 * allows only this origin. The CSP allows WebAssembly to be compiled (`'wasm-unsafe-eval'`, which
 * lets no JavaScript be evaluated): the page reads a file's content credentials with c2pa-rs
 * (decision 0130).
 */
import { existsSync, readFileSync } from "node:fs"
import { extname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { IncomingMessage, ServerResponse } from "node:http"
import { MethodNotAllowed, RouteNotFound } from "@lyre/core"
import type { ApiError } from "@lyre/core"

const contentTypes: Readonly<Record<string, string>> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".wasm": "application/wasm"
}

const securityHeaders = {
  "content-security-policy":
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; " +
    "media-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY"
}

/**
 * The build copied into a published @lyre/server (`dist/dashboard`, beside `dist/http`), else
 * the workspace's own (`packages/dashboard/dist`).
 */
const packagedDir = new URL("../dashboard/", import.meta.url)
const workspaceDir = new URL("../../../dashboard/dist/", import.meta.url)
export const defaultDashboardDir = fileURLToPath(
  existsSync(new URL("index.html", packagedDir)) ? packagedDir : workspaceDir
)

/**
 * Vite's asset names (`index-P7ZAhhvj.js`; older builds wrote `index.P7ZAhhvj.js`): dot-separated
 * words and an extension, so no path separator or `..` ever reaches the disk.
 */
const assetName = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.(?:js|css|svg|png|woff2|wasm)$/

export const makeDashboardHandler = (options: {
  readonly dir: string
  readonly fail: (res: ServerResponse, error: ApiError) => void
}) => {
  const cache = new Map<string, Buffer | null>()
  const read = (path: string): Buffer | null => {
    if (!cache.has(path)) {
      try {
        cache.set(path, readFileSync(path))
      } catch {
        cache.set(path, null)
      }
    }
    return cache.get(path) ?? null
  }
  return (req: IncomingMessage, res: ServerResponse, path: string): void => {
    req.resume()
    if (req.method !== "GET" && req.method !== "HEAD") {
      return options.fail(
        res,
        new MethodNotAllowed({ message: `${req.method} is not allowed on ${path}.`, allow: ["GET", "HEAD"] })
      )
    }
    const head = req.method === "HEAD"
    if (path.startsWith("/dashboard/assets/")) {
      const name = path.slice("/dashboard/assets/".length)
      const body = assetName.test(name) ? read(join(options.dir, "assets", name)) : null
      if (body === null) return options.fail(res, new RouteNotFound({ message: `No route GET ${path}.` }))
      res.writeHead(200, {
        "content-type": contentTypes[extname(name)] ?? "application/octet-stream",
        "content-length": String(body.length),
        "cache-control": "public, max-age=31536000, immutable",
        "x-content-type-options": "nosniff"
      })
      res.end(head ? undefined : body)
      return
    }
    const page = read(join(options.dir, "index.html"))
    if (page === null) {
      return options.fail(
        res,
        new RouteNotFound({ message: "The dashboard is not built: run the install (pnpm install)." })
      )
    }
    res.writeHead(200, {
      "content-type": "text/html; charset=utf-8",
      "content-length": String(page.length),
      "cache-control": "no-cache",
      ...securityHeaders
    })
    res.end(head ? undefined : page)
  }
}
