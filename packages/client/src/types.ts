/**
 * The shapes of the public API, inferred from core's router and zod schemas: never a hand copy,
 * so a field added to the interface reaches every client by its type.
 */
import type { ErrorEnvelope, RouterInputs, RouterOutputs } from "@lyre/core"

export type Account = RouterOutputs["me"]
export type GenerationTask = RouterOutputs["generations"]["get"]
export type GenerationTaskList = RouterOutputs["generations"]["list"]
export type Track = GenerationTask["tracks"][number]
/** A track being made, heard while it is made: its `stream_url` grows until the take is done (DESIGN.md section 14). */
export type Preview = GenerationTask["previews"][number]
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

/** Tasks on a track (a cover, vocals, an accompaniment, an edit): any create field (absent: the source's); the track is the path's. */
export type CoverRequest = Omit<RouterInputs["tracks"]["cover"], "track_id">
export type VocalsRequest = Omit<RouterInputs["tracks"]["vocals"], "track_id">
export type InstrumentalRequest = Omit<RouterInputs["tracks"]["instrumental"], "track_id">
export type EditRequest = Omit<RouterInputs["tracks"]["edit"], "track_id">

export type Upload = RouterOutputs["uploads"]["get"]
export type UploadList = RouterOutputs["uploads"]["list"]
export type UploadAnalysis = NonNullable<Upload["analysis"]>
export type UploadStatus = Upload["status"]
export type DeletedUpload = RouterOutputs["uploads"]["delete"]

export type Persona = RouterOutputs["personas"]["get"]
export type PersonaList = RouterOutputs["personas"]["list"]
export type PersonaRequest = RouterInputs["personas"]["create"]
export type DeletedPersona = RouterOutputs["personas"]["delete"]

export type LyricsTask = RouterOutputs["lyrics"]["get"]
export type LyricsTaskList = RouterOutputs["lyrics"]["list"]
export type LyricsVariation = LyricsTask["variations"][number]
/** The body of `POST /v1/lyrics`: a prompt, and what shapes the words (style, form, a track to fit, words to revise). */
export type LyricsRequest = RouterInputs["lyrics"]["create"]
