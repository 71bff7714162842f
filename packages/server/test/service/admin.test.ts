import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, createAccount, startTestServer } from "../support/harness.ts"
import type { Json, TestServer } from "../support/harness.ts"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

describe("admin API", () => {
  it("401 without or with a wrong admin token, in the envelope", async () => {
    const none = await api(server, "GET", "/admin/v1/accounts/acct_AAAAAAAAAAAAAAAAAAAAAAAA")
    expect(none.status).toBe(401)
    expect(none.body.error?.code).toBe("missing_credential")
    const wrong = await api(server, "GET", "/admin/v1/accounts/acct_AAAAAAAAAAAAAAAAAAAAAAAA", {
      headers: { authorization: "Bearer wrong-token-wrong-token" }
    })
    expect(wrong.status).toBe(401)
    expect(wrong.body.error?.code).toBe("invalid_credential")
    const apiKey = await createAccount(server)
    const withKey = await api(server, "GET", `/admin/v1/accounts/${apiKey.id}`, { key: apiKey.key })
    expect(withKey.status).toBe(401)
  })

  it("POST /accounts: 201 the account view, defaults filled in, initial credits as a grant", async () => {
    const res = await server.admin("POST", "/accounts", {
      email: "Ada@Example.test",
      password: "correct horse battery",
      plan: "ultra",
      subscription_credits: 500,
      onetime_credits: 25,
      credit_alert_threshold: 100
    })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({
      id: expect.stringMatching(/^acct_[0-9A-Za-z]{24}$/),
      email: "ada@example.test",
      plan: "ultra",
      credits: { subscription: 500, onetime: 25, total: 525 },
      credit_alert_threshold: 100,
      concurrency_limit: 20,
      requests_per_minute: 10_000
    })
    const [row] = await server.query<{ password_hash: string }>(
      "select password_hash from accounts where id = $1",
      res.body.id
    )
    expect(row?.password_hash).toMatch(/^scrypt\$/)
    const ledger = await server.admin("GET", `/accounts/${String(res.body.id)}/ledger`)
    expect(ledger.body.data).toEqual([
      {
        id: expect.stringMatching(/^led_/),
        kind: "grant",
        task_id: null,
        export_id: null,
        subscription_delta: 500,
        onetime_delta: 25,
        subscription_after: 500,
        onetime_after: 25,
        reason: "initial grant",
        created_at: expect.any(String)
      }
    ])
    const duplicate = await server.admin("POST", "/accounts", { email: "ada@example.test", plan: "pro" })
    expect(duplicate.status).toBe(400)
    expect(duplicate.body.error?.param).toBe("email")
  })

  it("400 for bad bodies, naming the field", async () => {
    for (const [body, code, param] of [
      [{ plan: "pro" }, "missing_parameter", "email"],
      [{ email: "x@y.z", plan: "gold" }, "invalid_parameter", "plan"],
      [{ email: "x@y.z", plan: "pro", subscription_credits: -1 }, "invalid_parameter", "subscription_credits"],
      [{ email: "x@y.z", plan: "pro", extra: 1 }, "unknown_parameter", "extra"]
    ] as const) {
      const res = await server.admin("POST", "/accounts", body)
      expect(res.status).toBe(400)
      expect(res.body.error?.code).toBe(code)
      expect(res.body.error?.param).toBe(param)
    }
  })

  it("PATCH /accounts/{id}: plan and overrides; null restores the default", async () => {
    const account = await createAccount(server)
    const patched = await server.admin("PATCH", `/accounts/${account.id}`, {
      concurrency_limit: 3,
      requests_per_minute: 7,
      plan: "ultra"
    })
    expect(patched.status).toBe(200)
    expect(patched.body).toMatchObject({ plan: "ultra", concurrency_limit: 3, requests_per_minute: 7 })
    const restored = await server.admin("PATCH", `/accounts/${account.id}`, {
      concurrency_limit: null,
      requests_per_minute: null
    })
    expect(restored.body).toMatchObject({ plan: "ultra", concurrency_limit: 20, requests_per_minute: 10_000 })
  })

  it("POST /accounts/{id}/credits: grants and adjustments, never below zero", async () => {
    const account = await createAccount(server, { subscription: 100 })
    const granted = await server.admin("POST", `/accounts/${account.id}/credits`, { onetime: 40, reason: "promo" })
    expect(granted.body.credits).toEqual({ subscription: 100, onetime: 40, total: 140 })
    const adjusted = await server.admin("POST", `/accounts/${account.id}/credits`, { subscription: -30 })
    expect(adjusted.body.credits).toEqual({ subscription: 70, onetime: 40, total: 110 })
    const refused = await server.admin("POST", `/accounts/${account.id}/credits`, { onetime: -41 })
    expect(refused.status).toBe(400)
    expect(refused.body.error?.param).toBe("onetime")
    const ledger = (await server.admin("GET", `/accounts/${account.id}/ledger`)).body.data as unknown as Array<Json>
    expect(ledger.map((e) => [e.kind, e.subscription_after, e.onetime_after, e.reason])).toEqual([
      ["grant", 100, 0, "initial grant"],
      ["grant", 100, 40, "promo"],
      ["adjustment", 70, 40, null]
    ])
  })

  it("POST /accounts/{id}/keys: the key once, stored only as a hash; any plan", async () => {
    const account = await server.admin("POST", "/accounts", { email: "free@example.test", plan: "free" })
    const res = await server.admin("POST", `/accounts/${String(account.body.id)}/keys`, {
      name: "ci",
      scopes: ["music:generate"],
      expires_at: "2030-01-01T00:00:00Z"
    })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^lyr_live_[0-9A-Za-z]{32}$/),
      name: "ci",
      prefix: String(res.body.key).slice(0, 13),
      scopes: ["music:generate"],
      expires_at: "2030-01-01T00:00:00.000Z",
      created_at: expect.any(String)
    })
    const stored = await server.query<Record<string, unknown>>("select * from api_keys where id = $1", res.body.id)
    expect(JSON.stringify(stored)).not.toContain(String(res.body.key))
    const badScope = await server.admin("POST", `/accounts/${String(account.body.id)}/keys`, {
      name: "x",
      scopes: ["admin"]
    })
    expect(badScope.status).toBe(400)
  })

  it("404 for unknown accounts and keys; 405 for a wrong method", async () => {
    expect((await server.admin("GET", "/accounts/acct_AAAAAAAAAAAAAAAAAAAAAAAA")).status).toBe(404)
    expect((await server.admin("GET", "/accounts/whatever")).status).toBe(404)
    expect((await server.admin("DELETE", "/keys/key_AAAAAAAAAAAAAAAAAAAAAAAA")).status).toBe(404)
    expect(
      (await server.admin("POST", "/accounts/acct_AAAAAAAAAAAAAAAAAAAAAAAA/keys", { name: "x", scopes: ["profile"] }))
        .status
    ).toBe(404)
    const wrong = await server.admin("DELETE", "/accounts/acct_AAAAAAAAAAAAAAAAAAAAAAAA")
    expect(wrong.status).toBe(405)
    expect((await server.admin("PUT", "/models/v9", { available: false })).status).toBe(404)
  })
})

describe("admin API without ADMIN_TOKEN", () => {
  it("answers 404 everywhere", async () => {
    const bare = await startTestServer({ adminToken: null })
    try {
      const res = await api(bare, "POST", "/admin/v1/accounts", {
        headers: { authorization: `Bearer ${bare.adminToken}` },
        body: { email: "a@b.c", plan: "pro" }
      })
      expect(res.status).toBe(404)
      expect(res.body.error?.code).toBe("route_not_found")
    } finally {
      await bare.close()
    }
  })
})
