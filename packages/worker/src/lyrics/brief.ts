/**
 * A lyrics job told in words, for the writers that read words (a chat model, the upstream's
 * lyrics endpoint): what the song is about, its style, title, language and form, the track whose
 * melody the words must fit (its own words give the lines and syllables to match), and words to
 * revise with how.
 */
import type { LyricsJob } from "@lyre/core"

export const briefLines = (job: LyricsJob): ReadonlyArray<string> => {
  const { request, fit } = job
  const lines = [`Theme: ${request.prompt}`]
  if (request.style !== undefined) lines.push(`Style: ${request.style}`)
  if (request.title !== undefined) lines.push(`Title: ${request.title}`)
  if (request.language !== undefined) lines.push(`Language (BCP 47): ${request.language}`)
  if (request.sections !== undefined) lines.push(`Sections, in order: ${request.sections.join(", ")}`)
  if (fit !== null) {
    const sung = fit.request.instrumental ? null : (fit.request.lyrics ?? null)
    lines.push(
      sung === null || sung.trim() === ""
        ? `Fit an existing melody of ${Math.round(fit.duration ?? 0)} seconds in the style "${fit.request.style}".`
        : `Fit the melody of an existing song: keep its sections and give every line the same number of syllables as the line it replaces. Its words:\n${sung}`
    )
  }
  if (request.lyrics !== undefined && request.instruction !== undefined) {
    lines.push(`Revise these lyrics: ${request.instruction}\n${request.lyrics}`)
  }
  return lines
}

/** The upstream's lyrics prompt: at most 200 words, as its documentation says (413 past it). */
export const upstreamPrompt = (job: LyricsJob): string => {
  const words = briefLines(job).join(". ").split(/\s+/)
  return words.slice(0, 200).join(" ")
}
