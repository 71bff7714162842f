/**
 * Developer API keys: `lyr_live_` + 32 base62 characters, shown once. Only a keyed hash is kept,
 * so a database leak does not leak usable keys; lookups go by that hash on every request, so a
 * revocation or a downgrade is seen by every process at once (nothing is cached).
 */
import { createHmac, createSecretKey, timingSafeEqual } from "node:crypto"
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import {
  CredentialExpired,
  CredentialRevoked,
  InvalidCredential,
  MissingCredential,
  ResourceNotFound
} from "../domain/errors.ts"
import type { TierInsufficient } from "../domain/errors.ts"
import type { AuthenticationError } from "../domain/errors.ts"
import { hasIdShape, Ids, randomBase62 } from "../domain/ids.ts"
import { keyExpiringPayload } from "../domain/keyExpiring.ts"
import { principalOf } from "../domain/principal.ts"
import type { AccountStanding, Principal } from "../domain/principal.ts"
import { requireAccessTier } from "../domain/access.ts"
import { AccessTokens, jwtShape } from "./AccessTokens.ts"
import { baseUrlOf, Settings } from "../platform/Settings.ts"

export const apiKeyPrefix = "lyr_live_"
const apiKeyShape = /^lyr_live_[0-9A-Za-z]{32}$/
/** How much of a key is kept in clear for display: the prefix and four characters. */
const displayLength = apiKeyPrefix.length + 4
/**
 * `last_used_at` is written at most once a minute per key (a conditional update, so racing
 * processes write it once): the hot path reads it with the key and writes nothing otherwise.
 */
const lastUsedResolutionMillis = 60_000
/** `key.expiring` goes out once a key has this little left (DESIGN.md section 4). */
const expiringWithinMillis = 24 * 60 * 60 * 1000

export interface CreatedApiKey {
  readonly id: string
  readonly key: string
  readonly name: string
  readonly prefix: string
  readonly scopes: ReadonlyArray<string>
  readonly expires_at: string | null
  readonly created_at: string
}

export interface NewApiKey {
  readonly name: string
  readonly scopes: ReadonlyArray<string>
  readonly expiresAt: Date | null
}

interface CredentialRow extends AccountStanding {
  readonly key_id: string
  readonly key_name: string
  readonly key_hash: string
  readonly scopes: ReadonlyArray<string>
  readonly expires_at: Date | null
  readonly revoked_at: Date | null
  readonly last_used_at: Date | null
  readonly account_id: string
}

export class ApiKeys extends Context.Service<
  ApiKeys,
  {
    readonly create: (accountId: string, key: NewApiKey) => Effect.Effect<CreatedApiKey, ResourceNotFound>
    readonly revoke: (keyId: string) => Effect.Effect<void, ResourceNotFound>
    /**
     * Resolves `Authorization` (an API key or an OAuth access token) to a principal: 401 for the
     * credential, then 403 for the plan. `resource` is what the surface serves, the audience an
     * access token must name; absent means base_url.
     */
    readonly authenticate: (
      authorization: string | undefined,
      resource?: string | undefined
    ) => Effect.Effect<Principal, AuthenticationError | TierInsufficient>
  }
>()("lyre/core/credentials/ApiKeys") {
  static readonly layer = Layer.effect(
    ApiKeys,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const ids = yield* Ids
      const settings = yield* Settings
      const accessTokens = yield* AccessTokens
      const baseUrl = baseUrlOf(settings)
      // The secret as a key object once: a string key is prepared again on every request's HMAC.
      const hmacKey = createSecretKey(Buffer.from(settings.secretKey, "utf8"))
      const hashKey = (key: string) => createHmac("sha256", hmacKey).update(key).digest("hex")

      const create = Effect.fn("ApiKeys.create")(function* (accountId: string, input: NewApiKey) {
        const id = yield* ids.make("apiKey")
        const key = apiKeyPrefix + randomBase62(32)
        const now = new Date(yield* Clock.currentTimeMillis)
        const eventId = yield* ids.make("event")
        // A key made with less than a day to live is already expiring: its one event goes with it.
        const expiring =
          input.expiresAt !== null &&
          input.expiresAt.getTime() > now.getTime() &&
          input.expiresAt.getTime() - now.getTime() <= expiringWithinMillis
        const rows = yield* sql<{ created_at: Date }>`
          with made as (
            insert into api_keys (id, account_id, name, prefix, key_hash, scopes, expires_at, created_at,
              expiring_notified_at)
            select ${id}, a.id, ${input.name}, ${key.slice(0, displayLength)}, ${hashKey(key)},
                   ${JSON.stringify(input.scopes)}::jsonb, ${input.expiresAt === null ? null : input.expiresAt.toISOString()}::timestamptz,
                   ${now.toISOString()}::timestamptz, ${expiring ? now.toISOString() : null}::timestamptz
            from accounts a where a.id = ${accountId}
            returning id, account_id, prefix, name, expires_at, created_at
          ),
          slots as (
            insert into credential_inflight (subject) select id from made
          ),
          event as (
            insert into outbox_events (id, account_id, type, payload, created_at)
            select ${eventId}, account_id, 'key.expiring', ${sql.literal(keyExpiringPayload("made", now.toISOString()))},
                   ${now.toISOString()}::timestamptz
            from made where ${expiring}::boolean
          )
          select created_at from made`.pipe(Effect.orDie)
        if (rows.length === 0) return yield* new ResourceNotFound({ message: `No account ${accountId}` })
        return {
          id,
          key,
          name: input.name,
          prefix: key.slice(0, displayLength),
          scopes: input.scopes,
          expires_at: input.expiresAt === null ? null : input.expiresAt.toISOString(),
          created_at: now.toISOString()
        }
      })

      const revoke = Effect.fn("ApiKeys.revoke")(function* (keyId: string) {
        const now = new Date(yield* Clock.currentTimeMillis)
        const rows = yield* sql<{ id: string }>`
          update api_keys set revoked_at = coalesce(revoked_at, ${now.toISOString()}::timestamptz)
          where id = ${keyId} returning id`.pipe(Effect.orDie)
        if (rows.length === 0) return yield* new ResourceNotFound({ message: `No API key ${keyId}` })
      })

      const noteUse = (keyId: string, now: number) => {
        const at = new Date(now).toISOString()
        const staleBefore = new Date(now - lastUsedResolutionMillis).toISOString()
        return sql`
          update api_keys set last_used_at = ${at}::timestamptz
          where id = ${keyId} and (last_used_at is null or last_used_at <= ${staleBefore}::timestamptz)`.pipe(
          Effect.orDie,
          Effect.asVoid
        )
      }

      const authenticate = Effect.fnUntraced(function* (authorization: string | undefined, resource?: string) {
        const match = authorization === undefined ? null : /^Bearer +(\S+) *$/i.exec(authorization)
        const credential = match?.[1]
        if (credential === undefined) {
          return yield* new MissingCredential({
            message: "Send a credential as `Authorization: Bearer <API key or access token>`."
          })
        }
        // The shapes are disjoint (a key has no dot): the key's, the common case, is tried first.
        if (!apiKeyShape.test(credential)) {
          if (jwtShape.test(credential)) return yield* accessTokens.authenticate(credential, resource ?? baseUrl)
          return yield* new InvalidCredential({ message: "The credential is not a valid API key or access token." })
        }
        const hash = hashKey(credential)
        const rows = yield* sql<CredentialRow>`
          select k.id as key_id, k.name as key_name, k.key_hash, k.scopes, k.expires_at, k.revoked_at, k.last_used_at,
                 a.id as account_id, a.plan, a.subscription_credits, a.onetime_credits,
                 a.concurrency_limit, a.requests_per_minute
          from api_keys k join accounts a on a.id = k.account_id
          where k.key_hash = ${hash}`.pipe(Effect.orDie)
        const row = rows[0]
        if (row === undefined || !timingSafeEqual(Buffer.from(row.key_hash), Buffer.from(hash))) {
          return yield* new InvalidCredential({ message: "The API key is not valid." })
        }
        if (row.revoked_at !== null) return yield* new CredentialRevoked({ message: "The API key has been revoked." })
        const now = yield* Clock.currentTimeMillis
        if (row.expires_at !== null && row.expires_at.getTime() <= now) {
          return yield* new CredentialExpired({ message: "The API key has expired." })
        }
        yield* requireAccessTier(row.plan)
        if (row.last_used_at === null || now - row.last_used_at.getTime() >= lastUsedResolutionMillis) {
          yield* noteUse(row.key_id, now)
        }
        return principalOf(
          row.account_id,
          row,
          {
            scopes: row.scopes,
            credential: { kind: "api_key", keyId: row.key_id, name: row.key_name, expiresAt: row.expires_at },
            subject: row.key_id
          },
          settings.requestsPerMinute
        )
      })

      return ApiKeys.of({
        create,
        revoke: (keyId) =>
          hasIdShape("apiKey", keyId)
            ? revoke(keyId)
            : Effect.fail(new ResourceNotFound({ message: `No API key ${keyId}` })),
        authenticate
      })
    })
  )
}
