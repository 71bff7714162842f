/**
 * MCP at /mcp through the SDK's own client, and raw HTTP where the transport rules are the point:
 * the same procedures as REST behind every tool, so the same prices, limits, ledger and errors.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { McpError, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { GenerateRequestFields, priceOf } from "@lyre/core"
import { api, createAccount, startTestServer, validSong } from "../../../server/test/support/harness.ts"
import type { Json, TestServer } from "../../../server/test/support/harness.ts"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

const connect = async (key?: string): Promise<Client> => {
  const client = new Client({ name: "lyre-test-agent", version: "1.0.0" })
  const transport = new StreamableHTTPClientTransport(
    new URL(`${server.url}/mcp`),
    key === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${key}` } } }
  )
  await client.connect(transport)
  return client
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> =>
  (await client.callTool({ name, arguments: args })) as CallToolResult

/** The REST envelope an error result carries as its JSON text. */
const envelopeOf = (result: CallToolResult): Json => {
  expect(result.isError).toBe(true)
  const [first] = result.content
  if (first?.type !== "text") throw new Error("no text block")
  return (JSON.parse(first.text) as Json)["error"] ?? {}
}

/** The HTTP status the SDK client saw when it refused to read a result. */
const httpStatusOf = async (promise: Promise<unknown>): Promise<number | undefined> => {
  const error = await promise.then(
    () => undefined,
    (cause: unknown) => cause
  )
  expect(error).toBeInstanceOf(StreamableHTTPError)
  return (error as StreamableHTTPError).code
}

const structured = (result: CallToolResult): Json => {
  expect(result.isError ?? false).toBe(false)
  const [first] = result.content
  if (first?.type !== "text") throw new Error("no text block")
  // The JSON text block says what the structured content says.
  expect(JSON.parse(first.text)).toEqual(result.structuredContent)
  return result.structuredContent as Json
}

const rpc = (body: unknown, headers: Record<string, string> = {}, on: TestServer = server) =>
  fetch(`${on.url}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(body)
  })

const toolsCall = (name: string, args: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name, arguments: args }
})

describe("tools/list", () => {
  it("needs no credential and describes every tool from core's schemas", async () => {
    const client = await connect()
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name)).toEqual([
      "generate_music",
      "get_generation",
      "wait_for_generation",
      "list_generations",
      "extend_track",
      "export_track",
      "wait_for_export",
      "write_lyrics",
      "wait_for_lyrics",
      "upload_audio",
      "get_upload",
      "wait_for_upload",
      "list_uploads",
      "cover_track",
      "add_vocals",
      "add_instrumental",
      "edit_track",
      "create_persona",
      "get_persona",
      "list_personas",
      "get_account"
    ])
    const generate = tools.find((tool) => tool.name === "generate_music")
    expect(Object.keys(generate?.inputSchema.properties ?? {})).toEqual([
      ...Object.keys(GenerateRequestFields.shape),
      "idempotency_key"
    ])
    expect(generate?.inputSchema.required).toEqual(["style", "title"])
    expect(generate?.inputSchema["additionalProperties"]).toBe(false)
    for (const [model, price] of Object.entries(priceOf)) expect(generate?.description).toContain(`${model} ${price}`)
    expect(generate?.description).toMatch(/nocturne, which is deprecated/)
    expect(generate?.description).toContain(
      "vocal_gender, negative_tags, style_weight, weirdness_constraint, audio_weight"
    )
    expect(generate?.annotations).toMatchObject({
      readOnlyHint: false,
      idempotentHint: false,
      openWorldHint: true,
      destructiveHint: false
    })
    for (const name of ["get_generation", "wait_for_generation", "list_generations", "get_account"]) {
      const tool = tools.find((t) => t.name === name)
      expect(tool?.annotations).toMatchObject({
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false
      })
      expect(tool?.outputSchema?.type).toBe("object")
    }
    const wait = tools.find((tool) => tool.name === "wait_for_generation")
    expect(wait?.inputSchema.properties?.["timeout_seconds"]).toMatchObject({
      type: "integer",
      minimum: 1,
      maximum: 120
    })
    await client.ping()
    await client.close()
  })

  it("accepts every protocol revision the SDK supports", async () => {
    for (const protocolVersion of SUPPORTED_PROTOCOL_VERSIONS) {
      const response = await rpc({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "1" } }
      })
      expect(response.status).toBe(200)
      const body = (await response.json()) as Json
      expect(body.result?.protocolVersion).toBe(protocolVersion)
      const listed = await rpc(
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
        { "mcp-protocol-version": protocolVersion }
      )
      expect(listed.status).toBe(200)
      expect(listed.headers.get("content-type")).toMatch(/^application\/json/)
    }
  })
})

describe("tools/call with an API key", () => {
  it("runs every tool against the same procedures as REST", async () => {
    const account = await createAccount(server, { subscription: 1_000 })
    const client = await connect(account.key)
    await client.listTools()

    const created = structured(await call(client, "generate_music", validSong))
    expect(created).toMatchObject({ status: "pending", model: "aether", credits_used: priceOf.aether, tracks: [] })
    const id = String(created.id)

    expect(structured(await call(client, "get_generation", { id }))).toEqual(created)
    // Over REST it is the same task.
    expect((await api(server, "GET", `/api/v1/music/generations/${id}`, { key: account.key })).body).toEqual(created)

    // The fake upstream keeps it pending: the wait ends at its time-out with the task as it stands.
    const waited = structured(await call(client, "wait_for_generation", { id, timeout_seconds: 1 }))
    expect(waited).toMatchObject({ id, status: "pending" })

    const listed = structured(await call(client, "list_generations", { limit: 5 }))
    expect(listed).toMatchObject({ has_more: false })
    expect((listed.data as unknown as Array<Json>).map((task) => task.id)).toEqual([id])

    const me = structured(await call(client, "get_account"))
    expect(me).toMatchObject({
      id: account.id,
      plan: "pro",
      credits: { total: 1_000 - priceOf.aether },
      auth: { kind: "api_key" }
    })
    await client.close()
  })

  it("answers the rules beyond the schema as tool errors with REST's envelope", async () => {
    const account = await createAccount(server)
    const client = await connect(account.key)
    const { style, title } = validSong
    expect(envelopeOf(await call(client, "generate_music", { style, title }))).toMatchObject({
      type: "invalid_request_error",
      code: "missing_parameter",
      param: "lyrics"
    })
    expect(
      envelopeOf(await call(client, "generate_music", { ...validSong, model: "echo", style_weight: 0.5 }))
    ).toMatchObject({
      code: "parameter_not_supported_for_model",
      param: "style_weight"
    })
    // Nothing was charged.
    expect(structured(await call(client, "get_account"))).toMatchObject({ credits: { total: 1_000 } })
    await client.close()
  })

  it("answers an unknown tool and arguments failing the schema as JSON-RPC errors", async () => {
    const account = await createAccount(server)
    const client = await connect(account.key)
    const unknown = await call(client, "make_coffee").catch((error: unknown) => error)
    expect(unknown).toBeInstanceOf(McpError)
    expect((unknown as McpError).code).toBe(-32602)
    const invalid = await call(client, "generate_music", { ...validSong, style_weight: 2 }).catch(
      (error: unknown) => error
    )
    expect(invalid).toBeInstanceOf(McpError)
    expect((invalid as McpError).code).toBe(-32602)
    expect((invalid as McpError).data).toMatchObject({ error: { code: "invalid_parameter", param: "style_weight" } })
    const extra = await call(client, "generate_music", { ...validSong, tempo: 120 }).catch((error: unknown) => error)
    expect((extra as McpError).data).toMatchObject({ error: { code: "unknown_parameter", param: "tempo" } })
    const wait = await call(client, "wait_for_generation", { id: "gen_x", timeout_seconds: 121 }).catch(
      (error: unknown) => error
    )
    expect((wait as McpError).data).toMatchObject({ error: { param: "timeout_seconds" } })
    await client.close()
  })

  it("charges once for a call retried with the same idempotency_key, the key shared with REST's header", async () => {
    const account = await createAccount(server)
    const client = await connect(account.key)
    const key = `mcp-${Date.now()}-${Math.random()}`
    const first = structured(await call(client, "generate_music", { ...validSong, idempotency_key: key }))
    const retried = structured(await call(client, "generate_music", { ...validSong, idempotency_key: key }))
    expect(retried["id"]).toBe(first["id"])
    expect(structured(await call(client, "get_account"))).toMatchObject({ credits: { total: 1_000 - priceOf.aether } })
    // The same account's REST create with that key and body is the same create.
    const rest = await api(server, "POST", "/api/v1/music/generations", {
      key: account.key,
      body: validSong,
      headers: { "idempotency-key": key }
    })
    expect(rest.body["id"]).toBe(first["id"])
    expect(rest.headers.get("idempotent-replayed")).toBe("true")
    expect(
      envelopeOf(await call(client, "generate_music", { ...validSong, title: "Another", idempotency_key: key }))
    ).toMatchObject({
      code: "idempotency_key_reused"
    })
    const tooLong = await client
      .callTool({ name: "generate_music", arguments: { ...validSong, idempotency_key: "k".repeat(256) } })
      .then(
        () => undefined,
        (cause: unknown) => cause
      )
    expect(tooLong).toBeInstanceOf(McpError)
    expect(structured(await call(client, "get_account"))).toMatchObject({ credits: { total: 1_000 - priceOf.aether } })
    await client.close()
  })

  it("returns 402 as a tool error and charges nothing", async () => {
    const account = await createAccount(server, { subscription: priceOf.aether - 1 })
    const client = await connect(account.key)
    expect(envelopeOf(await call(client, "generate_music", validSong))).toMatchObject({
      type: "insufficient_credits",
      code: "insufficient_credits"
    })
    expect(structured(await call(client, "get_account"))).toMatchObject({ credits: { total: priceOf.aether - 1 } })
    await client.close()
  })

  it("holds one concurrency limit across REST and MCP, with retry_after_seconds", async () => {
    const account = await createAccount(server, { concurrency_limit: 1 })
    const rest = await api(server, "POST", "/api/v1/music/generations", { key: account.key, body: validSong })
    expect(rest.status).toBe(202)
    const client = await connect(account.key)
    const refused = envelopeOf(await call(client, "generate_music", validSong))
    expect(refused).toMatchObject({ type: "rate_limit_error", code: "concurrent_limit_exceeded" })
    expect(Number(refused.retry_after_seconds)).toBeGreaterThanOrEqual(0)
    await client.close()
  })

  it("counts tool calls against the requests-per-minute limit", async () => {
    const account = await createAccount(server, { requests_per_minute: 2 })
    const client = await connect(account.key)
    structured(await call(client, "get_account"))
    structured(await call(client, "list_generations"))
    const refused = envelopeOf(await call(client, "get_account"))
    expect(refused).toMatchObject({ type: "rate_limit_error", code: "rpm_exceeded" })
    expect(Number(refused.retry_after_seconds)).toBeGreaterThan(0)
    await client.close()
  })

  it("returns 503 for a model an operator has taken down, with the model and retry_after_seconds", async () => {
    const account = await createAccount(server)
    expect((await server.admin("PUT", "/models/echo", { available: false, retry_after_seconds: 120 })).status).toBe(200)
    try {
      const client = await connect(account.key)
      expect(envelopeOf(await call(client, "generate_music", { ...validSong, model: "echo" }))).toMatchObject({
        type: "service_unavailable",
        code: "model_unavailable",
        model: "echo",
        retry_after_seconds: 120
      })
      await client.close()
    } finally {
      await server.admin("PUT", "/models/echo", { available: true })
    }
  })

  it("does not find another account's task", async () => {
    const owner = await createAccount(server)
    const other = await createAccount(server)
    const created = await api(server, "POST", "/api/v1/music/generations", { key: owner.key, body: validSong })
    const client = await connect(other.key)
    expect(envelopeOf(await call(client, "get_generation", { id: String(created.body.id) }))).toMatchObject({
      type: "not_found",
      code: "task_not_found"
    })
    expect(envelopeOf(await call(client, "wait_for_generation", { id: String(created.body.id) }))).toMatchObject({
      code: "task_not_found"
    })
    await client.close()
  })

  it("refuses an account below Pro with the REST envelope", async () => {
    const account = await createAccount(server, { plan: "basic" })
    const client = await connect(account.key)
    expect(envelopeOf(await call(client, "get_account"))).toMatchObject({
      type: "permission_error",
      code: "tier_insufficient"
    })
    await client.close()
  })
})

describe("wait_for_generation and the requests-per-minute budget", () => {
  // The polls are counted by this process's limiter. With Redis on a loaded machine the Redis
  // gate may answer some of them from the process's own window (a slow Redis is not waited on),
  // and the count would be split between the two: the cadence is what is measured here.
  let own: TestServer
  beforeAll(async () => {
    own = await startTestServer({ redisUrl: null })
  })
  afterAll(() => own.close())
  const remaining = async (key: string) =>
    Number((await api(own, "GET", "/api/v1/me", { key })).headers.get("x-ratelimit-remaining"))

  it("polls at 0, 1, 2 and 4 s and at its deadline: five requests for a five-second wait", async () => {
    const account = await createAccount(own, { requests_per_minute: 100 })
    const created = await api(own, "POST", "/api/v1/music/generations", { key: account.key, body: validSong })
    const response = await rpc(
      toolsCall("wait_for_generation", { id: String(created.body.id), timeout_seconds: 5 }),
      {
        authorization: `Bearer ${account.key}`
      },
      own
    )
    expect(response.status).toBe(200)
    expect(Number(response.headers.get("x-ratelimit-limit"))).toBe(100)
    expect(((await response.json()) as Json).result?.structuredContent?.status).toBe("pending")
    // 100, less the create, the five polls and this request.
    expect(await remaining(account.key)).toBe(100 - 1 - 5 - 1)
  })

  it("stops polling when the client goes away mid-stream", async () => {
    const account = await createAccount(own, { requests_per_minute: 100 })
    const created = await api(own, "POST", "/api/v1/music/generations", { key: account.key, body: validSong })
    const aborted = new AbortController()
    const response = await fetch(`${own.url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${account.key}`
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: {
          name: "wait_for_generation",
          arguments: { id: String(created.body.id), timeout_seconds: 60 },
          _meta: { progressToken: "p" }
        }
      }),
      signal: aborted.signal
    })
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    const reader = response.body?.getReader()
    const first = new TextDecoder().decode((await reader?.read())?.value)
    expect(first).toContain("notifications/progress")
    aborted.abort()
    await new Promise((resolve) => setTimeout(resolve, 4_000))
    // The create, the one poll before the client left, and this request: polls at 1, 2 and 4 s never happened.
    expect(await remaining(account.key)).toBe(100 - 1 - 1 - 1)
  })
})

describe("the credential challenge", () => {
  const metadata = () => `resource_metadata="${server.url}/.well-known/oauth-protected-resource/mcp"`

  it("answers tools/call without a credential with 401 and the Bearer challenge", async () => {
    const response = await rpc(toolsCall("get_account", {}))
    expect(response.status).toBe(401)
    expect(response.headers.get("www-authenticate")).toBe(`Bearer ${metadata()}, scope="music:generate"`)
    expect(((await response.json()) as Json).error?.code).toBe("missing_credential")

    const client = await connect()
    expect(await httpStatusOf(call(client, "generate_music", validSong))).toBe(401)
    await client.close()
  })

  it("answers a bad credential with 401 invalid_token", async () => {
    const response = await rpc(toolsCall("get_account", {}), { authorization: "Bearer lyr_live_notarealkey" })
    expect(response.status).toBe(401)
    const challenge = response.headers.get("www-authenticate") ?? ""
    expect(challenge).toMatch(/^Bearer error="invalid_token"/)
    expect(challenge).toContain(metadata())
    expect(challenge).toContain('scope="music:generate"')

    const client = await connect("lyr_live_notarealkey")
    await client.listTools()
    expect(await httpStatusOf(call(client, "get_account"))).toBe(401)
    await client.close()
  })

  it("answers a credential lacking the scope with 403 insufficient_scope, over a stream too", async () => {
    const account = await createAccount(server, { scopes: ["profile"] })
    const response = await rpc(toolsCall("generate_music", validSong), { authorization: `Bearer ${account.key}` })
    expect(response.status).toBe(403)
    expect(response.headers.get("www-authenticate")).toBe(
      `Bearer error="insufficient_scope", scope="music:generate", ${metadata()}`
    )
    expect(((await response.json()) as Json).error?.code).toBe("insufficient_scope")
    const streamed = await rpc(
      {
        ...toolsCall("wait_for_generation", { id: "gen_x" }),
        params: { name: "wait_for_generation", arguments: { id: "gen_x" }, _meta: { progressToken: 1 } }
      },
      { authorization: `Bearer ${account.key}` }
    )
    expect(streamed.status).toBe(403)

    // The account itself needs no scope: get_account works with the same key.
    const client = await connect(account.key)
    expect(structured(await call(client, "get_account"))).toMatchObject({
      id: account.id,
      auth: { scopes: ["profile"] }
    })
    expect(await httpStatusOf(call(client, "list_generations"))).toBe(403)
    await client.close()
  })
})

describe("the transport rules", () => {
  it("answers GET and DELETE with 405 and Allow: POST", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await fetch(`${server.url}/mcp`, { method, headers: { accept: "text/event-stream" } })
      expect(response.status).toBe(405)
      expect(response.headers.get("allow")).toBe("POST")
      expect(((await response.json()) as Json).error?.code).toBe("method_not_allowed")
    }
  })

  it("refuses a foreign Origin with 403 and takes its own and loopback ones", async () => {
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list" }
    const foreign = await rpc(list, { origin: "https://evil.example" })
    expect(foreign.status).toBe(403)
    expect(((await foreign.json()) as Json).error?.code).toBe("origin_not_allowed")
    expect((await rpc(list, { origin: "null" })).status).toBe(403)
    expect((await rpc(list, { origin: server.url })).status).toBe(200)
    // The service listens on loopback: a local inspector on another port may call it.
    expect((await rpc(list, { origin: "http://localhost:6274" })).status).toBe(200)
  })

  it("answers a client that accepts JSON alone with JSON", async () => {
    const response = await rpc({ jsonrpc: "2.0", id: 1, method: "tools/list" }, { accept: "application/json" })
    expect(response.status).toBe(200)
    expect(((await response.json()) as Json).result?.tools).toBeDefined()
  })

  it("answers malformed JSON with a JSON-RPC parse error and a notification with 202", async () => {
    const response = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: "{not json"
    })
    expect(response.status).toBe(400)
    expect(((await response.json()) as Json).error?.code).toBe(-32700)
    expect((await rpc({ jsonrpc: "2.0", method: "notifications/initialized" })).status).toBe(202)
  })
})

describe("the server card", () => {
  it("serves identity, remote, authorization and the tools as tools/list gives them", async () => {
    const response = await fetch(`${server.url}/.well-known/mcp/server-card.json`)
    expect(response.status).toBe(200)
    expect(response.headers.get("access-control-allow-origin")).toBe("*")
    expect(response.headers.get("cache-control")).toMatch(/max-age=\d+/)
    const card = (await response.json()) as Json
    expect(card).toMatchObject({
      name: "127.0.0.1/lyre",
      title: "Lyre",
      version: "0.1.0",
      websiteUrl: server.url,
      remotes: [
        {
          type: "streamable-http",
          url: `${server.url}/mcp`,
          supportedProtocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS]
        }
      ],
      authorization: {
        required: true,
        protected_resource_metadata: `${server.url}/.well-known/oauth-protected-resource/mcp`,
        scopes_required: ["music:generate"]
      }
    })
    const client = await connect()
    const { tools } = await client.listTools()
    expect(card.tools).toEqual(JSON.parse(JSON.stringify(tools)))
    await client.close()

    const preflight = await fetch(`${server.url}/.well-known/mcp/server-card.json`, { method: "OPTIONS" })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get("access-control-allow-methods")).toContain("GET")
    const typed = await fetch(`${server.url}/.well-known/mcp/server-card.json`, {
      headers: { accept: "application/mcp-server-card+json" }
    })
    expect(typed.headers.get("content-type")).toBe("application/mcp-server-card+json")
  })
})
