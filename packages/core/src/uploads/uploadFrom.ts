/**
 * An upload sent as JSON (what the MCP tool and the A2A file part carry, beside REST's raw
 * body): the file inline as base64 `data`, up to a stated size, or a `url` Lyre fetches under
 * the webhooks' address rule (fetchAudio.ts). Either becomes the same IncomingAudio a REST
 * body is, so the same receive, checks, allowance and errors apply.
 */
import { Readable } from "node:stream"
import { z } from "zod"
import { maxUploadBytes, uploadContentTypes } from "./model.ts"
import { fetchAudio, uploadFetchMaxRedirects, uploadFetchTimeoutSeconds } from "./fetchAudio.ts"
import type { IncomingAudio } from "./UploadFiles.ts"

/** Largest file sent inline as `data`, decoded: a larger one comes by `url` (up to maxUploadBytes). */
export const maxInlineUploadBytes = 10 * 1024 * 1024
/** Its base64 length: four characters per three bytes, padded. */
export const maxInlineUploadBase64Chars = Math.ceil(maxInlineUploadBytes / 3) * 4

const megabytes = (bytes: number) => `${bytes / (1024 * 1024)} MB`

export const UploadFromRequest = z
  .strictObject({
    data: z
      .base64()
      .max(maxInlineUploadBase64Chars)
      .optional()
      .describe(
        `The audio file itself, base64-encoded: at most ${megabytes(maxInlineUploadBytes)} once decoded ` +
          `(${maxInlineUploadBase64Chars} characters). Give content_type with it. A larger file: use url.`
      ),
    url: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional()
      .describe(
        `An http(s) address Lyre fetches the file from: public addresses only (no loopback, private or link-local ` +
          `address, also after DNS and redirects), at most ${megabytes(maxUploadBytes)}, within ` +
          `${uploadFetchTimeoutSeconds} s, up to ${uploadFetchMaxRedirects} redirects.`
      ),
    content_type: z
      .string()
      .max(100)
      .optional()
      .describe(
        `The file's type: ${uploadContentTypes.join(", ")}. Required with data; with url, absent means the type the ` +
          "server answers with (or the path's extension)."
      ),
    title: z.string().max(200).optional().describe("A name for the upload (at most 200 characters).")
  })
  .superRefine((request, context) => {
    if (request.data === undefined && request.url === undefined) {
      context.addIssue({
        code: "custom",
        path: ["data"],
        message: "Give the file as data (base64) or as url.",
        params: { lyre: "missing_parameter" }
      })
    }
    if (request.data !== undefined && request.url !== undefined) {
      context.addIssue({ code: "custom", path: ["url"], message: "url: give the file as data or as url, not both." })
    }
    if (request.data !== undefined && request.content_type === undefined) {
      context.addIssue({
        code: "custom",
        path: ["content_type"],
        message: "content_type is required with data.",
        params: { lyre: "missing_parameter" }
      })
    }
  })
export type UploadFromRequest = z.infer<typeof UploadFromRequest>

/** The request's file as an IncomingAudio: decoded at once from data, fetched only when opened from url. */
export const audioFrom = (request: UploadFromRequest, allowPrivate: boolean): IncomingAudio => {
  const none = () => Promise.resolve({ ok: true as const, title: undefined })
  if (request.data !== undefined) {
    const bytes = Buffer.from(request.data, "base64")
    const contentType = request.content_type ?? ""
    return {
      declaredBytes: bytes.length,
      open: () => Promise.resolve({ ok: true, file: { stream: Readable.from([bytes]), contentType, filename: null } }),
      fields: none
    }
  }
  const url = request.url ?? ""
  return {
    declaredBytes: null,
    open: () =>
      fetchAudio(url, request.content_type, {
        allowPrivate,
        timeoutMs: uploadFetchTimeoutSeconds * 1000,
        maxBytes: maxUploadBytes,
        maxRedirects: uploadFetchMaxRedirects
      }),
    fields: none
  }
}
