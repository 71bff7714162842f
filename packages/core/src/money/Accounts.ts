/**
 * Accounts as the operator manages them: plan, limits, credit grants and adjustments. Every
 * balance change is one statement that updates the balance and appends its ledger row, so the
 * ledger always explains the balance.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { alertFires, armedAfter, creditsLowPayload } from "../domain/creditAlert.ts"
import { AlreadyExists, InvalidParameter, ResourceNotFound } from "../domain/errors.ts"
import { hasIdShape, Ids } from "../domain/ids.ts"
import { hashPassword } from "../domain/passwords.ts"
import type { Plan } from "../domain/models.ts"
import { defaultConcurrencyLimit } from "../domain/pricing.ts"
import { Settings } from "../platform/Settings.ts"

export interface AdminAccountView {
  readonly id: string
  readonly email: string
  readonly plan: Plan
  readonly credits: { readonly subscription: number; readonly onetime: number; readonly total: number }
  readonly credit_alert_threshold: number | null
  readonly concurrency_limit: number
  readonly requests_per_minute: number
}

export interface NewAccount {
  readonly email: string
  readonly password?: string | undefined
  readonly plan: Plan
  readonly subscription_credits?: number | undefined
  readonly onetime_credits?: number | undefined
  readonly credit_alert_threshold?: number | null | undefined
  readonly concurrency_limit?: number | null | undefined
  readonly requests_per_minute?: number | null | undefined
}

export interface AccountPatch {
  readonly plan?: Plan | undefined
  readonly credit_alert_threshold?: number | null | undefined
  readonly concurrency_limit?: number | null | undefined
  readonly requests_per_minute?: number | null | undefined
}

export interface CreditChange {
  readonly subscription?: number | undefined
  readonly onetime?: number | undefined
  readonly reason?: string | undefined
}

export interface LedgerEntry {
  readonly id: string
  readonly kind: "grant" | "debit" | "refund" | "adjustment"
  readonly task_id: string | null
  /** The export a debit or refund was for (song tools); null otherwise. */
  readonly export_id: string | null
  readonly subscription_delta: number
  readonly onetime_delta: number
  readonly subscription_after: number
  readonly onetime_after: number
  readonly reason: string | null
  readonly created_at: string
}

interface AccountRow {
  readonly id: string
  readonly email: string
  readonly plan: Plan
  readonly subscription_credits: number
  readonly onetime_credits: number
  readonly credit_alert_threshold: number | null
  readonly concurrency_limit: number | null
  readonly requests_per_minute: number | null
}

/** A grant or adjustment: `prev` is the locked row with the buckets after the change (`s2`, `o2`). */
const changeAlert = { before: "prev.s + prev.o", after: "prev.s2 + prev.o2", threshold: "prev.t", armed: "prev.armed" }

export class Accounts extends Context.Service<
  Accounts,
  {
    readonly create: (input: NewAccount) => Effect.Effect<AdminAccountView, AlreadyExists>
    readonly get: (id: string) => Effect.Effect<AdminAccountView, ResourceNotFound>
    readonly update: (id: string, patch: AccountPatch) => Effect.Effect<AdminAccountView, ResourceNotFound>
    /** Sets the sign-in password; the account's browser sessions end with the old one. */
    readonly setPassword: (id: string, password: string) => Effect.Effect<void, ResourceNotFound>
    readonly changeCredits: (
      id: string,
      change: CreditChange
    ) => Effect.Effect<AdminAccountView, ResourceNotFound | InvalidParameter>
    readonly ledger: (id: string) => Effect.Effect<ReadonlyArray<LedgerEntry>, ResourceNotFound>
  }
>()("lyre/core/money/Accounts") {
  static readonly layer = Layer.effect(
    Accounts,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const ids = yield* Ids
      const settings = yield* Settings

      const view = (row: AccountRow): AdminAccountView => ({
        id: row.id,
        email: row.email,
        plan: row.plan,
        credits: {
          subscription: row.subscription_credits,
          onetime: row.onetime_credits,
          total: row.subscription_credits + row.onetime_credits
        },
        credit_alert_threshold: row.credit_alert_threshold,
        concurrency_limit: row.concurrency_limit ?? defaultConcurrencyLimit(row.plan),
        requests_per_minute: row.requests_per_minute ?? settings.requestsPerMinute
      })

      const notFound = (id: string) => new ResourceNotFound({ message: `No account ${id}.` })

      const find = Effect.fnUntraced(function* (id: string) {
        if (!hasIdShape("account", id)) return yield* notFound(id)
        const [row] = yield* sql<AccountRow>`select * from accounts where id = ${id}`.pipe(Effect.orDie)
        if (row === undefined) return yield* notFound(id)
        return row
      })

      /**
       * Applies a balance change, its ledger row and any `credits.low` it causes in one statement;
       * none when it would go below zero.
       */
      const applyCredits = Effect.fnUntraced(function* (
        id: string,
        kind: "grant" | "adjustment",
        subscription: number,
        onetime: number,
        reason: string | null
      ) {
        const ledgerId = yield* ids.make("ledgerEntry")
        const lowEventId = yield* ids.make("event")
        const now = new Date(yield* Clock.currentTimeMillis).toISOString()
        return yield* sql<AccountRow>`
          with prev as (
            select id, subscription_credits as s, onetime_credits as o,
                   subscription_credits + ${subscription}::int as s2, onetime_credits + ${onetime}::int as o2,
                   credit_alert_threshold as t, credit_alert_armed as armed
            from accounts where id = ${id} for no key update
          ),
          changed as (
            update accounts a set subscription_credits = prev.s2, onetime_credits = prev.o2,
                                  credit_alert_armed = ${sql.literal(armedAfter(changeAlert))},
                                  updated_at = ${now}::timestamptz
            from prev
            where a.id = prev.id and prev.s2 >= 0 and prev.o2 >= 0
            returning a.*, ${sql.literal(alertFires(changeAlert))} as alert
          ),
          low as (
            insert into outbox_events (id, account_id, type, payload, created_at)
            select ${lowEventId}, id, 'credits.low',
                   ${sql.literal(creditsLowPayload("credit_alert_threshold", "subscription_credits", "onetime_credits"))},
                   ${now}::timestamptz
            from changed where alert
          ),
          entry as (
            insert into credit_ledger (id, account_id, kind, subscription_delta, onetime_delta, subscription_after,
              onetime_after, reason, created_at)
            select ${ledgerId}, id, ${kind}, ${subscription}, ${onetime}, subscription_credits, onetime_credits,
                   ${reason}, ${now}::timestamptz
            from changed
          )
          select * from changed`.pipe(Effect.orDie)
      })

      const create = Effect.fn("Accounts.create")(function* (input: NewAccount) {
        const id = yield* ids.make("account")
        const now = new Date(yield* Clock.currentTimeMillis).toISOString()
        const passwordHash = input.password === undefined ? null : yield* hashPassword(input.password)
        const inserted = yield* sql`
          insert into accounts (id, email, password_hash, plan, credit_alert_threshold, concurrency_limit,
            requests_per_minute, created_at, updated_at)
          values (${id}, ${input.email.toLowerCase()}, ${passwordHash}, ${input.plan},
            ${input.credit_alert_threshold ?? null}, ${input.concurrency_limit ?? null},
            ${input.requests_per_minute ?? null}, ${now}::timestamptz, ${now}::timestamptz)
          on conflict (email) do nothing
          returning id`.pipe(Effect.orDie)
        if (inserted.length === 0) {
          return yield* new AlreadyExists({ message: `An account with email ${input.email} exists.`, param: "email" })
        }
        const subscription = input.subscription_credits ?? 0
        const onetime = input.onetime_credits ?? 0
        if (subscription > 0 || onetime > 0) yield* applyCredits(id, "grant", subscription, onetime, "initial grant")
        return view(yield* find(id).pipe(Effect.orDie))
      })

      const update = Effect.fn("Accounts.update")(function* (id: string, patch: AccountPatch) {
        yield* find(id)
        const now = new Date(yield* Clock.currentTimeMillis).toISOString()
        const [row] = yield* sql<AccountRow>`
          update accounts set
            plan = ${patch.plan === undefined ? sql`plan` : sql`${patch.plan}`},
            credit_alert_threshold = ${
              patch.credit_alert_threshold === undefined
                ? sql`credit_alert_threshold`
                : sql`${patch.credit_alert_threshold}`
            },
            concurrency_limit = ${
              patch.concurrency_limit === undefined ? sql`concurrency_limit` : sql`${patch.concurrency_limit}`
            },
            requests_per_minute = ${
              patch.requests_per_minute === undefined ? sql`requests_per_minute` : sql`${patch.requests_per_minute}`
            },
            credit_alert_armed = ${
              patch.credit_alert_threshold === undefined
                ? sql`credit_alert_armed`
                : sql`(${patch.credit_alert_threshold}::int is null
                   or subscription_credits + onetime_credits >= ${patch.credit_alert_threshold}::int)`
            },
            updated_at = ${now}::timestamptz
          where id = ${id}
          returning *`.pipe(Effect.orDie)
        if (row === undefined) return yield* notFound(id)
        return view(row)
      })

      const changeCredits = Effect.fn("Accounts.changeCredits")(function* (id: string, change: CreditChange) {
        yield* find(id)
        const subscription = change.subscription ?? 0
        const onetime = change.onetime ?? 0
        const kind = subscription >= 0 && onetime >= 0 ? "grant" : "adjustment"
        const [row] = yield* applyCredits(id, kind, subscription, onetime, change.reason ?? null)
        if (row === undefined) {
          return yield* new InvalidParameter({
            message: "The change would take a credit balance below zero.",
            param: subscription < 0 ? "subscription" : "onetime"
          })
        }
        return view(row)
      })

      const ledger = Effect.fn("Accounts.ledger")(function* (id: string) {
        yield* find(id)
        const rows = yield* sql<Omit<LedgerEntry, "created_at"> & { created_at: Date }>`
          select id, kind, task_id, export_id, subscription_delta, onetime_delta, subscription_after, onetime_after, reason,
                 created_at
          from credit_ledger where account_id = ${id} order by seq`.pipe(Effect.orDie)
        return rows.map((row) => ({ ...row, created_at: row.created_at.toISOString() }))
      })

      const setPassword = Effect.fn("Accounts.setPassword")(function* (id: string, password: string) {
        yield* find(id)
        const hash = yield* hashPassword(password)
        const now = new Date(yield* Clock.currentTimeMillis).toISOString()
        yield* sql`update accounts set password_hash = ${hash}, updated_at = ${now}::timestamptz where id = ${id}`.pipe(
          Effect.orDie
        )
        yield* sql`delete from sessions where account_id = ${id}`.pipe(Effect.orDie)
      })

      return Accounts.of({
        create,
        get: (id) => Effect.map(find(id), view),
        update,
        setPassword,
        changeCredits,
        ledger
      })
    })
  )
}
