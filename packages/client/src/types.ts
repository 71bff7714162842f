/**
 * The shapes of the public API, inferred from core's router and zod schemas: never a hand copy,
 * so a field added to the interface reaches every client by its type.
 */
import type { ErrorEnvelope, RouterInputs, RouterOutputs } from "@lyre/core"

export type Account = RouterOutputs["me"]
export type GenerationTask = RouterOutputs["generations"]["get"]
export type GenerationTaskList = RouterOutputs["generations"]["list"]
export type Track = GenerationTask["tracks"][number]
export type TaskStatus = GenerationTask["status"]
/** The body of a create as a caller writes it: defaults (`instrumental`, `model`) may be left out. */
export type GenerateRequest = RouterInputs["generations"]["create"]
export type ErrorBody = ErrorEnvelope["error"]
export type ErrorType = ErrorBody["type"]
