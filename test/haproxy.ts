/**
 * Vitest's global setup: the rolling-restart test puts two API processes behind Debian's
 * HAProxy, installed here when it is missing (see debianPackage.ts).
 */
import { ensureDebianPackage } from "./debianPackage.ts"

export const haproxyPath = process.env["HAPROXY_PATH"] ?? "/usr/sbin/haproxy"

export default function ensureHaproxy(): void {
  ensureDebianPackage({
    path: haproxyPath,
    pkg: "haproxy",
    variable: "HAPROXY_PATH",
    binary: "an haproxy binary",
    need: "The rolling-restart test needs HAProxy",
    tests: "the rolling-restart test"
  })
}
