/**
 * What is kept of a writer's answer, whichever writer gave it: two variations, each with a title
 * and words in the form a generation's `lyrics` takes (section headers such as `[Verse]`, at most
 * 5000 characters), so a variation is valid for a generation as it stands.
 */
import type { TaskFailure } from "../generation/domain/tasks.ts"
import { lyricsVariationsPerTask } from "./model.ts"
import type { LyricsVariation } from "./model.ts"

/** The longest `lyrics` a generation takes. */
export const maxLyricsCharacters = 5000
const maxTitleCharacters = 200

const headerLine = /^\[[^\]\n]{1,40}\]\s*$/m

/** Words as `lyrics` takes them: trimmed, line ends unified, and a `[Verse]` header when none is given. */
const asLyrics = (text: string): string => {
  const words = text.replace(/\r\n?/g, "\n").trim()
  return headerLine.test(words) ? words : `[Verse]\n${words}`
}

/**
 * The two variations to keep of a writer's drafts, or why none can be kept. A draft with no words
 * is no draft; a missing title is the request's, or the first line's words.
 */
export const keptVariations = (
  drafts: ReadonlyArray<{ readonly title?: string | null | undefined; readonly text?: string | null | undefined }>,
  requestedTitle: string | undefined
):
  | { readonly ok: true; readonly variations: ReadonlyArray<LyricsVariation> }
  | { readonly ok: false; readonly detail: string } => {
  const usable = drafts.filter((draft) => typeof draft.text === "string" && draft.text.trim() !== "")
  if (usable.length < lyricsVariationsPerTask) {
    return { ok: false, detail: `the writer gave ${usable.length} usable drafts, not ${lyricsVariationsPerTask}` }
  }
  const variations = usable.slice(0, lyricsVariationsPerTask).map((draft) => {
    const text = asLyrics(draft.text ?? "")
    const firstLine = text.split("\n").find((line) => line.trim() !== "" && !headerLine.test(line)) ?? "Untitled"
    const title = (draft.title ?? "").trim() || requestedTitle || firstLine.trim()
    return { title: [...title].slice(0, maxTitleCharacters).join(""), text }
  })
  const tooLong = variations.find((variation) => [...variation.text].length > maxLyricsCharacters)
  if (tooLong !== undefined) return { ok: false, detail: `a draft is longer than ${maxLyricsCharacters} characters` }
  return { ok: true, variations }
}

/** A writer's failure as clients see it; what the writer said stays in `detail`. */
export const lyricsFailure = (code: string, detail: string): TaskFailure => ({
  code,
  message:
    code === "content_policy"
      ? "The request was refused by the content policy; its credits were refunded."
      : code === "generation_timeout"
        ? "The lyrics were not written in time; the credits were refunded."
        : "The lyrics could not be written; the credits were refunded.",
  detail
})
