/**
 * A path whose percent-escapes do not decode (a truncated sequence, an overlong UTF-8 form, a `%`
 * with no hex after it) names nothing: every surface answers 404 in the error envelope, never
 * the 500 of a URIError escaping to the request handler. The REST routes are read from the
 * OpenAPI document the server serves, so a route added later is tried too.
 */
import { request } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createAccount, startTestServer } from "../support/harness.ts"
import type { TestAccount, TestServer } from "../support/harness.ts"

/** Escapes `decodeURIComponent` refuses, which the URL parser leaves as they are. */
const malformed = ["%E0%A4%A", "%C0%AF", "%", "%ZZ"]

interface Answer {
  readonly status: number
  readonly body: string
}

/** Sends `path` exactly as written: fetch's URL parser would be free to tidy it. */
const send = (server: TestServer, method: string, path: string, headers: Record<string, string> = {}) =>
  new Promise<Answer>((resolve, reject) => {
    const body = method === "GET" || method === "HEAD" || method === "DELETE" ? undefined : "{}"
    const sent = request(
      `${server.url}/`,
      {
        path,
        method,
        headers: body === undefined ? headers : { ...headers, "content-type": "application/json" }
      },
      (res) => {
        let text = ""
        res.on("data", (chunk: Buffer) => (text += chunk.toString()))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }))
      }
    )
    sent.on("error", reject)
    sent.end(body)
  })

const notFoundEnvelope = {
  error: { type: "not_found", code: expect.stringMatching(/_not_found$/), message: expect.any(String) }
}

/** Every answer that is not a 404 envelope, as `METHOD path -> status body`, so a failure names them all. */
const strays = (answers: ReadonlyArray<readonly [string, Answer]>) =>
  answers
    .filter(([, answer]) => {
      if (answer.status !== 404) return true
      try {
        expect(JSON.parse(answer.body)).toEqual(notFoundEnvelope)
        return false
      } catch {
        return true
      }
    })
    .map(([sent, answer]) => `${sent} -> ${answer.status} ${answer.body.slice(0, 200)}`)

let server: TestServer
let account: TestAccount
beforeAll(async () => {
  server = await startTestServer()
  account = await createAccount(server)
})
afterAll(() => server.close())

describe("a path parameter with a malformed percent-escape", () => {
  it("is 404 in the envelope on every REST route of the OpenAPI document", async () => {
    const document = JSON.parse((await send(server, "GET", "/api/openapi.json")).body) as {
      readonly servers: ReadonlyArray<{ readonly url: string }>
      readonly paths: Record<string, Record<string, unknown>>
    }
    const base = new URL(document.servers[0]?.url ?? "").pathname
    const methods = new Set(["get", "post", "put", "patch", "delete"])
    const tried: Array<readonly [string, Answer]> = []
    for (const [template, operations] of Object.entries(document.paths)) {
      const params = [...template.matchAll(/\{([^}]+)\}/g)].map(([, name = ""]) => name)
      for (const method of Object.keys(operations).filter((name) => methods.has(name))) {
        for (const param of params) {
          for (const bad of malformed) {
            // The other parameters hold a plain id, so only the one malformed escape can be at fault.
            const path =
              base + template.replace(/\{([^}]+)\}/g, (_, name: string) => (name === param ? `x${bad}` : "trk_missing"))
            const verb = method.toUpperCase()
            tried.push([`${verb} ${path}`, await send(server, verb, path, { authorization: `Bearer ${account.key}` })])
          }
        }
      }
    }
    // The document has routes with parameters to try (generations, tracks, uploads, ...).
    expect(tried.length).toBeGreaterThanOrEqual(10 * malformed.length)
    expect(strays(tried)).toEqual([])
  })

  it("is 404 in the envelope on the service's other paths", async () => {
    const admin = { authorization: `Bearer ${server.adminToken}` }
    const user = { authorization: `Bearer ${account.key}` }
    const tried: Array<readonly [string, Answer]> = []
    const heads: Array<Answer> = []
    for (const bad of malformed) {
      const paths: ReadonlyArray<readonly [string, string, Record<string, string>]> = [
        ["GET", `/files/${bad}`, {}],
        ["GET", `/files/upl_missing/source${bad}.mp3`, {}],
        ["GET", `/admin/v1/accounts/${bad}`, admin],
        ["GET", `/admin/v1/accounts/${bad}/ledger`, admin],
        ["DELETE", `/admin/v1/keys/${bad}`, admin],
        ["GET", `/admin/v1/webhook-endpoints/${bad}`, admin],
        ["GET", `/dashboard/assets/${bad}.js`, {}],
        ["GET", `/oauth/authorize${bad}`, {}],
        ["POST", `/oauth/token${bad}`, {}],
        ["GET", `/.well-known/${bad}`, {}],
        ["GET", `/api/docs/${bad}`, {}],
        ["GET", `/api/v1/${bad}`, user],
        ["GET", `/${bad}`, {}]
      ]
      for (const [method, path, headers] of paths) {
        tried.push([`${method} ${path}`, await send(server, method, path, headers)])
      }
      heads.push(await send(server, "HEAD", `/files/${bad}`))
    }
    expect(strays(tried)).toEqual([])
    // A HEAD answer has no body to hold an envelope; its status is the GET's.
    expect(heads.map((answer) => answer.status)).toEqual(malformed.map(() => 404))
  })

  it("is an unknown procedure to tRPC: 404, the envelope under data.error", async () => {
    for (const bad of malformed) {
      const answer = await send(server, "GET", `/trpc/${bad}`, { authorization: `Bearer ${account.key}` })
      expect(answer.status, bad).toBe(404)
      expect(JSON.parse(answer.body).error.data.error, bad).toEqual(notFoundEnvelope.error)
    }
  })

  it("is answered as an unknown task by the provider callback and as an unknown page by the dashboard", async () => {
    // Each surface keeps its own answer for what it does not know: the callback's is the
    // upstream's `{ code, msg }` (a forger learns nothing), the dashboard's paths are the page's.
    const unknownTask = await send(server, "POST", "/internal/provider/callback/tsk_missing?token=x")
    const unknownPage = await send(server, "GET", "/dashboard/no-such-page")
    expect(unknownTask.status).toBe(404)
    expect(unknownPage.status).toBe(200)
    for (const bad of malformed) {
      expect(await send(server, "POST", `/internal/provider/callback/${bad}?token=x`), bad).toEqual(unknownTask)
      expect(await send(server, "GET", `/dashboard/${bad}`), bad).toEqual(unknownPage)
    }
  })
})
