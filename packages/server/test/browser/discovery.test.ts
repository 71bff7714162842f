/**
 * The discovery documents of the resource side and the API docs page: the right media type,
 * caching, CORS for GET (and the preflight), HEAD, and content that points at real addresses.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { connectBrowser, screenshotPath } from "../support/browser.ts"
import { startTestServer } from "../support/harness.ts"
import type { Json, TestServer } from "../support/harness.ts"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

const get = async (path: string, init: RequestInit = {}) => {
  const response = await fetch(`${server.url}${path}`, init)
  const text = await response.text()
  return { response, text }
}

const expectPublicCors = (response: Response) => {
  expect(response.headers.get("access-control-allow-origin")).toBe("*")
  expect(response.headers.get("cache-control")).toMatch(/^public, max-age=\d+$/)
}

describe("protected resource metadata (RFC 9728)", () => {
  for (const [path, resource] of [
    ["/.well-known/oauth-protected-resource", "/api"],
    ["/.well-known/oauth-protected-resource/api", "/api"],
    ["/.well-known/oauth-protected-resource/mcp", "/mcp"],
    ["/.well-known/oauth-protected-resource/a2a", "/a2a"]
  ] as const) {
    it(`${path} names ${resource} as its resource, our authorization server and its scopes`, async () => {
      const { response, text } = await get(path, { headers: { origin: "https://elsewhere.example" } })
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8")
      expectPublicCors(response)
      const document = JSON.parse(text) as Json
      expect(document["resource"]).toBe(`${server.url}${resource}`)
      expect(document["authorization_servers"]).toEqual([server.url])
      expect(document["scopes_supported"]).toContain("music:generate")
      expect(document["bearer_methods_supported"]).toEqual(["header"])
      expect(document["resource_documentation"]).toBe(`${server.url}/api/docs`)
    })
  }

  it("answers the CORS preflight and HEAD; other methods are not documents", async () => {
    const preflight = await get("/.well-known/oauth-protected-resource", {
      method: "OPTIONS",
      headers: { origin: "https://elsewhere.example", "access-control-request-method": "GET" }
    })
    expect(preflight.response.status).toBe(204)
    expect(preflight.response.headers.get("access-control-allow-origin")).toBe("*")
    expect(preflight.response.headers.get("access-control-allow-methods")).toContain("GET")
    const head = await get("/.well-known/oauth-protected-resource/mcp", { method: "HEAD" })
    expect(head.response.status).toBe(200)
    expect(head.text).toBe("")
    expect(Number(head.response.headers.get("content-length"))).toBeGreaterThan(0)
    const post = await get("/.well-known/oauth-protected-resource", { method: "POST" })
    expect(post.response.status).toBe(404)
    expect((JSON.parse(post.text) as Json)["error"]?.["code"]).toBe("route_not_found")
  })

  it("an unknown surface has no metadata", async () => {
    const { response } = await get("/.well-known/oauth-protected-resource/elsewhere")
    expect(response.status).toBe(404)
  })
})

describe("API catalog (RFC 9727)", () => {
  const mediaType = 'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"'

  it("is a linkset anchored at the API with service-desc, service-doc and status links", async () => {
    const { response, text } = await get("/.well-known/api-catalog")
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe(mediaType)
    expectPublicCors(response)
    expect(response.headers.get("link")).toBe(`<${server.url}/.well-known/api-catalog>; rel="api-catalog"`)
    const [entry] = (
      JSON.parse(text) as { linkset: Array<Record<string, Array<{ href: string; type: string }>> & { anchor: string }> }
    ).linkset
    expect(entry?.anchor).toBe(`${server.url}/api`)
    expect(entry?.["service-desc"]?.[0]?.href).toBe(`${server.url}/api/openapi.json`)
    expect(entry?.["service-doc"]?.[0]).toEqual({ href: `${server.url}/api/docs`, type: "text/html" })
    expect(entry?.["status"]?.[0]?.href).toBe(`${server.url}/readyz`)
    for (const link of [
      ...(entry?.["service-desc"] ?? []),
      ...(entry?.["service-doc"] ?? []),
      ...(entry?.["status"] ?? [])
    ]) {
      expect((await fetch(link.href)).status, link.href).toBe(200)
    }
  })

  it("HEAD answers the Link header and no body", async () => {
    const { response, text } = await get("/.well-known/api-catalog", { method: "HEAD" })
    expect(response.status).toBe(200)
    expect(text).toBe("")
    expect(response.headers.get("link")).toContain('rel="api-catalog"')
    expect(response.headers.get("content-type")).toBe(mediaType)
  })
})

describe("GET /api/docs", () => {
  it("is an HTML page with a strict CSP whose versioned script is cached for good", async () => {
    const { response, text } = await get("/api/docs")
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8")
    const csp = response.headers.get("content-security-policy") ?? ""
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("script-src 'self'")
    const script = /<script src="([^"]+)"/.exec(text)?.[1] ?? ""
    expect(script).toMatch(/^docs\/redoc\.standalone\.\d+\.\d+\.\d+\.js$/)
    expect(text).not.toMatch(/https?:\/\//)
    const bundle = await fetch(`${server.url}/api/${script}`, { method: "HEAD" })
    expect(bundle.status).toBe(200)
    expect(bundle.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(bundle.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expect((await fetch(`${server.url}/api/docs/redoc.standalone.0.0.0.js`)).status).toBe(404)
  })

  it("renders the operations in headless Chromium without leaving this host", async () => {
    const browser = await connectBrowser()
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
      // Redoc's attribution asks its CDN for a logo: the page's CSP refuses it before anything
      // leaves (the logo then hides itself). What must never happen is a foreign request that is
      // not refused that way.
      const isForeign = (url: string) => !url.startsWith(server.url) && !/^(data|blob):/.test(url)
      const leaked: Array<string> = []
      const problems: Array<string> = []
      page.on("requestfinished", (request) => {
        if (isForeign(request.url())) leaked.push(request.url())
      })
      page.on("requestfailed", (request) => {
        const refusedByPolicy = ["csp", "net::ERR_BLOCKED_BY_CSP"].includes(request.failure()?.errorText ?? "")
        if (isForeign(request.url()) && !refusedByPolicy)
          leaked.push(`${request.url()} ${request.failure()?.errorText}`)
      })
      page.on("console", (message) => {
        if (message.type() === "error" && !message.text().includes("Content Security Policy"))
          problems.push(message.text())
      })
      page.on("pageerror", (error) => problems.push(error.message))
      await page.goto(`${server.url}/api/docs`)
      // What went wrong in the page is the useful message when the heading never comes.
      await page
        .getByRole("heading", { name: "Lyre music generation API" })
        .first()
        .waitFor({ timeout: 40_000 })
        .catch((error: unknown) => {
          throw new Error(
            `${String(error)}\nleaked requests: ${leaked.join(", ")}\npage errors: ${problems.join("\n")}`
          )
        })
      for (const operation of [
        "Generate music",
        "Get a generation task",
        "List generation tasks",
        "The calling account"
      ]) {
        await page.getByRole("heading", { name: operation }).first().waitFor()
      }
      await page.screenshot({ path: screenshotPath("api-docs-desktop"), fullPage: false })
      await page.setViewportSize({ width: 390, height: 844 })
      await page.screenshot({ path: screenshotPath("api-docs-phone") })
      expect(leaked).toEqual([])
      expect(problems).toEqual([])
    } finally {
      await browser.close()
    }
  }, 60_000)
})
