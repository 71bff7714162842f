/**
 * OAuth access tokens: RFC 9068 JWTs signed ES256, 15 minutes. Verification pins the algorithm
 * and the `at+jwt` type, checks issuer, audience (the resource the surface serves), expiry and
 * not-before, then asks two live questions on every request: is this `jti` on the deny-list
 * (RFC 7009 revocation), and is its grant (named in the `jti`) still standing, with the account
 * on a plan that may use the API. Nothing about an account is cached, as for API keys.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { decodeProtectedHeader, errors, jwtVerify, SignJWT } from "jose"
import { CredentialExpired, CredentialRevoked, InvalidCredential, type TierInsufficient } from "../domain/errors.ts"
import type { AuthenticationError } from "../domain/errors.ts"
import { hasIdShape, randomBase62 } from "../domain/ids.ts"
import { accessTokenLifetimeSeconds } from "./domain/oauth.ts"
import { principalOf } from "../domain/principal.ts"
import type { AccountStanding, Principal } from "../domain/principal.ts"
import { requireAccessTier } from "../domain/access.ts"
import { DenyList } from "./DenyList.ts"
import { Settings } from "../platform/Settings.ts"
import { SigningKeys } from "./SigningKeys.ts"

/** How many verified tokens a process remembers (about 15 minutes' worth of distinct tokens). */
const verifiedCacheSize = 10_000

/** Three base64url parts: what tells an access token from an API key. */
export const jwtShape = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/

export interface IssuedAccessToken {
  readonly accessToken: string
  readonly jti: string
  readonly expiresAt: Date
}

/** The limits subject of a token: the account and the client together. */
export const oauthSubject = (accountId: string, clientId: string): string => `oauth:${accountId}:${clientId}`

interface TokenRow extends AccountStanding {
  readonly account_id: string
  readonly revoked_at: Date | null
}

/** The claims a verified token carries, as the authorization server reads them back. */
export interface VerifiedClaims {
  readonly jti: string
  readonly sub: string
  readonly clientId: string
  readonly scopes: ReadonlyArray<string>
  readonly expiresAtMillis: number
}

export class AccessTokens extends Context.Service<
  AccessTokens,
  {
    readonly issue: (input: {
      readonly accountId: string
      readonly clientId: string
      readonly scopes: ReadonlyArray<string>
      readonly resource: string
      readonly grantId: string
    }) => Effect.Effect<IssuedAccessToken>
    /** The caller behind a token sent to `audience`; 401 for the token, then 403 for the plan. */
    readonly authenticate: (
      token: string,
      audience: string
    ) => Effect.Effect<Principal, AuthenticationError | TierInsufficient>
    /** Signature, type, issuer and expiry, any audience: for revocation. */
    readonly inspect: (token: string) => Effect.Effect<VerifiedClaims | undefined>
    readonly deny: (jti: string, expiresAtMillis: number) => Effect.Effect<void>
  }
>()("lyre/core/credentials/AccessTokens") {
  static readonly layer = Layer.effect(
    AccessTokens,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const settings = yield* Settings
      const keys = yield* SigningKeys
      const denyList = yield* DenyList
      const issuer = settings.publicUrl
      /**
       * Tokens whose signature and claims have been verified, by the token itself: a signature
       * checks out the same every time, so it is checked once per token and process. Expiry and
       * audience are checked again on every use, and the live questions are always asked.
       */
      const verified = new Map<string, VerifiedClaims & { readonly audience: string }>()
      const remember = (token: string, claims: VerifiedClaims & { readonly audience: string }) => {
        if (verified.size >= verifiedCacheSize) {
          const oldest = verified.keys().next()
          if (oldest.done !== true) verified.delete(oldest.value)
        }
        verified.set(token, claims)
      }

      const issue = Effect.fn("AccessTokens.issue")(function* (input: {
        readonly accountId: string
        readonly clientId: string
        readonly scopes: ReadonlyArray<string>
        readonly resource: string
        readonly grantId: string
      }) {
        const { kid, key } = yield* keys.active
        const now = yield* Clock.currentTimeMillis
        const iat = Math.floor(now / 1000)
        const exp = iat + accessTokenLifetimeSeconds
        // The jti names the grant it descends from, so a request looks up one grant row, not a
        // row per token; the random part makes it unique.
        const jti = `${input.grantId}.${randomBase62(24)}`
        const accessToken = yield* Effect.promise(() =>
          new SignJWT({ scope: input.scopes.join(" "), client_id: input.clientId })
            .setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid })
            .setIssuer(issuer)
            .setAudience(input.resource)
            .setSubject(input.accountId)
            .setJti(jti)
            .setIssuedAt(iat)
            .setNotBefore(iat)
            .setExpirationTime(exp)
            .sign(key)
        )
        return { accessToken, jti, expiresAt: new Date(exp * 1000) }
      })

      /** Verifies signature and claims; a failure is the 401 to answer. */
      const verify = (token: string, audience: string | undefined) =>
        Effect.gen(function* () {
          const invalid = () => new InvalidCredential({ message: "The access token is not valid." })
          const kid = yield* Effect.try({ try: () => decodeProtectedHeader(token), catch: invalid }).pipe(
            Effect.map((header) => header.kid)
          )
          const key = kid === undefined ? undefined : yield* keys.publicKey(kid)
          if (key === undefined) return yield* invalid()
          const now = yield* Clock.currentTimeMillis
          const { payload } = yield* Effect.tryPromise({
            try: () =>
              jwtVerify(token, key, {
                algorithms: ["ES256"],
                typ: "at+jwt",
                issuer,
                ...(audience === undefined ? {} : { audience }),
                currentDate: new Date(now),
                requiredClaims: ["exp", "iat", "jti", "sub", "client_id"]
              }),
            catch: (cause): AuthenticationError =>
              cause instanceof errors.JWTExpired
                ? new CredentialExpired({ message: "The access token has expired." })
                : cause instanceof errors.JWTClaimValidationFailed && cause.claim === "aud"
                  ? new InvalidCredential({ message: `The access token is not for ${audience ?? "this resource"}.` })
                  : invalid()
          })
          const { jti, sub, exp, client_id: clientId, scope } = payload
          if (
            typeof jti !== "string" ||
            typeof sub !== "string" ||
            typeof exp !== "number" ||
            typeof clientId !== "string"
          ) {
            return yield* invalid()
          }
          const claims: VerifiedClaims = {
            jti,
            sub,
            clientId,
            scopes: typeof scope === "string" ? scope.split(" ").filter((s) => s.length > 0) : [],
            expiresAtMillis: exp * 1000
          }
          return claims
        })

      /** A verified token's claims, from the cache while it is still within its life and for this audience. */
      const claimsOf = Effect.fnUntraced(function* (token: string, audience: string) {
        const known = verified.get(token)
        if (known !== undefined) {
          const now = yield* Clock.currentTimeMillis
          if (known.audience === audience && now < known.expiresAtMillis) return known
        }
        const claims = yield* verify(token, audience)
        remember(token, { ...claims, audience })
        return claims
      })

      const authenticate = Effect.fnUntraced(function* (token: string, audience: string) {
        const claims = yield* claimsOf(token, audience)
        // Made only when answered: an error captures a stack, which costs more than the lookups.
        const revoked = () => new CredentialRevoked({ message: "The access token has been revoked." })
        const grantId = claims.jti.split(".")[0] ?? ""
        if (!hasIdShape("grant", grantId))
          return yield* new InvalidCredential({ message: "The access token is not valid." })
        // The deny-list (Redis) and the database are asked at once.
        const [denied, rows] = yield* Effect.all(
          [
            denyList.has(claims.jti),
            sql<TokenRow>`
            select a.id as account_id, a.plan, a.subscription_credits, a.onetime_credits, a.concurrency_limit,
                   a.requests_per_minute, g.revoked_at
            from oauth_grants g join accounts a on a.id = g.account_id
            where g.id = ${grantId} and g.client_id = ${claims.clientId}`.pipe(Effect.orDie)
          ],
          { concurrency: 2 }
        )
        if (denied) return yield* revoked()
        const row = rows[0]
        // No row: its client was deleted (and its grants with it).
        if (row === undefined || row.revoked_at !== null || row.account_id !== claims.sub) return yield* revoked()
        yield* requireAccessTier(row.plan)
        return principalOf(
          row.account_id,
          row,
          {
            scopes: claims.scopes,
            credential: { kind: "oauth", clientId: claims.clientId },
            subject: oauthSubject(row.account_id, claims.clientId)
          },
          settings.requestsPerMinute
        )
      })

      const inspect = (token: string) => verify(token, undefined).pipe(Effect.catch(() => Effect.succeed(undefined)))

      return AccessTokens.of({ issue, authenticate, inspect, deny: denyList.add })
    })
  )
}
