import type { CallbackStage, ProviderCallback } from "@lyre/core/provider/outcomes"
import { Predicate } from "effect"

export type { CallbackStage, ProviderCallback } from "@lyre/core/provider/outcomes"

const stages: ReadonlySet<unknown> = new Set<CallbackStage>(["text", "first", "complete", "error"])
const isStage = (value: unknown): value is CallbackStage => stages.has(value)

/** Absent or a string (never null): how a callback writes its task id. */
const isMaybeId = (value: unknown): value is string | undefined => value === undefined || typeof value === "string"

interface WithTaskIds {
  readonly task_id?: string
  readonly taskId?: string
  readonly [field: string]: unknown
}

/** An object (not an array) whose `task_id` and `taskId` are each absent or a string. */
const hasTaskIds = (value: unknown): value is WithTaskIds =>
  Predicate.isObject(value) && isMaybeId(value["task_id"]) && isMaybeId(value["taskId"])

/** Generation and extension: `{code, msg, data: {callbackType, task_id, data}}`. */
const readGeneration = (body: unknown): ProviderCallback | null | undefined => {
  if (!Predicate.isObject(body)) return undefined
  const data = body["data"]
  if (!hasTaskIds(data)) return undefined
  const stage = data["callbackType"]
  if (!isStage(stage)) return undefined
  const providerTaskId = data.task_id || data.taskId
  return providerTaskId ? { providerTaskId, stage } : null
}

/**
 * The song tools' callbacks carry no stage, only the body code: WAV `{code, msg, data:
 * {audioWavUrl, task_id}}`, separation `{code, msg, data: {task_id, vocal_removal_info}}`, MIDI
 * `{task_id, code, msg, data: {state, instruments}}` (the task id beside `data`, or inside it).
 */
const readTool = (body: unknown): ProviderCallback | null => {
  if (!hasTaskIds(body) || typeof body["code"] !== "number") return null
  const data = body["data"]
  if (data !== undefined && data !== null && !hasTaskIds(data)) return null
  const providerTaskId = data?.task_id || data?.taskId || body.task_id || body.taskId
  return providerTaskId ? { providerTaskId, stage: body["code"] === 200 ? "complete" : "error" } : null
}

/**
 * Reads an upstream callback body. Nothing in it is trusted beyond "look now" (callbacks are
 * unsigned): the worker confirms through record-info. Anything that is not a recognisable
 * callback gives null. Read by hand, by the rules of the schemas it was decoded with before
 * (each field of its type, task ids absent or strings, other fields ignored): the API reads
 * every callback, three a task (decision 0119).
 */
export const parseCallback = (body: unknown): ProviderCallback | null => {
  const generation = readGeneration(body)
  return generation === undefined ? readTool(body) : generation
}
