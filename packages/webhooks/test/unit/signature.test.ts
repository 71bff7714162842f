import Stripe from "stripe"
import { describe, expect, it } from "vitest"
import { generateWebhookSecret, signWebhook, verifyWebhook, WebhookVerificationError } from "../../src/index.ts"
import type { WebhookVerificationReason } from "../../src/index.ts"

const stripeSignature = Stripe.webhooks.signature
if (stripeSignature === null) throw new Error("stripe-node ships without its webhook signature helper")

const event = {
  id: "evt_1",
  type: "job.completed",
  created: 1_700_000_000,
  data: { task_id: "gen_1", status: "ready" }
}
const body = JSON.stringify(event)
const now = Math.floor(Date.now() / 1000)

const reasonOf = (run: () => unknown): WebhookVerificationReason | null => {
  try {
    run()
    return null
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason
    throw error
  }
}

describe("signWebhook", () => {
  it("is t=<unix>,v1=<hex HMAC-SHA256 of '<t>.<body>'>", () => {
    // Fixed vector computed independently: printf '1700000000.{}' | openssl dgst -sha256 -hmac whsec_test
    expect(signWebhook("{}", "whsec_test", 1_700_000_000)).toBe(
      "t=1700000000,v1=" + "35495024f4ef3f94e5a93e22221544c4b75e9a42300cd965ab81cb85cd994e91"
    )
  })

  it("is accepted by Stripe's own verifier", () => {
    const secret = generateWebhookSecret()
    expect(stripeSignature.verifyHeader(body, signWebhook(body, secret, now), secret, 300)).toBe(true)
  })

  it("signs with every secret during a rotation, each accepted by Stripe", () => {
    const [oldSecret, newSecret] = [generateWebhookSecret(), generateWebhookSecret()]
    const header = signWebhook(body, [oldSecret, newSecret], now)
    expect(header.match(/v1=/g)).toHaveLength(2)
    expect(stripeSignature.verifyHeader(body, header, oldSecret, 300)).toBe(true)
    expect(stripeSignature.verifyHeader(body, header, newSecret, 300)).toBe(true)
  })

  it("is rejected by Stripe for a wrong secret, a tampered body and an old timestamp", () => {
    const secret = generateWebhookSecret()
    expect(() =>
      stripeSignature.verifyHeader(body, signWebhook(body, secret, now), generateWebhookSecret(), 300)
    ).toThrow()
    expect(() => stripeSignature.verifyHeader(`${body} `, signWebhook(body, secret, now), secret, 300)).toThrow()
    expect(() => stripeSignature.verifyHeader(body, signWebhook(body, secret, now - 301), secret, 300)).toThrow()
  })
})

describe("verifyWebhook", () => {
  const secret = generateWebhookSecret()

  it("returns the event for a good signature, from a string or the raw bytes", () => {
    const header = signWebhook(body, secret, now)
    expect(verifyWebhook(body, header, secret)).toEqual(event)
    expect(verifyWebhook(Buffer.from(body), header, secret)).toEqual(event)
  })

  it("rejects a wrong secret and a tampered body", () => {
    const header = signWebhook(body, secret, now)
    expect(reasonOf(() => verifyWebhook(body, header, generateWebhookSecret()))).toBe("signature_mismatch")
    expect(reasonOf(() => verifyWebhook(body.replace("ready", "failed"), header, secret))).toBe("signature_mismatch")
  })

  it("rejects timestamps more than the tolerance away, in the past or the future", () => {
    // The clock is pinned: `now` was read when the file loaded, which may be seconds ago on a busy machine.
    const at = { nowSeconds: now }
    expect(reasonOf(() => verifyWebhook(body, signWebhook(body, secret, now - 301), secret, at))).toBe(
      "timestamp_outside_tolerance"
    )
    expect(reasonOf(() => verifyWebhook(body, signWebhook(body, secret, now + 301), secret, at))).toBe(
      "timestamp_outside_tolerance"
    )
    expect(reasonOf(() => verifyWebhook(body, signWebhook(body, secret, now - 299), secret, at))).toBeNull()
    expect(
      reasonOf(() =>
        verifyWebhook(body, signWebhook(body, secret, 1000), secret, { nowSeconds: 1100, toleranceSeconds: 60 })
      )
    ).toBe("timestamp_outside_tolerance")
  })

  it("a timestamp edited to look fresh breaks the signature", () => {
    const header = signWebhook(body, secret, now - 3600).replace(`t=${now - 3600}`, `t=${now}`)
    expect(reasonOf(() => verifyWebhook(body, header, secret))).toBe("signature_mismatch")
  })

  it("accepts either secret of a rotation, given as a list on either side", () => {
    const next = generateWebhookSecret()
    expect(verifyWebhook(body, signWebhook(body, [secret, next], now), next).id).toBe("evt_1")
    expect(verifyWebhook(body, signWebhook(body, next, now), [secret, next]).id).toBe("evt_1")
  })

  it("rejects a missing or malformed header", () => {
    expect(reasonOf(() => verifyWebhook(body, undefined, secret))).toBe("missing_header")
    expect(reasonOf(() => verifyWebhook(body, "", secret))).toBe("missing_header")
    expect(reasonOf(() => verifyWebhook(body, "v1=abc", secret))).toBe("malformed_header")
    expect(reasonOf(() => verifyWebhook(body, `t=${now},v1=zz`, secret))).toBe("malformed_header")
  })

  it("rejects a signed body that is not an event envelope", () => {
    const notJson = "hello"
    expect(reasonOf(() => verifyWebhook(notJson, signWebhook(notJson, secret, now), secret))).toBe("invalid_payload")
    const noData = JSON.stringify({ id: "evt_1", type: "x", created: 1 })
    expect(reasonOf(() => verifyWebhook(noData, signWebhook(noData, secret, now), secret))).toBe("invalid_payload")
  })
})

describe("generateWebhookSecret", () => {
  it("is whsec_ and 32 base62 characters, different every time", () => {
    const secrets = new Set(Array.from({ length: 100 }, generateWebhookSecret))
    expect(secrets.size).toBe(100)
    for (const secret of secrets) expect(secret).toMatch(/^whsec_[0-9A-Za-z]{32}$/)
  })
})
