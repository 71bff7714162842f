/**
 * The authorization server end to end with oauth4webapi as the client: discovery, the code flow
 * with PKCE, the token endpoint's failures, refresh rotation and reuse detection, revocation.
 */
import * as oauth from "oauth4webapi"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, startTestServer, validSong } from "../support/harness.ts"
import type { TestServer } from "../support/harness.ts"
import {
  authorizationUrl,
  callback,
  consent,
  exchange,
  insecure,
  obtainTokens,
  setUpOAuth,
  signIn,
  tokenRequest
} from "../support/oauth.ts"
import type { OAuthWorld } from "../support/oauth.ts"

let server: TestServer
let world: OAuthWorld

beforeAll(async () => {
  server = await startTestServer()
  world = await setUpOAuth(server)
}, 60_000)

afterAll(async () => {
  await server.close()
})

describe("authorization server metadata", () => {
  it("lists every supported value, with caching and CORS", async () => {
    const response = await fetch(`${server.url}/.well-known/oauth-authorization-server`)
    expect(response.status).toBe(200)
    expect(response.headers.get("cache-control")).toBe("public, max-age=3600")
    expect(response.headers.get("access-control-allow-origin")).toBe("*")
    const body = (await response.json()) as Record<string, unknown>
    expect(body).toMatchObject({
      issuer: server.url,
      authorization_endpoint: `${server.url}/oauth/authorize`,
      token_endpoint: `${server.url}/oauth/token`,
      revocation_endpoint: `${server.url}/oauth/revoke`,
      jwks_uri: `${server.url}/.well-known/jwks.json`,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"],
      revocation_endpoint_auth_methods_supported: ["none"],
      authorization_response_iss_parameter_supported: true,
      scopes_supported: ["profile", "music:generate", "livecoding:agent", "music:agent", "lyrics:agent"],
      service_documentation: `${server.url}/api/docs`
    })
    expect(body).not.toHaveProperty("registration_endpoint")
    const jwks = await fetch(`${server.url}/.well-known/jwks.json`)
    expect(jwks.headers.get("cache-control")).toBe("public, max-age=300")
    expect(jwks.headers.get("access-control-allow-origin")).toBe("*")
    const keys = ((await jwks.json()) as { keys: Array<Record<string, unknown>> }).keys
    expect(keys.length).toBe(1)
    expect(keys[0]).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig" })
    expect(keys[0]).not.toHaveProperty("d")
  })
})

describe("the code flow", () => {
  it("issues an access token /v1/me accepts as oauth, with the token's scopes and no key", async () => {
    const tokens = await obtainTokens(world)
    expect(tokens.token_type.toLowerCase()).toBe("bearer")
    expect(tokens.expires_in).toBe(900)
    expect(tokens.scope).toBe("profile music:generate")
    expect(tokens.refresh_token).toBeUndefined()
    const me = await api(server, "GET", "/api/v1/me", { key: tokens.access_token })
    expect(me.status).toBe(200)
    expect(me.body["auth"]).toEqual({ kind: "oauth", scopes: ["profile", "music:generate"], key: null })
    expect(me.body["id"]).toBe(world.accountId)
    const trpc = await fetch(`${server.url}/trpc/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(trpc.status).toBe(200)
    const created = await api(server, "POST", "/api/v1/music/generations", {
      key: tokens.access_token,
      body: validSong
    })
    expect(created.status).toBe(202)
  })

  it("redirects with code, state and iss, and the token endpoint answers no-store", async () => {
    const session = await signIn(server, world.email)
    const started = await authorizationUrl(world)
    const redirected = await consent(started.url, session)
    expect(redirected.origin + redirected.pathname).toBe(callback)
    expect(redirected.searchParams.get("state")).toBe(started.state)
    expect(redirected.searchParams.get("iss")).toBe(server.url)
    const code = redirected.searchParams.get("code") ?? ""
    const answer = await tokenRequest(world, {
      grant_type: "authorization_code",
      client_id: "extension",
      code,
      redirect_uri: callback,
      code_verifier: started.verifier
    })
    expect(answer.status).toBe(200)
    expect(answer.headers.get("cache-control")).toBe("no-store")
  })

  it("sends a visitor without a session to the sign-in page and back", async () => {
    const started = await authorizationUrl(world)
    const response = await fetch(started.url, { redirect: "manual" })
    expect(response.status).toBe(303)
    const location = new URL(response.headers.get("location") ?? "", server.url)
    expect(location.pathname).toBe("/signin")
    expect(location.searchParams.get("return_to")).toBe(started.url.pathname + started.url.search)
  })

  it("sends access_denied back when the account holder denies", async () => {
    const session = await signIn(server, world.email)
    const started = await authorizationUrl(world)
    const redirected = await consent(started.url, session, "deny")
    expect(redirected.searchParams.get("error")).toBe("access_denied")
    expect(redirected.searchParams.get("state")).toBe(started.state)
    expect(redirected.searchParams.get("iss")).toBe(server.url)
  })

  it("answers a wrong redirect URI or client with an error page, never a redirect", async () => {
    const session = await signIn(server, world.email)
    for (const request of [{ redirectUri: "http://127.0.0.1:9/elsewhere" }, { clientId: "nobody" }]) {
      const started = await authorizationUrl(world, request)
      const response = await fetch(started.url, { headers: { cookie: session }, redirect: "manual" })
      expect(response.status).toBe(400)
      expect(response.headers.get("location")).toBeNull()
      expect(response.headers.get("content-type")).toContain("text/html")
    }
  })

  it("refuses plain, missing challenges, other response types, unknown scopes and resources by redirect", async () => {
    const session = await signIn(server, world.email)
    const cases: Array<[Record<string, string | null>, string]> = [
      [{ code_challenge_method: "plain" }, "invalid_request"],
      [{ code_challenge_method: null }, "invalid_request"],
      [{ code_challenge: null }, "invalid_request"],
      [{ response_type: "token" }, "unsupported_response_type"],
      [{ scope: "profile admin" }, "invalid_scope"],
      [{ resource: "https://elsewhere.example/api" }, "invalid_target"]
    ]
    for (const [change, error] of cases) {
      const started = await authorizationUrl(world)
      for (const [name, value] of Object.entries(change)) {
        if (value === null) started.url.searchParams.delete(name)
        else started.url.searchParams.set(name, value)
      }
      const response = await fetch(started.url, { headers: { cookie: session }, redirect: "manual" })
      expect(response.status).toBe(303)
      const location = new URL(response.headers.get("location") ?? "")
      expect(location.origin + location.pathname).toBe(callback)
      expect(location.searchParams.get("error")).toBe(error)
      expect(location.searchParams.get("state")).toBe(started.state)
      expect(location.searchParams.get("iss")).toBe(server.url)
    }
  })

  it("refuses a consent without its CSRF token", async () => {
    const session = await signIn(server, world.email)
    const started = await authorizationUrl(world)
    const form = new URLSearchParams(started.url.searchParams)
    form.set("decision", "allow")
    const response = await fetch(`${server.url}/oauth/authorize`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: session },
      body: form
    })
    expect(response.status).toBe(403)
    expect(response.headers.get("location")).toBeNull()
  })
})

describe("the token endpoint", () => {
  it("refuses a wrong code_verifier (PKCE) with invalid_grant", async () => {
    const session = await signIn(server, world.email)
    const started = await authorizationUrl(world)
    const redirected = await consent(started.url, session)
    const wrong = { ...started, verifier: oauth.generateRandomCodeVerifier() }
    await expect(exchange(world, wrong, redirected)).rejects.toMatchObject({ error: "invalid_grant" })
  })

  it("refuses a reused code and revokes the tokens the first exchange issued", async () => {
    const session = await signIn(server, world.email)
    const started = await authorizationUrl(world)
    const redirected = await consent(started.url, session)
    const form = {
      grant_type: "authorization_code",
      client_id: "extension",
      code: redirected.searchParams.get("code") ?? "",
      redirect_uri: callback,
      code_verifier: started.verifier
    }
    const first = await tokenRequest(world, form)
    expect(first.status).toBe(200)
    const accessToken = String(first.body["access_token"])
    expect((await api(server, "GET", "/api/v1/me", { key: accessToken })).status).toBe(200)
    const second = await tokenRequest(world, form)
    expect(second.status).toBe(400)
    expect(second.body["error"]).toBe("invalid_grant")
    expect(second.headers.get("cache-control")).toBe("no-store")
    const refused = await api(server, "GET", "/api/v1/me", { key: accessToken })
    expect(refused.status).toBe(401)
    expect(refused.body["error"]).toMatchObject({ code: "credential_revoked" })
  })

  it("refuses a code sent with another redirect_uri or by another client", async () => {
    const session = await signIn(server, world.email)
    for (const change of [{ redirect_uri: "http://127.0.0.1:9/other" }, { client_id: "mobile" }]) {
      const started = await authorizationUrl(world)
      const redirected = await consent(started.url, session)
      const answer = await tokenRequest(world, {
        grant_type: "authorization_code",
        client_id: "extension",
        code: redirected.searchParams.get("code") ?? "",
        redirect_uri: callback,
        code_verifier: started.verifier,
        ...change
      })
      expect(answer.status).toBe(400)
      expect(answer.body["error"]).toBe("invalid_grant")
    }
  })

  it("answers RFC 6749 errors for bad requests", async () => {
    const cases: Array<[Record<string, string>, number, string]> = [
      [{ client_id: "extension" }, 400, "invalid_request"],
      [{ grant_type: "password", client_id: "extension" }, 400, "unsupported_grant_type"],
      [{ grant_type: "client_credentials", client_id: "extension" }, 400, "unsupported_grant_type"],
      [
        { grant_type: "authorization_code", client_id: "extension", code: "x", redirect_uri: callback },
        400,
        "invalid_request"
      ],
      [
        { grant_type: "authorization_code", client_id: "ghost", code: "x", redirect_uri: callback, code_verifier: "v" },
        401,
        "invalid_client"
      ],
      [
        {
          grant_type: "authorization_code",
          client_id: "extension",
          code: "x",
          redirect_uri: callback,
          code_verifier: "v"
        },
        400,
        "invalid_grant"
      ],
      [{ grant_type: "refresh_token", client_id: "extension", refresh_token: "x" }, 400, "unauthorized_client"],
      [{ grant_type: "refresh_token", client_id: "mobile", refresh_token: "x" }, 400, "invalid_grant"]
    ]
    for (const [form, status, error] of cases) {
      const answer = await tokenRequest(world, form)
      expect({ form, status: answer.status, error: answer.body["error"] }).toEqual({ form, status, error })
      expect(answer.headers.get("cache-control")).toBe("no-store")
      expect(typeof answer.body["error_description"]).toBe("string")
    }
    const json = await fetch(`${server.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "authorization_code" })
    })
    expect(json.status).toBe(400)
    expect(((await json.json()) as Record<string, unknown>)["error"]).toBe("invalid_request")
  })
})

describe("refresh tokens", () => {
  it("rotates on every use and revokes the family when a rotated one comes back", async () => {
    const client: oauth.Client = { client_id: "mobile" }
    const first = await obtainTokens(world, { clientId: "mobile" })
    const firstRefresh = first.refresh_token ?? ""
    expect(firstRefresh.length).toBeGreaterThan(20)
    const second = await oauth.processRefreshTokenResponse(
      world.as,
      client,
      await oauth.refreshTokenGrantRequest(world.as, client, oauth.None(), firstRefresh, insecure)
    )
    expect(second.refresh_token).toBeDefined()
    expect(second.refresh_token).not.toBe(firstRefresh)
    expect((await api(server, "GET", "/api/v1/me", { key: second.access_token })).status).toBe(200)
    // The rotated token again: a replay, so the whole family goes.
    const replay = await tokenRequest(world, {
      grant_type: "refresh_token",
      client_id: "mobile",
      refresh_token: firstRefresh
    })
    expect(replay.status).toBe(400)
    expect(replay.body["error"]).toBe("invalid_grant")
    expect((await api(server, "GET", "/api/v1/me", { key: second.access_token })).status).toBe(401)
    const successor = await tokenRequest(world, {
      grant_type: "refresh_token",
      client_id: "mobile",
      refresh_token: second.refresh_token ?? ""
    })
    expect(successor.body["error"]).toBe("invalid_grant")
  })

  it("narrows scope on refresh but never widens it", async () => {
    const tokens = await obtainTokens(world, { clientId: "mobile", scope: "profile music:generate" })
    const narrowed = await tokenRequest(world, {
      grant_type: "refresh_token",
      client_id: "mobile",
      refresh_token: tokens.refresh_token ?? "",
      scope: "profile"
    })
    expect(narrowed.status).toBe(200)
    expect(narrowed.body["scope"]).toBe("profile")
    const widened = await tokenRequest(world, {
      grant_type: "refresh_token",
      client_id: "mobile",
      refresh_token: String(narrowed.body["refresh_token"]),
      scope: "profile music:agent"
    })
    expect(widened.body["error"]).toBe("invalid_scope")
  })
})

describe("revocation (RFC 7009)", () => {
  const revoke = (token: string, clientId = "extension") =>
    fetch(`${server.url}/oauth/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token, client_id: clientId })
    })

  it("refuses a revoked access token at once on REST and tRPC", async () => {
    const tokens = await obtainTokens(world)
    expect((await api(server, "GET", "/api/v1/me", { key: tokens.access_token })).status).toBe(200)
    const client: oauth.Client = { client_id: "extension" }
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(world.as, client, oauth.None(), tokens.access_token, insecure)
    )
    const rest = await api(server, "GET", "/api/v1/me", { key: tokens.access_token })
    expect(rest.status).toBe(401)
    expect(rest.body["error"]).toMatchObject({ code: "credential_revoked" })
    expect(rest.headers.get("www-authenticate")).toContain("invalid_token")
    const trpc = await fetch(`${server.url}/trpc/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
    expect(trpc.status).toBe(401)
  })

  it("revokes a refresh token and the access tokens of its grant", async () => {
    const tokens = await obtainTokens(world, { clientId: "mobile" })
    const response = await revoke(tokens.refresh_token ?? "", "mobile")
    expect(response.status).toBe(200)
    expect((await api(server, "GET", "/api/v1/me", { key: tokens.access_token })).status).toBe(401)
    const refreshed = await tokenRequest(world, {
      grant_type: "refresh_token",
      client_id: "mobile",
      refresh_token: tokens.refresh_token ?? ""
    })
    expect(refreshed.body["error"]).toBe("invalid_grant")
  })

  it("answers 200 for an unknown token and invalid_client for an unknown client", async () => {
    expect((await revoke("not-a-token")).status).toBe(200)
    expect((await revoke("a.b.c")).status).toBe(200)
    const unknown = await revoke("x", "ghost")
    expect(unknown.status).toBe(401)
    expect(((await unknown.json()) as Record<string, unknown>)["error"]).toBe("invalid_client")
  })

  it("kills every token of a deleted client", async () => {
    const made = await server.admin("POST", "/oauth-clients", {
      client_id: "doomed",
      name: "Doomed",
      redirect_uris: [callback],
      refresh_tokens: true
    })
    expect(made.status).toBe(201)
    const tokens = await obtainTokens(world, { clientId: "doomed" })
    expect((await api(server, "GET", "/api/v1/me", { key: tokens.access_token })).status).toBe(200)
    expect((await server.admin("DELETE", "/oauth-clients/doomed")).status).toBe(204)
    expect((await api(server, "GET", "/api/v1/me", { key: tokens.access_token })).status).toBe(401)
    expect((await server.admin("GET", "/oauth-clients/doomed")).status).toBe(404)
  })
})

describe("scopes and plans", () => {
  it("lets a token without music:generate read /v1/me but not create: 403 insufficient_scope", async () => {
    const tokens = await obtainTokens(world, { scope: "profile" })
    expect((await api(server, "GET", "/api/v1/me", { key: tokens.access_token })).status).toBe(200)
    const created = await api(server, "POST", "/api/v1/music/generations", {
      key: tokens.access_token,
      body: validSong
    })
    expect(created.status).toBe(403)
    expect(created.body["error"]).toMatchObject({ type: "permission_error", code: "insufficient_scope" })
    expect(created.headers.get("www-authenticate")).toContain('error="insufficient_scope"')
  })

  it("applies the plan check to tokens on every request", async () => {
    const tokens = await obtainTokens(world)
    expect((await server.admin("PATCH", `/accounts/${world.accountId}`, { plan: "basic" })).status).toBe(200)
    const refused = await api(server, "GET", "/api/v1/me", { key: tokens.access_token })
    expect(refused.status).toBe(403)
    expect(refused.body["error"]).toMatchObject({ code: "tier_insufficient" })
    expect((await server.admin("PATCH", `/accounts/${world.accountId}`, { plan: "pro" })).status).toBe(200)
    expect((await api(server, "GET", "/api/v1/me", { key: tokens.access_token })).status).toBe(200)
  })
})
