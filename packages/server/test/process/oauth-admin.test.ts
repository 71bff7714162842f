/**
 * OAuth clients, passwords and signing keys through the admin API and `lyre-admin`.
 */
import { execFile } from "node:child_process"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer } from "../support/harness.ts"
import type { TestServer } from "../support/harness.ts"
import { signIn } from "../support/oauth.ts"

const exec = promisify(execFile)
let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
}, 60_000)
afterAll(() => server.close())

const cli = async (args: Array<string>, input?: string) => {
  const child = exec(process.execPath, [join(import.meta.dirname, "../../src/cli/lyre-admin.ts"), ...args], {
    env: { ...process.env, LYRE_URL: server.url, ADMIN_TOKEN: server.adminToken }
  })
  if (input !== undefined) child.child.stdin?.end(input)
  const result = await child.catch((error: { code: number; stdout: string; stderr: string }) => error)
  return { code: "code" in result ? result.code : 0, stdout: result.stdout, stderr: result.stderr }
}

describe("POST /admin/v1/oauth-clients", () => {
  it("registers a public client (201), lists, gets, refuses duplicates, deletes (204)", async () => {
    const body = {
      client_id: "ext.app",
      name: "Extension",
      redirect_uris: ["https://ext.example/cb"],
      refresh_tokens: false
    }
    const made = await server.admin("POST", "/oauth-clients", body)
    expect(made.status).toBe(201)
    expect(made.body).toMatchObject(body)
    expect(typeof made.body["created_at"]).toBe("string")
    expect((await server.admin("POST", "/oauth-clients", body)).body["error"]).toMatchObject({
      code: "already_exists",
      param: "client_id"
    })
    const listed = await server.admin("GET", "/oauth-clients")
    expect(listed.status).toBe(200)
    expect((listed.body["data"] as unknown as Array<{ client_id: string }>).map((c) => c.client_id)).toContain(
      "ext.app"
    )
    expect((await server.admin("GET", "/oauth-clients/ext.app")).body["name"]).toBe("Extension")
    expect((await server.admin("DELETE", "/oauth-clients/ext.app")).status).toBe(204)
    expect((await server.admin("GET", "/oauth-clients/ext.app")).status).toBe(404)
    expect((await server.admin("DELETE", "/oauth-clients/ext.app")).status).toBe(404)
  })

  it("validates the body: client id shape, exact redirect URIs (http only on loopback, no fragment)", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ client_id: "x", name: "n", redirect_uris: ["https://a.example/cb"] }, "client_id"],
      [{ client_id: "okay", name: "n", redirect_uris: [] }, "redirect_uris"],
      [{ client_id: "okay", name: "n", redirect_uris: ["http://a.example/cb"] }, "redirect_uris.0"],
      [{ client_id: "okay", name: "n", redirect_uris: ["https://a.example/cb#frag"] }, "redirect_uris.0"],
      [{ client_id: "okay", name: "n", redirect_uris: ["not a url"] }, "redirect_uris.0"],
      [{ client_id: "okay", name: "n", redirect_uris: ["https://a.example/cb"], secret: "x" }, "secret"]
    ]
    for (const [body, param] of cases) {
      const answer = await server.admin("POST", "/oauth-clients", body)
      expect({ param, status: answer.status }).toEqual({ param, status: 400 })
      expect(answer.body["error"]).toMatchObject({ type: "invalid_request_error", param })
    }
    const loopback = await server.admin("POST", "/oauth-clients", {
      client_id: "native",
      name: "Native",
      redirect_uris: ["http://127.0.0.1:8765/cb", "com.lyre.app:/oauth"],
      refresh_tokens: true
    })
    expect(loopback.status).toBe(201)
  })
})

describe("lyre-admin", () => {
  it("manages OAuth clients", async () => {
    const created = await cli([
      "oauth-clients",
      "create",
      "--client-id",
      "mobile",
      "--name",
      "Lyre Mobile",
      "--redirect-uris",
      "com.lyre.app:/oauth,http://127.0.0.1:7000/cb",
      "--refresh-tokens",
      "--json"
    ])
    expect(created.code).toBe(0)
    expect(JSON.parse(created.stdout)).toMatchObject({
      client_id: "mobile",
      redirect_uris: ["com.lyre.app:/oauth", "http://127.0.0.1:7000/cb"],
      refresh_tokens: true
    })
    const listed = JSON.parse((await cli(["oauth-clients", "list", "--json"])).stdout) as {
      data: Array<{ client_id: string }>
    }
    expect(listed.data.map((c) => c.client_id)).toContain("mobile")
    expect((await cli(["oauth-clients", "get", "mobile"])).stdout).toMatch(/name\s+Lyre Mobile/)
    expect((await cli(["oauth-clients", "delete", "mobile"])).code).toBe(0)
    expect((await cli(["oauth-clients", "get", "mobile"])).code).toBe(1)
  })

  it("sets a password from standard input, and rotates the signing key", async () => {
    const account = await server.admin("POST", "/accounts", { email: "cli-pass@example.test", plan: "pro" })
    const id = String(account.body["id"])
    const set = await cli(["accounts", "set-password", id, "--password-stdin"], "a long passphrase\n")
    expect(set.code).toBe(0)
    await signIn(server, "cli-pass@example.test", "a long passphrase")
    const short = await cli(["accounts", "set-password", id, "--password", "short"])
    expect(short.code).toBe(1)
    expect(short.stderr).toContain("invalid_parameter")
    const before = (
      (await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> }
    ).keys
    const rotated = await cli(["signing-keys", "rotate", "--json"])
    expect(rotated.code).toBe(0)
    const kid = (JSON.parse(rotated.stdout) as { kid: string }).kid
    const after = (
      (await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> }
    ).keys
    expect(after.map((k) => k.kid).sort()).toEqual([...before.map((k) => k.kid), kid].sort())
  })
})
