/**
 * Vitest's global setup: the page tests drive Debian's Chromium (playwright-core never downloads
 * a browser of its own), installed here when it is missing (see debianPackage.ts).
 */
import { ensureDebianPackage } from "./debianPackage.ts"

const chromiumPath = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"

export default function ensureChromium(): void {
  ensureDebianPackage({
    path: chromiumPath,
    pkg: "chromium",
    variable: "CHROMIUM_PATH",
    binary: "a Chromium or Chrome binary",
    need: "The page tests need Chromium",
    tests: "the page tests"
  })
}
