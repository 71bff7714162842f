import type { ProviderSubmission } from "@lyre/core/provider/outcomes"

export type ModelCodename = ProviderSubmission["model"]

/** Our codenames to the upstream's model names (DESIGN.md section 6). */
export const defaultModelMap: Readonly<Record<ModelCodename, string>> = {
  aether: "V4_5",
  echo: "V4",
  nocturne: "V3_5"
}

/** The upstream takes shorter titles than we do; 80 characters is safe for every model. */
export const MAX_UPSTREAM_TITLE = 80

/**
 * Fits a title into `max` UTF-16 units, cutting at the last word boundary when there is one in
 * the second half, and never inside a surrogate pair. The caller's full title stays on the task.
 */
export const shortenTitle = (title: string, max = MAX_UPSTREAM_TITLE): string => {
  if (title.length <= max) return title
  let cut = title.slice(0, max)
  // A high surrogate at the end would leave half an emoji.
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1)
  // The word boundary counts only if the next character starts a new word.
  const boundary = /\s/.test(title.charAt(cut.length)) ? cut.length : cut.search(/\s\S*$/)
  const shortened = boundary >= max / 2 ? cut.slice(0, boundary) : cut
  return shortened.replace(/[\s,;:\-–—]+$/u, "")
}

/**
 * The body of `POST /api/v1/generate`, exactly as section 6 lists it: custom mode, lyrics as
 * `prompt`, and every absent field left out rather than sent as null.
 */
export const generateBody = (
  submission: ProviderSubmission,
  modelMap: Readonly<Record<ModelCodename, string>>
): Record<string, unknown> => {
  const body: Record<string, unknown> = {
    customMode: true,
    instrumental: submission.instrumental,
    model: modelMap[submission.model],
    style: submission.style,
    title: shortenTitle(submission.title)
  }
  if (submission.lyrics !== null) body.prompt = submission.lyrics
  if (submission.negative_tags !== undefined) body.negativeTags = submission.negative_tags
  if (submission.vocal_gender !== undefined) body.vocalGender = submission.vocal_gender
  if (submission.style_weight !== undefined) body.styleWeight = submission.style_weight
  if (submission.weirdness_constraint !== undefined) body.weirdnessConstraint = submission.weirdness_constraint
  if (submission.audio_weight !== undefined) body.audioWeight = submission.audio_weight
  if (submission.callbackUrl !== null) body.callBackUrl = submission.callbackUrl
  return body
}
