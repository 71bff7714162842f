/**
 * The authorization server's state: registered clients, codes, grants and refresh tokens.
 * A grant is what one authorization code began: the access and refresh tokens that descend from
 * it form one family, revoked together when its code is replayed, a rotated refresh token is
 * presented again (RFC 9700 section 4.14.2), a refresh token is revoked, or its client deleted.
 */
import { createHmac } from "node:crypto"
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { clientIdShape } from "../domain/admin.ts"
import type { CreateOAuthClientBody } from "../domain/admin.ts"
import { AlreadyExists, OAuthProtocolError, ResourceNotFound } from "../domain/errors.ts"
import type { OAuthErrorCode } from "../domain/errors.ts"
import { Ids, randomBase62 } from "../domain/ids.ts"
import {
  accessTokenLifetimeSeconds,
  codeLifetimeSeconds,
  parseScopes,
  pkceMatches,
  refreshAbsoluteSeconds,
  refreshIdleSeconds,
  resourcesOf
} from "./domain/oauth.ts"
import { AccessTokens, jwtShape, oauthSubject } from "./AccessTokens.ts"
import { Settings } from "../platform/Settings.ts"

export interface OAuthClient {
  readonly client_id: string
  readonly name: string
  readonly redirect_uris: ReadonlyArray<string>
  readonly refresh_tokens: boolean
  readonly created_at: string
}

interface ClientRow {
  readonly client_id: string
  readonly name: string
  readonly redirect_uris: ReadonlyArray<string>
  readonly refresh_tokens: boolean
  readonly created_at: Date
}

const clientView = (row: ClientRow): OAuthClient => ({
  client_id: row.client_id,
  name: row.name,
  redirect_uris: row.redirect_uris,
  refresh_tokens: row.refresh_tokens,
  created_at: row.created_at.toISOString()
})

/** RFC 6749 section 5.1. */
export interface TokenResponse {
  readonly access_token: string
  readonly token_type: "Bearer"
  readonly expires_in: number
  readonly scope: string
  readonly refresh_token?: string
}

/** What an approved authorize request binds its code to. */
export interface CodeRequest {
  readonly clientId: string
  readonly accountId: string
  readonly redirectUri: string
  readonly codeChallenge: string
  readonly scopes: ReadonlyArray<string>
  readonly resource: string
}

interface CodeRow {
  readonly client_id: string
  readonly account_id: string
  readonly redirect_uri: string
  readonly code_challenge: string
  readonly scopes: ReadonlyArray<string>
  readonly resource: string
  readonly expires_at: Date
  readonly used_at: Date | null
  readonly grant_id: string | null
}

interface RefreshRow {
  readonly grant_id: string
  readonly expires_at: Date
  readonly rotated_at: Date | null
  readonly client_id: string
  readonly account_id: string
  readonly scopes: ReadonlyArray<string>
  readonly resource: string
  readonly grant_created_at: Date
  readonly grant_revoked_at: Date | null
}

const fail = (error: OAuthErrorCode, description: string) => Effect.fail(new OAuthProtocolError({ error, description }))

export class OAuth extends Context.Service<
  OAuth,
  {
    readonly createClient: (body: CreateOAuthClientBody) => Effect.Effect<OAuthClient, AlreadyExists>
    readonly listClients: Effect.Effect<ReadonlyArray<OAuthClient>>
    readonly getClient: (clientId: string) => Effect.Effect<OAuthClient, ResourceNotFound>
    /** Deletes the client; every grant, code and token of it dies with it. */
    readonly deleteClient: (clientId: string) => Effect.Effect<void, ResourceNotFound>
    readonly issueCode: (request: CodeRequest) => Effect.Effect<string>
    readonly exchangeCode: (input: {
      readonly clientId: string
      readonly code: string
      readonly redirectUri: string
      readonly codeVerifier: string
      readonly resource: string | undefined
    }) => Effect.Effect<TokenResponse, OAuthProtocolError>
    readonly refresh: (input: {
      readonly clientId: string
      readonly refreshToken: string
      readonly scope: string | undefined
      readonly resource: string | undefined
    }) => Effect.Effect<TokenResponse, OAuthProtocolError>
    /** RFC 7009: revokes a token of this client; an unknown token, or another client's, is ignored. */
    readonly revoke: (clientId: string, token: string) => Effect.Effect<void>
  }
>()("lyre/core/credentials/OAuth") {
  static readonly layer = Layer.effect(
    OAuth,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const ids = yield* Ids
      const settings = yield* Settings
      const accessTokens = yield* AccessTokens
      const resources = resourcesOf(settings.publicUrl)
      const hashSecret = (kind: string, value: string) =>
        createHmac("sha256", settings.secretKey).update(`${kind}:${value}`).digest("hex")
      const nowIso = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())

      const findClient = (clientId: string) =>
        (clientIdShape.test(clientId)
          ? sql<ClientRow>`
              select client_id, name, redirect_uris, refresh_tokens, created_at from oauth_clients
              where client_id = ${clientId}`.pipe(Effect.orDie)
          : Effect.succeed([])
        ).pipe(Effect.map((rows) => rows[0]))

      const createClient = Effect.fn("OAuth.createClient")(function* (body: CreateOAuthClientBody) {
        const at = yield* nowIso
        const rows = yield* sql<ClientRow>`
          insert into oauth_clients (client_id, name, redirect_uris, refresh_tokens, created_at)
          values (${body.client_id}, ${body.name}, ${JSON.stringify(body.redirect_uris)}::jsonb,
                  ${body.refresh_tokens ?? false}, ${at}::timestamptz)
          on conflict (client_id) do nothing
          returning client_id, name, redirect_uris, refresh_tokens, created_at`.pipe(Effect.orDie)
        const row = rows[0]
        if (row === undefined) {
          return yield* new AlreadyExists({ message: `A client ${body.client_id} exists.`, param: "client_id" })
        }
        return clientView(row)
      })

      const getClient = Effect.fn("OAuth.getClient")(function* (clientId: string) {
        const row = yield* findClient(clientId)
        if (row === undefined) return yield* new ResourceNotFound({ message: `No OAuth client ${clientId}` })
        return clientView(row)
      })

      /**
       * Revokes grants: their refresh tokens stop, and their access tokens are refused from the
       * next request on, by every process (each request reads its grant's row).
       */
      const revokeGrants = (grantIds: ReadonlyArray<string>) =>
        Effect.gen(function* () {
          if (grantIds.length === 0) return
          const at = yield* nowIso
          yield* sql`update oauth_grants set revoked_at = coalesce(revoked_at, ${at}::timestamptz)
                     where id in ${sql.in(grantIds)}`.pipe(Effect.orDie)
        })

      const deleteClient = Effect.fn("OAuth.deleteClient")(function* (clientId: string) {
        yield* getClient(clientId)
        const grants = yield* sql<{ id: string }>`select id from oauth_grants where client_id = ${clientId}`.pipe(
          Effect.orDie
        )
        yield* revokeGrants(grants.map((grant) => grant.id))
        yield* sql`delete from oauth_clients where client_id = ${clientId}`.pipe(Effect.orDie)
      })

      const issueCode = Effect.fn("OAuth.issueCode")(function* (request: CodeRequest) {
        const code = randomBase62(43)
        const now = yield* Clock.currentTimeMillis
        yield* sql`
          insert into oauth_codes (code_hash, client_id, account_id, redirect_uri, code_challenge, scopes, resource,
            expires_at, created_at)
          values (${hashSecret("code", code)}, ${request.clientId}, ${request.accountId}, ${request.redirectUri},
                  ${request.codeChallenge}, ${JSON.stringify(request.scopes)}::jsonb, ${request.resource},
                  ${new Date(now + codeLifetimeSeconds * 1000).toISOString()}::timestamptz,
                  ${new Date(now).toISOString()}::timestamptz)`.pipe(Effect.orDie)
        // Spent and expired codes are swept by new ones.
        yield* sql`delete from oauth_codes where expires_at < ${new Date(now - 3_600_000).toISOString()}::timestamptz`.pipe(
          Effect.orDie
        )
        return code
      })

      /** Access token, and a refresh token when the client may have one, for a standing grant. */
      const tokensFor = (grant: {
        readonly id: string
        readonly clientId: string
        readonly accountId: string
        readonly scopes: ReadonlyArray<string>
        readonly resource: string
        readonly withRefresh: boolean
      }) =>
        Effect.gen(function* () {
          const issued = yield* accessTokens.issue({
            accountId: grant.accountId,
            clientId: grant.clientId,
            scopes: grant.scopes,
            resource: grant.resource,
            grantId: grant.id
          })
          const base = {
            access_token: issued.accessToken,
            token_type: "Bearer" as const,
            expires_in: accessTokenLifetimeSeconds,
            scope: grant.scopes.join(" ")
          }
          if (!grant.withRefresh) return base
          const refreshToken = randomBase62(48)
          const now = yield* Clock.currentTimeMillis
          yield* sql`
            insert into oauth_refresh_tokens (token_hash, grant_id, expires_at, created_at)
            values (${hashSecret("refresh", refreshToken)}, ${grant.id},
                    ${new Date(now + refreshIdleSeconds * 1000).toISOString()}::timestamptz,
                    ${new Date(now).toISOString()}::timestamptz)`.pipe(Effect.orDie)
          // Rotated tokens stay for reuse detection until they would have expired; then they go.
          yield* sql`
            delete from oauth_refresh_tokens where token_hash in (
              select token_hash from oauth_refresh_tokens
              where expires_at < ${new Date(now).toISOString()}::timestamptz limit 100
            )`.pipe(Effect.orDie)
          const response: TokenResponse = { ...base, refresh_token: refreshToken }
          return response
        })

      const checkResource = (requested: string | undefined, bound: string) =>
        requested === undefined || requested === bound
          ? Effect.void
          : fail(
              "invalid_target",
              resources.includes(requested)
                ? "The resource differs from the one authorized."
                : `The resource must be one of ${resources.join(", ")}.`
            )

      const exchangeCode = Effect.fn("OAuth.exchangeCode")(function* (input: {
        readonly clientId: string
        readonly code: string
        readonly redirectUri: string
        readonly codeVerifier: string
        readonly resource: string | undefined
      }) {
        const client = yield* findClient(input.clientId)
        if (client === undefined) return yield* fail("invalid_client", "Unknown client_id.")
        const hash = hashSecret("code", input.code)
        const at = yield* nowIso
        const claimed = yield* sql<CodeRow>`
          update oauth_codes set used_at = ${at}::timestamptz
          where code_hash = ${hash} and used_at is null
          returning client_id, account_id, redirect_uri, code_challenge, scopes, resource, expires_at, used_at, grant_id`.pipe(
          Effect.orDie
        )
        const code = claimed[0]
        if (code === undefined) {
          // Replayed: whatever the first exchange issued is revoked (RFC 6749 section 4.1.2).
          const spent = yield* sql<{
            grant_id: string | null
          }>`select grant_id from oauth_codes where code_hash = ${hash}`.pipe(Effect.orDie)
          const grantId = spent[0]?.grant_id
          if (grantId !== undefined && grantId !== null) yield* revokeGrants([grantId])
          return yield* fail("invalid_grant", "The authorization code is not valid, expired or already used.")
        }
        if (code.client_id !== input.clientId)
          return yield* fail("invalid_grant", "The code was issued to another client.")
        if (code.expires_at.toISOString() <= at)
          return yield* fail("invalid_grant", "The authorization code has expired.")
        if (code.redirect_uri !== input.redirectUri) {
          return yield* fail("invalid_grant", "redirect_uri differs from the authorization request's.")
        }
        if (!pkceMatches(input.codeVerifier, code.code_challenge)) {
          return yield* fail("invalid_grant", "code_verifier does not match the code_challenge.")
        }
        yield* checkResource(input.resource, code.resource)
        const grantId = yield* ids.make("grant")
        yield* sql`
          insert into oauth_grants (id, client_id, account_id, scopes, resource, created_at, last_used_at)
          values (${grantId}, ${code.client_id}, ${code.account_id}, ${JSON.stringify(code.scopes)}::jsonb,
                  ${code.resource}, ${at}::timestamptz, ${at}::timestamptz)`.pipe(Effect.orDie)
        yield* sql`update oauth_codes set grant_id = ${grantId} where code_hash = ${hash}`.pipe(Effect.orDie)
        // The concurrency counter row of this account and client, which creating a task locks.
        yield* sql`insert into credential_inflight (subject) values (${oauthSubject(code.account_id, code.client_id)})
                   on conflict do nothing`.pipe(Effect.orDie)
        return yield* tokensFor({
          id: grantId,
          clientId: code.client_id,
          accountId: code.account_id,
          scopes: code.scopes,
          resource: code.resource,
          withRefresh: client.refresh_tokens
        })
      })

      const refresh = Effect.fn("OAuth.refresh")(function* (input: {
        readonly clientId: string
        readonly refreshToken: string
        readonly scope: string | undefined
        readonly resource: string | undefined
      }) {
        const client = yield* findClient(input.clientId)
        if (client === undefined) return yield* fail("invalid_client", "Unknown client_id.")
        if (!client.refresh_tokens) {
          return yield* fail("unauthorized_client", "This client is not registered for refresh tokens.")
        }
        const hash = hashSecret("refresh", input.refreshToken)
        const rows = yield* sql<RefreshRow>`
          select r.grant_id, r.expires_at, r.rotated_at, g.client_id, g.account_id, g.scopes, g.resource,
                 g.created_at as grant_created_at, g.revoked_at as grant_revoked_at
          from oauth_refresh_tokens r join oauth_grants g on g.id = r.grant_id
          where r.token_hash = ${hash}`.pipe(Effect.orDie)
        const row = rows[0]
        const invalid = fail("invalid_grant", "The refresh token is not valid, expired or revoked.")
        if (row === undefined || row.client_id !== input.clientId || row.grant_revoked_at !== null)
          return yield* invalid
        const now = yield* Clock.currentTimeMillis
        const at = new Date(now).toISOString()
        const replayed = Effect.gen(function* () {
          yield* revokeGrants([row.grant_id])
          return yield* fail("invalid_grant", "The refresh token was already used; its grant is revoked.")
        })
        if (row.rotated_at !== null) return yield* replayed
        if (row.expires_at.getTime() <= now || row.grant_created_at.getTime() + refreshAbsoluteSeconds * 1000 <= now) {
          return yield* invalid
        }
        // Rotate: only one presentation of a refresh token ever wins; a concurrent one is a replay.
        const rotated = yield* sql<{ grant_id: string }>`
          update oauth_refresh_tokens set rotated_at = ${at}::timestamptz
          where token_hash = ${hash} and rotated_at is null returning grant_id`.pipe(Effect.orDie)
        if (rotated.length === 0) return yield* replayed
        const scopes = input.scope === undefined ? row.scopes : parseScopes(input.scope)
        if (scopes === undefined || !scopes.every((scope) => row.scopes.includes(scope))) {
          return yield* fail("invalid_scope", "The scope asked for exceeds what was granted.")
        }
        yield* checkResource(input.resource, row.resource)
        yield* sql`update oauth_grants set last_used_at = ${at}::timestamptz where id = ${row.grant_id}`.pipe(
          Effect.orDie
        )
        return yield* tokensFor({
          id: row.grant_id,
          clientId: row.client_id,
          accountId: row.account_id,
          scopes,
          resource: row.resource,
          withRefresh: true
        })
      })

      const revoke = Effect.fn("OAuth.revoke")(function* (clientId: string, token: string) {
        if (jwtShape.test(token)) {
          const claims = yield* accessTokens.inspect(token)
          if (claims !== undefined && claims.clientId === clientId) {
            yield* accessTokens.deny(claims.jti, claims.expiresAtMillis)
          }
          return
        }
        // A refresh token: RFC 7009 section 2.1, the access tokens of its grant go with it.
        const rows = yield* sql<{ grant_id: string }>`
          select r.grant_id from oauth_refresh_tokens r join oauth_grants g on g.id = r.grant_id
          where r.token_hash = ${hashSecret("refresh", token)} and g.client_id = ${clientId}`.pipe(Effect.orDie)
        yield* revokeGrants(rows.map((row) => row.grant_id))
      })

      return OAuth.of({
        createClient,
        listClients: sql<ClientRow>`
          select client_id, name, redirect_uris, refresh_tokens, created_at from oauth_clients
          order by created_at, client_id`.pipe(
          Effect.orDie,
          Effect.map((rows) => rows.map(clientView))
        ),
        getClient,
        deleteClient,
        issueCode,
        exchangeCode,
        refresh,
        revoke
      })
    })
  )
}
