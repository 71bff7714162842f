import { request } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, createAccount, startTestServer } from "../support/harness.ts"
import type { TestServer } from "../support/harness.ts"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

const envelopeKeys = (body: object) => Object.keys(body)

describe("every error is the envelope, and nothing else", () => {
  it("404 route_not_found for an unknown API route", async () => {
    const res = await api(server, "GET", "/api/v2/me")
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ error: { type: "not_found", code: "route_not_found", message: expect.any(String) } })
    expect(res.headers.get("x-request-id")).toMatch(/^req_/)
  })

  it("404 route_not_found outside the API too", async () => {
    const res = await api(server, "GET", "/nothing-here")
    expect(res.status).toBe(404)
    expect(res.body.error?.code).toBe("route_not_found")
  })

  it("404 route_not_found for a target the URL parser refuses, sent as is (fetch would tidy it)", async () => {
    // `/\\@` reads as an address with no host; its throw had escaped the request handler.
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const sent = request(`${server.url}/`, { path: "/\\@", method: "GET" }, (res) => {
        let body = ""
        res.on("data", (chunk: Buffer) => (body += chunk.toString()))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
      })
      sent.on("error", reject)
      sent.end()
    })
    expect(answer.status).toBe(404)
    expect(JSON.parse(answer.body)).toEqual({
      error: { type: "not_found", code: "route_not_found", message: expect.any(String) }
    })
  })

  it("405 method_not_allowed with Allow for a wrong method", async () => {
    const res = await api(server, "DELETE", "/api/v1/me")
    expect(res.status).toBe(405)
    expect(res.headers.get("allow")).toBe("GET")
    expect(res.body).toEqual({
      error: { type: "invalid_request_error", code: "method_not_allowed", message: expect.any(String) }
    })
    const put = await api(server, "PUT", "/api/v1/music/generations")
    expect(put.headers.get("allow")).toBe("POST, GET")
  })

  it("malformed JSON never becomes a 500 and carries no stack", async () => {
    const account = await createAccount(server)
    for (const raw of ["{", "nul", '{"style": "a"} trailing', "\u0000"]) {
      const res = await api(server, "POST", "/api/v1/music/generations", {
        key: account.key,
        rawBody: raw,
        headers: { "content-type": "application/json" }
      })
      expect(res.status).toBe(400)
      expect(envelopeKeys(res.body)).toEqual(["error"])
      expect(JSON.stringify(res.body)).not.toMatch(/stack|at .*\.ts/)
    }
  })

  it("health endpoints answer", async () => {
    expect((await api(server, "GET", "/healthz")).body).toEqual({ status: "ok" })
    const ready = await api(server, "GET", "/readyz")
    expect(ready.status).toBe(200)
    expect(ready.body.status).toBe("ready")
  })
})
