import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, createAccount, startTestServer } from "../support/harness.ts"
import type { TestServer } from "../support/harness.ts"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

describe("GET /v1/me", () => {
  it("200: identity, plan, balance, limits and the credential, consuming nothing", async () => {
    const account = await createAccount(server, { plan: "ultra", subscription: 300, onetime: 40 })
    const res = await api(server, "GET", "/api/v1/me", { key: account.key })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      id: account.id,
      plan: "ultra",
      credits: { subscription: 300, onetime: 40, total: 340 },
      rate_limits: { requests_per_minute: 10_000, concurrent_generations: 20 },
      auth: {
        kind: "api_key",
        scopes: ["profile", "music:generate"],
        key: { id: account.keyId, name: "test", expires_at: null }
      }
    })
    expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9A-Za-z]{24}$/)
    expect(res.headers.get("x-ratelimit-limit")).toBe("10000")
    const again = await api(server, "GET", "/api/v1/me", { key: account.key })
    expect(again.body.credits).toEqual(res.body.credits)
  })

  it("200: shows the expiry of a key that has one, and needs no scope", async () => {
    const expires = new Date(Date.now() + 3 * 86_400_000).toISOString()
    const account = await createAccount(server, { scopes: ["lyrics:agent"], expires_at: expires })
    const res = await api(server, "GET", "/api/v1/me", { key: account.key })
    expect(res.status).toBe(200)
    expect(res.body.auth?.key?.expires_at).toBe(expires)
    expect(res.body.rate_limits?.concurrent_generations).toBe(10)
  })
})
