/** A validated request as every provider receives it: what Generations submits, and what a track's source carries. */
import type { GenerateRequest } from "../domain/models.ts"
import type { SourceTrack } from "../provider/outcomes.ts"

/** A validated request as every provider receives it (a song tool's source carries one too). */
export const providerRequestOf = (request: GenerateRequest): SourceTrack["request"] => ({
  model: request.model,
  style: request.style,
  title: request.title,
  lyrics: request.instrumental ? null : (request.lyrics ?? null),
  instrumental: request.instrumental,
  vocal_gender: request.vocal_gender,
  negative_tags: request.negative_tags,
  style_weight: request.style_weight,
  weirdness_constraint: request.weirdness_constraint,
  audio_weight: request.audio_weight
})
