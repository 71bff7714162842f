/**
 * One zod schema per shape of the interface. tRPC validates with them, the OpenAPI document is
 * generated from them, MCP and A2A describe their inputs with them: never a second copy.
 */
import { z } from "zod"
import { errorTypes } from "./errorTypes.ts"

export const modelNames = ["aether", "echo", "nocturne"] as const
export const ModelName = z.enum(modelNames)
export type ModelName = z.infer<typeof ModelName>
/** Kept for backward compatibility, not recommended for new integrations (interface, rule 3). */
export const deprecatedModels: ReadonlyArray<ModelName> = ["nocturne"]

export const planNames = ["free", "basic", "pro", "ultra"] as const
export const Plan = z.enum(planNames)
export type Plan = z.infer<typeof Plan>

export const scopeNames = ["profile", "music:generate", "livecoding:agent", "music:agent", "lyrics:agent"] as const
export const Scope = z.enum(scopeNames)
export type Scope = z.infer<typeof Scope>

/** Parameters only the `aether` model understands (cross-field rule 2). */
export const aetherOnlyParameters = [
  "vocal_gender",
  "negative_tags",
  "style_weight",
  "weirdness_constraint",
  "audio_weight",
  "persona_id"
] as const

/**
 * The interface counts characters, and so does JSON Schema's maxLength: Unicode code points,
 * not the UTF-16 units of `string.length`, so an emoji is one character here as it is there.
 */
const countCharacters = (s: string): number => {
  // What `for (const _ of s)` counts (a lone surrogate is one), without its iterator: the
  // string's length less one for each high surrogate followed by a low one. Lyrics run to
  // thousands of characters, checked on every create.
  let pairs = 0
  for (let i = 0; i < s.length - 1; i++) {
    const unit = s.charCodeAt(i)
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = s.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        pairs++
        i++
      }
    }
  }
  return s.length - pairs
}

export const text = (min: number, max: number) =>
  z
    .string()
    .check((ctx) => {
      // A string's characters number between half its UTF-16 length and all of it: within both
      // bounds either way, there is nothing to count.
      if (ctx.value.length <= max && ctx.value.length >= 2 * min) return
      const n = countCharacters(ctx.value)
      if (n < min || n > max) {
        ctx.issues.push({
          code: "custom",
          input: ctx.value,
          message: min > 0 ? `must be ${min} to ${max} characters long` : `must be at most ${max} characters long`
        })
      }
    })
    .meta(min > 0 ? { minLength: min, maxLength: max } : { maxLength: max })

const unitInterval = z.number().min(0).max(1)

/**
 * The longest idempotency key a create takes: REST's `Idempotency-Key` header and MCP's
 * `idempotency_key` argument. The same key and body within 24 hours answer the first task and
 * charge once.
 */
export const maxIdempotencyKeyLength = 255

export const GenerateRequestFields = z.strictObject({
  style: text(1, 1000).describe("Style description (genre, vocal type, tempo, mood)."),
  title: text(1, 200).describe("Song title."),
  lyrics: text(0, 5000)
    .optional()
    .describe("Lyrics to sing. Required, with at least one non-whitespace character, unless `instrumental` is true."),
  instrumental: z.boolean().default(false).describe("Omit vocals. Default false."),
  model: ModelName.default("aether").describe(
    "`aether` (50 credits), `echo` (100) or `nocturne` (180; deprecated, kept for backward compatibility)."
  ),
  vocal_gender: z.enum(["m", "f"]).optional().describe("Voice register. Aether only."),
  negative_tags: text(0, 500).optional().describe("What to avoid. Aether only."),
  style_weight: unitInterval.optional().describe("0 to 1. Aether only."),
  weirdness_constraint: unitInterval.optional().describe("0 to 1. Aether only."),
  audio_weight: unitInterval.optional().describe("0 to 1. Aether only."),
  persona_id: z
    .string()
    .optional()
    .describe("A persona of this account (`per_...`): the voice and arrangement palette of its track. Aether only.")
})

/** The request body of `POST /v1/music/generations`, cross-field rules 1, 2 and 4 included. */
export const GenerateRequest = GenerateRequestFields.superRefine((request, ctx) => {
  if (!request.instrumental && (request.lyrics === undefined || request.lyrics.trim() === "")) {
    ctx.addIssue({
      code: "custom",
      path: ["lyrics"],
      message:
        request.lyrics === undefined
          ? "lyrics is required unless instrumental is true"
          : "lyrics must contain a non-whitespace character unless instrumental is true",
      params: { lyre: request.lyrics === undefined ? "missing_parameter" : "invalid_parameter" }
    })
  }
  if (request.model !== "aether") {
    for (const name of aetherOnlyParameters) {
      if (request[name] !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: [name],
          message: `${name} is supported by the aether model only, not ${request.model}`,
          params: { lyre: "parameter_not_supported_for_model" }
        })
      }
    }
  }
})
export type GenerateRequest = z.infer<typeof GenerateRequest>

export const TaskStatus = z.enum(["pending", "ready", "failed"])
export type TaskStatus = z.infer<typeof TaskStatus>

export const Track = z.object({
  id: z.string(),
  audio_url: z.url(),
  duration: z.number().nullable(),
  title: z.string().nullable(),
  lyrics: z.string().nullable(),
  image_url: z.url().nullable(),
  tags: z.string().nullable(),
  index: z.int()
})
export type Track = z.infer<typeof Track>

export const TaskError = z.object({ code: z.string(), message: z.string() })

/** A track being made, heard while it is made (DESIGN.md section 14): Lyre's own growing MP3 stream. */
export const Preview = z.object({
  index: z.int().describe("The track's index, as in `tracks` once the task is ready."),
  stream_url: z
    .url()
    .describe(
      "Lyre's own address of the track's audio while it is made: chunked MP3 that grows until the track is done. Not the final file; redirects to it once the task is ready."
    )
})
export type Preview = z.infer<typeof Preview>

export const GenerationTask = z.object({
  id: z.string().describe("Task id; pass this exact value as {id} in the get path."),
  status: TaskStatus,
  model: ModelName.nullable(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  credits_used: z.int(),
  credits_refunded: z.int(),
  error: TaskError.nullable(),
  tracks: z.array(Track),
  previews: z
    .array(Preview)
    .describe(
      "While the task is pending: one stream per track being made, once its audio has started (empty before). Empty once the task is ready or failed; `tracks` has the final files."
    )
})
export type GenerationTask = z.infer<typeof GenerationTask>

export const GenerationTaskList = z.object({
  data: z.array(GenerationTask),
  has_more: z.boolean()
})
export type GenerationTaskList = z.infer<typeof GenerationTaskList>

export const ListGenerationsQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  starting_after: z.string().optional()
})

export const GetGenerationParams = z.strictObject({ id: z.string() })

/**
 * Song tools (DESIGN.md section 9). The body of `POST /v1/music/tracks/{track_id}/extensions`:
 * any GenerateRequest field, all optional (absent: the source's, merged in core and then held
 * to GenerateRequest's own rules), and where the continuation starts.
 */
/** Any GenerateRequest field, all optional: what a task on a track takes (absent: the source's). */
export const TrackRequestFields = GenerateRequestFields.extend({
  instrumental: z.boolean().optional().describe("Omit vocals. Default: the source's."),
  model: ModelName.optional().describe("Default: the source's model. Priced as a generation of that model.")
}).partial()

export const ExtendRequest = TrackRequestFields.extend({
  track_id: z.string().describe("The track to extend (`trk_...`), of a ready task of this account."),
  continue_at: z
    .number()
    .positive()
    .optional()
    .describe(
      "Seconds into the track where the continuation begins: above 0 and below the track's duration. Default: its duration."
    )
})
export type ExtendRequest = z.infer<typeof ExtendRequest>

export const exportFormats = ["wav", "midi", "stems", "timed_lyrics"] as const
export const ExportFormat = z.enum(exportFormats)
export type ExportFormat = z.infer<typeof ExportFormat>

/** The body of `POST /v1/music/tracks/{track_id}/exports`. */
export const ExportRequest = z.strictObject({
  track_id: z.string().describe("The track to export (`trk_...`), of a ready task of this account."),
  format: ExportFormat.describe("`wav` (5 credits), `midi` (5), `stems` (20) or `timed_lyrics` (5).")
})
export type ExportRequest = z.infer<typeof ExportRequest>

export const ExportFile = z.object({
  name: z.string(),
  url: z.url(),
  content_type: z.string(),
  bytes: z.int(),
  stem: z.string().nullable().describe("The part of a stems file (`vocals`, `drums`, `bass`, ...); null otherwise.")
})
export type ExportFile = z.infer<typeof ExportFile>

export const TimedWord = z.object({ text: z.string(), start: z.number(), end: z.number() })
export type TimedWord = z.infer<typeof TimedWord>

export const Export = z.object({
  id: z.string().describe("Export id (`exp_...`)."),
  track_id: z.string(),
  task_id: z.string().describe("The task that made the track."),
  format: ExportFormat,
  status: TaskStatus,
  credits_used: z.int(),
  credits_refunded: z.int(),
  error: TaskError.nullable(),
  files: z.array(ExportFile),
  timed_lyrics: z
    .array(TimedWord)
    .nullable()
    .describe("One entry per sung word, in seconds; null except for `timed_lyrics`."),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime()
})
export type Export = z.infer<typeof Export>

/** What a paid call starts and a caller waits on: a generation task (an extension too) or an export. */
export type Job = GenerationTask | Export

export const isExport = (job: Job): job is Export => "format" in job

export const ExportList = z.object({ data: z.array(Export), has_more: z.boolean() })
export type ExportList = z.infer<typeof ExportList>

export const ListExportsQuery = z.strictObject({
  track_id: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  starting_after: z.string().optional()
})

export const GetExportParams = z.strictObject({ id: z.string() })

export const Account = z.object({
  id: z.string(),
  plan: Plan,
  credits: z.object({ subscription: z.int(), onetime: z.int(), total: z.int() }),
  rate_limits: z.object({ requests_per_minute: z.int(), concurrent_generations: z.int() }),
  auth: z.object({
    kind: z.enum(["api_key", "oauth"]),
    scopes: z.array(z.string()),
    key: z.object({ id: z.string(), name: z.string(), expires_at: z.iso.datetime().nullable() }).nullable()
  })
})
export type Account = z.infer<typeof Account>

export const ErrorEnvelope = z.object({
  error: z.object({
    type: z.enum(errorTypes),
    code: z.string(),
    message: z.string(),
    param: z.string().optional(),
    model: z.string().optional(),
    retry_after_seconds: z.int().min(0).optional()
  })
})
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>
