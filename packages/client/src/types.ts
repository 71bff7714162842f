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

export type Export = RouterOutputs["exports"]["get"]
export type ExportList = RouterOutputs["exports"]["list"]
export type ExportFile = Export["files"][number]
export type ExportFormat = Export["format"]
export type TimedWord = NonNullable<Export["timed_lyrics"]>[number]
/** The body of an extension: any create field (absent: the source's) and `continue_at`; the track is the path's. */
export type ExtendRequest = Omit<RouterInputs["tracks"]["extend"], "track_id">
