/**
 * `createLyre`: the whole service as a `node:http` handler, mounted by an operator's own server
 * under the path of its public URL, beside routes of their own.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ConfigurationError, createLyre } from "../../src/index.ts"
import type { Lyre } from "../../src/index.ts"

const dataDir = mkdtempSync(join(tmpdir(), "lyre-embed-"))
let host: Server
let lyre: Lyre
let origin: string

beforeAll(async () => {
  host = createServer()
  await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve))
  origin = `http://127.0.0.1:${(host.address() as AddressInfo).port}`
  lyre = await createLyre({ publicUrl: `${origin}/lyre`, dataDir, worker: "off", logLevel: "error" })
  host.on("request", (req, res) => {
    if (req.url?.startsWith("/lyre")) return void lyre.handler(req, res)
    res.writeHead(200, { "content-type": "text/plain" }).end("the host's own page")
  })
})

afterAll(async () => {
  await new Promise((resolve) => host.close(resolve))
  await lyre.close()
  rmSync(dataDir, { recursive: true, force: true })
})

const admin = async (path: string, body: unknown) => {
  const res = await fetch(`${origin}/lyre/admin/v1${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${lyre.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return { status: res.status, body: (await res.json()) as Record<string, string> }
}

describe("createLyre", () => {
  it("serves the API under the public URL's path, beside the host's own routes", async () => {
    expect(lyre.adminToken).toMatch(/^[0-9A-Za-z]{32}$/)
    const account = await admin("/accounts", { email: "embed@example.test", plan: "pro", subscription_credits: 500 })
    expect(account.status).toBe(201)
    const key = await admin(`/accounts/${account.body["id"]}/keys`, { name: "embed", scopes: ["music:generate"] })
    expect(key.status).toBe(201)

    const me = await fetch(`${origin}/lyre/api/v1/me`, { headers: { authorization: `Bearer ${key.body["key"]}` } })
    expect(me.status).toBe(200)
    expect(me.headers.get("x-request-id")).toMatch(/^req_/)
    expect(await me.json()).toMatchObject({ id: account.body["id"], plan: "pro", credits: { total: 500 } })

    const health = await fetch(`${origin}/lyre/healthz`)
    expect(await health.json()).toEqual({ status: "ok" })
    const own = await fetch(`${origin}/elsewhere`)
    expect(await own.text()).toBe("the host's own page")
  })

  it("answers with the interface's envelope under the mount too", async () => {
    const res = await fetch(`${origin}/lyre/api/v1/me`)
    expect(res.status).toBe(401)
    expect(await res.json()).toMatchObject({ error: { type: "authentication_error", code: "missing_credential" } })
  })

  it("refuses invalid options with the message pnpm start gives for the variable", async () => {
    const bad = createLyre({
      publicUrl: `${origin}/lyre`,
      databaseUrl: "mysql://localhost/lyre",
      secretKey: "s".repeat(32)
    })
    await expect(bad).rejects.toBeInstanceOf(ConfigurationError)
    await expect(bad).rejects.toThrow(/DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL/)
    await expect(createLyre({ publicUrl: "ftp://example.com" })).rejects.toThrow(/PUBLIC_URL must be an http\(s\) URL/)
    await expect(createLyre({ publicUrl: origin, databaseUrl: "postgres://localhost/lyre" })).rejects.toThrow(
      /SECRET_KEY is required/
    )
  })
})
