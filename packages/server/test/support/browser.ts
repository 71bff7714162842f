/**
 * Headless Chromium for the page tests: the run's one Debian `chromium` (never a browser of
 * playwright's own, which would need a download), started by the lane's global setup
 * (test/chromium.ts) with the switches this closed network needs; one folder for the
 * screenshots a run keeps, and the signed-in dashboard tabs the page tests open.
 */
import { mkdirSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { chromium } from "playwright-core"
import type { Browser, BrowserContext, BrowserContextOptions, Download, Page } from "playwright-core"
import { inject } from "vitest"
import type { DashboardServer, Holder } from "./dashboard.ts"

/**
 * A connection to the run's Chromium. Closing it closes the contexts made through it and leaves
 * the browser to the other files.
 */
export const connectBrowser = (): Promise<Browser> => chromium.connect(inject("chromiumEndpoint"))

/** A download's bytes, read through the connection (a connected browser keeps the file on its side). */
export const downloadedBytes = async (download: Download): Promise<Buffer> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of await download.createReadStream()) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** `test-output/screenshots/<name>.png` at the repository root (git-ignored); `name` may hold a folder. */
export const screenshotPath = (name: string): string => {
  const path = join(import.meta.dirname, "..", "..", "..", "..", "test-output", "screenshots", `${name}.png`)
  mkdirSync(dirname(path), { recursive: true })
  return path
}

/** axe-core's script: evaluated in a page, it defines `axe` for the accessibility checks. */
export const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

/** The widths every page is checked and screenshot at. */
export const desktop = { width: 1280, height: 900 } as const
export const phone = { width: 390, height: 844 } as const

/** Browser contexts of one test file, each tab in a context of its own, closed together. */
export interface Tabs {
  /** A signed-in tab on a dashboard page, once its heading shows. */
  readonly open: (
    holder: Holder,
    path: string,
    viewport?: { readonly width: number; readonly height: number }
  ) => Promise<Page>
  /** A context of no one's (no cookie), closed with the rest. */
  readonly context: (options?: BrowserContextOptions) => Promise<BrowserContext>
  readonly close: () => Promise<void>
}

export const dashboardTabs = (
  browser: Browser,
  dashboard: DashboardServer,
  options: BrowserContextOptions = {}
): Tabs => {
  const contexts: Array<BrowserContext> = []
  const context = async (extra: BrowserContextOptions = {}) => {
    const made = await browser.newContext({ ...options, ...extra })
    contexts.push(made)
    return made
  }
  return {
    context,
    open: async (holder, path, viewport = desktop) => {
      const session = await dashboard.signIn(holder)
      const made = await context({ viewport })
      const [name = "", value = ""] = session.cookie.split("=")
      await made.addCookies([{ name, value, url: dashboard.server.url, httpOnly: true, sameSite: "Lax" }])
      const page = await made.newPage()
      await page.goto(`${dashboard.server.url}${path}`)
      await page.getByRole("heading", { level: 1 }).waitFor()
      return page
    },
    close: async () => {
      for (const made of contexts) await made.close()
    }
  }
}
