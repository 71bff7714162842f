/**
 * The song tools and the usage chart in the dashboard, in a real browser (Debian's Chromium
 * driven by playwright-core) against a server whose provider is the built-in engine (worker
 * inline): extend a real song and follow the new task, export and download every format, the
 * karaoke view following `currentTime`, the stems mixer's mute heard on the Web Audio graph, the
 * chart drawn from a ledger the test wrote, a track's content credentials read in the page by
 * c2pa-rs. Screenshots go to
 * `test-output/screenshots/dashboard-tools/`; axe-core checks each view.
 */
import type { Browser, Locator, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api } from "../support/harness.ts"
import type { Json, TestServer } from "../support/harness.ts"
import { createHolder, envelopeOf, startDashboardServer, trpc } from "../support/dashboard.ts"
import type { Holder, Session } from "../support/dashboard.ts"
import {
  axeSource,
  dashboardTabs,
  desktop,
  downloadedBytes,
  connectBrowser,
  phone,
  screenshotPath
} from "../support/browser.ts"
import type { Tabs } from "../support/browser.ts"
import { writeLedger } from "../support/ledger.ts"

let server: TestServer
let signIn: (holder: Holder) => Promise<Session>
let browser: Browser
let holder: Holder
let song: Json
let tabs: Tabs

const waitReady = async (path: string, key: string): Promise<Json> => {
  const deadline = Date.now() + 150_000
  for (;;) {
    const found = await api(server, "GET", path, { key })
    if (String(found.body["status"]) !== "pending" || Date.now() > deadline) return found.body
    await new Promise((resolve) => setTimeout(resolve, 300))
  }
}

beforeAll(async () => {
  const dashboard = await startDashboardServer({
    provider: "embedded",
    // Half a minute: the tests read sung words, stems and melodies past the first 8 s.
    engineMaxSeconds: 30,
    providerUrl: null,
    providerApiKey: null,
    worker: "inline",
    providerPollSeconds: 1
  })
  ;({ server, signIn } = dashboard)
  browser = await connectBrowser()
  tabs = dashboardTabs(browser, dashboard, { acceptDownloads: true })
  holder = await createHolder(server, { plan: "pro", subscription: 2_000 })
  const key = await server.admin("POST", `/accounts/${holder.id}/keys`, { name: "setup", scopes: ["music:generate"] })
  const created = await api(server, "POST", "/api/v1/music/generations", {
    key: String(key.body["key"]),
    body: {
      style: "pop, 100 bpm, piano, drums",
      title: "Paper Boats",
      lyrics: "[Verse]\nPaper boats on the river\n[Chorus]\nSail away, sail away"
    }
  })
  song = await waitReady(`/api/v1/music/generations/${String(created.body["id"])}`, String(key.body["key"]))
}, 200_000)

afterAll(async () => {
  await tabs?.close()
  await browser?.close()
  await server?.close()
})

const trackId = (index: number): string => String((song["tracks"] as unknown as Array<Json>)[index]?.["id"])
const balance = async (id: string = holder.id): Promise<number> =>
  Number((await server.admin("GET", `/accounts/${id}`)).body["credits"]?.["total"])

/** The history's entry of a track, with a tool opened. */
const tool = async (
  page: Page,
  id: string,
  label: "Extend" | "Export" | "Karaoke" | "Stems mixer" | "Content credentials"
): Promise<Locator> => {
  const track = page.locator(`#history-title ~ ul [data-track-id="${id}"]`)
  await track.locator("summary", { hasText: new RegExp(`^${label} `) }).click()
  return track.locator("details[open]", { has: page.locator("summary", { hasText: new RegExp(`^${label} `) }) })
}

/** The view a tool shows once its export exists; when the earlier cases did not make it (run alone), its button makes it. */
const madeView = async (view: Locator, testId: string, make: string): Promise<Locator> => {
  const shown = view.getByTestId(testId)
  const button = view.getByRole("button", { name: make })
  await shown.or(button).waitFor({ timeout: 60_000 })
  if (await button.isVisible()) await button.click()
  await shown.waitFor({ timeout: 60_000 })
  return shown
}

describe("song tools in the dashboard", () => {
  it("Extend: the point on the waveform, the price, refused like the API, then the new task followed to ready", async () => {
    expect(song["status"]).toBe("ready")
    const page = await tabs.open(holder, "/dashboard/songs")
    const extend = await tool(page, trackId(0), "Extend")
    const waveform = extend.getByTestId("waveform")
    await expect.poll(() => waveform.getAttribute("data-loaded"), { timeout: 20_000 }).toBe("true")
    const duration = Number((song["tracks"] as unknown as Array<Json>)[0]?.["duration"])
    // A click halfway along the waveform picks the middle of the track.
    const box = await waveform.boundingBox()
    await waveform.click({ position: { x: (box?.width ?? 0) / 2, y: 10 } })
    const seconds = extend.getByLabel("Seconds", { exact: true })
    await expect.poll(async () => Number(await seconds.inputValue())).toBeCloseTo(duration / 2, -0.5)
    expect(await waveform.getAttribute("aria-label")).toContain(
      `kept up to ${Number(await seconds.inputValue()).toFixed(1)} s`
    )
    expect(await extend.getByRole("button", { name: /^Extend for/ }).textContent()).toBe("Extend for 50 credits")
    await extend.getByLabel("Model").selectOption("echo")
    expect(await extend.getByRole("button", { name: /^Extend for/ }).textContent()).toBe("Extend for 100 credits")
    await extend.getByLabel("Model").selectOption("")

    // Checked with core's schema: the same message as the API's 400, nothing sent or charged.
    const before = await balance()
    await seconds.fill("0")
    await extend.getByRole("button", { name: /^Extend for/ }).click()
    const problem = extend.getByRole("alert")
    await expect.poll(() => problem.textContent()).toContain("invalid_parameter")
    expect(await seconds.getAttribute("aria-invalid")).toBe("true")

    await seconds.fill("12")
    await extend
      .getByLabel("New lyrics for the continuation (empty: the track's)")
      .fill("[Bridge]\nFolded from a letter")
    await extend.getByLabel("Title (empty: the track's)").fill("Paper Boats, Further")
    await extend.getByRole("button", { name: "Extend for 50 credits" }).click()
    const following = page.locator("section.following")
    await following.locator("[data-status=pending]").waitFor()
    expect(await balance()).toBe(before - 50)
    await following.locator("[data-status=ready]").waitFor({ timeout: 150_000 })
    expect(await following.locator(".track strong").first().textContent()).toBe("Paper Boats, Further")
    const [row] = await server.query<{ source_track_id: string; continue_at: number }>(
      "select source_track_id, continue_at from generation_tasks where account_id = $1 and source_track_id is not null",
      holder.id
    )
    expect(row).toEqual({ source_track_id: trackId(0), continue_at: 12 })
    await page.screenshot({ path: screenshotPath("dashboard-tools/extend-desktop"), fullPage: true })
  }, 200_000)

  it("Export: each format with its price, followed to ready, and every file downloads", async () => {
    const page = await tabs.open(holder, "/dashboard/songs")
    const panel = await tool(page, trackId(1), "Export")
    const buttons = panel.getByRole("button", { name: /^Export / })
    await expect
      .poll(() => buttons.allTextContents())
      .toEqual([
        "Export WAV of Paper Boats 2 for 5 credits",
        "Export MIDI of Paper Boats 2 for 5 credits",
        "Export Stems of Paper Boats 2 for 20 credits",
        "Export Timed lyrics of Paper Boats 2 for 5 credits"
      ])
    const before = await balance()
    for (const format of ["wav", "midi", "stems", "timed_lyrics"]) {
      await panel.locator(`[data-format=${format}]`).getByRole("button").click()
      await panel.locator(`[data-format=${format}][data-status]:not([data-status=none])`).waitFor()
    }
    expect(await balance()).toBe(before - 35)
    const magic: Record<string, string> = { wav: "RIFF", midi: "MThd" }
    for (const format of ["wav", "midi", "stems", "timed_lyrics"]) {
      const entry = panel.locator(`[data-format=${format}]`)
      await panel.locator(`[data-format=${format}][data-status=ready]`).waitFor({ timeout: 90_000 })
      const links = entry.getByRole("link")
      const count = await links.count()
      expect(count).toBeGreaterThan(0)
      for (let i = 0; i < count; i++) {
        const [download] = await Promise.all([page.waitForEvent("download"), links.nth(i).click()])
        const bytes = await downloadedBytes(download)
        const name = download.suggestedFilename()
        // A format with no place for a manifest has its content credentials beside it (record 0123): a JUMBF box.
        if (name.endsWith(".c2pa")) expect([name, bytes.subarray(4, 8).toString("latin1")]).toEqual([name, "jumb"])
        else if (format in magic) expect([name, bytes.subarray(0, 4).toString("latin1")]).toEqual([name, magic[format]])
        if (format === "stems") expect([name, bytes.subarray(8, 12).toString("latin1")]).toEqual([name, "WAVE"])
        if (name.endsWith(".lrc")) expect(bytes.toString("utf8")).toMatch(/^\[\d\d:\d\d\.\d\d\]<\d\d:\d\d\.\d\d>Paper/)
      }
      if (format === "stems") expect(count).toBeGreaterThanOrEqual(3)
      if (format === "timed_lyrics")
        expect(await links.allTextContents()).toEqual(expect.arrayContaining([expect.stringMatching(/^lyrics\.lrc/)]))
    }
    await page.screenshot({ path: screenshotPath("dashboard-tools/export-desktop"), fullPage: true })
  }, 150_000)

  it("Karaoke: the highlighted word follows currentTime", async () => {
    const page = await tabs.open(holder, "/dashboard/songs")
    const view = await tool(page, trackId(1), "Karaoke")
    const lyrics = await madeView(view, "karaoke-lyrics", "Make the timed lyrics for 5 credits")
    const starts = await lyrics
      .locator(".word")
      .evaluateAll((words) => words.map((w) => Number(w.getAttribute("data-start"))))
    const texts = (await lyrics.locator(".word").allTextContents()).map((t) => t.trim())
    expect(texts.slice(0, 5)).toEqual(["Paper", "boats", "on", "the", "river"])
    const audio = view.locator("audio")
    type Media = { currentTime: number; readyState: number; play(): Promise<void>; pause(): void }
    await expect.poll(() => audio.evaluate((a: Media) => a.readyState)).toBeGreaterThanOrEqual(1)
    const now = lyrics.locator("[aria-current=true]")
    for (const index of [1, 4, 2]) {
      await audio.evaluate((a: Media, t: number) => (a.currentTime = t), (starts[index] ?? 0) + 0.01)
      await expect.poll(() => now.textContent()).toBe(`${texts[index]} `)
    }
    // After the last word, in the outro, nothing is lit and every word is sung.
    const lastEnd = Number(await lyrics.locator(".word").last().getAttribute("data-end"))
    await audio.evaluate((a: Media, t: number) => (a.currentTime = t), lastEnd + 1.5)
    await expect.poll(() => now.count()).toBe(0)
    expect(await lyrics.locator(".word.sung").count()).toBe(texts.length)
    // Playing moves the highlight on by itself.
    await audio.evaluate((a: Media, t: number) => (a.currentTime = t), Math.max(0, (starts[0] ?? 0) - 0.3))
    await audio.evaluate((a: Media) => a.play())
    await expect.poll(() => now.textContent(), { timeout: 10_000 }).toBe(`${texts[1]} `)
    await audio.evaluate((a: Media) => a.pause())
    expect(await lyrics.locator(".word.sung").count()).toBeGreaterThanOrEqual(1)
    await page.screenshot({ path: screenshotPath("dashboard-tools/karaoke-desktop"), fullPage: true })
  }, 90_000)

  it("Stems mixer: the parts play together, and a muted stem falls silent while the others play on", async () => {
    const page = await tabs.open(holder, "/dashboard/songs")
    const view = await tool(page, trackId(1), "Stems mixer")
    const mixer = await madeView(view, "mixer", "Make the stems for 20 credits")
    const stems = await mixer
      .locator("[data-stem]")
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-stem") ?? ""))
    expect(stems).toEqual(expect.arrayContaining(["vocals", "drums"]))
    await mixer.getByRole("button", { name: /^Play/ }).click()
    const level = (stem: string) => mixer.locator(`[data-stem="${stem}"]`).getAttribute("data-level").then(Number)
    await expect.poll(() => level("drums"), { timeout: 10_000 }).toBeGreaterThan(0.001)
    await mixer.getByRole("button", { name: "Mute drums" }).click()
    expect(await mixer.getByRole("button", { name: "Mute drums" }).getAttribute("aria-pressed")).toBe("true")
    await expect.poll(() => level("drums"), { timeout: 5_000 }).toBeLessThan(0.0005)
    const others = stems.filter((s) => s !== "drums")
    await expect
      .poll(async () => Math.max(...(await Promise.all(others.map(level)))), { timeout: 10_000 })
      .toBeGreaterThan(0.001)
    expect(Number.parseFloat((await mixer.getByTestId("mixer-position").textContent()) ?? "0")).toBeGreaterThan(0)
    await mixer.getByRole("button", { name: "Mute drums" }).click()
    await expect.poll(() => level("drums"), { timeout: 5_000 }).toBeGreaterThan(0.001)
    await mixer.getByRole("button", { name: /^Pause/ }).click()
    await page.screenshot({ path: screenshotPath("dashboard-tools/mixer-desktop"), fullPage: true })
  }, 90_000)

  it("Content credentials: the track's MP3 read in the page by c2pa-rs, made new by the engine, signed, Valid", async () => {
    const page = await tabs.open(holder, "/dashboard/songs")
    const view = await tool(page, trackId(0), "Content credentials")
    const credentials = view.getByTestId("content-credentials")
    await credentials.waitFor({ timeout: 60_000 })
    expect(await credentials.getAttribute("data-state")).toBe("Valid")
    expect(await credentials.getByTestId("credentials-made").first().textContent()).toMatch(
      /^Created by an algorithm \(Lyre built-in engine .+\), with Lyre /
    )
    expect(await credentials.getByTestId("credentials-from").first().textContent()).toBe("nothing: made new")
    expect(await credentials.getByTestId("credentials-when").first().textContent()).not.toBe("—")
    expect(await credentials.getByTestId("credentials-signer").first().textContent()).toContain("content credentials")
    expect(await credentials.getByTestId("credentials-failures").count()).toBe(0)
    await page.screenshot({ path: screenshotPath("dashboard-tools/credentials-desktop"), fullPage: true })
  }, 90_000)

  it("another account's track and export are not found through the dashboard's procedures", async () => {
    const other = await createHolder(server)
    const session = await signIn(other)
    const auth = { cookie: session.cookie, csrf: session.csrf }
    for (const [path, input] of [
      ["tracks.extend", { track_id: trackId(0) }],
      ["tracks.export", { track_id: trackId(0), format: "wav" }]
    ] as const) {
      const answer = await trpc(server, "mutation", path, input, auth)
      expect([path, answer.status, envelopeOf(answer.body)["code"], envelopeOf(answer.body)["param"]]).toEqual([
        path,
        404,
        "track_not_found",
        "track_id"
      ])
    }
    const [mine] = await server.query<{ id: string }>("select id from exports where account_id = $1 limit 1", holder.id)
    const got = await trpc(server, "query", "exports.get", { id: mine?.id }, auth)
    expect([got.status, envelopeOf(got.body)["type"]]).toEqual([404, "not_found"])
    expect(await balance(other.id)).toBe(1_000)
  })
})

describe("the usage chart", () => {
  it("draws the last 30 days of the ledger the test wrote, with its figures, above the ledger", async () => {
    const charted = await createHolder(server, { subscription: 500 })
    await writeLedger(server, charted.id, [
      { daysAgo: 0, what: "aether", credits: 50, status: "ready" },
      { daysAgo: 1, what: "echo", credits: 100, status: "ready" },
      { daysAgo: 1, what: "stems", credits: 20, status: "ready" },
      { daysAgo: 3, what: "extend", credits: 50, status: "ready" },
      { daysAgo: 3, what: "aether", credits: 50, status: "failed" },
      { daysAgo: 6, what: "wav", credits: 5, status: "ready" },
      { daysAgo: 40, what: "nocturne", credits: 180, status: "ready" }
    ])
    const page = await tabs.open(charted, "/dashboard")
    await expect
      .poll(() => page.getByTestId("usage-summary").textContent())
      .toBe("225 credits spent; 3 generations ready, 1 failed.")
    const canvas = page.getByTestId("usage-chart")
    expect(await canvas.getAttribute("aria-label")).toBe(
      "Credits spent per day over the last 30 days: 225 in all. Generations: 3 ready, 1 failed."
    )
    // Drawn: the canvas has coloured pixels in the colour of the aether bars.
    const painted = await canvas.evaluate(
      (element: {
        getContext(kind: "2d"): {
          getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray }
        }
        width: number
        height: number
      }) => {
        const data = element.getContext("2d").getImageData(0, 0, element.width, element.height).data
        let aether = 0
        for (let i = 0; i < data.length; i += 4)
          if (data[i] === 0x34 && data[i + 1] === 0x46 && data[i + 2] === 0xc9) aether++
        return aether
      }
    )
    expect(painted).toBeGreaterThan(50)
    await page.getByText("The figures, day by day").click()
    const table = page.getByTestId("usage-table")
    expect(await table.locator("thead th").allTextContents()).toEqual([
      "Day",
      "aether",
      "echo",
      "extensions",
      "WAV",
      "stems",
      "Ready",
      "Failed"
    ])
    const rows = await table
      .locator("tbody tr")
      .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => cell.textContent)))
    const day = (ago: number) => new Date(Date.now() - ago * 86_400_000).toISOString().slice(0, 10)
    expect(rows).toEqual([
      [day(0), "50", "0", "0", "0", "0", "1", "0"],
      [day(1), "0", "100", "0", "0", "20", "1", "0"],
      [day(3), "0", "0", "50", "0", "0", "1", "1"],
      [day(6), "0", "0", "0", "5", "0", "0", "0"]
    ])
    // The ledger table stays, beneath the chart.
    const order = await page.evaluate<number>(
      `document.getElementById("usage-title").compareDocumentPosition(document.getElementById("ledger-title"))`
    )
    expect(order & 4).toBe(4)
    // An export's debit names the export in the ledger, as a generation's names its task.
    const ledgerIds = await page
      .locator("section", { has: page.locator("#ledger-title") })
      .locator("td code")
      .allTextContents()
    expect(ledgerIds.filter((id) => id.startsWith("exp_"))).toHaveLength(2)
    expect(ledgerIds.filter((id) => id.startsWith("gen_"))).toHaveLength(6)
    for (const [width, viewport] of [
      ["desktop", desktop],
      ["phone", phone]
    ] as const) {
      const shot = await tabs.open(charted, "/dashboard", viewport)
      await shot.getByTestId("usage-chart").waitFor()
      await shot.screenshot({ path: screenshotPath(`dashboard-tools/overview-chart-${width}`), fullPage: true })
    }
  })
})

describe("the song tools' views", () => {
  it("have no serious or critical axe violations and fit the screen, at desktop and phone widths", async () => {
    for (const [width, viewport] of [
      ["desktop", desktop],
      ["phone", phone]
    ] as const) {
      const page = await tabs.open(holder, "/dashboard/songs", viewport)
      for (const label of ["Extend", "Export"] as const) await tool(page, trackId(1), label)
      await madeView(await tool(page, trackId(1), "Karaoke"), "karaoke-lyrics", "Make the timed lyrics for 5 credits")
      await madeView(await tool(page, trackId(1), "Stems mixer"), "mixer", "Make the stems for 20 credits")
      await (await tool(page, trackId(1), "Content credentials"))
        .getByTestId("content-credentials")
        .waitFor({ timeout: 60_000 })
      await page
        .locator(`[data-track-id="${trackId(1)}"] [data-testid=waveform][data-loaded=true]`)
        .waitFor({ timeout: 20_000 })
      await page
        .locator(`[data-track-id="${trackId(1)}"]`)
        .screenshot({ path: screenshotPath(`dashboard-tools/tools-${width}`) })
      await page.evaluate(axeSource)
      const violations = await page.evaluate<
        Array<{ id: string; impact: string | null; nodes: Array<{ target: Array<string> }> }>
      >(`
        axe.run(document).then((result) => result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => ({ target: n.target })) })))`)
      expect([width, violations.filter((v) => v.impact === "serious" || v.impact === "critical")]).toEqual([width, []])
      const fits = await page.evaluate<boolean>("document.documentElement.scrollWidth <= window.innerWidth")
      expect([width, fits]).toEqual([width, true])
    }
    const overview = await tabs.open(holder, "/dashboard", phone)
    await overview.getByTestId("usage-chart").waitFor()
    await overview.evaluate(axeSource)
    const violations = await overview.evaluate<Array<{ impact: string | null }>>(
      "axe.run(document).then((r) => r.violations)"
    )
    expect(violations.filter((v) => v.impact === "serious" || v.impact === "critical")).toEqual([])
  }, 120_000)
})
