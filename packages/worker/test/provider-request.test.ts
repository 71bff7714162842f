import { assert, describe, it } from "@effect/vitest"
import { MAX_UPSTREAM_TITLE, shortenTitle } from "../src/provider/sunoRequest.ts"

describe("shortenTitle", () => {
  it("keeps a title that fits", () => {
    assert.strictEqual(shortenTitle("Short"), "Short")
    assert.strictEqual(shortenTitle("x".repeat(80)), "x".repeat(80))
  })

  it("cuts at the last word boundary and drops trailing punctuation", () => {
    const title = "Songs of the sea, the sky, the hills and the long road home, sung by everyone we know"
    const short = shortenTitle(title)
    assert.isAtMost(short.length, MAX_UPSTREAM_TITLE)
    assert.isTrue(title.startsWith(short))
    assert.strictEqual(short, "Songs of the sea, the sky, the hills and the long road home, sung by everyone we")
  })

  it("keeps a whole last word that ends exactly at the limit", () => {
    assert.strictEqual(shortenTitle(`${"a".repeat(80)} tail`), "a".repeat(80))
  })

  it("cuts a title without spaces hard at the limit", () => {
    assert.strictEqual(shortenTitle("x".repeat(120)), "x".repeat(80))
  })

  it("never splits an emoji", () => {
    const short = shortenTitle(`${"a".repeat(79)}😀 more`)
    assert.strictEqual(short, "a".repeat(79))
  })
})
