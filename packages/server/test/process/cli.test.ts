import { execFile } from "node:child_process"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, startTestServer } from "../support/harness.ts"
import type { TestServer } from "../support/harness.ts"

const exec = promisify(execFile)
let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

const cli = async (...args: Array<string>) => {
  const result = await exec(process.execPath, [join(import.meta.dirname, "../../src/cli/lyre-admin.ts"), ...args], {
    env: { ...process.env, LYRE_URL: server.url, ADMIN_TOKEN: server.adminToken }
  }).catch((error: { code: number; stdout: string; stderr: string }) => error)
  return { code: "code" in result ? result.code : 0, stdout: result.stdout, stderr: result.stderr }
}

describe("pnpm lyre-admin", () => {
  it("creates an account and a key that works, adjusts credits, reads the ledger, revokes", async () => {
    const created = await cli(
      "accounts",
      "create",
      "--email",
      "cli@example.test",
      "--plan",
      "pro",
      "--subscription-credits",
      "300",
      "--json"
    )
    expect(created.code).toBe(0)
    const account = JSON.parse(created.stdout) as { id: string }
    const key = JSON.parse(
      (await cli("keys", "create", account.id, "--name", "cli", "--scopes", "music:generate,profile", "--json")).stdout
    ) as {
      id: string
      key: string
    }
    expect((await api(server, "GET", "/api/v1/me", { key: key.key })).status).toBe(200)
    const credits = await cli("accounts", "credits", account.id, "--onetime", "20", "--reason", "gift")
    expect(credits.stdout).toMatch(/credits\s+\{"subscription":300,"onetime":20,"total":320\}/)
    const ledger = JSON.parse((await cli("accounts", "ledger", account.id, "--json")).stdout) as {
      data: Array<{ kind: string }>
    }
    expect(ledger.data.map((e) => e.kind)).toEqual(["grant", "grant"])
    expect((await cli("accounts", "update", account.id, "--concurrency-limit", "default", "--json")).code).toBe(0)
    expect((await cli("keys", "revoke", key.id)).code).toBe(0)
    expect((await api(server, "GET", "/api/v1/me", { key: key.key })).status).toBe(401)
  })

  it("lists an account's personas (accounts personas)", async () => {
    const account = JSON.parse(
      (await cli("accounts", "create", "--email", "personas@example.test", "--plan", "pro", "--json")).stdout
    ) as {
      id: string
    }
    expect(JSON.parse((await cli("accounts", "personas", account.id, "--json")).stdout)).toEqual({ data: [] })
    expect((await cli("accounts", "personas", "acct_AAAAAAAAAAAAAAAAAAAAAAAA")).code).not.toBe(0)
  })

  it("lists an account's exports (accounts exports), newest first", async () => {
    const account = JSON.parse(
      (await cli("accounts", "create", "--email", "exports@example.test", "--plan", "pro", "--json")).stdout
    ) as {
      id: string
    }
    expect(JSON.parse((await cli("accounts", "exports", account.id, "--json")).stdout)).toEqual({ data: [] })
    const [row] = await server.query<{ id: string }>(
      `insert into generation_tasks (id, account_id, credential_subject, status, model, request, credits_used,
         debit_subscription, debit_onetime, deadline_at, created_at, updated_at)
       values ('gen_AAAAAAAAAAAAAAAAAAAAAAAA', $1, 'key_x', 'ready', 'aether', '{}'::jsonb, 50, 0, 0, now(), now(), now())
       returning id`,
      account.id
    )
    await server.query(
      `insert into tracks (id, task_id, account_id, track_index, duration, created_at)
       values ('trk_AAAAAAAAAAAAAAAAAAAAAAAA', $1, $2, 0, 60, now())`,
      row?.id,
      account.id
    )
    await server.query(
      `insert into exports (id, account_id, credential_subject, track_id, task_id, format, model, status, credits_used,
         debit_subscription, debit_onetime, deadline_at, created_at, updated_at)
       values ('exp_AAAAAAAAAAAAAAAAAAAAAAAA', $1, 'key_x', 'trk_AAAAAAAAAAAAAAAAAAAAAAAA', $2, 'midi', 'aether', 'pending',
               5, 5, 0, now(), now(), now())`,
      account.id,
      row?.id
    )
    const listed = JSON.parse((await cli("accounts", "exports", account.id, "--json")).stdout) as {
      data: Array<{ id: string; format: string }>
    }
    expect(listed.data.map((e) => [e.id, e.format])).toEqual([["exp_AAAAAAAAAAAAAAAAAAAAAAAA", "midi"]])
    expect((await cli("accounts", "exports", "acct_AAAAAAAAAAAAAAAAAAAAAAAA")).code).toBe(1)
  })

  it("switches a model off and on", async () => {
    const off = await cli("models", "set", "echo", "--unavailable", "--retry-after", "30", "--json")
    expect(JSON.parse(off.stdout)).toEqual({ model: "echo", available: false, retry_after_seconds: 30 })
    expect((await cli("models", "set", "echo", "--available")).code).toBe(0)
  })

  it("manages webhook endpoints: create, update, rotate, ping, deliveries, attempts, redeliver, delete", async () => {
    const account = JSON.parse(
      (await cli("accounts", "create", "--email", "hooks@example.test", "--plan", "pro", "--json")).stdout
    ) as {
      id: string
    }
    const created = JSON.parse(
      (
        await cli(
          "webhooks",
          "create",
          account.id,
          "--url",
          "https://93.184.216.34/hooks",
          "--events",
          "job.failed,credits.low",
          "--json"
        )
      ).stdout
    ) as { id: string; secret: string; events: Array<string> }
    expect(created.secret).toMatch(/^whsec_/)
    expect(created.events).toEqual(["job.failed", "credits.low"])
    const updated = JSON.parse((await cli("webhooks", "update", created.id, "--disable", "--json")).stdout) as {
      enabled: boolean
    }
    expect(updated.enabled).toBe(false)
    const listed = JSON.parse((await cli("webhooks", "list", account.id, "--json")).stdout) as {
      data: Array<{ id: string }>
    }
    expect(listed.data.map((e) => e.id)).toEqual([created.id])
    const rotated = JSON.parse(
      (await cli("webhooks", "rotate-secret", created.id, "--grace-period", "60", "--json")).stdout
    ) as {
      secret: string
    }
    expect(rotated.secret).not.toEqual(created.secret)
    const pinged = JSON.parse((await cli("webhooks", "ping", created.id, "--json")).stdout) as {
      id: string
      event_id: string
    }
    const deliveries = JSON.parse((await cli("webhooks", "deliveries", created.id, "--json")).stdout) as {
      data: Array<{ id: string }>
    }
    expect(deliveries.data.map((d) => d.id)).toEqual([pinged.id])
    expect(JSON.parse((await cli("webhooks", "attempts", pinged.id, "--json")).stdout)).toEqual({ data: [] })
    const again = JSON.parse((await cli("webhooks", "redeliver", pinged.id, "--json")).stdout) as { event_id: string }
    expect(again.event_id).toEqual(pinged.event_id)
    expect((await cli("webhooks", "redeliver-event", created.id, "--event", pinged.event_id)).code).toBe(0)
    expect((await cli("webhooks", "delete", created.id)).code).toBe(0)
    expect((await cli("webhooks", "deliveries", created.id)).code).toBe(1)
  })

  it("prints the server's envelope and exits 1 on an API error, 2 on a usage error", async () => {
    const missing = await cli("accounts", "get", "acct_AAAAAAAAAAAAAAAAAAAAAAAA")
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('"code": "resource_not_found"')
    expect((await cli("accounts", "create", "--plan", "pro")).code).toBe(2)
    expect((await cli("frobnicate")).code).toBe(2)
  })
})
