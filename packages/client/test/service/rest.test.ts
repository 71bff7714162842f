/**
 * The REST client against a running service (the test harness: the same composition as
 * `pnpm start`, the fake upstream as provider and the worker inline).
 */
import { afterAll, assert, beforeAll, describe, expect, it } from "vitest"
import { createAccount, startTestServer, validSong } from "../../../server/test/support/harness.ts"
import type { TestServer } from "../../../server/test/support/harness.ts"
import { streamingSong } from "../../../server/test/support/previews.ts"
import { apiRootOf, LyreApiError, LyreClient, LyreConnectionError, siteRootOf } from "../../src/index.ts"
import type { RetryInfo } from "../../src/index.ts"

let server: TestServer
beforeAll(async () => {
  // Polls 30 s apart: a task finishes when its callback arrives, which a test may hold back.
  server = await startTestServer({ worker: "inline", providerPollSeconds: 30 })
})
afterAll(() => server.close())

const clientFor = (apiKey: string, options: Partial<ConstructorParameters<typeof LyreClient>[0]> = {}) =>
  new LyreClient({ apiKey, baseUrl: server.url, ...options })

const totalCredits = async (accountId: string): Promise<number> =>
  Number((await server.admin("GET", `/accounts/${accountId}`)).body["credits"]?.["total"])

describe("base URLs", () => {
  it("take the site root or the API root", () => {
    expect(apiRootOf("https://lyre.example")).toBe("https://lyre.example/api")
    expect(apiRootOf("https://lyre.example/api/")).toBe("https://lyre.example/api")
    expect(apiRootOf("https://lyre.example/music")).toBe("https://lyre.example/music/api")
    expect(siteRootOf("https://lyre.example/api")).toBe("https://lyre.example")
  })
})

describe("LyreClient", () => {
  it("me, create, get, list and wait, with typed results", async () => {
    const account = await createAccount(server)
    const client = clientFor(account.key)
    const me = await client.me()
    expect(me).toMatchObject({ id: account.id, plan: "pro", credits: { total: 1_000 }, auth: { kind: "api_key" } })

    const task = await client.generations.create({ ...validSong, model: "echo" })
    expect(task).toMatchObject({ status: "pending", model: "echo", credits_used: 100 })
    expect((await client.generations.get(task.id)).id).toBe(task.id)

    const seen: Array<string> = []
    const done = await client.waitForGeneration(task.id, {
      intervalMs: 200,
      onProgress: ({ task }) => seen.push(task.status)
    })
    expect(done.status).toBe("ready")
    expect(seen.at(-1)).toBe("ready")
    expect(done.tracks.map((t) => t.index)).toEqual([0, 1])

    const first = done.tracks[0]
    assert.isDefined(first)
    const bytes = await client.download(first)
    expect(String.fromCharCode(...bytes.slice(0, 3))).toBe("ID3")
    const progress: Array<number> = []
    const cover = await client.download(first, {
      part: "image",
      onProgress: (received) => progress.push(received)
    })
    expect([...cover.slice(1, 4)].map((b) => String.fromCharCode(b)).join("")).toBe("PNG")
    expect(progress.at(-1)).toBe(cover.length)

    const second = await client.generations.create({ ...validSong, title: "Second" })
    const page = await client.generations.list({ limit: 1 })
    expect(page).toMatchObject({ has_more: true, data: [{ id: second.id }] })
    const next = await client.generations.list({ limit: 1, startingAfter: second.id })
    expect(next.data.map((t) => t.id)).toEqual([task.id])
  })

  it("throws the envelope as a LyreApiError, with param and request id", async () => {
    const account = await createAccount(server)
    const error = await clientFor(account.key)
      .generations.create({ ...validSong, model: "echo", vocal_gender: "m" })
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LyreApiError)
    expect(error).toMatchObject({
      status: 400,
      type: "invalid_request_error",
      code: "parameter_not_supported_for_model",
      param: "vocal_gender",
      message: "vocal_gender is supported by the aether model only, not echo"
    })
    expect((error as LyreApiError).requestId).toMatch(/.+/)

    const missing = await clientFor(account.key)
      .generations.get("gen_nope")
      .catch((e: unknown) => e)
    expect(missing).toMatchObject({ status: 404, type: "not_found", code: "task_not_found" })
    const unauthenticated = await clientFor("lyr_live_wrong")
      .me()
      .catch((e: unknown) => e)
    expect(unauthenticated).toMatchObject({ status: 401, type: "authentication_error", code: "invalid_credential" })
    const poor = await clientFor((await createAccount(server, { subscription: 0 })).key)
      .generations.create(validSong)
      .catch((e: unknown) => e)
    expect(poor).toMatchObject({ status: 402, code: "insufficient_credits" })
  })

  it("waits out a 429 as Retry-After says, then succeeds", async () => {
    const account = await createAccount(server, { concurrency_limit: 1 })
    const title = `Held ${Date.now()}`
    // The first task stays pending until the upstream's callback, sent once the client is waiting.
    server.upstream.control.onTitle(title, { callbacks: "none" })
    const client = clientFor(account.key)
    await client.generations.create({ ...validSong, title })
    const retries: Array<RetryInfo> = []
    const retrying = clientFor(account.key, {
      onRetry: (info) => {
        retries.push(info)
        const taskId = server.upstream.control.submissionsFor(title)[0]?.taskId
        if (taskId) void server.upstream.control.sendCallback(taskId, "complete")
      }
    })
    const started = Date.now()
    const task = await retrying.generations.create(validSong)
    expect(task.status).toBe("pending")
    expect(retries).toHaveLength(1)
    expect(retries[0]?.error).toMatchObject({ status: 429, code: "concurrent_limit_exceeded", retryAfterSeconds: 5 })
    expect(retries[0]?.delayMs).toBe(5_000)
    expect(Date.now() - started).toBeGreaterThanOrEqual(5_000)
  }, 30_000)

  it("waits out a 503 model_unavailable as Retry-After says", async () => {
    const account = await createAccount(server)
    expect((await server.admin("PUT", "/models/nocturne", { available: false, retry_after_seconds: 1 })).status).toBe(
      200
    )
    const retries: Array<RetryInfo> = []
    const client = clientFor(account.key, {
      onRetry: (info) => {
        retries.push(info)
        void server.admin("PUT", "/models/nocturne", { available: true })
      }
    })
    const task = await client.generations.create({ ...validSong, model: "nocturne" })
    expect(task.model).toBe("nocturne")
    expect(retries.map((r) => [r.error instanceof LyreApiError && r.error.code, r.delayMs])).toEqual([
      ["model_unavailable", 1_000]
    ])
  })

  it("gives up when Retry-After is longer than it will wait, or the retries are spent", async () => {
    const account = await createAccount(server)
    await server.admin("PUT", "/models/nocturne", { available: false, retry_after_seconds: 120 })
    const long = await clientFor(account.key)
      .generations.create({ ...validSong, model: "nocturne" })
      .catch((e: unknown) => e)
    expect(long).toMatchObject({ status: 503, code: "model_unavailable", model: "nocturne", retryAfterSeconds: 120 })
    await server.admin("PUT", "/models/nocturne", { available: false, retry_after_seconds: 1 })
    const spent = await clientFor(account.key, { maxRetries: 1 })
      .generations.create({ ...validSong, model: "nocturne" })
      .catch((e: unknown) => e)
    expect(spent).toMatchObject({ status: 503, code: "model_unavailable" })
    await server.admin("PUT", "/models/nocturne", { available: true })
  })

  it("retries a create whose answer was lost with the same Idempotency-Key: one task, charged once", async () => {
    const account = await createAccount(server)
    const keys: Array<string | null> = []
    let dropped = false
    // The request reaches the service, then the connection dies before the answer is read.
    const flaky: typeof fetch = async (input, init) => {
      const response = await fetch(input, init)
      if (init?.method === "POST") {
        keys.push(new Headers(init.headers).get("idempotency-key"))
        if (!dropped) {
          dropped = true
          await response.body?.cancel()
          throw new TypeError("fetch failed", { cause: new Error("socket hang up") })
        }
      }
      return response
    }
    const task = await clientFor(account.key, { fetch: flaky }).generations.create(validSong)
    expect(keys).toHaveLength(2)
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/)
    expect(keys[1]).toBe(keys[0])
    expect(await totalCredits(account.id)).toBe(950)
    const list = await clientFor(account.key).generations.list()
    expect(list.data.map((t) => t.id)).toEqual([task.id])
    // Each logical create has a key of its own.
    await clientFor(account.key, { fetch: flaky }).generations.create(validSong)
    expect(keys[2]).not.toBe(keys[0])
    expect(await totalCredits(account.id)).toBe(900)
  })

  it("turns an unreachable service into a LyreConnectionError after its retries", async () => {
    const retries: Array<RetryInfo> = []
    const client = new LyreClient({
      apiKey: "lyr_live_x",
      baseUrl: "http://127.0.0.1:9",
      maxRetries: 1,
      onRetry: (r) => retries.push(r)
    })
    const error = await client.me().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LyreConnectionError)
    expect(String((error as Error).message)).toContain("Could not reach http://127.0.0.1:9")
    expect(retries).toHaveLength(1)
  })

  it("waitForPreview answers the pending task once it can be heard; its stream plays, then the song is ready (issue 54)", async () => {
    const account = await createAccount(server)
    const client = clientFor(account.key)
    const song = streamingSong(server, "client")
    const task = await client.generations.create(song.request)
    expect(task.previews).toEqual([])
    const heard = await client.waitForPreview(task.id, { intervalMs: 100, timeoutMs: 20_000 })
    expect(heard.status).toBe("pending")
    expect(heard.previews.map((preview) => preview.index)).toEqual([0, 1])
    const [first] = heard.previews
    assert(first !== undefined)
    expect(first.stream_url.startsWith(`${server.url}/files/streams/${task.id}/0.mp3?`)).toBe(true)
    const stream = await client.downloadStream(first)
    expect([stream.contentType, stream.size]).toEqual(["audio/mpeg", null])
    expect((await new Response(stream.stream).arrayBuffer()).byteLength).toBeGreaterThan(0)

    song.finish()
    const done = await client.waitForGeneration(task.id, { intervalMs: 100, timeoutMs: 20_000 })
    expect(done).toMatchObject({ status: "ready", previews: [] })
    // A finished task answers at once: its tracks are the final files, no previews.
    expect(await client.waitForPreview(task.id)).toMatchObject({ status: "ready", previews: [] })
  })

  it("stops waiting on abort and on time-out", async () => {
    const account = await createAccount(server)
    const title = `Forever ${Date.now()}`
    server.upstream.control.onTitle(title, { callbacks: "none", pollsBeforeDone: Infinity })
    const client = clientFor(account.key)
    const task = await client.generations.create({ ...validSong, title })
    const timedOut = await client
      .waitForGeneration(task.id, { intervalMs: 50, timeoutMs: 300 })
      .catch((e: unknown) => e)
    expect(timedOut).toMatchObject({ name: "TimeoutError" })
    const controller = new AbortController()
    const waiting = client.waitForGeneration(task.id, {
      intervalMs: 50,
      signal: controller.signal,
      onProgress: () => controller.abort(new Error("stop"))
    })
    await expect(waiting).rejects.toThrow("stop")
  })
})
