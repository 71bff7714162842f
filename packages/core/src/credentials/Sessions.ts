/**
 * Browser sessions of account holders (the sign-in page, the authorize flow, the dashboard).
 * A session token is 43 base62 characters shown only in the cookie; the database keeps its keyed
 * hash, so every process sees a sign-out at once. Failed sign-ins are slowed per email and per
 * client address: past a few failures each further attempt must wait, doubling up to a cap, and
 * an attempt while waiting is refused before any password is checked.
 */
import { createHmac, randomBytes } from "node:crypto"
import { Clock, Context, Data, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { doubled } from "../domain/backoff.ts"
import { Ids, randomBase62 } from "../domain/ids.ts"
import { decoyPasswordHash, verifyPassword } from "../domain/passwords.ts"
import { Settings } from "../platform/Settings.ts"

/** A session lives this long from sign-in, whatever its use. */
export const sessionLifetimeMillis = 12 * 60 * 60 * 1000

/** Failures allowed per email, then per address, before each attempt must wait. */
const freeFailures = { email: 5, address: 20 } as const
/** The wait after the first failure past the free ones; it doubles with each further failure. */
const firstWaitSeconds = 1
const maxWaitSeconds = 300
/** Failures older than this no longer count. */
const forgetAfterMillis = 15 * 60 * 1000

export interface SignedIn {
  /** The cookie's value; nothing else ever holds it in clear. */
  readonly sessionToken: string
  /** Put in every form of this session and checked on every POST. */
  readonly csrfToken: string
  readonly accountId: string
  readonly expiresAt: Date
}

export interface ActiveSession {
  readonly sessionId: string
  readonly accountId: string
  readonly csrfToken: string
  readonly expiresAt: Date
}

/** Unknown email, wrong password or no password set: one answer for all, so none leaks. */
export class BadCredentials extends Data.TaggedError("BadCredentials")<{ readonly message: string }> {}
/** Too many recent failures for this email or this address. */
export class SignInThrottled extends Data.TaggedError("SignInThrottled")<{
  readonly message: string
  readonly retryAfterSeconds: number
}> {}

export type SignInFailure = BadCredentials | SignInThrottled

interface ThrottleRow {
  readonly key: string
  readonly failures: number
  readonly last_failure_at: Date
}

/** Whole seconds an attempt must still wait after `failures` failures, the last at `last`. */
export const throttleWaitSeconds = (failures: number, free: number, last: number, now: number): number => {
  if (failures < free || now - last >= forgetAfterMillis) return 0
  const wait = doubled(firstWaitSeconds, maxWaitSeconds, failures - free) * 1000
  return Math.max(0, Math.ceil((last + wait - now) / 1000))
}

export class Sessions extends Context.Service<
  Sessions,
  {
    readonly signIn: (email: string, password: string, clientAddress: string) => Effect.Effect<SignedIn, SignInFailure>
    readonly resolve: (sessionToken: string) => Effect.Effect<Option.Option<ActiveSession>>
    readonly signOut: (sessionToken: string) => Effect.Effect<void>
  }
>()("lyre/core/credentials/Sessions") {
  static readonly layer = Layer.effect(
    Sessions,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const ids = yield* Ids
      const settings = yield* Settings
      const hashToken = (token: string) =>
        createHmac("sha256", settings.secretKey).update(`session:${token}`).digest("hex")

      const keysFor = (email: string, address: string) => [
        { key: `email:${email}`, free: freeFailures.email },
        { key: `address:${address}`, free: freeFailures.address }
      ]

      const signIn = Effect.fn("Sessions.signIn")(function* (
        rawEmail: string,
        password: string,
        clientAddress: string
      ) {
        const email = rawEmail.trim().toLowerCase()
        const keys = keysFor(email, clientAddress)
        const now = yield* Clock.currentTimeMillis
        const throttles = yield* sql<ThrottleRow>`
          select key, failures, last_failure_at from signin_throttle
          where key in (${keys[0]?.key ?? ""}, ${keys[1]?.key ?? ""})`.pipe(Effect.orDie)
        const wait = Math.max(
          0,
          ...keys.map(({ key, free }) => {
            const row = throttles.find((r) => r.key === key)
            return row === undefined ? 0 : throttleWaitSeconds(row.failures, free, row.last_failure_at.getTime(), now)
          })
        )
        if (wait > 0) {
          return yield* new SignInThrottled({
            message: `Too many failed sign-ins. Try again in ${wait} seconds.`,
            retryAfterSeconds: wait
          })
        }
        const accounts = yield* sql<{ id: string; password_hash: string | null }>`
          select id, password_hash from accounts where email = ${email}`.pipe(Effect.orDie)
        const account = accounts[0]
        const matches = yield* verifyPassword(password, account?.password_hash ?? decoyPasswordHash)
        const at = new Date(now).toISOString()
        if (account === undefined || account.password_hash === null || !matches) {
          // A failure counts afresh once the earlier ones are forgotten.
          for (const { key } of keys) {
            yield* sql`
              insert into signin_throttle (key, failures, last_failure_at) values (${key}, 1, ${at}::timestamptz)
              on conflict (key) do update set
                failures = case when signin_throttle.last_failure_at <= ${at}::timestamptz - interval '15 minutes'
                  then 1 else signin_throttle.failures + 1 end,
                last_failure_at = excluded.last_failure_at`.pipe(Effect.orDie)
          }
          // Forgotten failures are swept by new ones.
          yield* sql`delete from signin_throttle where last_failure_at <= ${at}::timestamptz - interval '15 minutes'`.pipe(
            Effect.orDie
          )
          return yield* new BadCredentials({ message: "The email or password is not correct." })
        }
        yield* sql`delete from signin_throttle where key = ${keys[0]?.key ?? ""}`.pipe(Effect.orDie)
        const sessionId = yield* ids.make("session")
        const sessionToken = randomBase62(43)
        const csrfToken = randomBytes(24).toString("base64url")
        const expiresAt = new Date(now + sessionLifetimeMillis)
        yield* sql`
          insert into sessions (id, token_hash, account_id, csrf_token, expires_at, created_at)
          values (${sessionId}, ${hashToken(sessionToken)}, ${account.id}, ${csrfToken},
                  ${expiresAt.toISOString()}::timestamptz, ${at}::timestamptz)`.pipe(Effect.orDie)
        // Expired sessions are swept by sign-ins, so the table holds live ones and a few more.
        yield* sql`delete from sessions where expires_at <= ${at}::timestamptz`.pipe(Effect.orDie)
        return { sessionToken, csrfToken, accountId: account.id, expiresAt }
      })

      const resolve = Effect.fn("Sessions.resolve")(function* (sessionToken: string) {
        if (!/^[0-9A-Za-z]{43}$/.test(sessionToken)) return Option.none<ActiveSession>()
        const now = yield* Clock.currentTimeMillis
        const rows = yield* sql<{ id: string; account_id: string; csrf_token: string; expires_at: Date }>`
          select id, account_id, csrf_token, expires_at from sessions
          where token_hash = ${hashToken(sessionToken)} and expires_at > ${new Date(now).toISOString()}::timestamptz`.pipe(
          Effect.orDie
        )
        const row = rows[0]
        return row === undefined
          ? Option.none<ActiveSession>()
          : Option.some({
              sessionId: row.id,
              accountId: row.account_id,
              csrfToken: row.csrf_token,
              expiresAt: row.expires_at
            })
      })

      const signOut = Effect.fn("Sessions.signOut")(function* (sessionToken: string) {
        yield* sql`delete from sessions where token_hash = ${hashToken(sessionToken)}`.pipe(Effect.orDie)
      })

      return Sessions.of({ signIn, resolve, signOut })
    })
  )
}
