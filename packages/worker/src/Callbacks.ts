/**
 * The provider's callbacks, received at `{site_url}/internal/provider/callback/{task_id}?token=`.
 * Callbacks are unsigned, so the per-task secret token in the URL is what makes one ours; even
 * then a callback is only a hint: it makes the task due now, and the worker confirms through
 * record-info before any transition. The final stages (`complete`, `error`) and `first` (audio
 * can be heard: the task's previews, decision 0126) are acted on; `text` is answered without a
 * query. A final callback for a task whose submission
 * outcome we never learned (time-out, lost connection) carries the provider's task id, which is
 * how such a task is reconciled without submitting it again. Duplicate, late and forged
 * callbacks change nothing.
 *
 * Exports (`exp_...`) and lyrics tasks (`lyt_...`) are called back at the same address with a token of their own; their
 * callback only makes an accepted export due now. An export whose submission outcome is unknown
 * is not adopted from a callback (its provider id is the adapter's own encoding, which a
 * callback does not carry): its deadline fails it with its refund.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { hasIdShape, stillPending } from "@lyre/core"
import type { ProviderCallback } from "@lyre/core/provider/outcomes"
import { Provider } from "@lyre/core/provider/Provider"
import { Wakeup } from "./Wakeup.ts"

/** `not_found`: no such task or a wrong token (indistinguishable to the caller). */
export type CallbackReceipt = "accepted" | "ignored" | "not_found"

/** A stage that changes nothing for a task: `text` (the lyrics are written; no audio yet). */
const progress = (callback: ProviderCallback | null): boolean => callback !== null && callback.stage === "text"

/** An export's progress stages: only its end makes it due. */
const exportProgress = (callback: ProviderCallback | null): boolean =>
  callback !== null && callback.stage !== "complete" && callback.stage !== "error"

export class ProviderCallbacks extends Context.Service<
  ProviderCallbacks,
  {
    readonly receive: (taskId: string, token: string, body: unknown) => Effect.Effect<CallbackReceipt>
    /**
     * True for a progress stage (`text`): nothing to do, so the HTTP adapter may answer
     * 200 at once without running `receive`.
     */
    readonly isProgress: (body: unknown) => boolean
  }
>()("lyre/worker/Callbacks") {
  static readonly layer = Layer.effect(
    ProviderCallbacks,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const provider = yield* Provider
      const wakeup = yield* Wakeup

      // Untraced: one call per callback, on the intake's hot path.
      /** An export's or a lyrics task's callback: found by id and token, it makes the row due now. */
      const receiveHint = Effect.fnUntraced(function* (table: "exports" | "lyrics_tasks", id: string, token: string) {
        const nowIso = new Date(yield* Clock.currentTimeMillis).toISOString()
        const rows = sql.literal(table)
        const [found] = yield* sql<{ changed: number }>`
          with found as (
            select id from ${rows}
            where id = ${id} and callback_token is not null
              and sha256(convert_to(callback_token, 'UTF8')) = sha256(convert_to(${token}::text, 'UTF8'))
          ),
          changed as (
            update ${rows} e set next_poll_at = ${nowIso}::timestamptz, hints = e.hints + 1
            from found
            where e.id = found.id and e.status = 'pending' and e.submission_state = 'accepted'
            returning e.id
          )
          select (select count(*) from changed)::int as changed from found`.pipe(Effect.orDie)
        if (found === undefined) return "not_found" as const
        return found.changed === 0 ? ("ignored" as const) : ("accepted" as const)
      })

      const receive = Effect.fnUntraced(function* (taskId: string, token: string, body: unknown) {
        if (token !== "" && hasIdShape("export", taskId)) {
          if (exportProgress(provider.parseCallback(body))) return "ignored" as const
          return yield* receiveHint("exports", taskId, token)
        }
        // The upstream's lyrics have one stage (complete): any callback makes the task due now.
        if (token !== "" && hasIdShape("lyrics", taskId)) return yield* receiveHint("lyrics_tasks", taskId, token)
        if (!hasIdShape("task", taskId) || token === "") return "not_found" as const
        const callback = provider.parseCallback(body)
        // `text` only says the task is on its way: nothing to do, no query. `first` makes it due:
        // the look finds its streams.
        if (progress(callback)) return "ignored" as const
        const providerTaskId = callback?.providerTaskId ?? null
        const nowIso = new Date(yield* Clock.currentTimeMillis).toISOString()
        const remote = wakeup.remote()
        // One statement, so it cannot interleave with the create call recording the submission:
        // find the task by id and token, adopt the provider's task id if we never learned it,
        // make the task due now, and (on PostgreSQL, unless this process's worker has room) wake
        // other processes' workers at commit.
        // The tokens are compared through their SHA-256 digests, so the comparison's time says
        // nothing about the secret (as timingSafeEqual would ensure in process). A hint for a task
        // whose provider id we hold commits without waiting for the WAL flush (relaxed): lost in
        // a crash, it only leaves the task to its next poll. Adopting a provider's task id (the
        // only record of an unknown submission) waits for the flush as before.
        const [task] = yield* sql<{ changed: number }>`
          with task as (
            select id, provider_task_id from generation_tasks
            where id = ${taskId} and callback_token is not null
              and sha256(convert_to(callback_token, 'UTF8')) = sha256(convert_to(${token}::text, 'UTF8'))
          ),
          relaxed as (
            select set_config('synchronous_commit', case when provider_task_id is null then 'on' else 'off' end, true)
            from task
          ),
          changed as (
            update generation_tasks t
            set provider_task_id = coalesce(t.provider_task_id, ${providerTaskId}::text),
                submission_state = 'accepted', next_poll_at = ${nowIso}::timestamptz, hints = t.hints + 1
            from task
            where t.id = task.id and ${sql.literal(stillPending("t"))}
              and coalesce(t.provider_task_id, ${providerTaskId}::text) is not null
              and exists (select 1 from relaxed)
            returning t.id
          )
          select ${
            remote === null
              ? sql`(select count(*) from changed)::int`
              : sql`(select count(*) from changed, lateral (select pg_notify(${remote.channel}, ${remote.payload})) sent)::int`
          } as changed
          from task`.pipe(Effect.orDie)
        if (task === undefined) return "not_found" as const
        // Found but not changed: no longer pending, or a task id still unknown to both sides.
        if (task.changed === 0) return "ignored" as const
        yield* wakeup.notifyLocal
        return "accepted" as const
      })

      return ProviderCallbacks.of({ receive, isProgress: (body) => progress(provider.parseCallback(body)) })
    })
  )
}
