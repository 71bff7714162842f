/**
 * `POST /oauth/token` (authorization_code with PKCE, refresh_token) and `POST /oauth/revoke`
 * (RFC 7009). Public clients: `client_id` in the form, no secret. Answers are RFC 6749 bodies
 * with `Cache-Control: no-store`.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { Effect } from "effect"
import { OAuth, OAuthProtocolError } from "@lyre/core"
import type { TokenResponse } from "@lyre/core"
import type { AppRuntime } from "../app.ts"
import { readForm } from "../http/session.ts"
import { sendOAuthError, sendTokenJson, tokenHeaders } from "./respond.ts"

const invalidRequest = (description: string) => new OAuthProtocolError({ error: "invalid_request", description })

const isForm = (req: IncomingMessage) =>
  (req.headers["content-type"] ?? "").toLowerCase().startsWith("application/x-www-form-urlencoded")

/** Each parameter at most once (RFC 6749 section 3.2); the repeated one is named. */
const repeated = (form: URLSearchParams): string | undefined =>
  [...new Set(form.keys())].find((name) => form.getAll(name).length > 1)

export const makeTokenHandler = (options: { readonly runtime: AppRuntime }) => {
  const { runtime } = options

  const run = async (
    res: ServerResponse,
    program: Effect.Effect<TokenResponse, OAuthProtocolError, OAuth>
  ): Promise<void> => {
    const outcome = await runtime.runPromise(Effect.result(program))
    if (outcome._tag === "Failure") return sendOAuthError(res, outcome.failure)
    sendTokenJson(res, 200, outcome.success)
  }

  const token = async (req: IncomingMessage, res: ServerResponse) => {
    if (!isForm(req)) {
      req.resume()
      return sendOAuthError(res, invalidRequest("The body must be application/x-www-form-urlencoded."))
    }
    const form = await readForm(req)
    const twice = repeated(form)
    if (twice !== undefined) return sendOAuthError(res, invalidRequest(`${twice} is repeated.`))
    const clientId = form.get("client_id")
    const grantType = form.get("grant_type")
    if (grantType === null) return sendOAuthError(res, invalidRequest("grant_type is required."))
    if (clientId === null) return sendOAuthError(res, invalidRequest("client_id is required (public clients)."))
    const resource = form.get("resource") ?? undefined
    if (grantType === "authorization_code") {
      const code = form.get("code")
      const redirectUri = form.get("redirect_uri")
      const codeVerifier = form.get("code_verifier")
      const missing =
        code === null ? "code" : redirectUri === null ? "redirect_uri" : codeVerifier === null ? "code_verifier" : null
      if (missing !== null || code === null || redirectUri === null || codeVerifier === null) {
        return sendOAuthError(res, invalidRequest(`${missing ?? "code"} is required.`))
      }
      return run(
        res,
        OAuth.use((oauth) => oauth.exchangeCode({ clientId, code, redirectUri, codeVerifier, resource }))
      )
    }
    if (grantType === "refresh_token") {
      const refreshToken = form.get("refresh_token")
      if (refreshToken === null) return sendOAuthError(res, invalidRequest("refresh_token is required."))
      const scope = form.get("scope") ?? undefined
      return run(
        res,
        OAuth.use((oauth) => oauth.refresh({ clientId, refreshToken, scope, resource }))
      )
    }
    sendOAuthError(
      res,
      new OAuthProtocolError({
        error: "unsupported_grant_type",
        description: "grant_type must be authorization_code or refresh_token."
      })
    )
  }

  const revoke = async (req: IncomingMessage, res: ServerResponse) => {
    if (!isForm(req)) {
      req.resume()
      return sendOAuthError(res, invalidRequest("The body must be application/x-www-form-urlencoded."))
    }
    const form = await readForm(req)
    const tokenValue = form.get("token")
    const clientId = form.get("client_id")
    if (tokenValue === null) return sendOAuthError(res, invalidRequest("token is required."))
    if (clientId === null) return sendOAuthError(res, invalidRequest("client_id is required (public clients)."))
    const known = await runtime.runPromise(OAuth.use((oauth) => oauth.getClient(clientId)).pipe(Effect.option))
    if (known._tag === "None") {
      return sendOAuthError(res, new OAuthProtocolError({ error: "invalid_client", description: "Unknown client_id." }))
    }
    await runtime.runPromise(OAuth.use((oauth) => oauth.revoke(clientId, tokenValue)))
    // RFC 7009 section 2.2: 200 whether or not the token was known.
    res.writeHead(200, tokenHeaders)
    res.end()
  }

  return async (req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> => {
    if (req.method === "OPTIONS") {
      req.resume()
      res.writeHead(204, {
        "access-control-allow-origin": "*",
        "access-control-allow-methods": "POST",
        "access-control-allow-headers": "content-type",
        "access-control-max-age": "86400"
      })
      res.end()
      return true
    }
    if (req.method !== "POST") return false
    if (path === "/oauth/token") await token(req, res)
    else await revoke(req, res)
    return true
  }
}
