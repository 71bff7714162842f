/**
 * Revocation across API processes: a second `pnpm start` process shares the database (and
 * Redis); a token revoked through the first is refused by the second at once, and a grant
 * revoked (a replayed refresh token) likewise.
 *
 * Separate processes need a database they can share, and a single access token's revocation
 * crosses processes through Redis (docs/decisions/0039-oauth-lifetimes-audience-revocation-sessions.md). Without both the test says so
 * and checks the one-process variant: the same process refuses at once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backend, startTestServer } from "../support/harness.ts"
import type { TestServer } from "../support/harness.ts"
import { obtainTokens, setUpOAuth, tokenRequest } from "../support/oauth.ts"
import type { OAuthWorld } from "../support/oauth.ts"
import { freePort, spawnEntry } from "../support/processes.ts"
import type { Spawned } from "../support/processes.ts"
import { signingEnv } from "../support/signing.ts"

const shared = backend.database === "postgres" && backend.limiter === "redis"
let server: TestServer
let world: OAuthWorld
let second: Spawned | undefined
let secondUrl: string

beforeAll(async () => {
  server = await startTestServer()
  world = await setUpOAuth(server)
  secondUrl = server.url
  if (!shared) {
    process.stdout.write("oauth processes test: needs DATABASE_URL and REDIS_URL for two processes; checking one\n")
    return
  }
  const port = await freePort()
  second = spawnEntry("main", {
    PORT: String(port),
    DATABASE_URL: String(server.config.databaseUrl),
    REDIS_URL: String(server.config.redisUrl),
    SECRET_KEY: String(server.config.secretKey),
    ...(await signingEnv()),
    DATA_DIR: server.config.dataDir,
    PUBLIC_URL: server.url,
    WORKER: "off",
    LOG_LEVEL: "info"
  })
  await second.waitFor('"msg":"listening"')
  secondUrl = `http://127.0.0.1:${port}`
}, 90_000)

afterAll(async () => {
  await second?.stop()
  await server.close()
})

const meAt = (url: string, token: string) =>
  fetch(`${url}/api/v1/me`, { headers: { authorization: `Bearer ${token}` } }).then((res) => res.status)

describe("revocation across processes", () => {
  it("refuses a revoked access token in every process at once", async () => {
    const tokens = await obtainTokens(world)
    expect(await meAt(secondUrl, tokens.access_token)).toBe(200)
    const revoked = await fetch(`${server.url}/oauth/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: tokens.access_token, client_id: "extension" })
    })
    expect(revoked.status).toBe(200)
    expect(await meAt(secondUrl, tokens.access_token)).toBe(401)
    expect(await meAt(server.url, tokens.access_token)).toBe(401)
  })

  it("refuses the tokens of a revoked grant in every process at once", async () => {
    const tokens = await obtainTokens(world, { clientId: "mobile" })
    const rotated = await tokenRequest(world, {
      grant_type: "refresh_token",
      client_id: "mobile",
      refresh_token: tokens.refresh_token ?? ""
    })
    const current = String(rotated.body["access_token"])
    expect(await meAt(secondUrl, current)).toBe(200)
    await tokenRequest(world, {
      grant_type: "refresh_token",
      client_id: "mobile",
      refresh_token: tokens.refresh_token ?? ""
    })
    expect(await meAt(secondUrl, current)).toBe(401)
  })
})
