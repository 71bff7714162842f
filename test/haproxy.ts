/**
 * Vitest's global setup: the rolling-restart test puts two API processes behind Debian's
 * HAProxy, which a fresh machine of this kind does not have until the project installs it. So
 * the test command installs it when it is missing and it can (as root, with apt-get), and
 * otherwise stops at once saying how, instead of failing the test later.
 */
import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"

export const haproxyPath = process.env["HAPROXY_PATH"] ?? "/usr/sbin/haproxy"

const canInstall = (): boolean => process.getuid?.() === 0 && existsSync("/usr/bin/apt-get")

export default function ensureHaproxy(): void {
  if (existsSync(haproxyPath)) return
  if (!canInstall()) {
    throw new Error(
      `The rolling-restart test needs HAProxy at ${haproxyPath}: install Debian's package (apt-get install haproxy) ` +
        "or set HAPROXY_PATH to an haproxy binary."
    )
  }
  process.stderr.write("Installing Debian's haproxy for the rolling-restart test (once per machine)...\n")
  execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit" })
  execFileSync("apt-get", ["install", "-y", "-qq", "haproxy"], {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  })
}
