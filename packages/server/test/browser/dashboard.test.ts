/**
 * The dashboard in a real browser (the system Chromium driven by playwright-core) against a real
 * server: the built-in engine renders, the worker and the webhook deliverer run inline, and a
 * local receiver takes the webhooks. Screenshots of every page at desktop and phone widths go
 * to `test-output/screenshots/dashboard/` (git-ignored), and axe-core checks every page.
 */
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { verifyWebhook } from "@lyre/webhooks"
import { api, createAccount } from "../support/harness.ts"
import type { TestServer } from "../support/harness.ts"
import { createHolder, startDashboardServer } from "../support/dashboard.ts"
import type { Holder } from "../support/dashboard.ts"
import { axeSource, dashboardTabs, desktop, connectBrowser, phone, screenshotPath } from "../support/browser.ts"
import type { Tabs } from "../support/browser.ts"
import { startReceiver } from "../support/receiver.ts"
import type { Receiver } from "../support/receiver.ts"

let server: TestServer
let receiver: Receiver
let browser: Browser
let pro: Holder
let tabs: Tabs

beforeAll(async () => {
  receiver = await startReceiver()
  const dashboard = await startDashboardServer({
    provider: "embedded",
    providerUrl: null,
    providerApiKey: null,
    worker: "inline",
    providerPollSeconds: 2,
    webhookAllowPrivate: true
  })
  server = dashboard.server
  browser = await connectBrowser()
  tabs = dashboardTabs(browser, dashboard)
  pro = await createHolder(server, { plan: "pro", subscription: 1_000, onetime: 200 })
}, 60_000)

afterAll(async () => {
  await tabs?.close()
  await browser?.close()
  await receiver?.close()
  await server?.close()
})

describe("signing in", () => {
  it("shows the overview: plan, balances and limits", async () => {
    const page = await tabs.open(pro, "/dashboard")
    await expect.poll(() => page.getByTestId("plan").textContent()).toBe("pro")
    expect(await page.getByTestId("credits-subscription").textContent()).toBe("1000")
    expect(await page.getByTestId("credits-onetime").textContent()).toBe("200")
    expect(await page.getByTestId("credits-total").textContent()).toBe("1200")
    await expect.poll(() => page.getByText("Requests per minute").count()).toBe(1)
  })

  it("sends a browser without a session to sign in", async () => {
    const context = await tabs.context()
    const page = await context.newPage()
    await page.goto(`${server.url}/dashboard/keys`)
    await page.waitForURL((url) => url.pathname === "/signin")
    expect(new URL(page.url()).searchParams.get("return_to")).toBe("/dashboard/keys")
  })
})

describe("API keys", () => {
  it("creates a key shown once, which REST takes; revoked, REST refuses it at once", async () => {
    const page = await tabs.open(pro, "/dashboard/keys")
    await page.getByLabel("Name").fill("laptop")
    await page.getByRole("button", { name: "Create key" }).click()
    const key = (await page.getByTestId("new-key").textContent()) ?? ""
    expect(key).toMatch(/^lyr_live_[0-9A-Za-z]{32}$/)
    const me = await api(server, "GET", "/api/v1/me", { key })
    expect(me.status).toBe(200)
    expect(me.body["auth"]?.["key"]?.["name"]).toBe("laptop")
    await page.getByRole("button", { name: "Done" }).click()
    expect(await page.getByTestId("new-key").count()).toBe(0)

    const row = page.locator("tr", { hasText: "laptop" })
    await expect.poll(() => row.locator("td").nth(6).textContent()).toBe("active")
    await page.getByRole("button", { name: "Revoke laptop" }).click()
    await page.getByRole("dialog").getByRole("button", { name: "Revoke key" }).click()
    await expect.poll(() => row.locator("td").nth(6).textContent()).toBe("revoked")
    const refused = await api(server, "GET", "/api/v1/me", { key })
    expect(refused.status).toBe(401)
    expect(refused.body["error"]?.["code"]).toBe("credential_revoked")
  })

  it("asks before revoking, and Escape leaves the key alone", async () => {
    const page = await tabs.open(pro, "/dashboard/keys")
    await page.getByLabel("Name").fill("kept")
    await page.getByRole("button", { name: "Create key" }).click()
    await page.getByTestId("new-key").waitFor()
    await page.getByRole("button", { name: "Revoke kept" }).click()
    await page.getByRole("dialog").waitFor()
    await page.keyboard.press("Escape")
    await expect.poll(() => page.getByRole("dialog").count()).toBe(0)
    expect(await page.locator("tr", { hasText: "kept" }).locator("td").nth(6).textContent()).toBe("active")
  })
})

describe("webhooks", () => {
  it("adds an endpoint, receives the signed test event, logs the attempt, rotates the secret", async () => {
    const page = await tabs.open(pro, "/dashboard/webhooks")
    await page.getByLabel("URL").fill(receiver.url)
    await page.getByRole("button", { name: "Add endpoint" }).click()
    const card = page.locator("article", { hasText: receiver.url })
    await card.waitFor()

    await card.getByRole("button", { name: "Reveal signing secret" }).click()
    const secret = (await card.getByTestId("endpoint-secret").textContent()) ?? ""
    expect(secret).toMatch(/^whsec_/)
    await card.getByRole("button", { name: "Send test event" }).click()
    await receiver.waitFor((got) => got.some((r) => r.type === "ping"))
    const ping = receiver.received.find((r) => r.type === "ping")
    expect(verifyWebhook(ping?.rawBody ?? "", ping?.signature ?? "", secret).type).toBe("ping")

    // The delivery log: the attempt with its status, latency and response.
    await expect
      .poll(
        async () => {
          await card.getByRole("button", { name: "Refresh log" }).click()
          return card.locator(".deliveries .status").first().textContent()
        },
        { timeout: 15_000 }
      )
      .toBe("succeeded")
    await card.locator(".deliveries summary").first().click()
    const attempt = card.locator("table.attempts tbody tr").first()
    await expect.poll(() => attempt.locator("td").nth(2).textContent()).toBe("200")
    expect(await attempt.locator("td").nth(3).textContent()).toMatch(/^\d+ ms$/)
    expect(await attempt.locator("td").nth(4).textContent()).toBe("ok")

    // A manual redelivery sends the same event again.
    await card.locator(".deliveries").getByRole("button", { name: "Redeliver" }).first().click()
    await receiver.waitFor((got) => got.filter((r) => r.eventId === ping?.eventId).length === 2)

    // Rotation with a grace period: both secrets sign meanwhile.
    await card.getByLabel("Grace period for the old secret").selectOption("3600")
    await card.getByRole("button", { name: "Rotate secret" }).click()
    await expect.poll(() => card.getByTestId("endpoint-secret").textContent()).not.toBe(secret)
    const rotated = (await card.getByTestId("endpoint-secret").textContent()) ?? ""
    await expect.poll(() => card.getByRole("status").textContent()).toContain("the old one also signs until")
    const before = receiver.received.length
    await card.getByRole("button", { name: "Send test event" }).click()
    await receiver.waitFor((got) => got.length > before)
    const next = receiver.received[before]
    expect(verifyWebhook(next?.rawBody ?? "", next?.signature ?? "", rotated).type).toBe("ping")
    expect(verifyWebhook(next?.rawBody ?? "", next?.signature ?? "", secret).type).toBe("ping")

    await card.getByRole("button", { name: "Disable" }).click()
    await card.getByRole("button", { name: "Enable" }).waitFor()
    const [row] = await server.query<{ enabled: boolean }>(
      "select enabled from webhook_endpoints where url = $1",
      receiver.url
    )
    expect(row?.enabled).toBe(false)
  })
})

describe("the credit alert", () => {
  it("sets the threshold and shows whether it is armed", async () => {
    const page = await tabs.open(pro, "/dashboard")
    await page.getByLabel("Threshold (credits; empty for none)").fill("500")
    await page.getByRole("button", { name: "Save threshold" }).click()
    await expect.poll(() => page.getByTestId("alert-state").textContent()).toContain("Armed")
    await page.getByLabel("Threshold (credits; empty for none)").fill("5000")
    await page.getByRole("button", { name: "Save threshold" }).click()
    await expect.poll(() => page.getByTestId("alert-state").textContent()).toContain("re-arms once the balance")
    const [row] = await server.query<{ credit_alert_threshold: number; credit_alert_armed: boolean }>(
      "select credit_alert_threshold, credit_alert_armed from accounts where id = $1",
      pro.id
    )
    expect(row).toEqual({ credit_alert_threshold: 5000, credit_alert_armed: false })
  })
})

describe("songs", () => {
  it("validates like the API, generates, follows the task to ready without layout shift, plays it while it is made, and goes on with the final file", async () => {
    const page = await tabs.open(pro, "/dashboard/songs")
    // The engine's takes may be ready within one look of their first audio: the box's looks are
    // held at pending (the task's stored streams as its previews) until the stream has played.
    type Preview = { index: number; stream_url: string }
    let held = true
    await page.route(
      (url) => url.pathname === "/trpc/generations.get",
      async (route) => {
        const response = await route.fetch()
        const body = (await response.json()) as Array<{ result?: { data?: Record<string, unknown> & { id: string } } }>
        const task = body[0]?.result?.data
        if (held && task !== undefined && task.status === "ready") {
          const [row] = await server.query<{ previews: Array<Preview> }>(
            "select previews from generation_tasks where id = $1",
            task.id
          )
          body[0] = { result: { data: { ...task, status: "pending", tracks: [], previews: row?.previews ?? [] } } }
        }
        await route.fulfill({ response, json: body })
      }
    )
    const model = page.getByLabel("Model")
    expect(await model.locator("option").allTextContents()).toEqual([
      "aether — 50 credits",
      "echo — 100 credits",
      "nocturne — 180 credits (deprecated)"
    ])

    // The same message as the API's 400 for the same body.
    await page.getByLabel("Style").fill("lofi, 80 bpm, piano")
    await page.getByLabel("Title").fill("Rain on Glass")
    await page.getByRole("button", { name: /^Generate/ }).click()
    const keyed = await createAccount(server, { plan: "pro" })
    const rest = await api(server, "POST", "/api/v1/music/generations", {
      key: keyed.key,
      body: { style: "lofi, 80 bpm, piano", title: "Rain on Glass", instrumental: false, model: "aether" }
    })
    expect(rest.status).toBe(400)
    expect(rest.body["error"]?.["code"]).toBe("missing_parameter")
    const problem = page.locator("#generate-problem")
    await expect.poll(() => problem.textContent()).toContain("missing_parameter")
    expect(await problem.textContent()).toContain(String(rest.body["error"]?.["message"]))
    expect(await page.getByLabel("Lyrics", { exact: true }).getAttribute("aria-invalid")).toBe("true")

    // Layout shifts not caused by the user's own input (the Layout Instability API).
    await page.evaluate(`
      window.shifts = []
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) if (!entry.hadRecentInput) window.shifts.push(entry.value)
      }).observe({ type: "layout-shift", buffered: true })`)
    await page.getByLabel("Lyrics", { exact: true }).fill("[Verse]\nRain on the glass\n[Chorus]\nStay a while")
    await page.getByRole("button", { name: "Generate for 50 credits" }).click()
    const following = page.locator("section.following")
    await following.locator("[data-status=pending]").waitFor()
    const id = (await following.locator("article.task").getAttribute("data-task-id")) ?? ""

    // The part of HTMLMediaElement used here (the test's types have no DOM library).
    type Media = {
      play(): Promise<void>
      pause(): void
      currentTime: number
      paused: boolean
      error: { code: number } | null
      getAttribute(name: string): string | null
      take?: string
    }
    // Take 1 plays from its stream while the task is pending; the element is marked to be found again.
    const streaming = following.locator("[data-preview-index='0'] audio")
    await streaming.waitFor({ timeout: 170_000 })
    expect((await streaming.getAttribute("src")) ?? "").toMatch(
      new RegExp(`^${server.url}/files/streams/${id}/0\\.mp3\\?expires=\\d+&signature=[0-9a-f]+$`)
    )
    const early = await streaming.evaluate(async (element: Media) => {
      element.take = "first"
      await element.play()
      for (let i = 0; i < 100 && element.currentTime < 0.3; i++) await new Promise((r) => setTimeout(r, 50))
      return { time: element.currentTime, error: element.error ? element.error.code : null }
    })
    expect(early.error).toBeNull()
    expect(early.time).toBeGreaterThan(0)
    held = false
    await following.locator("[data-status=ready]").waitFor({ timeout: 170_000 })
    const shifted = await page.evaluate<number>("window.shifts.reduce((a, b) => a + b, 0)")
    expect(shifted).toBeLessThan(0.01)

    const audio = following.locator("audio").first()
    const src = (await audio.getAttribute("src")) ?? ""
    expect(src).toMatch(new RegExp(`^${server.url}/files/${id}/0\\.mp3$`))
    // The same player, now on the final file, playing on from where the stream was.
    const switched = await audio.evaluate(async (element: Media, at: number) => {
      for (let i = 0; i < 100 && element.currentTime < at; i++) await new Promise((r) => setTimeout(r, 50))
      const seen = { take: element.take, paused: element.paused, time: element.currentTime }
      element.pause()
      element.currentTime = 0
      return seen
    }, early.time)
    expect(switched).toMatchObject({ take: "first", paused: false })
    expect(switched.time).toBeGreaterThanOrEqual(early.time)
    const played = await audio.evaluate(async (element: Media) => {
      await element.play()
      await new Promise((resolve) => setTimeout(resolve, 700))
      element.pause()
      return { time: element.currentTime, error: element.error ? element.error.code : null }
    })
    expect(played.error).toBeNull()
    expect(played.time).toBeGreaterThan(0)
    expect(
      await following
        .getByRole("link", { name: /^Download/ })
        .first()
        .getAttribute("href")
    ).toBe(src)
    const cover = following.locator("img.cover").first()
    expect(
      await cover.evaluate((img: { complete: boolean; naturalWidth: number }) => img.complete && img.naturalWidth > 0)
    ).toBe(true)
    await expect.poll(() => page.locator("#history-title + ul [data-status=ready]").count()).toBe(1)
  }, 200_000)
})

describe("writing lyrics", () => {
  it("the Write lyrics step asks the lyrics agent, shows two variations, and fills the generate form with one", async () => {
    const page = await tabs.open(pro, "/dashboard/songs")
    await page.getByLabel("Style").fill("folk, 90 bpm")
    await page.getByLabel("What is the song about?").fill("a harbour town at dusk")
    await page.getByRole("button", { name: "Write lyrics for 2 credits" }).click()
    const use = page.getByRole("button", { name: "Use these words" })
    await expect.poll(() => use.count(), { timeout: 30_000 }).toBe(2)
    await use.first().click()
    expect(await page.getByLabel("Lyrics", { exact: true }).inputValue()).toMatch(/^\[[A-Za-z-]+\]\n/)
    expect(await page.getByLabel("Title").inputValue()).not.toBe("")
  })
})

describe("a lower-tier account", () => {
  it("signs in, sees its overview, and sees why it cannot create keys or generate", async () => {
    const basic = await createHolder(server, { plan: "basic", subscription: 300 })
    const overview = await tabs.open(basic, "/dashboard")
    await expect.poll(() => overview.getByTestId("plan").textContent()).toBe("basic")
    expect(await overview.getByRole("note").first().textContent()).toContain("requires the Pro plan")

    const keys = await tabs.open(basic, "/dashboard/keys")
    await expect.poll(() => keys.getByTestId("keys-refused").textContent()).toContain("Upgrade to Pro")
    expect(await keys.getByRole("button", { name: "Create key" }).count()).toBe(0)

    const songs = await tabs.open(basic, "/dashboard/songs")
    await songs.getByLabel("Style").fill("ambient")
    await songs.getByLabel("Title").fill("Quiet")
    await songs.getByLabel("Lyrics", { exact: true }).fill("la la")
    await songs.getByRole("button", { name: /^Generate/ }).click()
    await expect.poll(() => songs.locator("#generate-problem").textContent()).toContain("tier_insufficient")
    expect((await server.query("select 1 from generation_tasks where account_id = $1", basic.id)).length).toBe(0)
  })
})

describe("every page", () => {
  const pages = [
    ["overview", "/dashboard"],
    ["keys", "/dashboard/keys"],
    ["webhooks", "/dashboard/webhooks"],
    ["songs", "/dashboard/songs"],
    ["uploads", "/dashboard/uploads"],
    ["personas", "/dashboard/personas"]
  ] as const

  it("has no serious or critical axe violations, and is screenshot at desktop and phone widths", async () => {
    for (const [width, viewport] of [
      ["desktop", desktop],
      ["phone", phone]
    ] as const) {
      for (const [name, path] of pages) {
        const page = await tabs.open(pro, path, viewport)
        await page.waitForLoadState("networkidle")
        await page.screenshot({ path: screenshotPath(`dashboard/${name}-${width}`), fullPage: true })
        await page.evaluate(axeSource)
        const violations = await page.evaluate<Array<{ id: string; impact: string | null }>>(`
          axe.run(document).then((result) => result.violations.map((v) => ({ id: v.id, impact: v.impact })))`)
        expect([name, width, violations.filter((v) => v.impact === "serious" || v.impact === "critical")]).toEqual([
          name,
          width,
          []
        ])
        // Nothing wider than the screen: usable on a phone without sideways scrolling of the page.
        const fits = await page.evaluate<boolean>("document.documentElement.scrollWidth <= window.innerWidth")
        expect([name, width, fits]).toEqual([name, width, true])
      }
    }
  }, 120_000)

  it("is served with a CSP, long-cached hashed assets, and its routes fall back to the page", async () => {
    const html = await fetch(`${server.url}/dashboard/webhooks`)
    expect(html.status).toBe(200)
    expect(html.headers.get("content-security-policy")).toContain("default-src 'self'")
    expect(html.headers.get("cache-control")).toBe("no-cache")
    const script = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(await html.text())?.[1]
    const asset = await fetch(`${server.url}${script}`)
    expect(asset.status).toBe(200)
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expect((await fetch(`${server.url}/dashboard/assets/missing.js`)).status).toBe(404)
    expect((await fetch(`${server.url}/dashboard/assets/..%2f..%2fpackage.json`)).status).toBe(404)
  })

  it("can be reached by keyboard: a skip link first, focus visible", async () => {
    const page = await tabs.open(pro, "/dashboard/keys")
    await page.keyboard.press("Tab")
    expect(await page.evaluate<string>("document.activeElement.textContent")).toBe("Skip to content")
    await page.keyboard.press("Tab")
    const outline = await page.evaluate<string>("getComputedStyle(document.activeElement).outlineStyle")
    expect(outline).toBe("solid")
  })
})
