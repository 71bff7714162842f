/**
 * What the account holder's dashboard adds to the services the admin API already uses: the
 * principal of a signed-in session, the account's own keys, and the ownership checks that keep
 * one account's session away from another's keys, endpoints and deliveries (another account's
 * id is simply not found). Changes themselves go through ApiKeys, Webhooks and Accounts.
 */
import { timingSafeEqual } from "node:crypto"
import { Clock, Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { CsrfTokenInvalid, InvalidCredential, MissingCredential, ResourceNotFound } from "../domain/errors.ts"
import { principalOf } from "../domain/principal.ts"
import type { AccountStanding, Principal } from "../domain/principal.ts"
import { oauthSubject } from "./AccessTokens.ts"
import { hasIdShape } from "../domain/ids.ts"
import { daysEnding, foldUsage } from "../domain/usage.ts"
import type { OutcomeRow, SpentRow, Usage } from "../domain/usage.ts"
import { Sessions } from "./Sessions.ts"
import { Settings } from "../platform/Settings.ts"

/** The first-party client a session speaks as, and what it may do (DESIGN.md section 5). */
export const dashboardClientId = "dashboard"
export const dashboardScopes = ["profile", "music:generate", "lyrics:agent"] as const

export interface ConsoleSession {
  readonly principal: Principal
  readonly email: string
  readonly csrfToken: string
}

export interface ApiKeyView {
  readonly id: string
  readonly name: string
  readonly prefix: string
  readonly scopes: ReadonlyArray<string>
  readonly created_at: string
  readonly last_used_at: string | null
  readonly expires_at: string | null
  readonly revoked_at: string | null
}

interface AccountRow extends AccountStanding {
  readonly id: string
  readonly email: string
  readonly credit_alert_armed: boolean
}

interface KeyRow {
  readonly id: string
  readonly name: string
  readonly prefix: string
  readonly scopes: ReadonlyArray<string>
  readonly created_at: Date
  readonly last_used_at: Date | null
  readonly expires_at: Date | null
  readonly revoked_at: Date | null
}

const isoOrNull = (date: Date | null) => (date === null ? null : date.toISOString())

/** Constant-time comparison of the CSRF header with the session's token. */
export const csrfMatches = (expected: string, given: string | undefined): boolean => {
  if (given === undefined) return false
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

export const requireCsrf = (
  signedIn: ConsoleSession,
  given: string | undefined
): Effect.Effect<void, CsrfTokenInvalid> =>
  csrfMatches(signedIn.csrfToken, given)
    ? Effect.void
    : Effect.fail(new CsrfTokenInvalid({ message: "This change needs the session's CSRF token (x-csrf-token)." }))

export class AccountConsole extends Context.Service<
  AccountConsole,
  {
    /** The signed-in account behind a session cookie: 401 without one, or for an unknown or expired one. */
    readonly signedIn: (
      sessionToken: string | undefined
    ) => Effect.Effect<ConsoleSession, MissingCredential | InvalidCredential>
    readonly creditAlertArmed: (accountId: string) => Effect.Effect<boolean>
    readonly keys: (accountId: string) => Effect.Effect<ReadonlyArray<ApiKeyView>>
    /** Fails with 404 unless the key, endpoint or delivery belongs to the account. */
    readonly ownKey: (accountId: string, keyId: string) => Effect.Effect<void, ResourceNotFound>
    readonly ownEndpoint: (accountId: string, endpointId: string) => Effect.Effect<void, ResourceNotFound>
    readonly ownDelivery: (accountId: string, deliveryId: string) => Effect.Effect<void, ResourceNotFound>
    /** The endpoint's current signing secret, for the account holder who asks to see it. */
    readonly endpointSecret: (accountId: string, endpointId: string) => Effect.Effect<string, ResourceNotFound>
    /** The overview's chart: the last 30 days' spending by model and song tool, and generations' outcomes. */
    readonly usage: (accountId: string) => Effect.Effect<Usage>
  }
>()("lyre/core/credentials/AccountConsole") {
  static readonly layer = Layer.effect(
    AccountConsole,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const sessions = yield* Sessions
      const settings = yield* Settings

      const signedIn = Effect.fn("AccountConsole.signedIn")(function* (sessionToken: string | undefined) {
        if (sessionToken === undefined || sessionToken === "") {
          return yield* new MissingCredential({ message: "Sign in to use the dashboard." })
        }
        const session = yield* sessions.resolve(sessionToken)
        if (Option.isNone(session)) {
          return yield* new InvalidCredential({ message: "The session has ended; sign in again." })
        }
        const { accountId, csrfToken } = session.value
        const [row] = yield* sql<AccountRow>`
          select id, email, plan, subscription_credits, onetime_credits, concurrency_limit, requests_per_minute,
                 credit_alert_armed
          from accounts where id = ${accountId}`.pipe(Effect.orDie)
        if (row === undefined) return yield* new InvalidCredential({ message: "The session has ended; sign in again." })
        // Limits are counted per account and client, as for every OAuth client.
        const principal = principalOf(
          row.id,
          row,
          {
            scopes: dashboardScopes,
            credential: { kind: "oauth", clientId: dashboardClientId },
            subject: oauthSubject(row.id, dashboardClientId)
          },
          settings.requestsPerMinute
        )
        return { principal, email: row.email, csrfToken }
      })

      const creditAlertArmed = (accountId: string) =>
        sql<{ armed: boolean }>`select credit_alert_armed as armed from accounts where id = ${accountId}`.pipe(
          Effect.orDie,
          Effect.map((rows) => rows[0]?.armed ?? false)
        )

      const keys = (accountId: string) =>
        sql<KeyRow>`
          select id, name, prefix, scopes, created_at, last_used_at, expires_at, revoked_at
          from api_keys where account_id = ${accountId}
          order by created_at desc, id desc`.pipe(
          Effect.orDie,
          Effect.map((rows) =>
            rows.map(
              (row): ApiKeyView => ({
                id: row.id,
                name: row.name,
                prefix: row.prefix,
                scopes: row.scopes,
                created_at: row.created_at.toISOString(),
                last_used_at: isoOrNull(row.last_used_at),
                expires_at: isoOrNull(row.expires_at),
                revoked_at: isoOrNull(row.revoked_at)
              })
            )
          )
        )

      const owned = (table: "api_keys" | "webhook_endpoints", kind: "apiKey" | "webhookEndpoint", what: string) =>
        Effect.fnUntraced(function* (accountId: string, id: string) {
          const notFound = () => new ResourceNotFound({ message: `No ${what} ${id}.` })
          if (!hasIdShape(kind, id)) return yield* notFound()
          const rows = yield* sql`
            select 1 from ${sql(table)} where id = ${id} and account_id = ${accountId}`.pipe(Effect.orDie)
          if (rows.length === 0) return yield* notFound()
        })

      const ownDelivery = Effect.fnUntraced(function* (accountId: string, deliveryId: string) {
        const notFound = () => new ResourceNotFound({ message: `No webhook delivery ${deliveryId}.` })
        if (!hasIdShape("delivery", deliveryId)) return yield* notFound()
        const rows = yield* sql`
          select 1 from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id
          where d.id = ${deliveryId} and w.account_id = ${accountId}`.pipe(Effect.orDie)
        if (rows.length === 0) return yield* notFound()
      })

      const ownEndpoint = owned("webhook_endpoints", "webhookEndpoint", "webhook endpoint")

      const endpointSecret = Effect.fnUntraced(function* (accountId: string, endpointId: string) {
        yield* ownEndpoint(accountId, endpointId)
        const [row] = yield* sql<{ secret: string }>`
          select secret from webhook_endpoints where id = ${endpointId}`.pipe(Effect.orDie)
        if (row === undefined) return yield* new ResourceNotFound({ message: `No webhook endpoint ${endpointId}.` })
        return row.secret
      })

      const usage = Effect.fn("AccountConsole.usage")(function* (accountId: string) {
        const days = daysEnding(yield* Clock.currentTimeMillis)
        const since = `${days[0]}T00:00:00Z`
        // A debit and its refund share the day their task or export was created (domain/usage.ts).
        const spent = yield* sql<SpentRow>`
          select to_char(coalesce(e.created_at, g.created_at, l.created_at) at time zone 'UTC', 'YYYY-MM-DD') as day,
                 case when l.export_id is not null then e.format
                      when g.source_track_id is not null then 'extend'
                      else g.model end as series,
                 (-sum(l.subscription_delta + l.onetime_delta))::int as credits
          from credit_ledger l
          left join exports e on e.id = l.export_id
          left join generation_tasks g on g.id = l.task_id
          where l.account_id = ${accountId} and l.kind in ('debit', 'refund')
            and coalesce(e.created_at, g.created_at, l.created_at) >= ${since}::timestamptz
          group by 1, 2`.pipe(Effect.orDie)
        const outcomes = yield* sql<OutcomeRow>`
          select to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD') as day, status, count(*)::int as count
          from generation_tasks
          where account_id = ${accountId} and status in ('ready', 'failed') and updated_at >= ${since}::timestamptz
          group by 1, 2`.pipe(Effect.orDie)
        return foldUsage(days, spent, outcomes)
      })

      return AccountConsole.of({
        usage,
        signedIn,
        creditAlertArmed,
        keys,
        ownKey: owned("api_keys", "apiKey", "API key"),
        ownEndpoint,
        ownDelivery,
        endpointSecret
      })
    })
  )
}
