/**
 * Access tokens checked from the outside: verified independently against the published key set
 * with jose, and every forgery the verifier must refuse (alg none, HS256 with the public key,
 * another key, wrong type, issuer or audience), expiry under a moved clock, key rotation.
 */
import { generateKeyPairSync } from "node:crypto"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Clock, Effect } from "effect"
import { createLocalJWKSet, createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT } from "jose"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AccessTokens, appRouter, makeCallContext, OAuth, SigningKeys } from "@lyre/core"
import { call, rpc } from "../support/a2a.ts"
import { api, startTestServer } from "../support/harness.ts"
import type { TestServer } from "../support/harness.ts"
import { obtainTokens, setUpOAuth } from "../support/oauth.ts"
import type { OAuthWorld } from "../support/oauth.ts"

let server: TestServer
let world: OAuthWorld

beforeAll(async () => {
  server = await startTestServer()
  world = await setUpOAuth(server)
}, 60_000)

afterAll(async () => {
  await server.close()
})

/** The real clock moved by `offsetMillis`: the controlled clock the token service reads. */
const movedClock = (offsetMillis: number): Clock.Clock => {
  const millis = () => Date.now() + offsetMillis
  return {
    currentTimeMillisUnsafe: millis,
    currentTimeMillis: Effect.sync(millis),
    currentTimeNanosUnsafe: () => BigInt(millis()) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(millis()) * 1_000_000n),
    monotonicTimeNanosUnsafe: () => process.hrtime.bigint(),
    monotonicTimeNanos: Effect.sync(() => process.hrtime.bigint()),
    sleep: () => Effect.void
  }
}

const authenticateAt = (token: string, offsetMillis: number, audience = `${server.url}/api`) =>
  server.runtime.runPromise(
    AccessTokens.use((tokens) => tokens.authenticate(token, audience)).pipe(
      Effect.map((principal) => ({ ok: true as const, principal })),
      Effect.catch((error) => Effect.succeed({ ok: false as const, error: error._tag })),
      Effect.provideService(Clock.Clock, movedClock(offsetMillis))
    )
  )

const me = (token: string) => api(server, "GET", "/api/v1/me", { key: token })

describe("tokens verified independently", () => {
  it("is an RFC 9068 at+jwt signed ES256 that the published key set verifies", async () => {
    const tokens = await obtainTokens(world)
    const keySet = createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`))
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, keySet, {
      algorithms: ["ES256"],
      typ: "at+jwt",
      issuer: server.url,
      audience: `${server.url}/api`
    })
    expect(protectedHeader).toMatchObject({ alg: "ES256", typ: "at+jwt" })
    expect(payload).toMatchObject({ sub: world.accountId, scope: "profile music:generate", client_id: "extension" })
    expect(typeof payload.jti).toBe("string")
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(900)
  })

  it("names the resource asked for as its audience, and only that surface accepts it", async () => {
    const tokens = await obtainTokens(world, { resource: `${server.url}/mcp` })
    expect(decodeJwt(tokens.access_token).aud).toBe(`${server.url}/mcp`)
    const rest = await me(tokens.access_token)
    expect(rest.status).toBe(401)
    expect(rest.body["error"]).toMatchObject({ code: "invalid_credential" })
    const asMcp = appRouter.createCaller(
      makeCallContext(server.runtime, { authorization: `Bearer ${tokens.access_token}`, resource: `${server.url}/mcp` })
    )
    const account = await asMcp.me()
    expect(account.auth.kind).toBe("oauth")
    const asA2a = appRouter.createCaller(
      makeCallContext(server.runtime, { authorization: `Bearer ${tokens.access_token}`, resource: `${server.url}/a2a` })
    )
    await expect(asA2a.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" })
  })
})

describe("the MCP surface", () => {
  const getAccount = async (token: string) => {
    const client = new Client({ name: "oauth-test-agent", version: "1.0.0" })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } }
      })
    )
    try {
      return await client.callTool({ name: "get_account", arguments: {} })
    } finally {
      await client.close()
    }
  }

  it("accepts a token for PUBLIC_URL/mcp through the MCP SDK's client, and refuses one for base_url", async () => {
    const forMcp = await obtainTokens(world, { resource: `${server.url}/mcp` })
    const result = await getAccount(forMcp.access_token)
    expect(result.isError ?? false).toBe(false)
    expect(result.structuredContent).toMatchObject({ auth: { kind: "oauth", key: null } })
    const forApi = await obtainTokens(world)
    await expect(getAccount(forApi.access_token)).rejects.toMatchObject({ code: 401 })
  })
})

describe("the A2A surface", () => {
  it("accepts a token for PUBLIC_URL/a2a and refuses one for base_url with 401", async () => {
    const forA2a = await obtainTokens(world, { resource: `${server.url}/a2a` })
    const unknownTask = call("tasks/get", { id: "gen_000000000000000000000000" })
    const accepted = await rpc(server, unknownTask, { key: forA2a.access_token })
    expect(accepted.status).toBe(200)
    expect(accepted.body["error"]).toBeDefined()
    const forApi = await obtainTokens(world)
    const refused = await rpc(server, unknownTask, { key: forApi.access_token })
    expect(refused.status).toBe(401)
    expect(refused.body).toMatchObject({ error: { code: "invalid_credential" } })
  })
})

describe("forgeries", () => {
  const claimsOf = async () => {
    const tokens = await obtainTokens(world)
    return {
      token: tokens.access_token,
      payload: decodeJwt(tokens.access_token),
      header: decodeProtectedHeader(tokens.access_token)
    }
  }
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")

  it("refuses alg none", async () => {
    const { payload, header } = await claimsOf()
    const forged = `${b64({ ...header, alg: "none" })}.${b64(payload)}.`
    const answer = await me(forged)
    expect(answer.status).toBe(401)
    expect(answer.body["error"]).toMatchObject({ code: "invalid_credential" })
  })

  it("refuses HS256 keyed with the public key", async () => {
    const { payload, header } = await claimsOf()
    const jwks = (await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as { keys: Array<object> }
    const secret = new TextEncoder().encode(JSON.stringify(jwks.keys[0]))
    const forged = await new SignJWT(payload).setProtectedHeader({ ...header, alg: "HS256" }).sign(secret)
    expect((await me(forged)).status).toBe(401)
  })

  it("refuses a token of another key, under our kid or its own", async () => {
    const { payload, header } = await claimsOf()
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
    for (const kid of [header.kid, "someone-else"]) {
      const forged = await new SignJWT(payload)
        .setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid })
        .sign(privateKey)
      expect((await me(forged)).status).toBe(401)
    }
  })

  it("refuses a token of the wrong type or issuer even when our key signed it", async () => {
    const { payload } = await claimsOf()
    const { key, kid } = await server.runtime.runPromise(SigningKeys.use((keys) => keys.active))
    const wrongType = await new SignJWT(payload).setProtectedHeader({ alg: "ES256", typ: "JWT", kid }).sign(key)
    expect((await me(wrongType)).status).toBe(401)
    const wrongIssuer = await new SignJWT({ ...payload, iss: "https://elsewhere.example" })
      .setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid })
      .sign(key)
    expect((await me(wrongIssuer)).status).toBe(401)
    const control = await new SignJWT(payload).setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid }).sign(key)
    expect((await me(control)).status).toBe(200)
  })
})

describe("time", () => {
  it("accepts a token through its 15 minutes and refuses it as expired after, under a moved clock", async () => {
    const tokens = await obtainTokens(world)
    expect(await authenticateAt(tokens.access_token, 14 * 60_000)).toMatchObject({ ok: true })
    expect(await authenticateAt(tokens.access_token, 15 * 60_000 + 1_000)).toEqual({
      ok: false,
      error: "CredentialExpired"
    })
  })

  it("expires a refresh token left unused for 30 days", async () => {
    const tokens = await obtainTokens(world, { clientId: "mobile" })
    const refresh = (offsetMillis: number) =>
      server.runtime.runPromise(
        OAuth.use((oauth) =>
          oauth.refresh({
            clientId: "mobile",
            refreshToken: tokens.refresh_token ?? "",
            scope: undefined,
            resource: undefined
          })
        ).pipe(
          Effect.map(() => "ok"),
          Effect.catch((error) => Effect.succeed(error.error)),
          Effect.provideService(Clock.Clock, movedClock(offsetMillis))
        )
      )
    expect(await refresh(30 * 24 * 3_600_000 + 60_000)).toBe("invalid_grant")
  })

  it("keeps a rotated key's public half published until its tokens have expired", async () => {
    const before = await obtainTokens(world)
    const oldKid = decodeProtectedHeader(before.access_token).kid
    const rotated = await server.admin("POST", "/signing-keys/rotate")
    expect(rotated.status).toBe(201)
    const newKid = String(rotated.body["kid"])
    expect(newKid).not.toBe(oldKid)
    const keys = (
      (await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> }
    ).keys
    expect(keys.map((k) => k.kid).sort()).toEqual([oldKid, newKid].sort())
    // The old token still works; new tokens are signed with the new key.
    expect((await me(before.access_token)).status).toBe(200)
    const after = await obtainTokens(world)
    expect(decodeProtectedHeader(after.access_token).kid).toBe(newKid)
    const verified = await jwtVerify(after.access_token, createLocalJWKSet({ keys }), { algorithms: ["ES256"] })
    expect(verified.payload.sub).toBe(world.accountId)
    // Past the old key's last token, it leaves the set.
    const later = await server.runtime.runPromise(
      SigningKeys.use((signing) => signing.jwks).pipe(Effect.provideService(Clock.Clock, movedClock(17 * 60_000)))
    )
    expect(later.keys.map((k) => k.kid)).toEqual([newKid])
  })
})
