/**
 * What Vitest's global setups for Debian programs share: tests that drive a program a fresh
 * machine of this kind does not have until the project installs it. The test command installs
 * it when it is missing and it can (as root, with apt-get), and otherwise stops at once saying
 * how, instead of failing the tests later.
 */
import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"

const canInstall = (): boolean => process.getuid?.() === 0 && existsSync("/usr/bin/apt-get")

export const ensureDebianPackage = (options: {
  /** Where the program is expected: `variable`'s value, or where Debian's package puts it. */
  readonly path: string
  /** Debian's package. */
  readonly pkg: string
  /** The environment variable naming another binary, and what that binary may be: "a Chromium or Chrome binary". */
  readonly variable: string
  readonly binary: string
  /** Who needs it, for the error ("The page tests need Chromium") and the install notice ("the page tests"). */
  readonly need: string
  readonly tests: string
  /** Whether the program is there already, when more than one place will do; default: `path` exists. */
  readonly present?: (() => boolean) | undefined
}): void => {
  if (options.present?.() ?? existsSync(options.path)) return
  if (!canInstall()) {
    throw new Error(
      `${options.need} at ${options.path}: install Debian's package (apt-get install ${options.pkg}) ` +
        `or set ${options.variable} to ${options.binary}.`
    )
  }
  process.stderr.write(`Installing Debian's ${options.pkg} for ${options.tests} (once per machine)...\n`)
  // Another test run (or a person) may be installing at the same moment: wait for dpkg's lock
  // instead of failing the whole run on it.
  const waitForLock = ["-o", "DPkg::Lock::Timeout=600"]
  execFileSync("apt-get", [...waitForLock, "update", "-qq"], { stdio: "inherit" })
  execFileSync("apt-get", [...waitForLock, "install", "-y", "-qq", options.pkg], {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  })
}
