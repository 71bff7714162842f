/** Answers in JSON: a value, or a domain error as the interface's envelope. */
import type { ServerResponse } from "node:http"
import { renderError, wwwAuthenticateFor } from "@lyre/core"
import type { ApiError } from "@lyre/core"

export const sendJson = (
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {}
): void => {
  const payload = JSON.stringify(body)
  res.writeHead(status, {
    ...headers,
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(payload)
  })
  res.end(payload)
}

/** Renders a domain error as the envelope, with the challenge a 401 or a missing scope calls for. */
export const sendApiError = (
  res: ServerResponse,
  error: ApiError,
  resourceMetadataUrl: string,
  extraHeaders: Readonly<Record<string, string>> = {}
): void => {
  const rendered = renderError(error)
  const headers: Record<string, string> = { ...extraHeaders, ...rendered.headers }
  const challenge = wwwAuthenticateFor(error, resourceMetadataUrl)
  if (challenge !== null) headers["www-authenticate"] = challenge
  sendJson(res, rendered.status, rendered.body, headers)
}
