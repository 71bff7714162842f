/**
 * One account, one set of limits and one ledger, whichever surface is used: REST, A2A and MCP
 * reach the same procedures, so what one spends or holds the others see.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api, balanceOf, createAccount, startTestServer, validSong } from "../support/harness.ts"
import type { Json, TestServer } from "../support/harness.ts"
import { call, dataMessage, rpc, textMessage } from "../support/a2a.ts"

let server: TestServer
beforeAll(async () => {
  // The worker is off: every task stays pending, holding its concurrency slot.
  server = await startTestServer()
})
afterAll(() => server.close())

/** An MCP tool call with the SDK's own client; a domain failure is an `isError` result carrying REST's envelope. */
const mcpCall = async (key: string, name: string, args: Record<string, unknown>): Promise<CallToolResult> => {
  const client = new Client({ name: "lyre-surfaces-test", version: "1.0.0" })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } }
    })
  )
  try {
    return (await client.callTool({ name, arguments: args })) as CallToolResult
  } finally {
    await client.close()
  }
}

const envelopeOf = (result: CallToolResult): Json => {
  expect(result.isError).toBe(true)
  const [first] = result.content
  if (first?.type !== "text") throw new Error("no text block")
  return JSON.parse(first.text) as Json
}

const restCreate = (key: string, title: string) =>
  api(server, "POST", "/api/v1/music/generations", { key, body: { ...validSong, title } })

describe("one account across REST, A2A and MCP", () => {
  it("a concurrency limit reached over REST holds over A2A and MCP, and the other way round", async () => {
    const account = await createAccount(server, { concurrency_limit: 2 })
    expect((await restCreate(account.key, "One")).status).toBe(202)
    expect((await restCreate(account.key, "Two")).status).toBe(202)
    const refused = await rpc(server, call("message/send", dataMessage(validSong)), { key: account.key })
    expect(refused.body.error?.code).toBe(-32013)
    expect(refused.body.error?.data).toMatchObject({ error: { code: "concurrent_limit_exceeded" } })
    const overMcp = await mcpCall(account.key, "generate_music", validSong)
    expect(envelopeOf(overMcp)).toMatchObject({ error: { code: "concurrent_limit_exceeded" } })

    const other = await createAccount(server, { concurrency_limit: 1 })
    expect(
      (await rpc(server, call("message/send", textMessage("ambient")), { key: other.key })).body.result?.kind
    ).toBe("task")
    const rest = await restCreate(other.key, "Three")
    expect(rest.status).toBe(429)
    expect(rest.body.error?.code).toBe("concurrent_limit_exceeded")
  })

  it("one per-minute budget: requests over either surface count against it", async () => {
    const account = await createAccount(server, { requests_per_minute: 4 })
    await api(server, "GET", "/api/v1/me", { key: account.key })
    await rpc(server, call("tasks/get", { id: "gen_none" }), { key: account.key })
    await api(server, "GET", "/api/v1/me", { key: account.key })
    await rpc(server, call("tasks/get", { id: "gen_none" }), { key: account.key })
    expect((await api(server, "GET", "/api/v1/me", { key: account.key })).status).toBe(429)
    expect((await rpc(server, call("tasks/get", { id: "gen_none" }), { key: account.key })).body.error?.code).toBe(
      -32013
    )
  })

  it("one ledger: every surface debits the same balance, and a task made over one is read over the other", async () => {
    const account = await createAccount(server, { subscription: 500 })
    const rest = await restCreate(account.key, "Over REST")
    const a2a = await rpc(server, call("message/send", dataMessage({ ...validSong, model: "echo" })), {
      key: account.key
    })
    const a2aId = String(a2a.body.result?.id)
    const mcp = await mcpCall(account.key, "generate_music", { ...validSong, title: "Over MCP" })
    const mcpId = String((mcp.structuredContent as Json | undefined)?.id)
    expect(await balanceOf(server, account)).toBe(300)
    const ledger = await server.admin("GET", `/accounts/${account.id}/ledger`)
    const debits = (ledger.body.data as unknown as Array<Json>).filter((row) => String(row.kind) === "debit")
    expect(debits.map((row) => row.task_id).sort()).toEqual([String(rest.body.id), a2aId, mcpId].sort())

    const overRest = await api(server, "GET", `/api/v1/music/generations/${a2aId}`, { key: account.key })
    expect(overRest.body).toMatchObject({ id: a2aId, status: "pending", model: "echo", credits_used: 100 })
    const overA2a = await rpc(server, call("tasks/get", { id: String(rest.body.id) }), { key: account.key })
    expect(overA2a.body.result).toMatchObject({ id: rest.body.id, status: { state: "working" } })
  })

  it("another account's task is not found on any surface", async () => {
    const owner = await createAccount(server)
    const stranger = await createAccount(server)
    const rest = await restCreate(owner.key, "Mine")
    const a2a = await rpc(server, call("message/send", textMessage("mine too")), { key: owner.key })
    for (const id of [String(rest.body.id), String(a2a.body.result?.id)]) {
      const overRest = await api(server, "GET", `/api/v1/music/generations/${id}`, { key: stranger.key })
      expect(overRest.status).toBe(404)
      const overA2a = await rpc(server, call("tasks/get", { id }), { key: stranger.key })
      expect(overA2a.body.error?.code).toBe(-32001)
      expect(overA2a.body.error?.data).toEqual(overRest.body)
      const overMcp = await mcpCall(stranger.key, "get_generation", { id })
      expect(envelopeOf(overMcp)).toEqual(overRest.body)
    }
  })
})
