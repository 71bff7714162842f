import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, createAccount, startTestServer, validSong } from "../support/harness.ts"
import type { TestServer } from "../support/harness.ts"

let server: TestServer
let metadataUrl: string
beforeAll(async () => {
  server = await startTestServer()
  metadataUrl = `${server.url}/.well-known/oauth-protected-resource`
})
afterAll(() => server.close())

const expectChallenge = (header: string | null, invalidToken: boolean) => {
  expect(header).toContain(`resource_metadata="${metadataUrl}"`)
  expect(header?.startsWith("Bearer ")).toBe(true)
  expect(header?.includes('error="invalid_token"')).toBe(invalidToken)
}

describe("401: missing, invalid, expired or revoked credential", () => {
  const routes = [
    ["GET", "/api/v1/me"],
    ["POST", "/api/v1/music/generations"],
    ["GET", "/api/v1/music/generations/gen_000000000000000000000000"],
    ["GET", "/api/v1/music/generations"]
  ] as const

  for (const [method, path] of routes) {
    it(`${method} ${path} without a credential: missing_credential and a bare challenge`, async () => {
      const res = await api(server, method, path, method === "POST" ? { body: validSong } : {})
      expect(res.status).toBe(401)
      expect(res.body).toEqual({
        error: { type: "authentication_error", code: "missing_credential", message: expect.any(String) }
      })
      expectChallenge(res.headers.get("www-authenticate"), false)
    })
  }

  it("a malformed Authorization header is a missing credential", async () => {
    const res = await api(server, "GET", "/api/v1/me", { headers: { authorization: "Basic abc" } })
    expect(res.status).toBe(401)
    expect(res.body.error?.code).toBe("missing_credential")
  })

  it("an unknown key: invalid_credential with error=invalid_token", async () => {
    const res = await api(server, "GET", "/api/v1/me", { key: `lyr_live_${"A".repeat(32)}` })
    expect(res.status).toBe(401)
    expect(res.body.error?.code).toBe("invalid_credential")
    expect(res.body.error?.type).toBe("authentication_error")
    expectChallenge(res.headers.get("www-authenticate"), true)
  })

  it("a credential of the wrong shape: invalid_credential", async () => {
    const res = await api(server, "GET", "/api/v1/me", { key: "not-a-key" })
    expect(res.status).toBe(401)
    expect(res.body.error?.code).toBe("invalid_credential")
  })

  it("a revoked key is refused at once: credential_revoked", async () => {
    const account = await createAccount(server)
    expect((await api(server, "GET", "/api/v1/me", { key: account.key })).status).toBe(200)
    expect((await server.admin("DELETE", `/keys/${account.keyId}`)).status).toBe(204)
    const res = await api(server, "GET", "/api/v1/me", { key: account.key })
    expect(res.status).toBe(401)
    expect(res.body.error?.code).toBe("credential_revoked")
    expectChallenge(res.headers.get("www-authenticate"), true)
  })

  it("an expired key: credential_expired", async () => {
    const account = await createAccount(server, { expires_at: new Date(Date.now() + 1_000).toISOString() })
    expect((await api(server, "GET", "/api/v1/me", { key: account.key })).status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 1_100))
    const res = await api(server, "GET", "/api/v1/me", { key: account.key })
    expect(res.status).toBe(401)
    expect(res.body.error?.code).toBe("credential_expired")
  })

  it("the protected-resource metadata the challenge points to is served", async () => {
    const res = await api(server, "GET", "/.well-known/oauth-protected-resource")
    expect(res.status).toBe(200)
    expect(res.body.resource).toBe(`${server.url}/api`)
    expect(res.body.authorization_servers).toEqual([server.url])
    expect(res.body.scopes_supported).toContain("music:generate")
  })
})

describe("403 permission_error", () => {
  for (const plan of ["free", "basic"]) {
    it(`tier_insufficient for a ${plan} account, on every endpoint, and nothing is charged`, async () => {
      const account = await createAccount(server, { plan })
      for (const [method, path] of [
        ["GET", "/api/v1/me"],
        ["POST", "/api/v1/music/generations"],
        ["GET", "/api/v1/music/generations"]
      ] as const) {
        const res = await api(server, method, path, {
          key: account.key,
          ...(method === "POST" ? { body: validSong } : {})
        })
        expect(res.status).toBe(403)
        expect(res.body).toEqual({
          error: { type: "permission_error", code: "tier_insufficient", message: expect.any(String) }
        })
      }
      const view = await server.admin("GET", `/accounts/${account.id}`)
      expect(view.body.credits?.total).toBe(1_000)
    })
  }

  it("a downgrade takes effect on the next request; the key is not revoked and works again after an upgrade", async () => {
    const account = await createAccount(server)
    expect((await api(server, "GET", "/api/v1/me", { key: account.key })).status).toBe(200)
    await server.admin("PATCH", `/accounts/${account.id}`, { plan: "basic" })
    const res = await api(server, "GET", "/api/v1/me", { key: account.key })
    expect(res.status).toBe(403)
    expect(res.body.error?.code).toBe("tier_insufficient")
    await server.admin("PATCH", `/accounts/${account.id}`, { plan: "ultra" })
    expect((await api(server, "GET", "/api/v1/me", { key: account.key })).status).toBe(200)
  })

  it("insufficient_scope without music:generate, with its challenge; /v1/me needs no scope", async () => {
    const account = await createAccount(server, { scopes: ["profile"] })
    expect((await api(server, "GET", "/api/v1/me", { key: account.key })).status).toBe(200)
    for (const [method, path] of [
      ["POST", "/api/v1/music/generations"],
      ["GET", "/api/v1/music/generations/gen_000000000000000000000000"],
      ["GET", "/api/v1/music/generations"]
    ] as const) {
      const res = await api(server, method, path, {
        key: account.key,
        ...(method === "POST" ? { body: validSong } : {})
      })
      expect(res.status).toBe(403)
      expect(res.body.error?.code).toBe("insufficient_scope")
      expect(res.headers.get("www-authenticate")).toBe(
        `Bearer error="insufficient_scope", scope="music:generate", resource_metadata="${metadataUrl}"`
      )
    }
  })
})

describe("check order: credential -> plan -> scope -> rpm -> body", () => {
  it("a bad body without a credential is a 401, not a 400", async () => {
    const res = await api(server, "POST", "/api/v1/music/generations", {
      rawBody: "{nope",
      headers: { "content-type": "application/json" }
    })
    expect(res.status).toBe(401)
  })
  it("a bad body on a lower tier is a 403 tier_insufficient", async () => {
    const account = await createAccount(server, { plan: "free" })
    const res = await api(server, "POST", "/api/v1/music/generations", { key: account.key, body: { style: "" } })
    expect(res.body.error?.code).toBe("tier_insufficient")
  })
  it("a bad body without the scope is a 403 insufficient_scope", async () => {
    const account = await createAccount(server, { scopes: ["profile"] })
    const res = await api(server, "POST", "/api/v1/music/generations", { key: account.key, body: { style: "" } })
    expect(res.body.error?.code).toBe("insufficient_scope")
  })
})
