/**
 * The authorization server's ES256 signing keys. The first start makes one; `rotate` retires the
 * active key and makes a new one. A retired key's public half stays in the key set (and is still
 * accepted) until every token it signed has expired. Private keys are stored encrypted with
 * AES-256-GCM under a key derived from SECRET_KEY, so a database dump alone signs nothing.
 */
import {
  createCipheriv,
  createDecipheriv,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  hkdfSync,
  randomBytes
} from "node:crypto"
import type { JsonWebKey, KeyObject } from "node:crypto"
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { randomBase62 } from "../domain/ids.ts"
import { accessTokenLifetimeSeconds } from "./domain/oauth.ts"
import { Settings } from "../platform/Settings.ts"

/** How long a process trusts what it loaded before it looks again (another process may rotate). */
const reloadAfterMillis = 30_000
/** An unknown `kid` makes a process look again, but not more often than this. */
const unknownKidReloadMillis = 1_000
/** Keys stay published this long past their retirement: a token's life plus clock skew. */
const publishedAfterRetirementMillis = (accessTokenLifetimeSeconds + 60) * 1000

export interface PublicJwk extends JsonWebKey {
  readonly kid: string
  readonly alg: "ES256"
  readonly use: "sig"
}

interface KeyRow {
  readonly kid: string
  readonly public_jwk: JsonWebKey
  readonly private_key: string
  readonly created_at: Date
  readonly retired_at: Date | null
}

interface Loaded {
  readonly at: number
  readonly active: { readonly kid: string; readonly key: KeyObject }
  readonly publics: ReadonlyMap<string, KeyObject>
  readonly jwks: { readonly keys: ReadonlyArray<PublicJwk> }
}

const encryptionKey = (secretKey: string) =>
  Buffer.from(hkdfSync("sha256", secretKey, "lyre", "lyre signing key encryption", 32))

const seal = (secretKey: string, plain: Buffer): string => {
  const iv = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", encryptionKey(secretKey), iv)
  const body = Buffer.concat([cipher.update(plain), cipher.final()])
  return ["v1", iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), body.toString("base64url")].join(
    "."
  )
}

const unseal = (secretKey: string, sealed: string): Buffer => {
  const [, iv = "", tag = "", body = ""] = sealed.split(".")
  const decipher = createDecipheriv("aes-256-gcm", encryptionKey(secretKey), Buffer.from(iv, "base64url"))
  decipher.setAuthTag(Buffer.from(tag, "base64url"))
  return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()])
}

export class SigningKeys extends Context.Service<
  SigningKeys,
  {
    /** The key new tokens are signed with. */
    readonly active: Effect.Effect<{ readonly kid: string; readonly key: KeyObject }>
    /** The public key of `kid` if it is published (active, or retired and not yet past its tokens). */
    readonly publicKey: (kid: string) => Effect.Effect<KeyObject | undefined>
    /** `/.well-known/jwks.json`. */
    readonly jwks: Effect.Effect<{ readonly keys: ReadonlyArray<PublicJwk> }>
    /** Retires the active key and makes a new one; answers the new key's id. */
    readonly rotate: Effect.Effect<{ readonly kid: string }>
  }
>()("lyre/core/credentials/SigningKeys") {
  static readonly layer = Layer.effect(
    SigningKeys,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const settings = yield* Settings

      const insertKey = (now: Date, onlyIfNoneActive: boolean) => {
        const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
        const kid = randomBase62(16)
        const sealed = seal(settings.secretKey, privateKey.export({ format: "der", type: "pkcs8" }))
        const jwk = JSON.stringify(publicKey.export({ format: "jwk" }))
        return sql`
          insert into signing_keys (kid, public_jwk, private_key, created_at)
          select ${kid}, ${jwk}::jsonb, ${sealed}, ${now.toISOString()}::timestamptz
          where not ${onlyIfNoneActive}::boolean or not exists (select 1 from signing_keys where retired_at is null)`.pipe(
          Effect.orDie,
          Effect.as(kid)
        )
      }

      const load = Effect.fnUntraced(function* () {
        const now = yield* Clock.currentTimeMillis
        const oldest = new Date(now - publishedAfterRetirementMillis).toISOString()
        const rows = yield* sql<KeyRow>`
          select kid, public_jwk, private_key, created_at, retired_at from signing_keys
          where retired_at is null or retired_at > ${oldest}::timestamptz
          order by created_at desc, kid`.pipe(Effect.orDie)
        const activeRow = rows.find((row) => row.retired_at === null) ?? rows[0]
        if (activeRow === undefined) return yield* Effect.die(new Error("No signing key: the first start makes one."))
        const publics = new Map<string, KeyObject>()
        const keys: Array<PublicJwk> = []
        for (const row of rows) {
          publics.set(row.kid, createPublicKey({ key: row.public_jwk, format: "jwk" }))
          keys.push({ ...row.public_jwk, kid: row.kid, alg: "ES256", use: "sig" })
        }
        const key = createPrivateKey({
          key: unseal(settings.secretKey, activeRow.private_key),
          format: "der",
          type: "pkcs8"
        })
        const loaded: Loaded = { at: now, active: { kid: activeRow.kid, key }, publics, jwks: { keys } }
        return loaded
      })

      yield* insertKey(new Date(yield* Clock.currentTimeMillis), true)
      let current = yield* load()

      const fresh = (maxAgeMillis: number) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          now - current.at < maxAgeMillis
            ? Effect.succeed(current)
            : Effect.map(load(), (loaded) => {
                current = loaded
                return loaded
              })
        )

      const publicKey = (kid: string) =>
        Effect.flatMap(fresh(reloadAfterMillis), (loaded) => {
          const known = loaded.publics.get(kid)
          return known !== undefined
            ? Effect.succeed(known)
            : Effect.map(fresh(unknownKidReloadMillis), (again) => again.publics.get(kid))
        })

      const rotate = Effect.gen(function* () {
        const now = new Date(yield* Clock.currentTimeMillis)
        yield* sql`update signing_keys set retired_at = ${now.toISOString()}::timestamptz where retired_at is null`.pipe(
          Effect.orDie
        )
        const kid = yield* insertKey(now, false)
        current = yield* load()
        return { kid }
      })

      return SigningKeys.of({
        active: Effect.map(fresh(reloadAfterMillis), (loaded) => loaded.active),
        publicKey,
        jwks: Effect.map(fresh(reloadAfterMillis), (loaded) => loaded.jwks),
        rotate
      })
    })
  )
}
