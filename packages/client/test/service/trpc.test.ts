/** The tRPC preset against a running service: typed calls, and the refresher hook on a 401. */
import { TRPCClientError } from "@trpc/client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createAccount, startTestServer, validSong } from "../../../server/test/support/harness.ts"
import type { TestServer } from "../../../server/test/support/harness.ts"
import { createLyreTrpcClient } from "../../src/index.ts"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

describe("createLyreTrpcClient", () => {
  it("calls the router at {site}/trpc with a credential, from the site root or the API root", async () => {
    const account = await createAccount(server)
    const client = createLyreTrpcClient({ baseUrl: `${server.url}/api`, credential: account.key })
    const [me, task] = await Promise.all([
      client.me.query(),
      client.generations.create.mutate({ ...validSong, model: "echo" })
    ])
    expect(me.id).toBe(account.id)
    expect(task).toMatchObject({ status: "pending", credits_used: 100 })
    const list = await createLyreTrpcClient({
      baseUrl: server.url,
      getCredential: () => account.key
    }).generations.list.query({ limit: 5 })
    expect(list.data.map((t) => t.id)).toEqual([task.id])
  })

  it("on a 401 asks the refresher once and retries with the credential it gives", async () => {
    const account = await createAccount(server)
    let refreshes = 0
    const client = createLyreTrpcClient({
      baseUrl: server.url,
      credential: "expired-token",
      onRefreshNeeded: () => {
        refreshes++
        return account.key
      }
    })
    // Two calls of one batch, both refused: one refresh serves both.
    const [me, list] = await Promise.all([client.me.query(), client.generations.list.query({})])
    expect(me.id).toBe(account.id)
    expect(list.data).toEqual([])
    expect((await client.me.query()).id).toBe(account.id)
    expect(refreshes).toBe(1)
  })

  it("asks getCredential again after a refresh that returns nothing", async () => {
    const account = await createAccount(server)
    let current = "stale"
    const client = createLyreTrpcClient({
      baseUrl: server.url,
      getCredential: () => current,
      onRefreshNeeded: () => {
        current = account.key
      }
    })
    expect((await client.me.query()).plan).toBe("pro")
  })

  it("a refresh that does not help ends with the 401's envelope; a refresher that throws ends with its error", async () => {
    let refreshes = 0
    const client = createLyreTrpcClient({
      baseUrl: server.url,
      credential: "bad",
      onRefreshNeeded: () => void refreshes++
    })
    const error = await client.me.query().catch((e: unknown) => e)
    expect(refreshes).toBe(1)
    expect(error instanceof TRPCClientError && error.data?.error).toMatchObject({
      type: "authentication_error",
      code: "invalid_credential"
    })
    const failing = createLyreTrpcClient({
      baseUrl: server.url,
      credential: "bad",
      onRefreshNeeded: () => {
        throw new Error("signed out")
      }
    })
    await expect(failing.me.query()).rejects.toThrow("signed out")
  })
})
