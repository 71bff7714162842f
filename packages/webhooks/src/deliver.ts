import { lookup as dnsLookup } from "node:dns"
import type { LookupAddress } from "node:dns"
import http from "node:http"
import https from "node:https"
import { isIP } from "node:net"
import type { LookupFunction } from "node:net"
import { performance } from "node:perf_hooks"
import { isPrivateAddress } from "./address.ts"

export interface DeliveryRequest {
  readonly url: string
  readonly rawBody: string
  /** Extra headers, typically `X-Service-Signature`; `Content-Type` defaults to JSON. */
  readonly headers?: Readonly<Record<string, string>>
  readonly timeoutMs?: number
  /** Let loopback and private addresses receive (development and tests only). */
  readonly allowPrivate?: boolean
}

export type DeliveryErrorCode =
  | "invalid_url"
  | "private_address"
  | "dns_failed"
  | "connection_failed"
  | "timeout"
  | "redirect"
  | "http_status"

export interface DeliveryError {
  readonly code: DeliveryErrorCode
  readonly message: string
}

/** One attempt, as the delivery log shows it. `ok` is true exactly for a 2xx answer. */
export interface DeliveryResult {
  readonly ok: boolean
  readonly statusCode: number | null
  readonly latencyMs: number
  /** The first 1 KiB of the answer's body, decoded as UTF-8; empty when there was no answer. */
  readonly responseSnippet: string
  readonly error: DeliveryError | null
}

const SNIPPET_BYTES = 1024
/** Past this much body we stop reading: the answer's content does not matter beyond the snippet. */
const MAX_DRAIN_BYTES = 64 * 1024
const PRIVATE_ADDRESS = "ERR_WEBHOOK_PRIVATE_ADDRESS"

const codedError = (code: string, message: string): NodeJS.ErrnoException =>
  Object.assign(new Error(message), { code })

/**
 * Resolves the name and hands the socket only public addresses. Because it runs inside the
 * connection itself, the address checked is the address connected to: a DNS answer that
 * changes between a check and the connect (rebinding) cannot get around it.
 */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: ReadonlyArray<LookupAddress>) => {
    if (error) return callback(error, "")
    const allowed = addresses.filter((entry) => !isPrivateAddress(entry.address))
    const first = allowed[0]
    if (first === undefined) {
      const seen = addresses.map((entry) => entry.address).join(", ")
      return callback(codedError(PRIVATE_ADDRESS, `${hostname} resolves only to non-public addresses (${seen})`), "")
    }
    if (options.all === true) return callback(null, allowed)
    callback(null, first.address, first.family)
  })
}

// Keep-alive pools, one per policy, so that a socket opened while private addresses were
// allowed is never reused by a delivery that forbids them.
const agents = {
  public: { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) },
  private: { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) }
}

const classify = (error: NodeJS.ErrnoException): DeliveryError => {
  switch (error.code) {
    case PRIVATE_ADDRESS:
      return { code: "private_address", message: error.message }
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return { code: "dns_failed", message: error.message }
    default:
      return { code: "connection_failed", message: error.message || String(error.code) }
  }
}

/**
 * POSTs one webhook attempt and reports what happened. It never throws and never follows a
 * redirect (a 3xx is a failed attempt: following it would let an endpoint bounce us to an
 * address it could not register). The time-out covers the whole attempt, connect to last byte.
 */
export const deliverWebhook = (request: DeliveryRequest): Promise<DeliveryResult> =>
  new Promise((resolve) => {
    const started = performance.now()
    const timeoutMs = request.timeoutMs ?? 10_000
    const allowPrivate = request.allowPrivate ?? false
    let settled = false
    const finish = (statusCode: number | null, snippet: Buffer | null, error: DeliveryError | null): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve({
        ok: error === null,
        statusCode,
        latencyMs: Math.round(performance.now() - started),
        responseSnippet: snippet === null ? "" : snippet.subarray(0, SNIPPET_BYTES).toString("utf8"),
        error
      })
    }
    let timer: NodeJS.Timeout | undefined

    let url: URL
    try {
      url = new URL(request.url)
    } catch {
      return finish(null, null, { code: "invalid_url", message: `Not a URL: ${request.url}` })
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      return finish(null, null, { code: "invalid_url", message: `Only http and https URLs receive webhooks, not ${url.protocol}` })
    }
    // Node connects to IP literals without calling `lookup`, so they are checked here.
    const literal = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
    if (!allowPrivate && isIP(literal) !== 0 && isPrivateAddress(literal)) {
      return finish(null, null, { code: "private_address", message: `${literal} is not a public address` })
    }

    const transport = url.protocol === "https:" ? https : http
    const pool = allowPrivate ? agents.private : agents.public
    const req = transport.request(url, {
      method: "POST",
      agent: url.protocol === "https:" ? pool.https : pool.http,
      headers: {
        "Content-Type": "application/json",
        "User-Agent": "Lyre-Webhooks/1",
        ...request.headers,
        "Content-Length": Buffer.byteLength(request.rawBody)
      },
      ...(allowPrivate ? {} : { lookup: publicOnlyLookup })
    })
    // What has arrived so far, so that a time-out mid-answer still logs the status and snippet.
    let status: number | null = null
    const chunks: Array<Buffer> = []
    timer = setTimeout(() => {
      finish(status, Buffer.concat(chunks), { code: "timeout", message: `No complete answer within ${timeoutMs} ms` })
      req.destroy()
    }, timeoutMs)

    req.on("error", (error: NodeJS.ErrnoException) => finish(status, Buffer.concat(chunks), classify(error)))
    req.on("response", (res) => {
      const code = res.statusCode ?? 0
      status = code
      let kept = 0
      let seen = 0
      res.on("data", (chunk: Buffer) => {
        seen += chunk.length
        if (kept < SNIPPET_BYTES) {
          chunks.push(chunk)
          kept += chunk.length
        }
        if (seen > MAX_DRAIN_BYTES) {
          finish(code, Buffer.concat(chunks), outcomeOf(code, res.headers.location))
          res.destroy()
        }
      })
      res.on("end", () => finish(code, Buffer.concat(chunks), outcomeOf(code, res.headers.location)))
      // The answer was cut off: the receiver may not have finished handling the event, so the
      // attempt counts as failed and the event is sent again.
      res.on("error", (error: NodeJS.ErrnoException) => finish(code, Buffer.concat(chunks), classify(error)))
      res.on("close", () => {
        if (!res.complete) finish(code, Buffer.concat(chunks), { code: "connection_failed", message: "Connection closed mid-answer" })
      })
    })
    req.end(request.rawBody)
  })

const outcomeOf = (status: number, location: string | undefined): DeliveryError | null => {
  if (status >= 200 && status < 300) return null
  if (status >= 300 && status < 400) {
    return { code: "redirect", message: `Redirect ${status} to ${location ?? "(no Location)"} not followed` }
  }
  return { code: "http_status", message: `Receiver answered ${status}` }
}
