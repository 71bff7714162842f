/**
 * Reads a JSON request body ourselves: a size cap that stops reading early, a content type
 * check, and a parse whose failure is reported in the envelope rather than as a 500.
 * Problems are returned, not thrown, so the guard still answers first (check order).
 */
import type { IncomingMessage } from "node:http"
import { InvalidContentType, InvalidJson, maxInlineUploadBase64Chars, RequestTooLarge } from "@lyre/core"
import type { ValidationError } from "@lyre/core"

/** Far above the largest valid body (about 7,000 characters of fields). */
export const maxBodyBytes = 256 * 1024

/** An agent's request (MCP, A2A) may carry an upload inline: room for its base64 beside the fields. */
export const maxAgentBodyBytes = maxBodyBytes + maxInlineUploadBase64Chars

export type BodyResult =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: ValidationError }

const readRaw = (req: IncomingMessage, limit: number): Promise<Buffer | null> =>
  new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"] ?? "0")
    if (declared > limit) {
      req.resume()
      resolve(null)
      return
    }
    const chunks: Array<Buffer> = []
    let size = 0
    let tooLarge = false
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) tooLarge = true
      else chunks.push(chunk)
    })
    req.on("end", () => resolve(tooLarge ? null : Buffer.concat(chunks)))
    req.on("error", reject)
  })

export const readJsonBody = async (req: IncomingMessage, limit = maxBodyBytes): Promise<BodyResult> => {
  const raw = await readRaw(req, limit)
  if (raw === null) {
    return { ok: false, error: new RequestTooLarge({ message: `The request body exceeds ${limit} bytes.` }) }
  }
  if (raw.length === 0) return { ok: true, value: undefined }
  const contentType = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? ""
  if (contentType !== "application/json" && !contentType.endsWith("+json")) {
    return {
      ok: false,
      error: new InvalidContentType({ message: "Send the request body as JSON with `Content-Type: application/json`." })
    }
  }
  try {
    return { ok: true, value: JSON.parse(raw.toString("utf8")) }
  } catch {
    return { ok: false, error: new InvalidJson({ message: "The request body is not valid JSON." }) }
  }
}
