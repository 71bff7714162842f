/**
 * The request of a task made from a track: the body's fields over the source's, then
 * GenerateRequest's own rules. A body that moves to a model without the aether-only parameters
 * leaves the source's behind (it could not unset them otherwise); given in the body, they are a 400.
 */
import { Effect } from "effect"
import { aetherOnlyParameters, GenerateRequest } from "../domain/models.ts"
import { validationErrorFrom } from "../domain/validation.ts"
import type { RequestValidationError } from "../domain/validation.ts"

/** `given` holds only GenerateRequest fields; `body` is what the caller sent, for the 400's `param`. */
export const mergedRequest = (
  source: GenerateRequest,
  given: Readonly<Record<string, unknown>>,
  body: unknown
): Effect.Effect<GenerateRequest, RequestValidationError> => {
  const inherited: Record<string, unknown> = { ...source }
  if ((given.model ?? source.model) !== "aether") for (const name of aetherOnlyParameters) delete inherited[name]
  const merged = { ...inherited, ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) }
  const parsed = GenerateRequest.safeParse(merged)
  return parsed.success ? Effect.succeed(parsed.data) : Effect.fail(validationErrorFrom(parsed.error.issues, body))
}
