/**
 * A ledger written by the test: generations, extensions and exports with their debits and
 * refunds on chosen days, as the services would have left them, for the usage chart's tests.
 */
import { randomBase62 } from "@lyre/core"
import type { TestServer } from "./harness.ts"

export interface LedgerPlan {
  /** Days before today (UTC). */
  readonly daysAgo: number
  readonly what: "aether" | "echo" | "nocturne" | "extend" | "wav" | "midi" | "stems" | "timed_lyrics"
  readonly credits: number
  readonly status: "ready" | "failed"
}

const at = (daysAgo: number): string => {
  const noon = new Date()
  noon.setUTCHours(12, 0, 0, 0)
  return new Date(noon.getTime() - daysAgo * 86_400_000).toISOString()
}

/** Writes each planned item and its debit (and, when it failed, its refund) for the account. */
export const writeLedger = async (
  server: TestServer,
  accountId: string,
  plan: ReadonlyArray<LedgerPlan>
): Promise<void> => {
  let balance = 100_000
  const ledger = async (
    kind: "debit" | "refund",
    delta: number,
    when: string,
    column: "task_id" | "export_id",
    id: string
  ) => {
    balance += delta
    await server.query(
      `insert into credit_ledger (id, account_id, kind, ${column}, subscription_delta, onetime_delta, subscription_after, onetime_after, created_at)
       values ($1, $2, $3, $4, $5, 0, $6, 0, $7::timestamptz)`,
      `led_${randomBase62(24)}`,
      accountId,
      kind,
      id,
      delta,
      balance,
      when
    )
  }
  const task = async (when: string, model: string, status: string, credits: number, sourceTrackId: string | null) => {
    const taskId = `gen_${randomBase62(24)}`
    await server.query(
      `insert into generation_tasks (id, account_id, credential_subject, status, model, request, credits_used,
         debit_subscription, debit_onetime, deadline_at, created_at, updated_at, tracks, provider_task_id, submission_state,
         source_track_id, credits_refunded)
       values ($1, $2, 'test', $3, $4, '{}'::jsonb, $5, $5, 0, $6::timestamptz, $6::timestamptz, $6::timestamptz, '[]'::jsonb, $1, 'accepted', $7, $8)`,
      taskId,
      accountId,
      status,
      model,
      credits,
      when,
      sourceTrackId,
      status === "failed" ? credits : 0
    )
    return taskId
  }
  // Every extension and export needs a track of a ready task to point at.
  const sourceTask = await task(at(60), "aether", "ready", 0, null)
  const trackId = `trk_${randomBase62(24)}`
  await server.query(
    `insert into tracks (id, task_id, account_id, track_index, provider_track_id, duration, created_at)
     values ($1, $2, $3, 0, null, 120, now())`,
    trackId,
    sourceTask,
    accountId
  )
  for (const item of plan) {
    const when = at(item.daysAgo)
    const isExport =
      item.what === "wav" || item.what === "midi" || item.what === "stems" || item.what === "timed_lyrics"
    if (isExport) {
      const exportId = `exp_${randomBase62(24)}`
      await server.query(
        `insert into exports (id, account_id, credential_subject, track_id, task_id, format, model, status, credits_used,
           credits_refunded, debit_subscription, debit_onetime, deadline_at, created_at, updated_at)
         values ($1, $2, 'test', $3, $4, $5, 'aether', $6, $7, $8, $7, 0, $9::timestamptz, $9::timestamptz, $9::timestamptz)`,
        exportId,
        accountId,
        trackId,
        sourceTask,
        item.what,
        item.status,
        item.credits,
        item.status === "failed" ? item.credits : 0,
        when
      )
      await ledger("debit", -item.credits, when, "export_id", exportId)
      // A refund written a day later still counts on the day the export was asked for.
      if (item.status === "failed")
        await ledger("refund", item.credits, at(Math.max(0, item.daysAgo - 1)), "export_id", exportId)
    } else {
      const model = item.what === "extend" ? "aether" : item.what
      const taskId = await task(when, model, item.status, item.credits, item.what === "extend" ? trackId : null)
      await ledger("debit", -item.credits, when, "task_id", taskId)
      if (item.status === "failed")
        await ledger("refund", item.credits, at(Math.max(0, item.daysAgo - 1)), "task_id", taskId)
    }
  }
}
