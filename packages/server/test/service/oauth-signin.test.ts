/**
 * The sign-in page and the session it makes: the cookie's attributes, CSRF on every form, safe
 * return paths, sign-out, and failed sign-ins slowed per email and per address.
 */
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Sessions } from "@lyre/core"
import { cookiesAreSecure, safeReturnTo } from "../../src/http/session.ts"
import { startTestServer } from "../support/harness.ts"
import type { TestServer } from "../support/harness.ts"
import { hiddenField, password, setUpOAuth, signIn } from "../support/oauth.ts"
import type { OAuthWorld } from "../support/oauth.ts"

let server: TestServer
let world: OAuthWorld

beforeAll(async () => {
  server = await startTestServer()
  world = await setUpOAuth(server)
}, 60_000)

afterAll(async () => {
  await server.close()
})

const formOf = async () => {
  const page = await fetch(`${server.url}/signin?return_to=${encodeURIComponent("/dashboard/keys?x=1")}`)
  const html = await page.text()
  const csrfCookie =
    page.headers
      .getSetCookie()
      .map((c) => c.split(";")[0] ?? "")
      .find((c) => c.startsWith("lyre_csrf=")) ?? ""
  return { page, html, csrfCookie, csrf: hiddenField(html, "csrf_token") ?? "" }
}

const post = (path: string, form: Record<string, string>, cookie: string) =>
  fetch(`${server.url}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    body: new URLSearchParams(form)
  })

describe("the sign-in page", () => {
  it("is plain accessible HTML with labels, a landmark and a CSRF token, never cached", async () => {
    const { page, html, csrf } = await formOf()
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(page.headers.get("cache-control")).toBe("no-store")
    expect(page.headers.get("x-frame-options")).toBe("DENY")
    expect(html).toContain("<main>")
    expect(html).toContain('<label for="email">')
    expect(html).toContain('<label for="password">')
    expect(html).toContain('name="viewport"')
    expect(html).not.toMatch(/<script|https?:\/\/(?!127)/)
    expect(csrf.length).toBeGreaterThan(20)
    expect(hiddenField(html, "return_to")).toBe("/dashboard/keys?x=1")
  })

  it("sets the session cookie HttpOnly, SameSite=Lax, Path=/ (not Secure on loopback http) and returns", async () => {
    const { csrf, csrfCookie } = await formOf()
    const answer = await post(
      "/signin",
      { csrf_token: csrf, email: world.email, password, return_to: "/dashboard/keys?x=1" },
      csrfCookie
    )
    expect(answer.status).toBe(303)
    expect(answer.headers.get("location")).toBe("/dashboard/keys?x=1")
    const cookie = answer.headers.getSetCookie().find((c) => c.startsWith("lyre_session=")) ?? ""
    expect(cookie).toContain("HttpOnly")
    expect(cookie).toContain("SameSite=Lax")
    expect(cookie).toContain("Path=/")
    expect(cookie).not.toContain("Secure")
    const token = /^lyre_session=([^;]+)/.exec(cookie)?.[1] ?? ""
    const session = await server.runtime.runPromise(Sessions.use((sessions) => sessions.resolve(token)))
    expect(Option.isSome(session) && session.value.accountId).toBe(world.accountId)
    // Only a hash is stored.
    const rows = await server.query<{ token_hash: string }>("select token_hash from sessions")
    expect(rows.some((row) => row.token_hash === token)).toBe(false)
  })

  it("makes cookies Secure everywhere but plain-http loopback", () => {
    expect(cookiesAreSecure("http://127.0.0.1:8080")).toBe(false)
    expect(cookiesAreSecure("http://localhost:8080")).toBe(false)
    expect(cookiesAreSecure("https://lyre.example")).toBe(true)
    expect(cookiesAreSecure("http://lyre.example")).toBe(true)
  })

  it("refuses a sign-in without its CSRF token", async () => {
    const { csrf } = await formOf()
    const withoutCookie = await post("/signin", { csrf_token: csrf, email: world.email, password }, "")
    expect(withoutCookie.status).toBe(403)
    expect(withoutCookie.headers.getSetCookie().some((c) => c.startsWith("lyre_session="))).toBe(false)
    const { csrfCookie } = await formOf()
    const withoutField = await post("/signin", { email: world.email, password }, csrfCookie)
    expect(withoutField.status).toBe(403)
  })

  it("returns only to same-site paths", async () => {
    for (const hostile of [
      "//evil.example/x",
      "https://evil.example/",
      "/\\evil.example",
      "javascript:alert(1)",
      "dashboard"
    ]) {
      expect(safeReturnTo(hostile)).toBe("/dashboard")
    }
    expect(safeReturnTo("/oauth/authorize?client_id=a&b=c")).toBe("/oauth/authorize?client_id=a&b=c")
    const { csrf, csrfCookie } = await formOf()
    const answer = await post(
      "/signin",
      { csrf_token: csrf, email: world.email, password, return_to: "//evil.example" },
      csrfCookie
    )
    expect(answer.headers.get("location")).toBe("/dashboard")
  })

  it("escapes what it echoes", async () => {
    const { csrf, csrfCookie } = await formOf()
    const answer = await post(
      "/signin",
      { csrf_token: csrf, email: '"><script>x</script>@a.b', password: "wrong-password" },
      csrfCookie
    )
    expect(answer.status).toBe(401)
    const html = await answer.text()
    expect(html).not.toContain("<script>x")
    expect(html).toContain("&quot;&gt;&lt;script&gt;")
  })

  it("signs out with the session's CSRF token, and not without it", async () => {
    const session = await signIn(server, world.email)
    const token = session.slice("lyre_session=".length)
    const resolved = await server.runtime.runPromise(Sessions.use((sessions) => sessions.resolve(token)))
    const csrf = Option.getOrThrow(resolved).csrfToken
    expect((await post("/signout", {}, session)).status).toBe(403)
    const out = await post("/signout", { csrf_token: csrf }, session)
    expect(out.status).toBe(303)
    expect(out.headers.getSetCookie().find((c) => c.startsWith("lyre_session="))).toContain("Expires=Thu, 01 Jan 1970")
    expect(Option.isNone(await server.runtime.runPromise(Sessions.use((sessions) => sessions.resolve(token))))).toBe(
      true
    )
  })
})

describe("failed sign-ins", () => {
  it("are slowed per email: after five, even the right password must wait", async () => {
    const email = "throttled@example.test"
    expect((await server.admin("POST", "/accounts", { email, plan: "pro", password })).status).toBe(201)
    const attempt = async (secret: string, address: string) =>
      server.runtime.runPromise(
        Sessions.use((sessions) => sessions.signIn(email, secret, address)).pipe(
          Effect.map(() => "signed-in"),
          Effect.catch((error) => Effect.succeed(error._tag))
        )
      )
    for (let i = 0; i < 5; i++) expect(await attempt("wrong-password", `10.0.0.${i}`)).toBe("BadCredentials")
    expect(await attempt(password, "10.0.1.1")).toBe("SignInThrottled")
    // Over HTTP: 429 with Retry-After, and the page says so.
    const { csrf, csrfCookie } = await formOf()
    const answer = await post("/signin", { csrf_token: csrf, email, password }, csrfCookie)
    expect(answer.status).toBe(429)
    expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0)
    expect(await answer.text()).toContain("Too many failed sign-ins")
  })

  it("are slowed per address across emails", async () => {
    const attempt = (email: string) =>
      server.runtime.runPromise(
        Sessions.use((sessions) => sessions.signIn(email, "wrong-password", "192.0.2.7")).pipe(
          Effect.map(() => "signed-in"),
          Effect.catch((error) => Effect.succeed(error._tag))
        )
      )
    for (let i = 0; i < 20; i++) expect(await attempt(`nobody${i}@example.test`)).toBe("BadCredentials")
    expect(await attempt("someone-else@example.test")).toBe("SignInThrottled")
  })

  it("cannot tell an unknown email from a wrong password", async () => {
    const { csrf, csrfCookie } = await formOf()
    const unknown = await post("/signin", { csrf_token: csrf, email: "ghost@example.test", password }, csrfCookie)
    const again = await formOf()
    const wrong = await post(
      "/signin",
      { csrf_token: again.csrf, email: world.email, password: "not-the-password" },
      again.csrfCookie
    )
    expect(unknown.status).toBe(401)
    expect(wrong.status).toBe(401)
    const message = (html: string) => /role="alert">([^<]*)</.exec(html)?.[1]
    expect(message(await unknown.text())).toBe(message(await wrong.text()))
  })
})

describe("passwords through the admin API", () => {
  it("sets a password (8 to 200 characters), ends the account's sessions, and never shows the hash", async () => {
    const session = await signIn(server, world.email)
    const token = session.slice("lyre_session=".length)
    expect((await server.admin("PUT", `/accounts/${world.accountId}/password`, { password: "short" })).status).toBe(400)
    expect(
      (await server.admin("PUT", `/accounts/${world.accountId}/password`, { password: "x".repeat(201) })).status
    ).toBe(400)
    expect(
      (await server.admin("PUT", "/accounts/acct_000000000000000000000000/password", { password: "long enough" }))
        .status
    ).toBe(404)
    const changed = await server.admin("PUT", `/accounts/${world.accountId}/password`, { password: "a new password" })
    expect(changed.status).toBe(204)
    expect(Option.isNone(await server.runtime.runPromise(Sessions.use((sessions) => sessions.resolve(token))))).toBe(
      true
    )
    await signIn(server, world.email, "a new password")
    const view = await server.admin("GET", `/accounts/${world.accountId}`)
    expect(JSON.stringify(view.body)).not.toContain("scrypt")
    expect((await server.admin("PUT", `/accounts/${world.accountId}/password`, { password })).status).toBe(204)
  })
})
