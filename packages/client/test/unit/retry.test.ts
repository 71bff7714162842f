/** Retry-After in both of its forms, and the back-off between network retries. */
import { describe, expect, it } from "vitest"
import { backoffMs, parseRetryAfter, sleep } from "../../src/retry.ts"

describe("parseRetryAfter", () => {
  it("reads seconds and HTTP dates; anything else is no advice", () => {
    expect(parseRetryAfter("5")).toBe(5)
    expect(parseRetryAfter(" 0 ")).toBe(0)
    const now = Date.parse("2026-11-23T07:00:00Z")
    expect(parseRetryAfter("Mon, 23 Nov 2026 07:00:30 GMT", now)).toBe(30)
    expect(parseRetryAfter("Mon, 23 Nov 2026 06:00:00 GMT", now)).toBe(0)
    expect(parseRetryAfter("soon")).toBeUndefined()
    expect(parseRetryAfter(null)).toBeUndefined()
  })
})

describe("backoffMs", () => {
  it("doubles from 0.5 s to a cap of 8 s, with jitter down to half", () => {
    expect([0, 1, 2, 3, 4, 5].map((n) => backoffMs(n, () => 1))).toEqual([500, 1_000, 2_000, 4_000, 8_000, 8_000])
    expect(backoffMs(0, () => 0)).toBe(250)
  })
})

describe("sleep", () => {
  it("rejects with the signal's reason when aborted", async () => {
    const controller = new AbortController()
    const waiting = sleep(10_000, controller.signal)
    controller.abort(new Error("stopped"))
    await expect(waiting).rejects.toThrow("stopped")
    await expect(sleep(1, AbortSignal.abort(new Error("already")))).rejects.toThrow("already")
  })
})
