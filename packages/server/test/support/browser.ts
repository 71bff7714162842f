/**
 * Headless Chromium for the page tests: Debian's `chromium` (never a browser of playwright's
 * own, which would need a download), with the switches this closed network needs, and one
 * folder for the screenshots a run keeps.
 */
import { mkdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { chromium } from "playwright-core"
import type { Browser } from "playwright-core"

export const chromiumPath = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"

export const launchBrowser = (extraArgs: ReadonlyArray<string> = []): Promise<Browser> =>
  chromium.launch({
    executablePath: chromiumPath,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      ...extraArgs
    ]
  })

/** `test-output/screenshots/<name>.png` at the repository root (git-ignored); `name` may hold a folder. */
export const screenshotPath = (name: string): string => {
  const path = join(import.meta.dirname, "..", "..", "..", "..", "test-output", "screenshots", `${name}.png`)
  mkdirSync(dirname(path), { recursive: true })
  return path
}
