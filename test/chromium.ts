/**
 * Vitest's global setup: the page tests drive Debian's Chromium (playwright-core never downloads
 * a browser of its own), which a fresh machine of this kind does not have until the project
 * installs it. So the test command installs it when it is missing and it can (as root, with
 * apt-get), and otherwise stops at once saying how, instead of failing every page test.
 */
import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"

const chromiumPath = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"

const canInstall = (): boolean => process.getuid?.() === 0 && existsSync("/usr/bin/apt-get")

export default function ensureChromium(): void {
  if (existsSync(chromiumPath)) return
  if (!canInstall()) {
    throw new Error(
      `The page tests need Chromium at ${chromiumPath}: install Debian's package (apt-get install chromium) ` +
        "or set CHROMIUM_PATH to a Chromium or Chrome binary."
    )
  }
  process.stderr.write("Installing Debian's chromium for the page tests (once per machine)...\n")
  execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit" })
  execFileSync("apt-get", ["install", "-y", "-qq", "chromium"], {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  })
}
