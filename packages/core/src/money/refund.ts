/**
 * The refund of paid work that failed (a generation, an export, a lyrics task), as the CTEs that
 * follow the caller's own `failed` CTE in one statement. `failed` sets the work's row to failed
 * where it was still pending and returns its `id`, `account_id`, `debit_subscription`,
 * `debit_onetime` and, for work that held an in-flight slot, `credential_subject`. Since only the
 * statement that moved the work out of pending gets a row from `failed`, the refund happens once.
 *
 * What the charge took goes back to the buckets it came from; the credential's slot is freed
 * first (its counter row before the account row, the order every statement that takes both
 * keeps); `credits.low` is re-armed as the balance rises; the ledger gets the refund's row.
 */
import type { SqlClient } from "effect/sql/SqlClient"
import type { Fragment } from "effect/sql/Statement"
import { armedAfter } from "../domain/creditAlert.ts"

/** A refund, in the SET of the update of `accounts a` from the failed work. */
export const refundAlert = {
  before: "a.subscription_credits + a.onetime_credits",
  after: "a.subscription_credits + a.onetime_credits + failed.debit_subscription + failed.debit_onetime",
  threshold: "a.credit_alert_threshold",
  armed: "a.credit_alert_armed"
}

export interface RefundOfFailed {
  readonly ledgerId: string
  readonly nowIso: string
  /** The ledger column that names the work: `task_id`, `export_id` or `lyrics_id`. */
  readonly ledgerColumn: "task_id" | "export_id" | "lyrics_id"
  /** Whether the work held a slot of its credential's in-flight counter (lyrics hold none). */
  readonly freesSlot: boolean
  /** Columns of `failed` that the CTE `refunded` returns too, for the statement's final select. */
  readonly carry?: ReadonlyArray<string>
}

/** `freed` (where the work held a slot), `refunded` and `entry`, each followed by a comma but the last. */
export const refundOfFailed = (sql: SqlClient, refund: RefundOfFailed): Fragment => {
  const carried = (refund.carry ?? []).map((column) => `, failed.${column}`).join("")
  const freed = refund.freesSlot
    ? sql`freed as (
        update credential_inflight c set pending = c.pending - 1
        from failed where c.subject = failed.credential_subject
        returning c.subject
      ),`
    : sql``
  return sql`${freed}
    refunded as (
      update accounts a
      set subscription_credits = a.subscription_credits + failed.debit_subscription,
          onetime_credits = a.onetime_credits + failed.debit_onetime,
          credit_alert_armed = ${sql.literal(armedAfter(refundAlert))},
          updated_at = ${refund.nowIso}::timestamptz
      from failed${sql.literal(refund.freesSlot ? " left join freed on true" : "")}
      where a.id = failed.account_id
      returning a.id as account_id, a.subscription_credits, a.onetime_credits, failed.id as work_id,
                failed.debit_subscription, failed.debit_onetime${sql.literal(carried)}
    ),
    entry as (
      insert into credit_ledger (id, account_id, kind, ${sql.literal(refund.ledgerColumn)}, subscription_delta,
        onetime_delta, subscription_after, onetime_after, created_at)
      select ${refund.ledgerId}, account_id, 'refund', work_id, debit_subscription, debit_onetime,
             subscription_credits, onetime_credits, ${refund.nowIso}::timestamptz
      from refunded
    )`
}
