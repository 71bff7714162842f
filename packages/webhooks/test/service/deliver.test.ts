import { createServer } from "node:http"
import type { IncomingMessage, Server, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import Stripe from "stripe"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  deliverWebhook,
  generateWebhookSecret,
  isPrivateAddress,
  SIGNATURE_HEADER,
  signWebhook,
  verifyWebhook
} from "../../src/index.ts"

const stripeSignature = Stripe.webhooks.signature
if (stripeSignature === null) throw new Error("stripe-node ships without its webhook signature helper")

const secret = generateWebhookSecret()
const hits: Array<string> = []
const verified: Array<{ readonly stripe: boolean; readonly ours: string }> = []

const readBody = async (req: IncomingMessage): Promise<Buffer> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** A receiver with one route per behaviour a real endpoint may show. */
const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
  const path = req.url ?? "/"
  hits.push(path)
  const raw = await readBody(req)
  const header = req.headers[SIGNATURE_HEADER.toLowerCase()]
  switch (path) {
    case "/verify": {
      const value = typeof header === "string" ? header : ""
      let stripe = false
      try {
        stripe = stripeSignature.verifyHeader(raw, value, secret, 300)
      } catch {
        stripe = false
      }
      let ours = "ok"
      try {
        verifyWebhook(raw, value, secret)
      } catch (error) {
        ours = error instanceof Error ? error.message : "failed"
      }
      verified.push({ stripe, ours })
      res.writeHead(stripe && ours === "ok" ? 200 : 400).end(stripe && ours === "ok" ? "verified" : "rejected")
      return
    }
    case "/ok":
      res.writeHead(204).end()
      return
    case "/fail":
      res.writeHead(500, { "Content-Type": "text/plain" }).end("x".repeat(3000))
      return
    case "/hang":
      return
    case "/close":
      req.socket.destroy()
      return
    case "/redirect":
      res.writeHead(302, { Location: "/ok" }).end()
      return
    case "/slow":
      setTimeout(() => res.writeHead(200).end("slow but fine"), 300)
      return
    case "/cut":
      // Headers of a 200, then the connection drops before the promised body arrives.
      res.writeHead(200, { "Content-Length": "100" })
      res.write("partial", () => req.socket.destroy())
      return
    default:
      res.writeHead(404).end()
  }
}

let server: Server
let base: string

beforeAll(async () => {
  server = createServer((req, res) => void handle(req, res))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

const body = JSON.stringify({ id: "evt_1", type: "job.completed", created: 1, data: { task_id: "gen_1" } })
const signed = (timestamp = Math.floor(Date.now() / 1000)) => ({
  [SIGNATURE_HEADER]: signWebhook(body, secret, timestamp)
})
const send = (path: string, extra: { timeoutMs?: number; headers?: Record<string, string> } = {}) =>
  deliverWebhook({ url: base + path, rawBody: body, headers: extra.headers ?? signed(), allowPrivate: true, ...extra })

describe("deliverWebhook to a receiver that verifies with Stripe and verifyWebhook", () => {
  it("a signed event is accepted by both verifiers", async () => {
    const result = await send("/verify")
    expect(result).toMatchObject({ ok: true, statusCode: 200, responseSnippet: "verified", error: null })
    expect(verified.at(-1)).toEqual({ stripe: true, ours: "ok" })
  })

  it("an event signed with another secret is refused by both", async () => {
    const result = await send("/verify", {
      headers: { [SIGNATURE_HEADER]: signWebhook(body, generateWebhookSecret(), Math.floor(Date.now() / 1000)) }
    })
    expect(result).toMatchObject({ ok: false, statusCode: 400, error: { code: "http_status" } })
    expect(verified.at(-1)?.stripe).toBe(false)
    expect(verified.at(-1)?.ours).not.toBe("ok")
  })

  it("an old signature is refused by both", async () => {
    const result = await send("/verify", { headers: signed(Math.floor(Date.now() / 1000) - 600) })
    expect(result.statusCode).toBe(400)
    expect(verified.at(-1)?.stripe).toBe(false)
  })
})

describe("deliverWebhook outcomes", () => {
  it("any 2xx acknowledges", async () => {
    const result = await send("/ok")
    expect(result).toMatchObject({ ok: true, statusCode: 204, responseSnippet: "", error: null })
    expect(result.latencyMs).toBeGreaterThanOrEqual(0)
  })

  it("a 500 fails and keeps the first 1 KiB of the answer", async () => {
    const result = await send("/fail")
    expect(result).toMatchObject({ ok: false, statusCode: 500, error: { code: "http_status" } })
    expect(result.responseSnippet).toBe("x".repeat(1024))
  })

  it("a receiver that never answers times out", async () => {
    const result = await send("/hang", { timeoutMs: 200 })
    expect(result).toMatchObject({ ok: false, statusCode: null, error: { code: "timeout" } })
    expect(result.latencyMs).toBeGreaterThanOrEqual(190)
    expect(result.latencyMs).toBeLessThan(2000)
  })

  it("a closed connection is a connection failure", async () => {
    const result = await send("/close")
    expect(result).toMatchObject({ ok: false, statusCode: null, error: { code: "connection_failed" } })
  })

  it("a 200 whose body is cut off is not an acknowledgement", async () => {
    const result = await send("/cut")
    expect(result).toMatchObject({ ok: false, statusCode: 200, error: { code: "connection_failed" } })
  })

  it("a redirect is a failed attempt and is not followed", async () => {
    const before = hits.filter((path) => path === "/ok").length
    const result = await send("/redirect")
    expect(result).toMatchObject({ ok: false, statusCode: 302, error: { code: "redirect" } })
    expect(hits.filter((path) => path === "/ok").length).toBe(before)
  })

  it("a slow answer within the time-out succeeds", async () => {
    const result = await send("/slow", { timeoutMs: 2000 })
    expect(result).toMatchObject({ ok: true, statusCode: 200, responseSnippet: "slow but fine" })
    expect(result.latencyMs).toBeGreaterThanOrEqual(290)
  })

  it("a refused port is a connection failure", async () => {
    const idle = createServer()
    await new Promise<void>((resolve) => idle.listen(0, "127.0.0.1", resolve))
    const port = (idle.address() as AddressInfo).port
    await new Promise((resolve) => idle.close(resolve))
    const result = await deliverWebhook({ url: `http://127.0.0.1:${port}/`, rawBody: body, allowPrivate: true })
    expect(result).toMatchObject({ ok: false, statusCode: null, error: { code: "connection_failed" } })
  })

  it("a URL that is not http(s) is refused without a request", async () => {
    expect((await deliverWebhook({ url: "ftp://example.com/x", rawBody: body })).error?.code).toBe("invalid_url")
    expect((await deliverWebhook({ url: "not a url", rawBody: body })).error?.code).toBe("invalid_url")
  })
})

describe("deliverWebhook private addresses", () => {
  it("refuses 127.0.0.1 unless private addresses are allowed", async () => {
    const before = hits.length
    const refused = await deliverWebhook({ url: `${base}/ok`, rawBody: body, allowPrivate: false })
    expect(refused).toMatchObject({ ok: false, statusCode: null, error: { code: "private_address" } })
    expect(hits.length).toBe(before)
    expect((await deliverWebhook({ url: `${base}/ok`, rawBody: body, allowPrivate: true })).ok).toBe(true)
  })

  it("checks the resolved address of a name (localhost), not only literals", async () => {
    const url = `${base.replace("127.0.0.1", "localhost")}/ok`
    const before = hits.length
    expect((await deliverWebhook({ url, rawBody: body })).error?.code).toBe("private_address")
    expect(hits.length).toBe(before)
  })

  it("refuses IPv6 loopback and IPv4-mapped literals", async () => {
    for (const host of ["[::1]", "[::ffff:127.0.0.1]", "[::]", "0.0.0.0", "169.254.169.254", "10.1.2.3"]) {
      expect((await deliverWebhook({ url: `http://${host}:9/`, rawBody: body })).error?.code).toBe("private_address")
    }
  })
})

describe("isPrivateAddress", () => {
  it.each([
    "127.0.0.1",
    "10.0.0.1",
    "172.16.5.4",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "0.0.0.0",
    "100.64.0.1",
    "224.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "fe80::1",
    "fc00::1",
    "fd12:3456::1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "::ffff:a9fe:a9fe",
    "ff02::1",
    "not-an-ip"
  ])("%s is not public", (address) => expect(isPrivateAddress(address)).toBe(true))

  it.each(["8.8.8.8", "1.1.1.1", "172.32.0.1", "192.169.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"])(
    "%s is public",
    (address) => expect(isPrivateAddress(address)).toBe(false)
  )
})
