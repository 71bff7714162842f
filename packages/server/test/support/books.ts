/**
 * The invariants every multi-process worker test ends with, checked in the database: every task
 * terminal, exactly one job event per task (no double transition), every failed task refunded
 * exactly once and no ready task refunded, each account's ledger summing to its balance, and
 * every credential's in-flight counter back at the number of its pending tasks (zero).
 */
import { expect } from "vitest"

type Query = <A extends object>(text: string, ...params: ReadonlyArray<unknown>) => Promise<ReadonlyArray<A>>

export const waitUntilTerminal = async (query: Query, withinMs: number): Promise<number> => {
  const deadline = Date.now() + withinMs
  while (true) {
    const [row] = await query<{ n: number }>("select count(*)::int as n from generation_tasks where status = 'pending'")
    const pending = row?.n ?? 0
    if (pending === 0) return 0
    if (Date.now() > deadline) {
      // The count alone says nothing of why: name what each task left behind was waiting for.
      const left = await query(`
        select id, request->>'title' as title, submission_state, provider_task_id, attempts, hints, last_error,
               lease_owner, lease_expires_at, next_poll_at, created_at, updated_at
        from generation_tasks where status = 'pending' order by created_at limit 10`)
      process.stdout.write(`tasks still pending after ${withinMs} ms: ${JSON.stringify(left, null, 2)}\n`)
      return pending
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

export const expectBooksBalanced = async (query: Query, expectedTasks: number) => {
  const byStatus = await query<{ status: string; n: number }>(
    "select status, count(*)::int as n from generation_tasks group by status order by status"
  )
  const counts = Object.fromEntries(byStatus.map((row) => [row.status, row.n]))
  expect(counts["pending"] ?? 0).toBe(0)
  expect((counts["ready"] ?? 0) + (counts["failed"] ?? 0)).toBe(expectedTasks)

  const events = await query<{ tasks: number; events: number; off: number }>(`
    select count(distinct payload->>'task_id')::int as tasks, count(*)::int as events,
           count(*) filter (where (type = 'job.completed') <> (t.status = 'ready'))::int as off
    from outbox_events e join generation_tasks t on t.id = e.payload->>'task_id'
    where e.type in ('job.completed', 'job.failed')`)
  expect(events[0]).toEqual({ tasks: expectedTasks, events: expectedTasks, off: 0 })

  const refunds = await query<{ id: string; status: string; refunds: number }>(`
    select t.id, t.status, count(l.id)::int as refunds
    from generation_tasks t left join credit_ledger l on l.task_id = t.id and l.kind = 'refund'
    group by t.id, t.status
    having count(l.id) <> case when t.status = 'failed' then 1 else 0 end`)
  expect(refunds).toEqual([])

  const unbalanced = await query<{ id: string }>(`
    select a.id from accounts a
    left join (select account_id, sum(subscription_delta)::int as s, sum(onetime_delta)::int as o
               from credit_ledger group by account_id) l on l.account_id = a.id
    where a.subscription_credits <> coalesce(l.s, 0) or a.onetime_credits <> coalesce(l.o, 0)`)
  expect(unbalanced).toEqual([])

  const drifted = await query<{ subject: string; pending: number; counted: number }>(`
    select c.subject, c.pending, count(t.id)::int as counted
    from credential_inflight c
    left join generation_tasks t on t.credential_subject = c.subject and t.status = 'pending'
    group by c.subject, c.pending
    having c.pending <> count(t.id)`)
  expect(drifted).toEqual([])
  return counts
}
