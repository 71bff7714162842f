/**
 * Traces over OTLP/HTTP: a server with `OTEL_EXPORTER_OTLP_ENDPOINT` pointing at a real HTTP
 * receiver in this test. The spans of one create request (the server span, core's traced
 * functions, the provider's submission) and the worker's later processing of the task arrive in
 * one trace, each carrying the request id.
 */
import { createServer } from "node:http"
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, createAccount, startTestServer, validSong } from "../support/harness.ts"

interface OtlpValue {
  readonly stringValue?: string
  readonly intValue?: number | string
}

interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: OtlpValue }>
}

interface TraceRequest {
  readonly resourceSpans: ReadonlyArray<{
    readonly scopeSpans: ReadonlyArray<{ readonly spans: ReadonlyArray<OtlpSpan> }>
  }>
}

/** A collector: keeps every span posted to /v1/traces. */
const startCollector = async () => {
  const spans: Array<OtlpSpan> = []
  const paths: Array<string> = []
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      paths.push(req.url ?? "")
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as TraceRequest
      for (const resource of body.resourceSpans) {
        for (const scope of resource.scopeSpans) spans.push(...scope.spans)
      }
      res.writeHead(200, { "content-type": "application/json" })
      res.end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    paths,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

const attribute = (span: OtlpSpan, key: string) => span.attributes.find((entry) => entry.key === key)?.value

let collector: Awaited<ReturnType<typeof startCollector>>

beforeAll(async () => {
  collector = await startCollector()
})
afterAll(() => collector?.close())

describe("traces over OTLP/HTTP", () => {
  it("sends the spans of one request in one trace, each with the request id", { timeout: 60_000 }, async () => {
    const server = await startTestServer({ otlpEndpoint: collector.url, worker: "inline", providerPollSeconds: 0.2 })
    let requestId = ""
    try {
      const account = await createAccount(server)
      const created = await api(server, "POST", "/api/v1/music/generations", { key: account.key, body: validSong })
      expect(created.status).toBe(202)
      requestId = created.headers.get("x-request-id") ?? ""
      const until = Date.now() + 15_000
      let status = "pending"
      while (status === "pending" && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        const task = await api(server, "GET", `/api/v1/music/generations/${String(created.body.id)}`, {
          key: account.key
        })
        status = String(task.body.status)
      }
      expect(status).toBe("ready")
    } finally {
      // Closing the runtime flushes the exporter.
      await server.close()
    }
    expect(collector.paths.every((path) => path === "/v1/traces")).toBe(true)
    const ofRequest = collector.spans.filter((span) => attribute(span, "request_id")?.stringValue === requestId)
    const names = ofRequest.map((span) => span.name)
    expect(names).toContain("POST /api/v1/music/generations")
    expect(names).toContain("Generations.create")
    expect(names).toContain("SunoHttpProvider.submit")
    // The worker took the task up later, in the same trace.
    expect(names).toContain("TaskWorker.process")
    expect(new Set(ofRequest.map((span) => span.traceId)).size).toBe(1)
    // Nothing else joined that trace without the request id.
    const traceId = ofRequest[0]?.traceId
    expect(collector.spans.filter((span) => span.traceId === traceId).length).toBe(ofRequest.length)
    const root = ofRequest.find((span) => span.name === "POST /api/v1/music/generations")
    expect(root?.parentSpanId ?? "").toBe("")
    expect(Number(root === undefined ? undefined : attribute(root, "http.response.status_code")?.intValue)).toBe(202)
    // Every other span of the request hangs under a span of the same request.
    const ids = new Set(ofRequest.map((span) => span.spanId))
    expect(ofRequest.filter((span) => span !== root && !ids.has(span.parentSpanId ?? ""))).toEqual([])
  })
})
