import { describe, expect, it } from "vitest"
import {
  ConcurrentLimitExceeded,
  errorTable,
  InsufficientCredits,
  InsufficientScope,
  MissingCredential,
  ModelUnavailable,
  priceOf,
  renderError,
  RpmExceeded,
  TaskNotFound,
  wwwAuthenticateFor,
  planAllowsAccess,
  defaultConcurrencyLimit
} from "../../src/index.ts"

describe("pricing and plans", () => {
  it("charges 50 / 100 / 180 by model", () => expect(priceOf).toEqual({ aether: 50, echo: 100, nocturne: 180 }))
  it("requires Pro or higher", () => {
    expect([
      planAllowsAccess("free"),
      planAllowsAccess("basic"),
      planAllowsAccess("pro"),
      planAllowsAccess("ultra")
    ]).toEqual([false, false, true, true])
  })
  it("allows 10 in flight on Pro and 20 on Ultra", () => {
    expect(defaultConcurrencyLimit("pro")).toBe(10)
    expect(defaultConcurrencyLimit("ultra")).toBe(20)
  })
})

describe("the error table", () => {
  it("gives each status the type the interface and DESIGN.md assign", () => {
    const typeByStatus: Record<number, string> = {
      400: "invalid_request_error",
      401: "authentication_error",
      402: "insufficient_credits",
      403: "permission_error",
      404: "not_found",
      405: "invalid_request_error",
      413: "invalid_request_error",
      429: "rate_limit_error",
      500: "api_error",
      503: "service_unavailable"
    }
    for (const row of Object.values(errorTable)) expect(row.type).toBe(typeByStatus[row.status])
  })

  it("has one code per error, request_too_large being 400 for a JSON body and 413 for an upload (DESIGN.md 11)", () => {
    const codes = Object.values(errorTable).map((row) => row.code)
    expect(new Set(codes).size).toBe(codes.length - 1)
    expect([errorTable.RequestTooLarge, errorTable.UploadTooLarge].map((row) => [row.status, row.code])).toEqual([
      [400, "request_too_large"],
      [413, "request_too_large"]
    ])
  })

  it("renders the envelope with only the interface's fields", () => {
    expect(renderError(new TaskNotFound({ message: "No generation task gen_x." }))).toEqual({
      status: 404,
      body: { error: { type: "not_found", code: "task_not_found", message: "No generation task gen_x." } },
      headers: {}
    })
    expect(renderError(new InsufficientCredits({ message: "m" })).status).toBe(402)
  })

  it("503 model_unavailable carries model, retry_after_seconds and Retry-After", () => {
    const rendered = renderError(new ModelUnavailable({ message: "m", model: "echo", retryAfterSeconds: 30 }))
    expect(rendered.status).toBe(503)
    expect(rendered.body.error).toEqual({
      type: "service_unavailable",
      code: "model_unavailable",
      message: "m",
      model: "echo",
      retry_after_seconds: 30
    })
    expect(rendered.headers).toEqual({ "retry-after": "30" })
  })

  it("every 429 carries Retry-After and retry_after_seconds", () => {
    const rpm = renderError(new RpmExceeded({ message: "m", retryAfterSeconds: 12.2, limit: 60, resetAtSeconds: 99 }))
    expect(rpm.body.error.code).toBe("rpm_exceeded")
    expect(rpm.body.error.retry_after_seconds).toBe(13)
    expect(rpm.headers["retry-after"]).toBe("13")
    expect(rpm.headers["x-ratelimit-remaining"]).toBe("0")
    const concurrency = renderError(new ConcurrentLimitExceeded({ message: "m", retryAfterSeconds: 5 }))
    expect(concurrency.body.error.code).toBe("concurrent_limit_exceeded")
    expect(concurrency.headers["retry-after"]).toBe("5")
  })

  it("challenges 401s and a missing scope, and nothing else", () => {
    const url = "https://lyre.test/.well-known/oauth-protected-resource"
    expect(wwwAuthenticateFor(new MissingCredential({ message: "m" }), url)).toBe(`Bearer resource_metadata="${url}"`)
    expect(wwwAuthenticateFor(new InsufficientScope({ message: "m", scope: "music:generate" }), url)).toBe(
      `Bearer error="insufficient_scope", scope="music:generate", resource_metadata="${url}"`
    )
    expect(wwwAuthenticateFor(new TaskNotFound({ message: "m" }), url)).toBeNull()
  })
})
