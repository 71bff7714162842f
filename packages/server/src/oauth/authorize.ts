/**
 * `GET /oauth/authorize` checks the request, sends a visitor without a session to the sign-in
 * page and back, and shows the consent page; `POST /oauth/authorize` (the consent form, CSRF
 * checked against the session) issues the code and redirects with `code`, `state` and `iss`.
 * A wrong client or redirect URI gets an error page, never a redirect (RFC 6749 section
 * 4.1.2.1); every other error goes back to the registered redirect URI.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { Effect, Option } from "effect"
import { challengeShape, OAuth, parseScopes, resourcesOf, scopeDescriptions, scopeNames } from "@lyre/core"
import type { OAuthClient, OAuthErrorCode, Scope } from "@lyre/core"
import type { AppRuntime } from "../app.ts"
import { errorBlock, escapeText, page, sendPage } from "../http/pages.ts"
import { csrfMatches, currentSession, readForm } from "../http/session.ts"
import { redirectError, redirectToClient } from "./respond.ts"
import type { RequestTarget } from "../http/requestTarget.ts"

/** The parameters an authorize request carries, all kept through sign-in and consent. */
const parameterNames = [
  "response_type",
  "client_id",
  "redirect_uri",
  "scope",
  "state",
  "code_challenge",
  "code_challenge_method",
  "resource"
] as const

interface Checked {
  readonly client: OAuthClient
  readonly redirectUri: string
  readonly state: string | null
  readonly scopes: ReadonlyArray<Scope>
  readonly codeChallenge: string
  readonly resource: string
}

type Outcome =
  | { readonly kind: "page"; readonly message: string }
  | {
      readonly kind: "redirect"
      readonly redirectUri: string
      readonly state: string | null
      readonly error: OAuthErrorCode
      readonly description: string
    }
  | { readonly kind: "ok"; readonly checked: Checked }

const isScope = (value: string): value is Scope => (scopeNames as ReadonlyArray<string>).includes(value)

export const makeAuthorizeHandler = (options: { readonly runtime: AppRuntime; readonly publicUrl: string }) => {
  const { runtime, publicUrl } = options
  const resources = resourcesOf(publicUrl)

  const check = async (params: URLSearchParams): Promise<Outcome> => {
    const clientId = params.get("client_id")
    const redirectUri = params.get("redirect_uri")
    if (clientId === null || params.getAll("client_id").length > 1) {
      return { kind: "page", message: "The request names no client (client_id)." }
    }
    const client = await runtime.runPromise(OAuth.use((oauth) => oauth.getClient(clientId)).pipe(Effect.option))
    if (Option.isNone(client)) return { kind: "page", message: "The application asking for access is not registered." }
    if (
      redirectUri === null ||
      params.getAll("redirect_uri").length > 1 ||
      !client.value.redirect_uris.includes(redirectUri)
    ) {
      return { kind: "page", message: "The redirect URI is not one registered for this application." }
    }
    const state = params.get("state")
    const back = (error: OAuthErrorCode, description: string): Outcome => ({
      kind: "redirect",
      redirectUri,
      state,
      error,
      description
    })
    for (const name of parameterNames) {
      if (params.getAll(name).length > 1) return back("invalid_request", `${name} is repeated.`)
    }
    if (params.get("response_type") !== "code") return back("unsupported_response_type", "response_type must be code.")
    const codeChallenge = params.get("code_challenge")
    if (codeChallenge === null) return back("invalid_request", "code_challenge is required (PKCE, S256).")
    if (params.get("code_challenge_method") !== "S256") {
      return back("invalid_request", "code_challenge_method must be S256.")
    }
    if (!challengeShape.test(codeChallenge)) return back("invalid_request", "code_challenge is not a S256 challenge.")
    const scopes = parseScopes(params.get("scope"))
    if (scopes === undefined) return back("invalid_scope", `scope must be among: ${scopeNames.join(" ")}.`)
    const resource = params.get("resource") ?? `${publicUrl}/api`
    if (!resources.includes(resource)) return back("invalid_target", `resource must be one of ${resources.join(", ")}.`)
    return {
      kind: "ok",
      checked: { client: client.value, redirectUri, state, scopes: scopes.filter(isScope), codeChallenge, resource }
    }
  }

  const errorPage = (res: ServerResponse, message: string) =>
    sendPage(
      res,
      400,
      page(
        "This sign-in link is not valid",
        `${errorBlock(message)}
<p>Go back to the application and try again. If it keeps happening, tell the application's maker.</p>`
      )
    )

  const consentPage = (checked: Checked, params: URLSearchParams, csrf: string): string => {
    const hidden = parameterNames
      .map((name) => {
        const value = params.get(name)
        return value === null ? "" : `<input type="hidden" name="${name}" value="${escapeText(value)}">`
      })
      .join("\n")
    const scopes = checked.scopes.map(
      (scope) => `<li><strong>${escapeText(scope)}</strong>: ${escapeText(scopeDescriptions[scope])}</li>`
    )
    return page(
      `Allow ${checked.client.name}?`,
      `<p><strong>${escapeText(checked.client.name)}</strong> asks to use your Lyre account. It will be able to:</p>
<ul class="scopes">
${scopes.join("\n")}
</ul>
<p>It will be sent back to <code>${escapeText(new URL(checked.redirectUri).origin)}</code>.</p>
<form method="post" action="/oauth/authorize">
<input type="hidden" name="csrf_token" value="${escapeText(csrf)}">
${hidden}
<div class="actions">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</div>
</form>`
    )
  }

  const toSignIn = (res: ServerResponse, params: URLSearchParams) => {
    const back = `/oauth/authorize?${params.toString()}`
    res.writeHead(303, { location: `/signin?return_to=${encodeURIComponent(back)}`, "cache-control": "no-store" })
    res.end()
  }

  /**
   * The checked request and the signed-in session both steps need; undefined once the answer
   * is sent instead: an error page, an error back to the client, or the sign-in page.
   */
  const proceed = async (req: IncomingMessage, res: ServerResponse, params: URLSearchParams) => {
    const outcome = await check(params)
    if (outcome.kind === "page") return errorPage(res, outcome.message)
    if (outcome.kind === "redirect") {
      return redirectError(res, outcome.redirectUri, publicUrl, outcome.state, outcome.error, outcome.description)
    }
    const session = await currentSession(runtime, req)
    if (Option.isNone(session)) return toSignIn(res, params)
    return { checked: outcome.checked, session }
  }

  const show = async (req: IncomingMessage, res: ServerResponse, params: URLSearchParams) => {
    const proceeding = await proceed(req, res, params)
    if (proceeding !== undefined)
      sendPage(res, 200, consentPage(proceeding.checked, params, proceeding.session.value.csrfToken))
  }

  const decide = async (req: IncomingMessage, res: ServerResponse) => {
    const form = await readForm(req)
    const params = new URLSearchParams()
    for (const name of parameterNames) for (const value of form.getAll(name)) params.append(name, value)
    const proceeding = await proceed(req, res, params)
    if (proceeding === undefined) return
    const { checked, session } = proceeding
    if (!csrfMatches(session.value.csrfToken, form.get("csrf_token") ?? undefined)) {
      return sendPage(
        res,
        403,
        page("Request refused", errorBlock("The form did not come from this site. Go back and try again."))
      )
    }
    if (form.get("decision") !== "allow") {
      return redirectError(
        res,
        checked.redirectUri,
        publicUrl,
        checked.state,
        "access_denied",
        "The account holder denied access."
      )
    }
    const code = await runtime.runPromise(
      OAuth.use((oauth) =>
        oauth.issueCode({
          clientId: checked.client.client_id,
          accountId: session.value.accountId,
          redirectUri: checked.redirectUri,
          codeChallenge: checked.codeChallenge,
          scopes: checked.scopes,
          resource: checked.resource
        })
      )
    )
    redirectToClient(res, checked.redirectUri, publicUrl, checked.state, { code })
  }

  return async (req: IncomingMessage, res: ServerResponse, url: RequestTarget): Promise<boolean> => {
    if (req.method === "GET" || req.method === "HEAD") {
      req.resume()
      await show(req, res, url.searchParams)
      return true
    }
    if (req.method === "POST") {
      await decide(req, res)
      return true
    }
    return false
  }
}
