import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, backend, createAccount, startTestServer, validSong } from "../support/harness.ts"
import type { TestServer } from "../support/harness.ts"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer({ requestsPerMinute: 5 })
})
afterAll(() => server.close())

describe(`requests per minute (${backend.limiter} store)`, () => {
  it("every answer carries X-RateLimit-*, counting down", async () => {
    const account = await createAccount(server)
    const res = await api(server, "GET", "/api/v1/me", { key: account.key })
    expect(res.headers.get("x-ratelimit-limit")).toBe("5")
    expect(res.headers.get("x-ratelimit-remaining")).toBe("4")
    const reset = Number(res.headers.get("x-ratelimit-reset"))
    expect(reset).toBeGreaterThan(Date.now() / 1000 + 55)
    expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 61)
    expect((await api(server, "GET", "/api/v1/me", { key: account.key })).headers.get("x-ratelimit-remaining")).toBe(
      "3"
    )
  })

  it("429 rpm_exceeded past the limit, with Retry-After and retry_after_seconds; errors after the guard carry the headers too", async () => {
    const account = await createAccount(server)
    for (let i = 0; i < 4; i++) expect((await api(server, "GET", "/api/v1/me", { key: account.key })).status).toBe(200)
    const bad = await api(server, "POST", "/api/v1/music/generations", { key: account.key, body: { style: "" } })
    expect(bad.status).toBe(400)
    expect(bad.headers.get("x-ratelimit-remaining")).toBe("0")
    const res = await api(server, "GET", "/api/v1/me", { key: account.key })
    expect(res.status).toBe(429)
    expect(res.body).toEqual({
      error: {
        type: "rate_limit_error",
        code: "rpm_exceeded",
        message: expect.any(String),
        retry_after_seconds: expect.any(Number)
      }
    })
    const retryAfter = Number(res.headers.get("retry-after"))
    expect(retryAfter).toBe(res.body.error?.retry_after_seconds)
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(res.headers.get("x-ratelimit-limit")).toBe("5")
    expect(res.headers.get("x-ratelimit-remaining")).toBe("0")
  })

  it("a 429 on create charges nothing", async () => {
    const account = await createAccount(server)
    for (let i = 0; i < 5; i++) await api(server, "GET", "/api/v1/me", { key: account.key })
    const res = await api(server, "POST", "/api/v1/music/generations", { key: account.key, body: validSong })
    expect(res.status).toBe(429)
    expect((await server.admin("GET", `/accounts/${account.id}`)).body.credits?.total).toBe(1_000)
  })

  it("counts per credential, and honours the account's override", async () => {
    const account = await createAccount(server, { requests_per_minute: 2 })
    const other = await server.admin("POST", `/accounts/${account.id}/keys`, { name: "b", scopes: ["profile"] })
    expect((await api(server, "GET", "/api/v1/me", { key: account.key })).headers.get("x-ratelimit-limit")).toBe("2")
    await api(server, "GET", "/api/v1/me", { key: account.key })
    expect((await api(server, "GET", "/api/v1/me", { key: account.key })).status).toBe(429)
    expect((await api(server, "GET", "/api/v1/me", { key: String(other.body.key) })).status).toBe(200)
    const me = await api(server, "GET", "/api/v1/me", { key: String(other.body.key) })
    expect(me.body.rate_limits?.requests_per_minute).toBe(2)
  })

  it("requests refused before the guard (401) are not counted against anyone", async () => {
    const res = await api(server, "GET", "/api/v1/me")
    expect(res.status).toBe(401)
    expect(res.headers.get("x-ratelimit-limit")).toBeNull()
  })
})
