/**
 * The sign-in and consent pages clicked through in headless Chromium, as an account holder
 * would on a phone-sized screen; the code the browser lands with is exchanged by oauth4webapi
 * and the token verified against the published key set. Screenshots go to test-output/screenshots/oauth.
 */
import { createRemoteJWKSet, jwtVerify } from "jose"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, startTestServer } from "../support/harness.ts"
import type { TestServer } from "../support/harness.ts"
import { authorizationUrl, callback, exchange, password, setUpOAuth } from "../support/oauth.ts"
import type { OAuthWorld } from "../support/oauth.ts"
import { connectBrowser, screenshotPath } from "../support/browser.ts"

let server: TestServer
let world: OAuthWorld
let browser: Browser

beforeAll(async () => {
  server = await startTestServer()
  world = await setUpOAuth(server)
  browser = await connectBrowser()
}, 90_000)

afterAll(async () => {
  await browser.close()
  await server.close()
})

describe("in a browser", () => {
  it("signs in, shows the scopes in words, allows, and lands on the client with a code that exchanges", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } })
    const page = await context.newPage()
    // The client's redirect URI: the browser lands there and the test reads the address.
    await page.route(`${callback}**`, (route) =>
      route.fulfill({ status: 200, contentType: "text/plain", body: "back in the app" })
    )
    const started = await authorizationUrl(world, { scope: "profile music:generate" })
    await page.goto(started.url.toString())
    expect(new URL(page.url()).pathname).toBe("/signin")
    await page.screenshot({ path: screenshotPath("oauth/1-signin"), fullPage: true })
    await page.getByLabel("Email").fill(world.email)
    await page.getByLabel("Password").fill(password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.waitForURL((url) => url.pathname === "/oauth/authorize")
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Allow Lyre for Browsers?")
    const listed = await page.locator("ul.scopes li").allTextContents()
    expect(listed).toEqual([
      "profile: See your account: email, plan, credit balance and limits.",
      "music:generate: Generate music with your credits, and see and list your generations."
    ])
    await page.screenshot({ path: screenshotPath("oauth/2-consent"), fullPage: true })
    await page.getByRole("button", { name: "Allow" }).click()
    await page.waitForURL((url) => url.toString().startsWith(callback))
    const landed = new URL(page.url())
    expect(landed.searchParams.get("state")).toBe(started.state)
    expect(landed.searchParams.get("iss")).toBe(server.url)
    const tokens = await exchange(world, started, landed)
    const { payload } = await jwtVerify(
      tokens.access_token,
      createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`)),
      {
        algorithms: ["ES256"],
        typ: "at+jwt",
        issuer: server.url,
        audience: `${server.url}/api`
      }
    )
    expect(payload.sub).toBe(world.accountId)
    expect((await api(server, "GET", "/api/v1/me", { key: tokens.access_token })).body["auth"]).toMatchObject({
      kind: "oauth"
    })
    await context.close()
  })

  it("shows an error page, not a redirect, for a redirect URI the client did not register", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } })
    const page = await context.newPage()
    let leftTheSite = false
    await page.route("http://127.0.0.1:9/**", (route) => {
      leftTheSite = true
      return route.abort()
    })
    const started = await authorizationUrl(world, { redirectUri: "http://127.0.0.1:9/attacker" })
    const response = await page.goto(started.url.toString())
    expect(response?.status()).toBe(400)
    expect(new URL(page.url()).pathname).toBe("/oauth/authorize")
    await expect(page.getByRole("alert").textContent()).resolves.toContain("redirect URI is not one registered")
    await page.screenshot({ path: screenshotPath("oauth/3-wrong-redirect"), fullPage: true })
    expect(leftTheSite).toBe(false)
    await context.close()
  })

  it("keeps the sign-in form usable by keyboard with a visible focus", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } })
    const page = await context.newPage()
    await page.goto(`${server.url}/signin`)
    await page.keyboard.press("Tab")
    expect(await page.locator(":focus").getAttribute("id")).toBe("email")
    // A string is evaluated in the page (this file is compiled without the DOM's types).
    const outline = await page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    expect(outline).toBe("solid")
    await page.getByLabel("Email").fill(world.email)
    await page.getByLabel("Password").fill("not the password")
    await page.keyboard.press("Enter")
    await page.waitForLoadState()
    await expect(page.getByRole("alert").textContent()).resolves.toBe("The email or password is not correct.")
    await page.screenshot({ path: screenshotPath("oauth/4-wrong-password"), fullPage: true })
    await context.close()
  })
})
