/**
 * The provider's callbacks, received at `{site_url}/internal/provider/callback/{task_id}?token=`.
 * Callbacks are unsigned, so the per-task secret token in the URL is what makes one ours; even
 * then a callback is only a hint: it makes the task due now, and the worker confirms through
 * record-info before any transition. Only the final stages (`complete`, `error`) are acted on;
 * `text` and `first` are answered without a query. A final callback for a task whose submission
 * outcome we never learned (time-out, lost connection) carries the provider's task id, which is
 * how such a task is reconciled without submitting it again. Duplicate, late and forged
 * callbacks change nothing.
 */
import { timingSafeEqual } from "node:crypto"
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { hasIdShape } from "@lyre/core"
import type { ProviderCallback } from "@lyre/core/provider/outcomes"
import { Provider } from "@lyre/core/provider/Provider"
import { Wakeup } from "./Wakeup.ts"

/** `not_found`: no such task or a wrong token (indistinguishable to the caller). */
export type CallbackReceipt = "accepted" | "ignored" | "not_found"

const tokensMatch = (expected: string, given: string): boolean => {
  const a = Buffer.from(expected)
  const b = Buffer.from(given)
  return a.length === b.length && timingSafeEqual(a, b)
}

const progress = (callback: ProviderCallback | null): boolean =>
  callback !== null && callback.stage !== "complete" && callback.stage !== "error"

export class ProviderCallbacks extends Context.Service<ProviderCallbacks, {
  readonly receive: (taskId: string, token: string, body: unknown) => Effect.Effect<CallbackReceipt>
  /**
   * True for a progress stage (`text`, `first`): nothing to do, so the HTTP adapter may answer
   * 200 at once without running `receive`.
   */
  readonly isProgress: (body: unknown) => boolean
}>()("lyre/worker/Callbacks") {
  static readonly layer = Layer.effect(
    ProviderCallbacks,
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const provider = yield* Provider
      const wakeup = yield* Wakeup

      const receive = Effect.fn("ProviderCallbacks.receive")(function*(taskId: string, token: string, body: unknown) {
        if (!hasIdShape("task", taskId) || token === "") return "not_found" as const
        const callback = provider.parseCallback(body)
        // Progress stages (text, first) only say the task is on its way: nothing to do, no query.
        if (progress(callback)) return "ignored" as const
        const [task] = yield* sql<{ callback_token: string | null; status: string }>`
          select callback_token, status from generation_tasks where id = ${taskId}`.pipe(Effect.orDie)
        if (task === undefined || task.callback_token === null || !tokensMatch(task.callback_token, token)) {
          return "not_found" as const
        }
        if (task.status !== "pending") return "ignored" as const
        const now = yield* Clock.currentTimeMillis
        const nowIso = new Date(now).toISOString()
        // One statement, so it cannot interleave with the create call recording the submission:
        // adopt the provider's task id if we never learned it, and make the task due now.
        const changed = yield* sql`
          update generation_tasks
          set provider_task_id = coalesce(provider_task_id, ${callback?.providerTaskId ?? null}::text),
              submission_state = 'accepted', next_poll_at = ${nowIso}::timestamptz, hints = hints + 1
          where id = ${taskId} and status = 'pending'
            and coalesce(provider_task_id, ${callback?.providerTaskId ?? null}::text) is not null
          returning id`.pipe(Effect.orDie)
        if (changed.length === 0) return "ignored" as const
        yield* wakeup.notify
        return "accepted" as const
      })

      return ProviderCallbacks.of({ receive, isProgress: (body) => progress(provider.parseCallback(body)) })
    })
  )
}
