/**
 * Webhooks end to end: the admin rows, events from the statements that cause them, signed
 * deliveries to real receivers on 127.0.0.1 (verified with Stripe's verifier and ours), retries
 * against receivers that fail in every way, the attempt log, redelivery, ping and rotation.
 *
 * Two servers: `strict` (no worker, private addresses refused) for the admin API's rules, and
 * `live` (worker inline against the fake upstream, private addresses allowed, retries every
 * 0.3 s six times) for everything delivered.
 */
import { Effect, Fiber } from "effect"
import Stripe from "stripe"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startFakeUpstream } from "@lyre/fake-upstream"
import type { Behaviour, FakeUpstream } from "@lyre/fake-upstream"
import { Webhooks, WebhookWorker } from "@lyre/core"
import { verifyWebhook } from "@lyre/webhooks"
import { api, createAccount, startTestServer, validSong } from "../support/harness.ts"
import type { Json, TestAccount, TestServer } from "../support/harness.ts"
import { startReceiver } from "../support/receiver.ts"
import type { Receiver } from "../support/receiver.ts"

const stripeSignature = Stripe.webhooks.signature
if (stripeSignature === null) throw new Error("stripe-node ships without its webhook signature helper")

const apiKey = "webhooks-test-key"
const retries = [0.3, 0.3, 0.3, 0.3, 0.3, 0.3]
let upstream: FakeUpstream
let strict: TestServer
let live: TestServer
const receivers: Array<Receiver> = []

beforeAll(async () => {
  upstream = await startFakeUpstream({ apiKey })
  ;[strict, live] = await Promise.all([
    startTestServer(),
    startTestServer({
      provider: "http",
      providerUrl: upstream.url,
      providerApiKey: apiKey,
      worker: "inline",
      providerPollSeconds: 0.2,
      webhookAllowPrivate: true,
      webhookRetryDelaysSeconds: retries
    })
  ])
})
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()))
  await Promise.all([strict?.close(), live?.close()])
  await upstream?.close()
})

const receiver = async () => {
  const started = await startReceiver()
  receivers.push(started)
  return started
}

const keysOf = (value: Json | undefined) => Object.keys(value ?? {}).sort()
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Hook {
  readonly id: string
  readonly secret: string
  readonly receiver: Receiver
}

const hook = async (account: TestAccount, events?: ReadonlyArray<string>): Promise<Hook> => {
  const target = await receiver()
  const res = await live.admin("POST", `/accounts/${account.id}/webhook-endpoints`, {
    url: target.url,
    ...(events === undefined ? {} : { events })
  })
  expect(res.status).toBe(201)
  return { id: String(res.body.id), secret: String(res.body.secret), receiver: target }
}

const deliveriesOf = async (server: TestServer, endpointId: string) => {
  const res = await server.admin("GET", `/webhook-endpoints/${endpointId}/deliveries`)
  expect(res.status).toBe(200)
  return res.body.data as unknown as ReadonlyArray<Json>
}

/** Polls the endpoint's delivery log until `predicate` holds. */
const deliveriesUntil = async (
  endpointId: string,
  predicate: (data: ReadonlyArray<Json>) => boolean,
  withinMs = 15_000
) => {
  const until = Date.now() + withinMs
  for (;;) {
    const data = await deliveriesOf(live, endpointId)
    if (predicate(data) || Date.now() > until) return data
    await sleep(50)
  }
}

const attemptsOf = async (deliveryId: string) => {
  const res = await live.admin("GET", `/webhook-deliveries/${deliveryId}/attempts`)
  expect(res.status).toBe(200)
  return res.body.data as unknown as ReadonlyArray<Json>
}

const ping = async (endpointId: string) => {
  const res = await live.admin("POST", `/webhook-endpoints/${endpointId}/ping`)
  expect(res.status).toBe(201)
  return res.body
}

let serial = 0
const songBehaving = (behaviour: Behaviour) => {
  const title = `Webhook song ${++serial} ${Math.random().toString(36).slice(2, 8)}`
  upstream.control.onTitle(title, behaviour)
  return { ...validSong, title }
}

const create = async (account: TestAccount, behaviour: Behaviour = {}) => {
  const res = await api(live, "POST", "/api/v1/music/generations", { key: account.key, body: songBehaving(behaviour) })
  expect(res.status).toBe(202)
  return String(res.body.id)
}

const settled = async (account: TestAccount, taskId: string) => {
  const until = Date.now() + 10_000
  for (;;) {
    const res = await api(live, "GET", `/api/v1/music/generations/${taskId}`, { key: account.key })
    if (String(res.body.status) !== "pending" || Date.now() > until) return res.body
    await sleep(30)
  }
}

const eventsOf = (accountId: string, type: string) =>
  live.query<{ id: string; payload: Record<string, unknown> }>(
    "select id, payload from outbox_events where account_id = $1 and type = $2 order by seq",
    accountId,
    type
  )

describe("admin API: webhook endpoints", () => {
  it("POST creates an endpoint: 201 {id, url, events, enabled, secret}, every event by default", async () => {
    const account = await createAccount(strict)
    const res = await strict.admin("POST", `/accounts/${account.id}/webhook-endpoints`, {
      url: "https://93.184.216.34/hooks"
    })
    expect(res.status).toBe(201)
    expect(keysOf(res.body)).toEqual(["enabled", "events", "id", "secret", "url"])
    expect(String(res.body.id)).toMatch(/^whe_[0-9A-Za-z]{24}$/)
    expect(String(res.body.secret)).toMatch(/^whsec_[0-9A-Za-z]{32}$/)
    expect(res.body.events).toEqual([
      "job.completed",
      "job.failed",
      "credits.low",
      "key.expiring",
      "export.completed",
      "export.failed",
      "upload.ready",
      "upload.failed",
      "lyrics.completed",
      "lyrics.failed"
    ])
    expect(res.body.enabled).toBe(true)
  })

  it("refuses loopback, private, link-local and localhost URLs unless WEBHOOK_ALLOW_PRIVATE", async () => {
    const account = await createAccount(strict)
    for (const url of [
      "http://127.0.0.1:9/x",
      "http://10.1.2.3/",
      "http://169.254.169.254/",
      "http://[::1]:80/",
      "http://localhost:8080/"
    ]) {
      const res = await strict.admin("POST", `/accounts/${account.id}/webhook-endpoints`, { url })
      expect(res.status, url).toBe(400)
      expect(res.body.error?.code).toEqual("invalid_parameter")
      expect(res.body.error?.param).toEqual("url")
    }
  })

  it("validates the body (400 in the envelope) and answers 404 for an unknown account", async () => {
    const account = await createAccount(strict)
    const path = `/accounts/${account.id}/webhook-endpoints`
    expect((await strict.admin("POST", path, {})).body.error?.code).toEqual("missing_parameter")
    expect((await strict.admin("POST", path, { url: "ftp://example.com/" })).status).toBe(400)
    const badEvent = await strict.admin("POST", path, { url: "https://93.184.216.34/", events: ["job.done"] })
    expect(badEvent.status).toBe(400)
    expect(String(badEvent.body.error?.param)).toMatch(/^events/)
    expect((await strict.admin("POST", path, { url: "https://93.184.216.34/", secret: "x" })).body.error?.code).toEqual(
      "unknown_parameter"
    )
    const missing = await strict.admin("POST", "/accounts/acct_000000000000000000000000/webhook-endpoints", {
      url: "https://93.184.216.34/"
    })
    expect(missing.status).toBe(404)
  })

  it("PATCH changes url, events and enabled (200 without the secret); DELETE answers 204, then 404", async () => {
    const account = await createAccount(strict)
    const created = await strict.admin("POST", `/accounts/${account.id}/webhook-endpoints`, {
      url: "https://93.184.216.34/a"
    })
    const id = String(created.body.id)
    const patched = await strict.admin("PATCH", `/webhook-endpoints/${id}`, {
      url: "https://93.184.216.34/b",
      events: ["job.failed"],
      enabled: false
    })
    expect(patched.status).toBe(200)
    expect(patched.body).toEqual({ id, url: "https://93.184.216.34/b", events: ["job.failed"], enabled: false })
    expect((await strict.admin("PATCH", `/webhook-endpoints/${id}`, { url: "http://192.168.1.1/" })).status).toBe(400)
    expect((await strict.admin("GET", `/webhook-endpoints/${id}/deliveries`)).body).toEqual({ data: [] })
    expect((await strict.admin("DELETE", `/webhook-endpoints/${id}`)).status).toBe(204)
    expect((await strict.admin("DELETE", `/webhook-endpoints/${id}`)).status).toBe(404)
    expect((await strict.admin("GET", `/webhook-endpoints/${id}/deliveries`)).status).toBe(404)
    expect((await strict.admin("PATCH", "/webhook-endpoints/whe_nope", { enabled: true })).status).toBe(404)
  })
})

describe("job events", () => {
  it("job.completed arrives signed (Stripe's verifier and verifyWebhook agree) with the interface's data", async () => {
    const account = await createAccount(live)
    const endpoint = await hook(account)
    const taskId = await create(account)
    await endpoint.receiver.waitFor((all) => all.some((r) => r.type === "job.completed"))
    const got = endpoint.receiver.received.find((r) => r.type === "job.completed")
    if (got === undefined || got.signature === undefined) throw new Error("no signed job.completed")
    expect(stripeSignature.verifyHeader(got.rawBody, got.signature, endpoint.secret, 300)).toBe(true)
    const event = verifyWebhook(got.rawBody, got.signature, endpoint.secret)
    expect(Object.keys(event)).toEqual(["id", "type", "created", "data"])
    expect(event.id).toMatch(/^evt_[0-9A-Za-z]{24}$/)
    expect(Number.isInteger(event.created)).toBe(true)
    expect(Object.keys(event.data).sort()).toEqual(["created_at", "credits_used", "status", "task_id", "tracks"])
    expect(event.data).toMatchObject({ task_id: taskId, status: "ready", credits_used: 50 })
    expect(event.data["tracks"]).toHaveLength(2)
    expect(() => verifyWebhook(got.rawBody, got.signature, "whsec_wrong")).toThrow()

    const [delivery] = await deliveriesUntil(endpoint.id, (data) => String(data[0]?.status) === "succeeded")
    expect(keysOf(delivery)).toEqual([
      "attempts",
      "event_id",
      "event_type",
      "id",
      "last_status_code",
      "next_attempt_at",
      "status"
    ])
    expect(delivery).toMatchObject({
      event_id: event.id,
      event_type: "job.completed",
      status: "succeeded",
      attempts: 1,
      last_status_code: 200,
      next_attempt_at: null
    })
  })

  it("job.failed carries the error and the refund", async () => {
    const account = await createAccount(live)
    const endpoint = await hook(account, ["job.failed"])
    const taskId = await create(account, { outcome: "GENERATE_AUDIO_FAILED" })
    await endpoint.receiver.waitFor((all) => all.some((r) => r.type === "job.failed"))
    const got = endpoint.receiver.received[0]
    const event = verifyWebhook(got?.rawBody ?? "", got?.signature, endpoint.secret)
    expect(Object.keys(event.data).sort()).toEqual(["created_at", "credits_refunded", "error", "status", "task_id"])
    expect(event.data).toMatchObject({ task_id: taskId, status: "failed", credits_refunded: 50 })
    expect(Object.keys(event.data["error"] as object).sort()).toEqual(["code", "message"])
  })
})

describe("fan-out", () => {
  it("one delivery per enabled endpoint of the account that wants the type", async () => {
    const account = await createAccount(live)
    const wants = await hook(account, ["key.expiring"])
    const other = await hook(account, ["credits.low"])
    const off = await hook(account, ["key.expiring"])
    expect((await live.admin("PATCH", `/webhook-endpoints/${off.id}`, { enabled: false })).status).toBe(200)
    const stranger = await hook(await createAccount(live), ["key.expiring"])
    const key = await live.admin("POST", `/accounts/${account.id}/keys`, {
      name: "soon",
      scopes: ["profile"],
      expires_at: new Date(Date.now() + 3_600_000).toISOString()
    })
    expect(key.status).toBe(201)
    await wants.receiver.waitFor((all) => all.length === 1)
    await sleep(400)
    expect(wants.receiver.received).toHaveLength(1)
    for (const silent of [other, off, stranger]) {
      expect(silent.receiver.received).toHaveLength(0)
      expect(await deliveriesOf(live, silent.id)).toHaveLength(0)
    }
  })
})

describe("retries and the attempt log", () => {
  it("a 500 is retried; the log keeps each attempt's time, status, latency and first bytes", async () => {
    const endpoint = await hook(await createAccount(live))
    endpoint.receiver.answer = (_id, nth) =>
      nth === 0 ? { kind: "status", status: 500, body: "boom: database down" } : { kind: "status", status: 204 }
    const sent = await ping(endpoint.id)
    const [delivery] = await deliveriesUntil(endpoint.id, (data) => String(data[0]?.status) === "succeeded")
    expect(delivery).toMatchObject({ id: sent.id, status: "succeeded", attempts: 2, last_status_code: 204 })
    const attempts = await attemptsOf(String(sent.id))
    expect(attempts.map((a) => [a.attempt, a.status_code])).toEqual([
      [1, 500],
      [2, 204]
    ])
    expect(keysOf(attempts[0])).toEqual([
      "attempt",
      "attempted_at",
      "error",
      "latency_ms",
      "response_snippet",
      "status_code"
    ])
    expect(attempts[0]?.response_snippet).toEqual("boom: database down")
    expect(String(attempts[0]?.error)).toContain("500")
    expect(attempts[1]?.error).toBeNull()
    const bodies = endpoint.receiver.received.map((r) => JSON.parse(r.rawBody) as unknown)
    expect(bodies[0]).toEqual(bodies[1])
  })

  it("a closed connection is retried", async () => {
    const endpoint = await hook(await createAccount(live))
    endpoint.receiver.answer = (_id, nth) => (nth === 0 ? { kind: "close" } : { kind: "status", status: 200 })
    const sent = await ping(endpoint.id)
    await deliveriesUntil(endpoint.id, (data) => String(data[0]?.status) === "succeeded")
    const attempts = await attemptsOf(String(sent.id))
    expect(attempts[0]?.status_code).toBeNull()
    expect(attempts[0]?.error).not.toBeNull()
    expect(attempts[1]?.status_code).toBe(200)
  })

  it("a redirect is not followed: every attempt fails, and after the schedule the delivery is dead", async () => {
    const endpoint = await hook(await createAccount(live))
    const elsewhere = await receiver()
    endpoint.receiver.answer = () => ({ kind: "redirect", location: elsewhere.url })
    const sent = await ping(endpoint.id)
    const [delivery] = await deliveriesUntil(endpoint.id, (data) => String(data[0]?.status) === "dead")
    expect(delivery).toMatchObject({
      status: "dead",
      attempts: retries.length + 1,
      last_status_code: 302,
      next_attempt_at: null
    })
    expect(elsewhere.received).toHaveLength(0)
    const attempts = await attemptsOf(String(sent.id))
    expect(attempts).toHaveLength(retries.length + 1)
    expect(String(attempts[0]?.error)).toContain("Redirect")
  })

  it("a slow answer (1.5 s) within the time-out succeeds once", async () => {
    const endpoint = await hook(await createAccount(live))
    endpoint.receiver.answer = () => ({ kind: "status", status: 200, delayMs: 1_500 })
    const sent = await ping(endpoint.id)
    await deliveriesUntil(endpoint.id, (data) => String(data[0]?.status) === "succeeded")
    const attempts = await attemptsOf(String(sent.id))
    expect(attempts).toHaveLength(1)
    expect(Number(attempts[0]?.latency_ms)).toBeGreaterThanOrEqual(1_400)
  })

  it("a receiver that hangs is cut off at 10 s and the event is sent again", async () => {
    const endpoint = await hook(await createAccount(live))
    endpoint.receiver.answer = (_id, nth) => (nth === 0 ? { kind: "hang" } : { kind: "status", status: 200 })
    const sent = await ping(endpoint.id)
    await deliveriesUntil(endpoint.id, (data) => String(data[0]?.status) === "succeeded", 20_000)
    const attempts = await attemptsOf(String(sent.id))
    expect(attempts[0]?.status_code).toBeNull()
    expect(String(attempts[0]?.error)).toContain("10000 ms")
    expect(Number(attempts[0]?.latency_ms)).toBeGreaterThanOrEqual(9_900)
  }, 30_000)

  it("a receiver down for a while gets every event once it is back: none lost", async () => {
    const endpoint = await hook(await createAccount(live))
    await endpoint.receiver.stop()
    const sent = await Promise.all(Array.from({ length: 30 }, () => ping(endpoint.id)))
    await sleep(1_000)
    await endpoint.receiver.reopen()
    const ids = new Set(sent.map((delivery) => String(delivery.event_id)))
    await endpoint.receiver.waitFor((all) => [...ids].every((id) => all.some((r) => r.eventId === id)))
    const data = await deliveriesUntil(endpoint.id, (all) => all.every((d) => String(d.status) === "succeeded"))
    expect(data.filter((d) => String(d.status) === "succeeded")).toHaveLength(30)
    expect(data.some((d) => Number(d.attempts) > 1)).toBe(true)
  })
})

describe("leases", () => {
  it("three workers on one database never make the same attempt twice", async () => {
    const endpoint = await hook(await createAccount(live))
    const extra = ["extra-a", "extra-b"].map((workerId) =>
      live.runtime.runFork(
        WebhookWorker.use((worker) => worker.run).pipe(
          Effect.provide(WebhookWorker.layer({ workerId, leaseSeconds: 60, concurrency: 8, idleMillis: 20 }))
        )
      )
    )
    try {
      const sent: Array<Json> = []
      for (let batch = 0; batch < 6; batch++)
        sent.push(...(await Promise.all(Array.from({ length: 25 }, () => ping(endpoint.id)))))
      const ids = new Set(sent.map((d) => String(d.event_id)))
      await endpoint.receiver.waitFor((all) => new Set(all.map((r) => r.eventId)).size === ids.size)
      await sleep(300)
      expect(endpoint.receiver.received).toHaveLength(ids.size)
      const attempts = await live.query<{ n: number; max: number }>(
        `select count(*)::int as n, max(attempt)::int as max from webhook_attempts a
         join webhook_deliveries d on d.id = a.delivery_id where d.endpoint_id = $1`,
        endpoint.id
      )
      expect(attempts[0]).toEqual({ n: ids.size, max: 1 })
    } finally {
      await Promise.all(extra.map((fiber) => Effect.runPromise(Fiber.interrupt(fiber))))
    }
  })
  it("a delivery leased by a worker that died is taken over once its lease ends", async () => {
    const endpoint = await hook(await createAccount(live))
    expect((await live.admin("PATCH", `/webhook-endpoints/${endpoint.id}`, { enabled: false })).status).toBe(200)
    const sent = await ping(endpoint.id)
    await live.query(
      "update webhook_deliveries set lease_owner = 'dead-worker', lease_expires_at = now() + interval '1 second' where id = $1",
      sent.id
    )
    const leasedAt = Date.now()
    expect((await live.admin("PATCH", `/webhook-endpoints/${endpoint.id}`, { enabled: true })).status).toBe(200)
    await endpoint.receiver.waitFor((all) => all.length === 1)
    expect(Date.now() - leasedAt).toBeGreaterThanOrEqual(900)
    const [delivery] = await deliveriesUntil(endpoint.id, (data) => String(data[0]?.status) === "succeeded")
    expect(delivery).toMatchObject({ status: "succeeded", attempts: 1 })
  })
})

describe("credits.low", () => {
  it("fires once per crossing over debits, refunds, grants and adjustments", async () => {
    const account = await createAccount(live, { subscription: 1_000, concurrency_limit: 50 })
    const endpoint = await hook(account, ["credits.low"])
    expect((await live.admin("PATCH", `/accounts/${account.id}`, { credit_alert_threshold: 300 })).status).toBe(200)
    const credits = async (change: Record<string, number>) =>
      expect((await live.admin("POST", `/accounts/${account.id}/credits`, change)).status).toBe(200)
    await credits({ subscription: -600 }) // 400
    await create(account) // 350
    await create(account) // 300: not below
    const failing = await create(account, { outcome: "GENERATE_AUDIO_FAILED" }) // 250: fires (1)
    expect((await settled(account, failing)).status).toBe("failed") // refund: 300, re-armed
    await create(account) // 250: fires (2)
    await credits({ onetime: 100 }) // 350
    await credits({ subscription: -200 }) // 150: fires (3)
    await credits({ onetime: -100 }) // 50: disarmed, silent
    await credits({ subscription: 1_000 }) // 1050
    await credits({ subscription: -1_000 }) // 50: fires (4)
    const events = await eventsOf(account.id, "credits.low")
    expect(events.map((e) => e.payload["balance"])).toEqual([250, 250, 150, 50])
    await endpoint.receiver.waitFor((all) => all.length === 4)
    // Deliveries run in parallel, so arrival order is not the events' order: find the last one.
    const last = endpoint.receiver.received.find((r) => r.eventId === events[3]?.id)
    const event = verifyWebhook(last?.rawBody ?? "", last?.signature, endpoint.secret)
    expect(event.data).toEqual({ threshold: 300, balance: 50, subscription_credits: 50, onetime_credits: 0 })
  })

  it("fires exactly once when twenty debits race across the threshold on two keys", async () => {
    const account = await createAccount(live, { subscription: 1_000, concurrency_limit: 50 })
    expect((await live.admin("PATCH", `/accounts/${account.id}`, { credit_alert_threshold: 500 })).status).toBe(200)
    const second = await live.admin("POST", `/accounts/${account.id}/keys`, {
      name: "second",
      scopes: ["music:generate"]
    })
    const keys = [account.key, String(second.body.key)]
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api(live, "POST", "/api/v1/music/generations", { key: keys[i % 2] ?? "", body: songBehaving({}) })
      )
    )
    expect(results.map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 202))
    const events = await eventsOf(account.id, "credits.low")
    expect(events).toHaveLength(1)
    expect(events[0]?.payload).toMatchObject({ threshold: 500, balance: 450 })
  })
})

describe("key.expiring", () => {
  it("fires at creation for a key with less than a day left, and once per key from the sweep; never for a revoked key", async () => {
    const account = await createAccount(live)
    const endpoint = await hook(account, ["key.expiring"])
    const makeKey = async (name: string, hours: number) => {
      const res = await live.admin("POST", `/accounts/${account.id}/keys`, {
        name,
        scopes: ["profile"],
        expires_at: new Date(Date.now() + hours * 3_600_000).toISOString()
      })
      expect(res.status).toBe(201)
      return res.body
    }
    const soon = await makeKey("soon", 2)
    const later = await makeKey("later", 72)
    const revoked = await makeKey("revoked", 72)
    expect((await live.admin("DELETE", `/keys/${String(revoked.id)}`)).status).toBe(204)
    let events = await eventsOf(account.id, "key.expiring")
    expect(events.map((e) => e.payload["api_key_id"])).toEqual([soon.id])
    expect(events[0]?.payload).toEqual({
      api_key_id: soon.id,
      prefix: soon.prefix,
      name: "soon",
      expires_at: soon.expires_at,
      days_until_expiry: 1
    })
    await live.query("update api_keys set expires_at = now() + interval '20 hours' where id = any($1)", [
      later.id,
      revoked.id
    ])
    const sweep = () => live.runtime.runPromise(Webhooks.use((webhooks) => webhooks.sweepExpiringKeys))
    await sweep()
    await sweep()
    events = await eventsOf(account.id, "key.expiring")
    expect(events.map((e) => e.payload["api_key_id"])).toEqual([soon.id, later.id])
    expect(events[1]?.payload["days_until_expiry"]).toBe(1)
    await endpoint.receiver.waitFor((all) => all.length === 2)
    const data = endpoint.receiver.received.map((r) => verifyWebhook(r.rawBody, r.signature, endpoint.secret).data)
    expect(data.map((d) => d["name"]).sort()).toEqual(["later", "soon"])
  })
})

describe("ping, redelivery and rotation", () => {
  it("ping goes to that endpoint only, whatever events it wants", async () => {
    const account = await createAccount(live)
    const endpoint = await hook(account, ["job.failed"])
    const other = await hook(account)
    const sent = await ping(endpoint.id)
    expect(keysOf(sent)).toEqual([
      "attempts",
      "event_id",
      "event_type",
      "id",
      "last_status_code",
      "next_attempt_at",
      "status"
    ])
    expect(sent).toMatchObject({ event_type: "ping", status: "pending", attempts: 0 })
    await endpoint.receiver.waitFor((all) => all.length === 1)
    const event = verifyWebhook(
      endpoint.receiver.received[0]?.rawBody ?? "",
      endpoint.receiver.received[0]?.signature,
      endpoint.secret
    )
    expect(event).toMatchObject({ id: sent.event_id, type: "ping", data: { webhook_endpoint_id: endpoint.id } })
    expect(other.receiver.received).toHaveLength(0)
    expect((await live.admin("POST", "/webhook-endpoints/whe_000000000000000000000000/ping")).status).toBe(404)
  })

  it("redelivers a delivery, or any event of the account to an endpoint, with the same event id and body", async () => {
    const account = await createAccount(live)
    const endpoint = await hook(account)
    const sent = await ping(endpoint.id)
    await deliveriesUntil(endpoint.id, (data) => String(data[0]?.status) === "succeeded")
    const again = await live.admin("POST", `/webhook-deliveries/${String(sent.id)}/redeliver`)
    expect(again.status).toBe(201)
    expect(again.body.id).not.toEqual(sent.id)
    expect(again.body.event_id).toEqual(sent.event_id)
    const second = await hook(account)
    const byEvent = await live.admin("POST", `/webhook-endpoints/${second.id}/deliveries`, { event_id: sent.event_id })
    expect(byEvent.status).toBe(201)
    await endpoint.receiver.waitFor((all) => all.length === 2)
    await second.receiver.waitFor((all) => all.length === 1)
    const [first, repeat] = endpoint.receiver.received
    expect(repeat?.rawBody).toEqual(first?.rawBody)
    expect(second.receiver.received[0]?.rawBody).toEqual(first?.rawBody)
    const stranger = await hook(await createAccount(live))
    expect(
      (await live.admin("POST", `/webhook-endpoints/${stranger.id}/deliveries`, { event_id: sent.event_id })).status
    ).toBe(404)
    expect((await live.admin("POST", "/webhook-deliveries/dlv_000000000000000000000000/redeliver")).status).toBe(404)
  })

  it("rotation: both secrets sign during the grace period, only the new one after", async () => {
    const endpoint = await hook(await createAccount(live))
    const rotated = await live.admin("POST", `/webhook-endpoints/${endpoint.id}/rotate-secret`, {
      grace_period_seconds: 3_600
    })
    expect(rotated.status).toBe(200)
    const fresh = String(rotated.body.secret)
    expect(fresh).not.toEqual(endpoint.secret)
    expect(Date.parse(String(rotated.body.previous_secret_expires_at))).toBeGreaterThan(Date.now() + 3_500_000)
    await ping(endpoint.id)
    await endpoint.receiver.waitFor((all) => all.length === 1)
    const during = endpoint.receiver.received[0]
    if (during?.signature === undefined) throw new Error("unsigned")
    expect(during.signature.match(/v1=/g)).toHaveLength(2)
    expect(stripeSignature.verifyHeader(during.rawBody, during.signature, endpoint.secret, 300)).toBe(true)
    expect(stripeSignature.verifyHeader(during.rawBody, during.signature, fresh, 300)).toBe(true)

    const final = await live.admin("POST", `/webhook-endpoints/${endpoint.id}/rotate-secret`, {
      grace_period_seconds: 0
    })
    expect(final.body.previous_secret_expires_at).toBeNull()
    await ping(endpoint.id)
    await endpoint.receiver.waitFor((all) => all.length === 2)
    const after = endpoint.receiver.received[1]
    expect(after?.signature?.match(/v1=/g)).toHaveLength(1)
    expect(verifyWebhook(after?.rawBody ?? "", after?.signature, String(final.body.secret)).type).toBe("ping")
    expect(() => verifyWebhook(after?.rawBody ?? "", after?.signature, fresh)).toThrow()
  })
})
