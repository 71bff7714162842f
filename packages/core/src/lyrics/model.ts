/**
 * The lyrics agent's shapes (DESIGN.md section 12): the request, the LyricsTask and the schemas
 * of its routes, one zod schema per shape, read by tRPC, the OpenAPI document and every adapter.
 */
import { z } from "zod"
import { TaskError, TaskStatus, text } from "../domain/models.ts"

/** The section names a request may ask for, as `lyrics` headers write them (`[Pre-Chorus]`). */
export const lyricsSectionNames = [
  "Intro",
  "Verse",
  "Pre-Chorus",
  "Chorus",
  "Bridge",
  "Outro",
  "Hook",
  "Break"
] as const
export const LyricsSectionName = z.enum(lyricsSectionNames)
export type LyricsSectionName = z.infer<typeof LyricsSectionName>

/** Drafts a ready task holds. */
export const lyricsVariationsPerTask = 2

/** A BCP 47 language tag: `en`, `es`, `pt-BR`. */
const languageTag = z
  .string()
  .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$/, "must be a BCP 47 language tag such as en, es or pt-BR")

export const LyricsRequestFields = z.strictObject({
  prompt: text(1, 1000).describe("What the song is about: theme, mood, story (1 to 1000 characters)."),
  style: text(1, 1000).optional().describe("Style of the song the words are for (genre, tempo, mood)."),
  title: text(1, 200).optional().describe("A title to write to; absent, the writer names the song."),
  language: languageTag.optional().describe("BCP 47 tag of the language to write in (default: English)."),
  sections: z
    .array(LyricsSectionName)
    .min(1)
    .max(24)
    .optional()
    .describe(
      'The form, in order, from Intro, Verse, Pre-Chorus, Chorus, Bridge, Outro, Hook, Break (e.g. ["Verse", "Chorus", "Verse", "Chorus", "Bridge", "Chorus"]).'
    ),
  track_id: z
    .string()
    .optional()
    .describe("A track of this account (`trk_...`): the words are written to fit its melody."),
  lyrics: text(1, 5000).optional().describe("Words to revise, in the form `lyrics` takes; needs `instruction`."),
  instruction: text(1, 500)
    .optional()
    .describe('How to revise `lyrics` ("make the chorus rhyme", "shorter second verse"); needs `lyrics`.')
})

/** The body of `POST /v1/lyrics`: a revision is `lyrics` and `instruction` together. */
export const LyricsRequest = LyricsRequestFields.superRefine((request, ctx) => {
  if (request.instruction !== undefined && request.lyrics === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["lyrics"],
      message: "lyrics is required with instruction: the words to revise",
      params: { lyre: "missing_parameter" }
    })
  }
  if (request.lyrics !== undefined && request.instruction === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["instruction"],
      message: "instruction is required with lyrics: how to revise them",
      params: { lyre: "missing_parameter" }
    })
  }
})
export type LyricsRequest = z.infer<typeof LyricsRequest>

export const LyricsVariation = z.object({
  title: z.string(),
  text: z.string().describe("The words with `[Verse]`, `[Chorus]` ... headers: valid as a generation's `lyrics`.")
})
export type LyricsVariation = z.infer<typeof LyricsVariation>

export const LyricsTask = z.object({
  id: z.string().describe("Lyrics task id (`lyt_...`)."),
  status: TaskStatus,
  prompt: z.string(),
  variations: z.array(LyricsVariation).describe("Two when `ready`; empty before, and on failure."),
  credits_used: z.int(),
  credits_refunded: z.int(),
  error: TaskError.nullable(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime()
})
export type LyricsTask = z.infer<typeof LyricsTask>

export const LyricsTaskList = z.object({ data: z.array(LyricsTask), has_more: z.boolean() })
export type LyricsTaskList = z.infer<typeof LyricsTaskList>

export const ListLyricsQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  starting_after: z.string().optional()
})

export const GetLyricsParams = z.strictObject({ id: z.string() })
