/**
 * Vitest's global setup for the page tests: Debian's Chromium (playwright-core never downloads
 * a browser of its own), installed here when it is missing (see debianPackage.ts), started once
 * for the run as a browser server that each page test file connects to
 * (packages/server/test/support/browser.ts), in contexts of its own: one browser's start and
 * memory a run rather than one a file.
 */
import { chromium } from "playwright-core"
import type { TestProject } from "vitest/node"
import { ensureDebianPackage } from "./debianPackage.ts"

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's Chromium, for playwright-core's `chromium.connect`. */
    readonly chromiumEndpoint: string
  }
}

const chromiumPath = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"

export default async function startChromium(project: TestProject): Promise<() => Promise<void>> {
  ensureDebianPackage({
    path: chromiumPath,
    pkg: "chromium",
    variable: "CHROMIUM_PATH",
    binary: "a Chromium or Chrome binary",
    need: "The page tests need Chromium",
    tests: "the page tests"
  })
  const server = await chromium.launchServer({
    executablePath: chromiumPath,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      // The dashboard's players start without a click.
      "--autoplay-policy=no-user-gesture-required"
    ]
  })
  project.provide("chromiumEndpoint", server.wsEndpoint())
  return () => server.close()
}
