/**
 * Run in a project that installed the packed tarballs (packages.test.ts): an operator's plain
 * `node:http` server mounts `createLyre` (the embedded default: PGlite, the built-in engine, the
 * worker inline), and `@lyre/client` creates a song, waits for it and downloads it. Prints one
 * JSON line.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { LyreClient } from "@lyre/client"
import { createLyre } from "@lyre/server"

const host = createServer()
await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve))
const origin = `http://127.0.0.1:${(host.address() as AddressInfo).port}`
const dataDir = mkdtempSync(join(tmpdir(), "lyre-packaged-"))
const lyre = await createLyre({ publicUrl: origin, dataDir, logLevel: "error" })
host.on("request", (req, res) => void lyre.handler(req, res))

/** The operator's side: the admin API, with plain fetch. */
const admin = async (path: string, body: unknown) => {
  const res = await fetch(`${origin}/admin/v1${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${lyre.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return (await res.json()) as Record<string, unknown>
}

const account = await admin("/accounts", { email: "packaged@example.test", plan: "pro", subscription_credits: 1000 })
const key = await admin(`/accounts/${String(account["id"])}/keys`, { name: "packaged", scopes: ["music:generate"] })

// The user's side: @lyre/client against the mounted service.
const client = new LyreClient({ apiKey: String(key["key"]), baseUrl: origin })
const me = await client.me()
const created = await client.generations.create({
  style: "lofi, 80 bpm",
  title: "Packaged",
  lyrics: "[Verse]\nFrom a tarball"
})
const seen = new Set<string>()
const task = await client.waitForGeneration(created.id, {
  intervalMs: 500,
  timeoutMs: 180_000,
  onProgress: (progress) => void seen.add(progress.task.status)
})
// The account holder's page ships inside the package: its HTML and its hashed script.
const dashboardPage = await fetch(`${origin}/dashboard`)
const dashboardHtml = await dashboardPage.text()
const script = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(dashboardHtml)?.[1]
const dashboard = {
  page: dashboardPage.status,
  script: script === undefined ? null : (await fetch(`${origin}${script}`)).status
}

const track = task.tracks[0]
const audio = track === undefined ? null : await client.downloadStream(track)
const bytes = audio === null ? new Uint8Array() : new Uint8Array(await new Response(audio.stream).arrayBuffer())

process.stdout.write(
  `${JSON.stringify({
    origin,
    me,
    created: { status: created.status, charged: created.credits_used },
    progress: [...seen],
    task: { status: task.status, tracks: task.tracks.length, error: task.error },
    dashboard,
    audio:
      audio === null
        ? null
        : {
            type: audio.contentType,
            bytes: bytes.length,
            frameSync: bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0
          }
  })}\n`
)

host.closeAllConnections()
await new Promise((resolve) => host.close(resolve))
await lyre.close()
rmSync(dataDir, { recursive: true, force: true })
