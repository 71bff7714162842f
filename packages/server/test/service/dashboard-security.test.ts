/**
 * The dashboard's procedures over HTTP, as a hostile page or another account would call them: a
 * session reaches only its own account, a change needs the session's CSRF token, a lower tier is
 * refused what needs Pro, and the account holder's data stays the holder's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, validSong } from "../support/harness.ts"
import type { Json, TestServer } from "../support/harness.ts"
import { createHolder, envelopeOf, startDashboardServer, trpc } from "../support/dashboard.ts"
import type { Holder, Session } from "../support/dashboard.ts"

let server: TestServer
let signIn: (holder: Holder) => Promise<Session>
let alice: Holder
let bob: Holder
let aliceSession: Session
let bobSession: Session
const bobIds = { key: "", endpoint: "", delivery: "", task: "" }

beforeAll(async () => {
  ;({ server, signIn } = await startDashboardServer())
  alice = await createHolder(server)
  bob = await createHolder(server)
  aliceSession = await signIn(alice)
  bobSession = await signIn(bob)
  const key = await trpc(
    server,
    "mutation",
    "account.keys.create",
    { name: "bob's", scopes: ["music:generate"] },
    bobSession
  )
  bobIds.key = String(key.body["result"]?.["data"]?.["id"])
  const endpoint = await trpc(
    server,
    "mutation",
    "account.webhooks.create",
    { url: "https://example.com/hooks" },
    bobSession
  )
  bobIds.endpoint = String(endpoint.body["result"]?.["data"]?.["id"])
  const ping = await trpc(server, "mutation", "account.webhooks.ping", { id: bobIds.endpoint }, bobSession)
  bobIds.delivery = String(ping.body["result"]?.["data"]?.["id"])
  const task = await trpc(server, "mutation", "generations.create", validSong, bobSession)
  expect(task.status).toBe(200)
  bobIds.task = String(task.body["result"]?.["data"]?.["id"])
})
afterAll(() => server.close())

describe("one account's session never reaches another's data", () => {
  it("lists only its own keys, endpoints and songs", async () => {
    const keys = await trpc(server, "query", "account.keys.list", undefined, aliceSession)
    expect(keys.body["result"]?.["data"]).toEqual([])
    const endpoints = await trpc(server, "query", "account.webhooks.list", undefined, aliceSession)
    expect(endpoints.body["result"]?.["data"]).toEqual([])
    const songs = await trpc(server, "query", "generations.list", { limit: 20 }, aliceSession)
    expect(songs.body["result"]?.["data"]?.["data"]).toEqual([])
  })

  it("answers 404 for the ids of another account, and changes nothing", async () => {
    const attempts: ReadonlyArray<readonly ["query" | "mutation", string, unknown]> = [
      ["mutation", "account.keys.revoke", { id: bobIds.key }],
      ["mutation", "account.webhooks.update", { id: bobIds.endpoint, enabled: false }],
      ["mutation", "account.webhooks.delete", { id: bobIds.endpoint }],
      ["mutation", "account.webhooks.revealSecret", { id: bobIds.endpoint }],
      ["mutation", "account.webhooks.rotateSecret", { id: bobIds.endpoint }],
      ["mutation", "account.webhooks.ping", { id: bobIds.endpoint }],
      ["query", "account.webhooks.deliveries", { id: bobIds.endpoint }],
      ["query", "account.webhooks.attempts", { id: bobIds.delivery }],
      ["mutation", "account.webhooks.redeliver", { id: bobIds.delivery }],
      ["query", "generations.get", { id: bobIds.task }]
    ]
    for (const [type, path, input] of attempts) {
      const answer = await trpc(server, type, path, input, aliceSession)
      expect([path, answer.status]).toEqual([path, 404])
      expect(envelopeOf(answer.body)["type"]).toBe("not_found")
    }
    const [key] = await server.query<{ revoked_at: Date | null }>(
      "select revoked_at from api_keys where id = $1",
      bobIds.key
    )
    expect(key?.revoked_at).toBeNull()
    const [endpoint] = await server.query<{ enabled: boolean }>(
      "select enabled from webhook_endpoints where id = $1",
      bobIds.endpoint
    )
    expect(endpoint?.enabled).toBe(true)
    const deliveries = await server.query("select 1 from webhook_deliveries where endpoint_id = $1", bobIds.endpoint)
    expect(deliveries.length).toBe(1)
  })
})

describe("a change needs the session's CSRF token", () => {
  it("refuses a tRPC mutation without the token, or with another session's, and changes nothing", async () => {
    for (const csrf of [undefined, bobSession.csrf, "x"]) {
      const answer = await trpc(
        server,
        "mutation",
        "account.keys.create",
        { name: "sneaky", scopes: ["profile"] },
        {
          cookie: aliceSession.cookie,
          ...(csrf === undefined ? {} : { csrf })
        }
      )
      expect(answer.status).toBe(403)
      expect(envelopeOf(answer.body)).toMatchObject({ type: "permission_error", code: "csrf_token_invalid" })
    }
    const generated = await trpc(server, "mutation", "generations.create", validSong, { cookie: aliceSession.cookie })
    expect(envelopeOf(generated.body)["code"]).toBe("csrf_token_invalid")
    const keys = await server.query("select 1 from api_keys where account_id = $1", alice.id)
    const tasks = await server.query("select 1 from generation_tasks where account_id = $1", alice.id)
    expect([keys.length, tasks.length]).toEqual([0, 0])
  })

  it("refuses a cross-site form post (what a hostile page can send with the cookie)", async () => {
    for (const [path, body] of [
      ["account.keys.create", "name=x&scopes=profile"],
      ["account.setCreditAlert", "credit_alert_threshold=5"],
      ["account.webhooks.create", "url=https%3A%2F%2Fevil.example%2F"]
    ] as const) {
      const answer = await fetch(`${server.url}/trpc/${path}`, {
        method: "POST",
        headers: {
          cookie: aliceSession.cookie,
          "content-type": "application/x-www-form-urlencoded",
          origin: "https://evil.example"
        },
        body
      })
      expect(answer.status).toBe(400)
      expect(envelopeOf((await answer.json()) as Json)["code"]).toBe("invalid_content_type")
    }
    const [account] = await server.query<{ credit_alert_threshold: number | null }>(
      "select credit_alert_threshold from accounts where id = $1",
      alice.id
    )
    expect(account?.credit_alert_threshold).toBeNull()
    expect((await server.query("select 1 from api_keys where account_id = $1", alice.id)).length).toBe(0)
    expect((await server.query("select 1 from webhook_endpoints where account_id = $1", alice.id)).length).toBe(0)
  })

  it("lets queries through with the session alone", async () => {
    const overview = await trpc(server, "query", "account.overview", undefined, { cookie: aliceSession.cookie })
    expect(overview.status).toBe(200)
    expect(overview.body["result"]?.["data"]?.["id"]).toBe(alice.id)
  })
})

describe("who may call the dashboard's procedures", () => {
  it("answers 401 without a session, with an unknown one, and to an API key", async () => {
    const none = await trpc(server, "query", "account.overview", undefined)
    expect(none.status).toBe(401)
    expect(envelopeOf(none.body)["code"]).toBe("missing_credential")
    const unknown = await trpc(server, "query", "account.overview", undefined, { cookie: "lyre_session=nope" })
    expect(unknown.status).toBe(401)
    const made = await trpc(server, "mutation", "account.keys.create", { name: "k", scopes: ["profile"] }, aliceSession)
    const key = String(made.body["result"]?.["data"]?.["key"])
    const withKey = await trpc(server, "query", "account.keys.list", undefined, {
      headers: { authorization: `Bearer ${key}` }
    })
    expect(withKey.status).toBe(401)
  })

  it("refuses keys and generation below Pro with tier_insufficient, but shows the overview", async () => {
    const basic = await createHolder(server, { plan: "basic" })
    const session = await signIn(basic)
    const overview = await trpc(server, "query", "account.overview", undefined, session)
    expect(overview.body["result"]?.["data"]).toMatchObject({
      plan: "basic",
      api_access_refusal: "API access requires the Pro plan or higher; this account is on basic."
    })
    const key = await trpc(server, "mutation", "account.keys.create", { name: "k", scopes: ["profile"] }, session)
    expect(key.status).toBe(403)
    expect(envelopeOf(key.body)["code"]).toBe("tier_insufficient")
    const song = await trpc(server, "mutation", "generations.create", validSong, session)
    expect(song.status).toBe(403)
    expect(envelopeOf(song.body)["code"]).toBe("tier_insufficient")
    const [row] = await server.query<{ total: number }>(
      "select subscription_credits + onetime_credits as total from accounts where id = $1",
      basic.id
    )
    expect(row?.total).toBe(1_000)
  })

  it("validates inputs with the API's envelope", async () => {
    const past = await trpc(
      server,
      "mutation",
      "account.keys.create",
      {
        name: "old",
        scopes: ["profile"],
        expires_at: "2001-01-01T00:00:00Z"
      },
      aliceSession
    )
    expect(envelopeOf(past.body)).toMatchObject({ code: "invalid_parameter", param: "expires_at" })
    const song = await trpc(server, "mutation", "generations.create", { style: "x", title: "y" }, aliceSession)
    expect(song.status).toBe(400)
    expect(envelopeOf(song.body)).toMatchObject({ code: "missing_parameter", param: "lyrics" })
    const threshold = await trpc(
      server,
      "mutation",
      "account.setCreditAlert",
      { credit_alert_threshold: -1 },
      aliceSession
    )
    expect(envelopeOf(threshold.body)).toMatchObject({ code: "invalid_parameter", param: "credit_alert_threshold" })
  })
})

describe("a session generates as the first-party dashboard client", () => {
  it("charges the account and counts its limits per account and client", async () => {
    const created = await trpc(server, "mutation", "generations.create", validSong, aliceSession)
    expect(created.status).toBe(200)
    const id = String(created.body["result"]?.["data"]?.["id"])
    const [task] = await server.query<{ credential_subject: string }>(
      "select credential_subject from generation_tasks where id = $1",
      id
    )
    // The same subject as any OAuth client's: account, then client.
    expect(task?.credential_subject).toBe(`oauth:${alice.id}:dashboard`)
    const made = await trpc(
      server,
      "mutation",
      "account.keys.create",
      { name: "reader", scopes: ["music:generate"] },
      aliceSession
    )
    const got = await api(server, "GET", `/api/v1/music/generations/${id}`, {
      key: String(made.body["result"]?.["data"]?.["key"])
    })
    expect(got.status).toBe(200)
  })
})

describe("the key list", () => {
  it("shows when a key was last used, written at most once a minute", async () => {
    const made = await trpc(
      server,
      "mutation",
      "account.keys.create",
      { name: "used", scopes: ["profile"] },
      bobSession
    )
    const { id, key } = made.body["result"]?.["data"] ?? {}
    const before = await trpc(server, "query", "account.keys.list", undefined, bobSession)
    const listed = before.body["result"]?.["data"] as unknown as Array<{ id: string; last_used_at: string | null }>
    expect(listed.find((row) => row.id === String(id))?.last_used_at).toBeNull()
    await api(server, "GET", "/api/v1/me", { key: String(key) })
    const [first] = await server.query<{ last_used_at: Date }>(
      "select last_used_at from api_keys where id = $1",
      String(id)
    )
    expect(first?.last_used_at).toBeInstanceOf(Date)
    await api(server, "GET", "/api/v1/me", { key: String(key) })
    const [second] = await server.query<{ last_used_at: Date }>(
      "select last_used_at from api_keys where id = $1",
      String(id)
    )
    expect(second?.last_used_at.getTime()).toBe(first?.last_used_at.getTime())
  })
})
