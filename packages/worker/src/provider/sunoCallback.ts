import type { ProviderCallback } from "@lyre/core/provider/outcomes"
import { Option, Schema } from "effect"

export type { CallbackStage, ProviderCallback } from "@lyre/core/provider/outcomes"

const taskIds = {
  task_id: Schema.optional(Schema.String),
  taskId: Schema.optional(Schema.String)
}

/** Generation and extension: `{code, msg, data: {callbackType, task_id, data}}`. */
const GenerationCallback = Schema.Struct({
  data: Schema.Struct({
    callbackType: Schema.Literals(["text", "first", "complete", "error"]),
    ...taskIds
  })
})

/**
 * The song tools' callbacks carry no stage, only the body code: WAV `{code, msg, data:
 * {audioWavUrl, task_id}}`, separation `{code, msg, data: {task_id, vocal_removal_info}}`, MIDI
 * `{task_id, code, msg, data: {state, instruments}}` (the task id beside `data`, or inside it).
 */
const ToolCallback = Schema.Struct({
  code: Schema.Number,
  ...taskIds,
  data: Schema.optional(Schema.NullOr(Schema.Struct(taskIds)))
})

const decodeGeneration = Schema.decodeUnknownOption(GenerationCallback)
const decodeTool = Schema.decodeUnknownOption(ToolCallback)

/**
 * Reads an upstream callback body. Nothing in it is trusted beyond "look now" (callbacks are
 * unsigned): the worker confirms through record-info. Anything that is not a recognisable
 * callback gives null.
 */
export const parseCallback = (body: unknown): ProviderCallback | null => {
  const generation = decodeGeneration(body)
  if (Option.isSome(generation)) {
    const providerTaskId = generation.value.data.task_id || generation.value.data.taskId
    return providerTaskId ? { providerTaskId, stage: generation.value.data.callbackType } : null
  }
  const tool = decodeTool(body)
  if (Option.isNone(tool)) return null
  const { code, data } = tool.value
  const providerTaskId = data?.task_id || data?.taskId || tool.value.task_id || tool.value.taskId
  return providerTaskId ? { providerTaskId, stage: code === 200 ? "complete" : "error" } : null
}
