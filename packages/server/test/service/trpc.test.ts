/** First-party clients over tRPC reach the same procedures, checks and envelope as REST. */
import { createTRPCClient, httpBatchLink, TRPCClientError } from "@trpc/client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { AppRouter } from "@lyre/core"
import { createAccount, startTestServer, validSong } from "../support/harness.ts"
import type { TestServer } from "../support/harness.ts"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.close())

const clientFor = (key: string | undefined) =>
  createTRPCClient<AppRouter>({
    links: [
      httpBatchLink({
        url: `${server.url}/trpc`,
        headers: () => (key === undefined ? {} : { authorization: `Bearer ${key}` })
      })
    ]
  })

describe("tRPC at /trpc", () => {
  it("me, create, get and list with a typed client", async () => {
    const account = await createAccount(server)
    const client = clientFor(account.key)
    const me = await client.me.query()
    expect(me.credits.total).toBe(1_000)
    const task = await client.generations.create.mutate({ ...validSong, model: "echo" })
    expect(task).toMatchObject({ status: "pending", model: "echo", credits_used: 100 })
    expect(await client.generations.get.query({ id: task.id })).toEqual(task)
    const list = await client.generations.list.query({ limit: 5 })
    expect(list.data.map((t) => t.id)).toEqual([task.id])
  })

  it("errors carry the interface's envelope under data.error", async () => {
    const account = await createAccount(server, { subscription: 0 })
    const error = await clientFor(account.key)
      .generations.create.mutate(validSong)
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TRPCClientError)
    if (error instanceof TRPCClientError) {
      expect(error.data).toMatchObject({
        code: "PAYMENT_REQUIRED",
        httpStatus: 402,
        error: { type: "insufficient_credits", code: "insufficient_credits" }
      })
      expect(JSON.stringify(error.shape)).not.toContain("stack")
    }
    const unauthenticated = await clientFor(undefined)
      .me.query()
      .catch((e: unknown) => e)
    expect(unauthenticated instanceof TRPCClientError && unauthenticated.data?.error?.code).toBe("missing_credential")
    const invalid = await clientFor(account.key)
      .generations.create.mutate({ ...validSong, model: "echo", vocal_gender: "m" })
      .catch((e: unknown) => e)
    expect(invalid instanceof TRPCClientError && invalid.data?.error).toMatchObject({
      code: "parameter_not_supported_for_model",
      param: "vocal_gender"
    })
  })
})
