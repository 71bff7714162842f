/** The Origin rule alone: which browser pages may drive /mcp. */
import { describe, expect, it } from "vitest"
import { originPolicy } from "../../src/origin.ts"

describe("originPolicy", () => {
  it("takes no Origin and the service's own on a public service, and nothing else", () => {
    const allowed = originPolicy("https://lyre.example.com")
    expect(allowed(undefined)).toBe(true)
    expect(allowed("https://lyre.example.com")).toBe(true)
    expect(allowed("http://lyre.example.com")).toBe(false)
    expect(allowed("https://lyre.example.com.evil.example")).toBe(false)
    expect(allowed("http://localhost:6274")).toBe(false)
    expect(allowed("null")).toBe(false)
  })

  it("takes any loopback origin on a loopback service, and no other", () => {
    const allowed = originPolicy("http://127.0.0.1:8080")
    for (const origin of [
      "http://127.0.0.1:8080",
      "http://localhost:6274",
      "http://127.0.0.2:3000",
      "http://[::1]:5173",
      "http://app.localhost"
    ]) {
      expect(allowed(origin)).toBe(true)
    }
    for (const origin of ["https://evil.example", "http://127.0.0.1.evil.example", "file://", "null"]) {
      expect(allowed(origin)).toBe(false)
    }
  })
})
