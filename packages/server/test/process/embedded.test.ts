/**
 * The embedded default as a newcomer runs it: `pnpm start`'s entry point with no configuration
 * at all (no database, no Redis, no secrets), then /v1/me and a create with the printed key.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { freePort } from "../support/processes.ts"

const dataDir = mkdtempSync(join(tmpdir(), "lyre-embedded-"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const startService = async (port: number) => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (
      value !== undefined &&
      !["DATABASE_URL", "REDIS_URL", "SECRET_KEY", "ADMIN_TOKEN", "PUBLIC_URL"].includes(name)
    ) {
      env[name] = value
    }
  }
  const child = spawn(process.execPath, ["packages/server/src/main.ts"], {
    cwd: join(import.meta.dirname, "../../../.."),
    env: { ...env, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
  const deadline = Date.now() + 60_000
  while (!output.includes('"msg":"listening"')) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`service did not start:\n${output}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const stop = () =>
    new Promise<number | null>((resolve) => {
      child.once("exit", (code) => resolve(code))
      child.kill("SIGTERM")
    })
  return { output: () => output, stop }
}

describe("the embedded default", () => {
  it("starts with no configuration, prints an admin token and a Pro key that works, and stops cleanly", async () => {
    const port = await freePort()
    const service = await startService(port)
    const url = `http://127.0.0.1:${port}`
    const banner = JSON.parse(
      service
        .output()
        .split("\n")
        .find((line) => line.includes('"msg":"listening"')) ?? "{}"
    )
    expect(banner).toMatchObject({ url, mode: "embedded", limits: "memory" })
    expect(banner.api_key).toMatch(/^lyr_live_/)
    expect(banner.admin_token).toMatch(/^[0-9A-Za-z]{32}$/)
    expect(service.output()).toContain(`API key     : ${banner.api_key}`)
    // The worker's lines (Effect's logger) have the server's shape, and loading the engine
    // warns of nothing: Node's WASI, which sings the words, is loaded at the first render.
    const workerLine = JSON.parse(
      service
        .output()
        .split("\n")
        .find((line) => line.includes("worker started")) ?? "{}"
    )
    expect(workerLine).toMatchObject({ level: "info", msg: "worker started", provider: "engine" })
    expect(Object.keys(workerLine)).not.toContain("fiberId")
    expect(service.output()).not.toMatch(/\(node:\d+\) \w*Warning/)

    const auth = { authorization: `Bearer ${banner.api_key}` }
    const me = await fetch(`${url}/api/v1/me`, { headers: auth })
    expect(me.status).toBe(200)
    // Every request is logged as a JSON line carrying its request id.
    const requestId = me.headers.get("x-request-id") ?? "missing"
    for (let i = 0; i < 20 && !service.output().includes(requestId); i++) await new Promise((r) => setTimeout(r, 50))
    expect(service.output()).toMatch(
      new RegExp(`"msg":"request","request_id":"${requestId}","method":"GET","path":"/api/v1/me","status":200`)
    )
    expect(await me.json()).toMatchObject({ plan: "pro", credits: { total: 5_000 } })
    const created = await fetch(`${url}/api/v1/music/generations`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ style: "lofi hip hop", title: "First", lyrics: "hello" })
    })
    expect(created.status).toBe(202)
    const task = (await created.json()) as { id: string }
    const admin = await fetch(`${url}/admin/v1/accounts/${banner.account_id}`, {
      headers: { authorization: `Bearer ${banner.admin_token}` }
    })
    expect(((await admin.json()) as { credits: { total: number } }).credits.total).toBe(4_950)
    // The demo account can sign in with the password kept (and only kept) in bootstrap.json.
    const { password } = JSON.parse(readFileSync(join(dataDir, "bootstrap.json"), "utf8")) as { password: string }
    expect(password).toMatch(/^[0-9A-Za-z]{20}$/)
    expect(service.output()).not.toContain(password)
    const form = await fetch(`${url}/signin`)
    const signedIn = await fetch(`${url}/signin`, {
      method: "POST",
      redirect: "manual",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        cookie: form.headers
          .getSetCookie()
          .map((c) => c.split(";")[0])
          .join("; ")
      },
      body: new URLSearchParams({
        csrf_token: /name="csrf_token" value="([^"]*)"/.exec(await form.text())?.[1] ?? "",
        email: "demo@lyre.local",
        password
      })
    })
    expect(signedIn.status).toBe(303)
    expect(signedIn.headers.getSetCookie().some((c) => c.startsWith("lyre_session="))).toBe(true)
    expect(await service.stop()).toBe(0)

    // A restart keeps the data, the secrets and the bootstrap key.
    const again = await startService(port)
    const fetched = await fetch(`${url}/api/v1/music/generations/${task.id}`, { headers: auth })
    expect(fetched.status).toBe(200)
    expect(JSON.parse(readFileSync(join(dataDir, "bootstrap.json"), "utf8")).api_key).toBe(banner.api_key)
    expect(await again.stop()).toBe(0)
  }, 120_000)
})
