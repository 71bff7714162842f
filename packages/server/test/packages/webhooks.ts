/**
 * Run in a project that installed the packed tarballs (packages.test.ts): a receiver verifies a
 * signed event with @lyre/webhooks. The signature is made here with node:crypto, as the
 * interface describes it, not with the package's own signer.
 */
import { createHmac } from "node:crypto"
import { verifyWebhook, WebhookVerificationError } from "@lyre/webhooks"
import type { LyreWebhookEvent } from "@lyre/webhooks"

const secret = "whsec_packagedReceiverSecret0123456789"
const body = JSON.stringify({
  id: "evt_1",
  type: "job.failed",
  created: 1_700_000_000,
  data: {
    task_id: "gen_1",
    status: "failed",
    error: { code: "provider_error", message: "no" },
    credits_refunded: 50,
    created_at: "2023-11-14T22:13:20.000Z"
  }
})
const t = Math.floor(Date.now() / 1000)
const header = `t=${t},v1=${createHmac("sha256", secret).update(`${t}.${body}`).digest("hex")}`

const event = verifyWebhook<LyreWebhookEvent>(body, header, secret)
const refunded = event.type === "job.failed" ? event.data.credits_refunded : null

const reasonFor = (rawBody: string, signature: string): string => {
  try {
    verifyWebhook(rawBody, signature, secret)
    return "accepted"
  } catch (error) {
    return error instanceof WebhookVerificationError ? error.reason : "other"
  }
}

process.stdout.write(
  `${JSON.stringify({
    type: event.type,
    refunded,
    tampered: reasonFor(body.replace("50", "5000"), header),
    stale: reasonFor(body, header.replace(`t=${t}`, `t=${t - 3600}`))
  })}\n`
)
