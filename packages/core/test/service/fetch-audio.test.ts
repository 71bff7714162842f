/**
 * An upload fetched from a URL (fetchAudio): the time-out before the answer and mid-body, the
 * redirect limit, a redirect to a scheme the rule refuses, a body cut past the cap, and a declared
 * length past it refused unread. Against a server on 127.0.0.1, so private addresses are allowed
 * here; the address rule itself is tested through the agents (mcp-uploads, a2a-uploads) and the
 * webhooks' delivery tests, which share it.
 */
import { createServer } from "node:http"
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { Readable } from "node:stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fetchAudio } from "../../src/index.ts"
import type { FetchRules } from "../../src/index.ts"

let server: Server
let base: string
beforeAll(async () => {
  server = createServer((req, res) => {
    switch (req.url) {
      case "/hang":
        return
      case "/stall":
        res.writeHead(200, { "content-type": "audio/wav" })
        res.write(Buffer.alloc(100))
        return
      case "/loop":
        res.writeHead(302, { location: "/loop" }).end()
        return
      case "/to-file":
        res.writeHead(302, { location: "file:///etc/passwd" }).end()
        return
      case "/endless": {
        // Half a kilobyte every 5 ms until the client hangs up.
        res.writeHead(200, { "content-type": "audio/wav" })
        const timer = setInterval(() => res.write(Buffer.alloc(512)), 5)
        res.once("close", () => clearInterval(timer))
        return
      }
      case "/declared":
        res.writeHead(200, { "content-type": "audio/wav", "content-length": 5_000 }).end(Buffer.alloc(5_000))
        return
      default:
        res.writeHead(200, { "content-type": "audio/flac; charset=binary" }).end(Buffer.alloc(10))
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => {
  server.closeAllConnections()
  server.close()
})

const rules: FetchRules = { allowPrivate: true, timeoutMs: 300, maxBytes: 1_000, maxRedirects: 3 }

/** Reads a stream to its end or its error. */
const drain = (stream: Readable): Promise<{ readonly bytes: number; readonly error: string | null }> =>
  new Promise((resolve) => {
    let bytes = 0
    stream.on("data", (chunk: Buffer) => (bytes += chunk.length))
    stream.once("end", () => resolve({ bytes, error: null }))
    stream.once("error", (error) => resolve({ bytes, error: error.message }))
  })

const refusalOf = async (path: string, overrides: Partial<FetchRules> = {}) => {
  const opened = await fetchAudio(`${base}${path}`, undefined, { ...rules, ...overrides })
  if (opened.ok) throw new Error("expected a refusal")
  return opened.error
}

describe("fetchAudio", () => {
  it("opens the answer with its type", async () => {
    const opened = await fetchAudio(`${base}/ok.flac`, undefined, rules)
    if (!opened.ok) throw new Error(opened.error.message)
    expect(opened.file.contentType).toBe("audio/flac")
    expect(await drain(opened.file.stream)).toEqual({ bytes: 10, error: null })
  })

  it("refuses a server that does not answer within the time-out, on url", async () => {
    const error = await refusalOf("/hang")
    expect(error).toMatchObject({ _tag: "InvalidParameter", param: "url" })
    expect(error.message).toMatch(/no complete answer within/)
  })

  it("breaks a body that stalls past the time-out, so the receive refuses it", async () => {
    const opened = await fetchAudio(`${base}/stall`, undefined, rules)
    if (!opened.ok) throw new Error(opened.error.message)
    const read = await drain(opened.file.stream)
    expect(read.bytes).toBe(100)
    expect(read.error).toMatch(/no complete answer within/)
  })

  it("follows at most the stated number of redirects", async () => {
    expect((await refusalOf("/loop")).message).toMatch(/more than 3 redirects/)
  })

  it("checks every redirect hop against the rule: no scheme but http and https", async () => {
    const error = await refusalOf("/to-file")
    expect(error).toMatchObject({ _tag: "InvalidParameter", param: "url" })
    expect(error.message).toMatch(/Only http and https URLs are fetched/)
  })

  it("stops a body without a length soon past the cap rather than at the time-out", async () => {
    const opened = await fetchAudio(`${base}/endless`, undefined, { ...rules, timeoutMs: 10_000 })
    if (!opened.ok) throw new Error(opened.error.message)
    const started = Date.now()
    const read = await drain(opened.file.stream)
    expect(read.error).toMatch(/closed the connection before the end/)
    expect(read.bytes).toBeGreaterThan(rules.maxBytes)
    expect(read.bytes).toBeLessThan(rules.maxBytes + 2_048)
    expect(Date.now() - started).toBeLessThan(2_000)
  })

  it("refuses a declared length past the cap unread, as too large", async () => {
    expect(await refusalOf("/declared")).toMatchObject({ _tag: "UploadTooLarge" })
  })
})
