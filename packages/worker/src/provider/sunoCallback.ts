import type { ProviderCallback } from "@lyre/core/provider/outcomes"
import { Option, Schema } from "effect"

export type { CallbackStage, ProviderCallback } from "@lyre/core/provider/outcomes"

const CallbackBody = Schema.Struct({
  data: Schema.Struct({
    callbackType: Schema.Literals(["text", "first", "complete", "error"]),
    task_id: Schema.optional(Schema.String),
    taskId: Schema.optional(Schema.String)
  })
})

const decodeCallback = Schema.decodeUnknownOption(CallbackBody)

/**
 * Reads the upstream's callback body `{code, msg, data: {callbackType, task_id, data}}`. Nothing
 * else in it is trusted (callbacks are unsigned): the worker confirms through record-info.
 * Anything that is not a recognisable callback gives null.
 */
export const parseCallback = (body: unknown): ProviderCallback | null => {
  const decoded = decodeCallback(body)
  if (Option.isNone(decoded)) return null
  const providerTaskId = decoded.value.data.task_id || decoded.value.data.taskId
  return providerTaskId ? { providerTaskId, stage: decoded.value.data.callbackType } : null
}
