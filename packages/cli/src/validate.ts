/**
 * Client-side validation of a create with the server's own schema and its own translation of
 * issues into the envelope's code, message and `param`: a bad flag is refused before any
 * request, in the words the server would have used.
 */
import { errorTable } from "@lyre/core/domain/errors"
import { ExtendRequest, GenerateRequest } from "@lyre/core/domain/models"
import { validationErrorFrom } from "@lyre/core/domain/validation"
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
