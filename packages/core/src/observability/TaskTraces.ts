/**
 * A task's trace: when traces are exported, create stores the trace context of its request on
 * the task row, and the worker processes the task in a span of that trace, so one trace shows
 * the request, the provider's submission and the worker's later polls, re-hosting and
 * completion. Off (the default), nothing is stored and the worker opens no span per task.
 */
import { Context, Effect, Option, Tracer } from "effect"

/** True when the composition root exports traces. */
export const TaskTraces = Context.Reference<boolean>("lyre/core/observability/TaskTraces", {
  defaultValue: () => false
})

const separator = " "

/** The current span as stored on the task: trace id, span id, and the request id when known. */
export const currentTraceContext: Effect.Effect<string | null> = Effect.map(
  Effect.option(Effect.currentSpan),
  (span) => {
    if (Option.isNone(span)) return null
    const requestId = span.value.attributes.get("request_id")
    return [span.value.traceId, span.value.spanId, typeof requestId === "string" ? requestId : ""].join(separator)
  }
)

/** The stored context as the parent of the worker's span, with the request id to carry on. */
export const traceParentOf = (
  stored: string | null
): { readonly parent: Tracer.ExternalSpan; readonly requestId: string } | null => {
  const [traceId, spanId, requestId] = stored?.split(separator) ?? []
  if (traceId === undefined || spanId === undefined || traceId === "" || spanId === "") return null
  return { parent: Tracer.externalSpan({ traceId, spanId }), requestId: requestId ?? "" }
}

/**
 * `Effect.fn(name)` when traces are exported, else `Effect.fnUntraced`. A traced function
 * captures a stack trace on every call to name its span's call site, about 4 µs, and does so
 * even when spans are switched off (docs/decisions/0059-spans-only-when-exported.md), so the
 * functions on a request's path choose once, where their layer is built.
 */
export const fnTracedWhen = (traced: boolean, name: string): typeof Effect.fnUntraced =>
  traced ? Effect.fn(name) : Effect.fnUntraced
