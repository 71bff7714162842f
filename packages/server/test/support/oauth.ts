/**
 * Driving the authorization server as a client would: sign in and consent over plain HTTP (the
 * browser test clicks the same pages in Chromium), then the code exchange with oauth4webapi.
 */
import * as oauth from "oauth4webapi"
import { randomBase62 } from "@lyre/core"
import type { TestServer } from "./harness.ts"

export const password = "correct horse battery staple"
export const callback = "http://127.0.0.1:9/callback"
export const insecure = { [oauth.allowInsecureRequests]: true } as const

export interface OAuthWorld {
  readonly server: TestServer
  readonly as: oauth.AuthorizationServer
  readonly accountId: string
  readonly email: string
}

/** A Pro account with a password, a browser-extension client and a mobile client (refresh tokens). */
export const setUpOAuth = async (server: TestServer, plan = "pro"): Promise<OAuthWorld> => {
  const email = `${randomBase62(10).toLowerCase()}@example.test`
  const account = await server.admin("POST", "/accounts", { email, plan, password, subscription_credits: 1_000 })
  if (account.status !== 201) throw new Error(`account: ${JSON.stringify(account.body)}`)
  for (const client of [
    { client_id: "extension", name: "Lyre for Browsers", redirect_uris: [callback], refresh_tokens: false },
    { client_id: "mobile", name: "Lyre Mobile", redirect_uris: [callback], refresh_tokens: true }
  ]) {
    const made = await server.admin("POST", "/oauth-clients", client)
    if (made.status !== 201 && made.status !== 400) throw new Error(`client: ${JSON.stringify(made.body)}`)
  }
  const issuer = new URL(server.url)
  const as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure })
  )
  return { server, as, accountId: String(account.body["id"]), email }
}

const cookieOf = (response: Response, name: string): string | undefined =>
  response.headers
    .getSetCookie()
    .map((c) => c.split(";")[0] ?? "")
    .find((c) => c.startsWith(`${name}=`))

export const hiddenField = (html: string, name: string): string | undefined =>
  new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1]?.replaceAll("&amp;", "&").replaceAll("&quot;", '"')

/** Signs in through the form; answers the `lyre_session=...` cookie pair. */
export const signIn = async (server: TestServer, email: string, secret = password): Promise<string> => {
  const form = await fetch(`${server.url}/signin`)
  const csrfCookie = cookieOf(form, "lyre_csrf") ?? ""
  const csrf = hiddenField(await form.text(), "csrf_token") ?? ""
  const posted = await fetch(`${server.url}/signin`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: csrfCookie },
    body: new URLSearchParams({ csrf_token: csrf, email, password: secret, return_to: "/dashboard" })
  })
  const session = cookieOf(posted, "lyre_session")
  if (posted.status !== 303 || session === undefined) throw new Error(`sign-in answered ${posted.status}`)
  return session
}

export interface AuthorizeRequest {
  readonly clientId?: string
  readonly scope?: string
  readonly resource?: string
  readonly redirectUri?: string
  readonly extra?: Record<string, string>
}

export interface Started {
  readonly url: URL
  readonly verifier: string
  readonly state: string
}

export const authorizationUrl = async (world: OAuthWorld, request: AuthorizeRequest = {}): Promise<Started> => {
  const verifier = oauth.generateRandomCodeVerifier()
  const state = oauth.generateRandomState()
  const url = new URL(world.as.authorization_endpoint ?? "")
  url.searchParams.set("client_id", request.clientId ?? "extension")
  url.searchParams.set("redirect_uri", request.redirectUri ?? callback)
  url.searchParams.set("response_type", "code")
  url.searchParams.set("scope", request.scope ?? "profile music:generate")
  url.searchParams.set("state", state)
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier))
  url.searchParams.set("code_challenge_method", "S256")
  if (request.resource !== undefined) url.searchParams.set("resource", request.resource)
  for (const [name, value] of Object.entries(request.extra ?? {})) url.searchParams.set(name, value)
  return { url, verifier, state }
}

/** GET the consent page with a session, then allow: answers where the server redirected. */
export const consent = async (url: URL, session: string, decision = "allow"): Promise<URL> => {
  const page = await fetch(url, { headers: { cookie: session }, redirect: "manual" })
  if (page.status !== 200) throw new Error(`consent page answered ${page.status}: ${page.headers.get("location")}`)
  const html = await page.text()
  const form = new URLSearchParams()
  for (const name of ["csrf_token", ...url.searchParams.keys()]) form.set(name, hiddenField(html, name) ?? "")
  form.set("decision", decision)
  const answer = await fetch(url.origin + url.pathname, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: session },
    body: form
  })
  if (answer.status !== 303) throw new Error(`consent answered ${answer.status}`)
  return new URL(answer.headers.get("location") ?? "")
}

/** The code exchange as oauth4webapi does it, `resource` included when asked. */
export const exchange = async (
  world: OAuthWorld,
  started: Started,
  redirected: URL,
  clientId = "extension",
  resource?: string
) => {
  const client: oauth.Client = { client_id: clientId }
  const params = oauth.validateAuthResponse(world.as, client, redirected, started.state)
  const response = await oauth.authorizationCodeGrantRequest(
    world.as,
    client,
    oauth.None(),
    params,
    callback,
    started.verifier,
    { ...insecure, ...(resource === undefined ? {} : { additionalParameters: { resource } }) }
  )
  return oauth.processAuthorizationCodeResponse(world.as, client, response)
}

/** The whole flow over HTTP: sign in, consent, exchange. */
export const obtainTokens = async (world: OAuthWorld, request: AuthorizeRequest = {}) => {
  const session = await signIn(world.server, world.email)
  const started = await authorizationUrl(world, request)
  const redirected = await consent(started.url, session)
  return exchange(world, started, redirected, request.clientId ?? "extension", request.resource)
}

/** A raw POST to the token endpoint, for the failures a library would refuse to send. */
export const tokenRequest = async (world: OAuthWorld, form: Record<string, string>) => {
  const response = await fetch(world.as.token_endpoint ?? "", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form)
  })
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Record<string, unknown>
  }
}
