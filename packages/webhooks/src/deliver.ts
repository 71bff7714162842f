import { performance } from "node:perf_hooks"
import { outboundTarget, PRIVATE_ADDRESS } from "./outbound.ts"

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

    const checked = outboundTarget(request.url, allowPrivate)
    if (!checked.ok) return finish(null, null, checked.refusal)
    const { url, transport, options } = checked.target
    const req = transport.request(url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "User-Agent": "Lyre-Webhooks/1",
        ...request.headers,
        "Content-Length": Buffer.byteLength(request.rawBody)
      },
      ...options
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
        if (!res.complete)
          finish(code, Buffer.concat(chunks), { code: "connection_failed", message: "Connection closed mid-answer" })
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
