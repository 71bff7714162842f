/**
 * Client-side validation of a create with the server's own schema and its own translation of
 * issues into the envelope's code, message and `param`: a bad flag is refused before any
 * request, in the words the server would have used.
 */
import { errorTable } from "@lyre/core/domain/errors"
import { ExtendRequest, GenerateRequest } from "@lyre/core/domain/models"
import { validationErrorFrom } from "@lyre/core/domain/validation"
import { CoverRequest, EditRequest, InstrumentalRequest, VocalsRequest } from "@lyre/core/generation/TrackTasks"
import type {
  CoverRequest as CoverBody,
  EditRequest as EditBody,
  InstrumentalRequest as InstrumentalBody,
  VocalsRequest as VocalsBody
} from "@lyre/client"
import type { ExtendRequest as ExtendBody, GenerateRequest as Body } from "@lyre/client"
import { CliError } from "./errors.ts"

/** Answers the body as given (the server applies the defaults), or throws the server's 400 as a CliError. */
export const validateGenerate = (raw: Record<string, unknown>): Body => {
  const result = GenerateRequest.safeParse(raw)
  if (result.success) return raw as Body
  const error = validationErrorFrom(result.error.issues, raw)
  throw new CliError(error.message, { param: error.param, code: errorTable[error._tag].code })
}

/** An extension's body (the track is the path's); refused as the server would refuse it. */
export const validateExtend = (trackId: string, raw: Record<string, unknown>): ExtendBody => {
  const result = ExtendRequest.safeParse({ ...raw, track_id: trackId })
  if (result.success) return raw as ExtendBody
  const error = validationErrorFrom(result.error.issues, raw)
  throw new CliError(error.message, { param: error.param, code: errorTable[error._tag].code })
}

const trackTaskSchemas = {
  cover: CoverRequest,
  vocals: VocalsRequest,
  instrumental: InstrumentalRequest,
  edit: EditRequest
} as const

interface TrackTaskBodies {
  readonly cover: CoverBody
  readonly vocals: VocalsBody
  readonly instrumental: InstrumentalBody
  readonly edit: EditBody
}

/** The body of a task on a track (the track is the path's); refused as the server would refuse it. */
export const validateTrackTask = <K extends keyof TrackTaskBodies>(
  kind: K,
  trackId: string,
  raw: Record<string, unknown>
): TrackTaskBodies[K] => {
  const result = trackTaskSchemas[kind].safeParse({ ...raw, track_id: trackId })
  if (result.success) return raw as unknown as TrackTaskBodies[K]
  const error = validationErrorFrom(result.error.issues, raw)
  throw new CliError(error.message, { param: error.param, code: errorTable[error._tag].code })
}
