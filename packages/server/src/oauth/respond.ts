/** How the authorization server answers: RFC 6749 JSON bodies, and redirects back to the client. */
import type { ServerResponse } from "node:http"
import { renderOAuthError } from "@lyre/core"
import type { OAuthErrorCode, OAuthProtocolError } from "@lyre/core"

/** Token and revocation answers are never cached (RFC 6749 section 5.1) and callable from any origin. */
export const tokenHeaders = {
  "content-type": "application/json; charset=utf-8",
  "cache-control": "no-store",
  pragma: "no-cache",
  "access-control-allow-origin": "*"
} as const

export const sendTokenJson = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, tokenHeaders)
  res.end(JSON.stringify(body))
}

/** RFC 6749 section 5.2. */
export const sendOAuthError = (res: ServerResponse, error: OAuthProtocolError): void => {
  const rendered = renderOAuthError(error)
  // A public client cannot authenticate otherwise: the challenge names the only scheme there is.
  if (error.error === "invalid_client") res.setHeader("www-authenticate", "Bearer")
  sendTokenJson(res, rendered.status, rendered.body)
}

/** Back to the client's registered redirect URI with `state` and `iss` (RFC 9207) added. */
export const redirectToClient = (
  res: ServerResponse,
  redirectUri: string,
  issuer: string,
  state: string | null,
  params: Record<string, string>
): void => {
  const url = new URL(redirectUri)
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value)
  if (state !== null) url.searchParams.set("state", state)
  url.searchParams.set("iss", issuer)
  res.writeHead(303, { location: url.toString(), "cache-control": "no-store", "referrer-policy": "no-referrer" })
  res.end()
}

export const redirectError = (
  res: ServerResponse,
  redirectUri: string,
  issuer: string,
  state: string | null,
  error: OAuthErrorCode,
  description: string
): void => redirectToClient(res, redirectUri, issuer, state, { error, error_description: description })
