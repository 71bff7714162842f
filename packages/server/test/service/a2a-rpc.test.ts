/**
 * The A2A endpoint as raw JSON-RPC over fetch: the credential before anything is read, bodies
 * that are not requests, the JSON-RPC shapes, batches and notifications, tasks that are not the
 * caller's, cancellation, and the agent card as a document.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, balanceOf, createAccount, startTestServer, validSong } from "../support/harness.ts"
import type { Json, TestAccount, TestServer } from "../support/harness.ts"
import { call, dataMessage, rpc, textMessage } from "../support/a2a.ts"

let server: TestServer
let account: TestAccount
let taskId: string
beforeAll(async () => {
  server = await startTestServer()
  account = await createAccount(server)
  const created = await api(server, "POST", "/api/v1/music/generations", { key: account.key, body: validSong })
  taskId = String(created.body.id)
})
afterAll(() => server.close())

const challenge = (s: TestServer) => `resource_metadata="${s.url}/.well-known/oauth-protected-resource/a2a"`

describe("the credential, at the HTTP layer, before any JSON-RPC", () => {
  it("401 with the Bearer challenge without a credential, whatever the body", async () => {
    for (const raw of [JSON.stringify(call("tasks/get", { id: taskId })), "{not json", "[]"]) {
      const res = await rpc(server, undefined, { raw })
      expect(res.status).toBe(401)
      expect(res.headers.get("www-authenticate")).toBe(`Bearer ${challenge(server)}`)
      expect(res.body).toMatchObject({ error: { type: "authentication_error", code: "missing_credential" } })
    }
  })

  it("401 invalid_token for a bad or revoked key, even with a malformed body", async () => {
    const other = await createAccount(server)
    await server.admin("DELETE", `/keys/${other.keyId}`)
    const cases = [
      {
        authorization: "Bearer lyr_live_00000000000000000000000000000000",
        raw: JSON.stringify(call("message/send", textMessage("jazz")))
      },
      { authorization: "Bearer nonsense", raw: "{not json" },
      { authorization: `Bearer ${other.key}`, raw: JSON.stringify([call("tasks/get", { id: taskId })]) },
      { authorization: `Bearer ${other.key}`, raw: JSON.stringify(call("message/stream", textMessage("jazz"))) }
    ]
    for (const { authorization, raw } of cases) {
      const res = await rpc(server, undefined, { authorization, raw })
      expect(res.status).toBe(401)
      expect(res.headers.get("www-authenticate")).toContain('Bearer error="invalid_token"')
      expect(res.headers.get("www-authenticate")).toContain(challenge(server))
      expect(res.body.error?.type).toBe("authentication_error")
    }
  })

  it("a refused credential changes nothing: no task, no charge", async () => {
    const before = await server.query<{ n: number }>("select count(*)::int as n from generation_tasks")
    await rpc(server, call("message/send", dataMessage(validSong)), {
      authorization: "Bearer lyr_live_00000000000000000000000000000000"
    })
    expect(await server.query<{ n: number }>("select count(*)::int as n from generation_tasks")).toEqual(before)
  })

  it("GET and other methods answer 405 with Allow: POST", async () => {
    const res = await fetch(`${server.url}/a2a`)
    expect(res.status).toBe(405)
    expect(res.headers.get("allow")).toBe("POST")
  })
})

describe("bodies and shapes that are not A2A requests", () => {
  const expectError = (body: Json, code: number, id: unknown = null) => {
    expect(body.jsonrpc).toBe("2.0")
    expect(body.id).toBe(id)
    expect(body.error?.code).toBe(code)
  }

  it("-32700 for a body that is not JSON, with the envelope in data", async () => {
    const res = await rpc(server, undefined, { key: account.key, raw: '{"jsonrpc": "2.0", "method": ' })
    expect(res.status).toBe(200)
    expectError(res.body, -32700)
    expect(res.body.error?.data).toMatchObject({ error: { type: "invalid_request_error", code: "invalid_json" } })
  })

  it("-32600 for an empty body, a body that is not JSON by type, or a JSON scalar", async () => {
    expectError((await rpc(server, undefined, { key: account.key, raw: "" })).body, -32600)
    const wrongType = await rpc(server, undefined, { key: account.key, raw: "{}", contentType: "text/plain" })
    expectError(wrongType.body, -32600)
    expect(wrongType.body.error?.data).toMatchObject({ error: { code: "invalid_content_type" } })
    expectError((await rpc(server, 42, { key: account.key })).body, -32600)
  })

  it("-32600 for objects that are not JSON-RPC 2.0 requests", async () => {
    for (const body of [
      { id: 1, method: "tasks/get", params: { id: taskId } },
      { jsonrpc: "1.0", id: 1, method: "tasks/get", params: { id: taskId } },
      { jsonrpc: "2.0", id: 1, params: {} },
      { jsonrpc: "2.0", id: 1, method: 7 },
      { jsonrpc: "2.0", id: { nested: true }, method: "tasks/get", params: { id: taskId } },
      { jsonrpc: "2.0", id: 1.5, method: "tasks/get", params: { id: taskId } }
    ]) {
      const res = await rpc(server, body, { key: account.key })
      expect(res.status).toBe(200)
      expect(res.body.error?.code).toBe(-32600)
    }
  })

  it("-32601 for an unknown method, echoing the id", async () => {
    expectError((await rpc(server, call("tasks/list", {}, "abc"), { key: account.key })).body, -32601, "abc")
  })

  it("-32602 for params that are not an object or not the method's", async () => {
    expectError((await rpc(server, call("tasks/get", [taskId], 3), { key: account.key })).body, -32602, 3)
    const noId = await rpc(server, call("tasks/get", {}, 4), { key: account.key })
    expectError(noId.body, -32602, 4)
    expect(noId.body.error?.data).toMatchObject({
      error: { type: "invalid_request_error", code: "invalid_parameter", param: "params.id" }
    })
    const noParts = await rpc(
      server,
      call("message/send", { message: { kind: "message", role: "user", messageId: "m", parts: [] } }, 5),
      { key: account.key }
    )
    expectError(noParts.body, -32602, 5)
    expect(noParts.body.error?.data?.error?.param).toBe("params.message.parts")
  })

  it("-32602 with core's envelope for a generation request core refuses, and nothing is charged", async () => {
    const before = await balanceOf(server, account)
    const res = await rpc(server, call("message/send", dataMessage({ style: "jazz", title: "No lyrics" })), {
      key: account.key
    })
    expectError(res.body, -32602, 1)
    expect(res.body.error?.data).toEqual({
      error: {
        type: "invalid_request_error",
        code: "missing_parameter",
        message: "Missing required parameter: lyrics.",
        param: "lyrics"
      }
    })
    const unknown = await rpc(server, call("message/send", dataMessage({ ...validSong, tempo: 120 })), {
      key: account.key
    })
    expect(unknown.body.error?.data).toMatchObject({ error: { code: "unknown_parameter", param: "tempo" } })
    expect(await balanceOf(server, account)).toBe(before)
  })

  it("charges once for a message/send retried with the same messageId; another message under that id is refused", async () => {
    const sender = await createAccount(server)
    const message = dataMessage({ ...validSong, model: "echo" })
    const first = await rpc(server, call("message/send", message), { key: sender.key })
    const retried = await rpc(server, call("message/send", message, 2), { key: sender.key })
    expect(first.body.result?.["id"]).toBeDefined()
    expect(retried.body.result?.["id"]).toBe(first.body.result?.["id"])
    const charged = await balanceOf(server, sender)
    expect(charged).toBe(1_000 - 100)
    const reused = await rpc(
      server,
      call(
        "message/send",
        { message: { ...message.message, parts: [{ kind: "data", data: { ...validSong, title: "Other" } }] } },
        3
      ),
      {
        key: sender.key
      }
    )
    expectError(reused.body, -32602, 3)
    expect(reused.body.error?.data).toMatchObject({ error: { code: "idempotency_key_reused" } })
    expect(String(reused.body.error?.data?.error?.message)).toContain("messageId")
    expect(await balanceOf(server, sender)).toBe(charged)
  })

  it("-32005 for a file part given to another operation than an upload, -32004 for a message continuing a task", async () => {
    const file = await rpc(
      server,
      call("message/send", {
        message: {
          kind: "message",
          role: "user",
          messageId: "f",
          parts: [
            { kind: "file", file: { uri: "https://example.com/a.mp3" } },
            { kind: "data", data: { operation: "cover_track", style: "jazz" } }
          ]
        }
      }),
      { key: account.key }
    )
    expectError(file.body, -32005, 1)
    const follow = await rpc(
      server,
      call("message/send", { ...textMessage("jazz"), message: { ...textMessage("jazz").message, taskId } }),
      { key: account.key }
    )
    expectError(follow.body, -32004, 1)
  })

  it("-32003 for push notification configuration", async () => {
    const res = await rpc(
      server,
      call("tasks/pushNotificationConfig/set", { taskId, pushNotificationConfig: { url: "https://example.com" } }),
      { key: account.key }
    )
    expectError(res.body, -32003, 1)
  })
})

describe("batches and notifications (JSON-RPC 2.0 section 6)", () => {
  it("answers a batch with an array of the answers to its requests, in any order", async () => {
    const res = await rpc(server, [call("tasks/get", { id: taskId }, "a"), call("nope", {}, "b"), 5], {
      key: account.key
    })
    expect(res.status).toBe(200)
    const answers = res.body as unknown as Array<Json>
    expect(answers).toHaveLength(3)
    const byId = new Map(answers.filter((a) => a.id !== null).map((a) => [String(a.id), a]))
    expect(byId.get("a")?.result?.id).toBe(taskId)
    expect(byId.get("b")?.error?.code).toBe(-32601)
    expect(answers.find((a) => a.id === null)?.error?.code).toBe(-32600)
  })

  it("an empty batch is one invalid request; too large a batch too", async () => {
    const empty = await rpc(server, [], { key: account.key })
    expect(empty.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } })
    const large = await rpc(
      server,
      Array.from({ length: 21 }, (_, i) => call("tasks/get", { id: taskId }, i)),
      { key: account.key }
    )
    expect(large.body).toMatchObject({ id: null, error: { code: -32600 } })
  })

  it("streaming methods cannot be batched", async () => {
    const res = await rpc(server, [call("message/stream", textMessage("jazz"), 9)], { key: account.key })
    expect(res.body).toEqual([expect.objectContaining({ id: 9, error: expect.objectContaining({ code: -32600 }) })])
  })

  it("a notification runs and is not answered: 204 alone, left out of a batch", async () => {
    const { id: _id, ...notification } = call("tasks/get", { id: taskId })
    const alone = await rpc(server, notification, { key: account.key })
    expect(alone.status).toBe(204)
    expect(alone.body).toBeNull()
    const batch = await rpc(server, [notification, call("tasks/get", { id: taskId }, 2)], { key: account.key })
    expect((batch.body as unknown as Array<Json>).map((a) => a.id)).toEqual([2])
  })
})

describe("tasks that are not the caller's, and cancellation", () => {
  it("-32001 for an unknown id, a malformed one and another account's task, with the envelope", async () => {
    const stranger = await createAccount(server)
    for (const id of ["gen_doesnotexist000000000000", "../../etc", taskId]) {
      const res = await rpc(server, call("tasks/get", { id }), { key: stranger.key })
      expect(res.body.error?.code).toBe(-32001)
      expect(res.body.error?.data).toMatchObject({ error: { type: "not_found", code: "task_not_found" } })
    }
    const resubscribe = await fetch(`${server.url}/a2a`, {
      method: "POST",
      headers: { authorization: `Bearer ${stranger.key}`, "content-type": "application/json" },
      body: JSON.stringify(call("tasks/resubscribe", { id: taskId }))
    })
    expect(await resubscribe.text()).toContain('"code":-32001')
  })

  it("tasks/cancel answers -32002 for the caller's task and -32001 for another's", async () => {
    const res = await rpc(server, call("tasks/cancel", { id: taskId }), { key: account.key })
    expect(res.body.error?.code).toBe(-32002)
    const stranger = await createAccount(server)
    expect((await rpc(server, call("tasks/cancel", { id: taskId }), { key: stranger.key })).body.error?.code).toBe(
      -32001
    )
    expect((await api(server, "GET", `/api/v1/music/generations/${taskId}`, { key: account.key })).body.status).toBe(
      "pending"
    )
  })
})

describe("one admission per request", () => {
  it("a request costs one request of the per-minute budget, like REST, and carries the headers", async () => {
    const limited = await createAccount(server, { requests_per_minute: 3 })
    const first = await rpc(server, call("tasks/get", { id: taskId }), { key: limited.key })
    expect(first.headers.get("x-ratelimit-remaining")).toBe("2")
    const second = await rpc(server, call("nope", {}), { key: limited.key })
    expect(second.body.error?.code).toBe(-32601)
    expect(second.headers.get("x-ratelimit-remaining")).toBe("1")
    await rpc(server, call("tasks/get", { id: taskId }), { key: limited.key })
    const refused = await rpc(server, call("message/send", textMessage("jazz")), { key: limited.key })
    expect(refused.body.error?.code).toBe(-32013)
    expect(refused.body.error?.data).toMatchObject({ error: { type: "rate_limit_error", code: "rpm_exceeded" } })
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
  })
})

describe("the agent card", () => {
  it("is served with CORS and caching headers, and answers a preflight", async () => {
    const res = await fetch(`${server.url}/.well-known/agent-card.json`, {
      headers: { origin: "https://agents.example" }
    })
    expect(res.status).toBe(200)
    expect(res.headers.get("access-control-allow-origin")).toBe("*")
    expect(res.headers.get("cache-control")).toMatch(/public, max-age=\d+/)
    const card = (await res.json()) as Json
    expect(card).toMatchObject({
      protocolVersion: "0.3.0",
      name: "Lyre",
      url: `${server.url}/a2a`,
      preferredTransport: "JSONRPC",
      capabilities: { streaming: true, pushNotifications: false }
    })
    expect(card.skills?.[0]?.id).toBe("generate_music")
    expect(card.securitySchemes?.oauth2?.flows?.authorizationCode).toMatchObject({
      authorizationUrl: `${server.url}/oauth/authorize`,
      tokenUrl: `${server.url}/oauth/token`
    })
    expect(card.securitySchemes?.apiKey).toMatchObject({ type: "http", scheme: "bearer" })
    expect(card.security).toEqual([{ apiKey: [] }, { oauth2: ["music:generate"] }])
    const preflight = await fetch(`${server.url}/.well-known/agent-card.json`, { method: "OPTIONS" })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get("access-control-allow-methods")).toContain("GET")
  })
})
