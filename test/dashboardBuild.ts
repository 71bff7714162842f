/**
 * Vitest's global setup: the page tests drive the dashboard's build, which `pnpm install` made.
 * A source edited since then would be tested stale, so the build is made again first when any
 * source is newer than it (about a second; nothing when it is current).
 */
import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"

const dashboard = join(import.meta.dirname, "..", "packages", "dashboard")

const newestIn = (path: string): number =>
  statSync(path).isDirectory()
    ? Math.max(0, ...readdirSync(path).map((name) => newestIn(join(path, name))))
    : statSync(path).mtimeMs

export default function buildDashboardWhenStale(): void {
  const built = join(dashboard, "dist", "index.html")
  const sources = ["src", "index.html", "vite.config.ts"].map((name) => newestIn(join(dashboard, name)))
  if (existsSync(built) && statSync(built).mtimeMs >= Math.max(...sources)) return
  execFileSync(
    process.execPath,
    [join(dashboard, "node_modules", "vite", "bin", "vite.js"), "build", "--logLevel", "warn"],
    {
      cwd: dashboard,
      stdio: "inherit"
    }
  )
}
