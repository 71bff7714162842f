/**
 * `{site_url}/files/<key>`: re-hosted audio and images, with `Content-Type`, `Content-Length`,
 * `Accept-Ranges: bytes` and single-range `206` answers (RFC 9110 section 14), so players can
 * seek. Several ranges in one request are answered with the whole file, which the RFC allows.
 * A bucket out of reach is an outage: 503 `service_unavailable` with `Retry-After`, as for the
 * database.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { pipeline } from "node:stream/promises"
import { Cause, Effect, Exit } from "effect"
import type { ManagedRuntime } from "effect"
import { renderError, ServiceUnavailable } from "@lyre/core"
import { sendJson } from "@lyre/http"
import { isStorageKey, Storage, StorageError } from "@lyre/worker"

type Range = { readonly start: number; readonly end: number } | "unsatisfiable" | null

/** Parses one `bytes=` range against `size`; null means "serve it all". */
export const parseRange = (header: string | undefined, size: number): Range => {
  if (header === undefined) return null
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  if (match === null) return null
  const [, first = "", last = ""] = match
  if (first === "" && last === "") return null
  if (first === "") {
    const suffix = Number(last)
    if (suffix === 0 || size === 0) return "unsatisfiable"
    return { start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(first)
  const end = last === "" ? size - 1 : Math.min(Number(last), size - 1)
  if (start >= size || (last !== "" && Number(last) < start)) return "unsatisfiable"
  return { start, end }
}

export const serveFile = async (
  runtime: ManagedRuntime.ManagedRuntime<Storage, unknown>,
  req: IncomingMessage,
  res: ServerResponse,
  key: string
): Promise<boolean> => {
  if (!isStorageKey(key)) return false
  const looked = await runtime.runPromiseExit(
    Storage.use((storage) => Effect.map(storage.stat(key), (object) => ({ storage, object })))
  )
  if (Exit.isFailure(looked)) {
    if (!looked.cause.reasons.some((reason) => Cause.isDieReason(reason) && reason.defect instanceof StorageError)) {
      throw Cause.squash(looked.cause)
    }
    const rendered = renderError(
      new ServiceUnavailable({
        message: "The service cannot reach its file storage right now. Retry shortly.",
        retryAfterSeconds: 1
      })
    )
    sendJson(res, rendered.status, rendered.body, rendered.headers)
    return true
  }
  const { storage, object } = looked.value
  if (object === null) return false
  const common = {
    "content-type": object.contentType,
    "accept-ranges": "bytes",
    "cache-control": "public, max-age=86400"
  }
  const range = parseRange(typeof req.headers.range === "string" ? req.headers.range : undefined, object.size)
  if (range === "unsatisfiable") {
    res.writeHead(416, { ...common, "content-range": `bytes */${object.size}`, "content-length": "0" })
    res.end()
    return true
  }
  const span = range ?? { start: 0, end: object.size - 1 }
  const length = object.size === 0 ? 0 : span.end - span.start + 1
  res.writeHead(range === null ? 200 : 206, {
    ...common,
    "content-length": String(length),
    ...(range === null ? {} : { "content-range": `bytes ${span.start}-${span.end}/${object.size}` })
  })
  if (req.method === "HEAD" || length === 0) {
    res.end()
    return true
  }
  await pipeline(storage.read(key, span), res).catch(() => res.destroy())
  return true
}
