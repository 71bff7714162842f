/**
 * The tools: names, descriptions and hints for an agent, input and output schemas taken from
 * core's zod schemas, and each run as one or more procedure calls.
 */
import { z } from "zod"
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js"
import type { CallToolResult, Tool, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js"
import {
  Account,
  aetherOnlyParameters,
  CoverRequest,
  EditRequest,
  editSpanSeconds,
  GetPersonaParams,
  InstrumentalRequest,
  ListPersonasQuery,
  ListUploadsQuery,
  maxInlineUploadBytes,
  maxUploadBytes,
  Persona,
  PersonaList,
  PersonaRequest,
  Upload,
  UploadFromRequest,
  UploadIdParams,
  UploadList,
  uploadContentTypes,
  uploadFetchTimeoutSeconds,
  VocalsRequest,
  Export,
  exportFormats,
  exportPriceOf,
  ExportRequest,
  ExtendRequest,
  GenerateRequestFields,
  GenerationTask,
  GenerationTaskList,
  GetExportParams,
  GetGenerationParams,
  GetLyricsParams,
  ListGenerationsQuery,
  LyricsRequestFields,
  LyricsTask,
  lyricsPrice,
  lyricsSectionNames,
  maxIdempotencyKeyLength,
  modelNames,
  priceOf,
  renderError,
  tracksPerTask,
  validationErrorFrom
} from "@lyre/core"
import { loadExport, loadGeneration, loadLyrics, loadUpload } from "./jobs.ts"
import type { McpJob } from "./jobs.ts"
import { invoke } from "./procedures.ts"
import type { McpRequest, Outcome } from "./procedures.ts"
import { errorResult, exportResult, lyricsResult, taskResult, uploadResult, valueResult } from "./results.ts"
import { waitFor } from "./wait.ts"
import type { Progress } from "./wait.ts"

export interface ToolCall {
  readonly request: McpRequest
  readonly signal: AbortSignal
  readonly progress: Progress
}

/** A tool with its arguments' schema erased: `call` validates them before running. */
export interface LyreTool {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly input: z.ZodType
  readonly output: z.ZodType
  readonly annotations: ToolAnnotations
  readonly call: (rawArguments: unknown, call: ToolCall) => Promise<CallToolResult>
  /**
   * For a tool that supports task-augmented calls: the generation task, export or upload the
   * call stands for, answered at once as the MCP task (see tasks.ts).
   */
  readonly startTask?: (rawArguments: unknown, call: ToolCall) => Promise<Outcome<McpJob>>
}

interface ToolSpec<I extends z.ZodType> extends Omit<LyreTool, "input" | "call" | "startTask"> {
  readonly input: I
  readonly run: (args: z.output<I>, call: ToolCall) => Promise<CallToolResult>
  readonly startTask?: (args: z.output<I>, call: ToolCall) => Promise<Outcome<McpJob>>
}

/**
 * Arguments that fail the tool's input schema are a protocol error (-32602), as the issue asks;
 * its `data` is the envelope REST would answer, so an agent still learns which field is wrong.
 * Rules beyond the schema (lyrics unless instrumental, aether-only fields) are the procedure's,
 * and come back as tool errors like every other domain failure.
 */
const defineTool = <I extends z.ZodType>({ input, run, startTask, ...rest }: ToolSpec<I>): LyreTool => {
  const parse = (rawArguments: unknown): z.output<I> => {
    const parsed = input.safeParse(rawArguments)
    if (!parsed.success) {
      const error = validationErrorFrom(parsed.error.issues, rawArguments)
      throw new McpError(
        ErrorCode.InvalidParams,
        `Invalid arguments for ${rest.name}: ${error.message}`,
        renderError(error).body
      )
    }
    return parsed.data
  }
  return {
    ...rest,
    input,
    call: async (rawArguments, call) => run(parse(rawArguments), call),
    ...(startTask === undefined
      ? {}
      : { startTask: async (rawArguments, call) => startTask(parse(rawArguments), call) })
  }
}

/** Reads only Lyre's own records: no side effect beyond counting against the rate limit. */
const readOnly: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false
}

const resultOf = <A>(outcome: Outcome<A>, render: (value: A) => CallToolResult): CallToolResult =>
  outcome.ok ? render(outcome.value) : errorResult(outcome.error)

export const maxWaitSeconds = 120

const timeoutSeconds = (what: string) =>
  z
    .int()
    .min(1)
    .max(maxWaitSeconds)
    .default(60)
    .describe(
      `How long to wait, 1 to ${maxWaitSeconds} seconds (default 60). The ${what} is returned as it stands when time runs out.`
    )

export const WaitForGenerationParams = GetGenerationParams.extend({ timeout_seconds: timeoutSeconds("task") })

export const WaitForExportParams = GetExportParams.extend({
  id: GetExportParams.shape.id.describe("The export's id (`exp_...`), as export_track returned it."),
  timeout_seconds: timeoutSeconds("export")
})

/**
 * As REST's `Idempotency-Key` header is here, an optional key on every paid tool: a call
 * retried with the same key and arguments answers the first task or export and charges once.
 */
const idempotencyKey = z
  .string()
  .min(1)
  .max(maxIdempotencyKeyLength)
  .optional()
  .describe(
    "A unique string (a UUID, say) for this call. Calling again with the same key and arguments within 24 hours " +
      "returns the first result instead of charging again, so a call whose answer was lost can be retried safely."
  )

export const GenerateMusicArguments = GenerateRequestFields.extend({ idempotency_key: idempotencyKey })

export const ExtendTrackArguments = ExtendRequest.extend({ idempotency_key: idempotencyKey })

export const ExportTrackArguments = ExportRequest.extend({ idempotency_key: idempotencyKey })

const prices = modelNames.map((model) => `${model} ${priceOf[model]}`).join(", ")

const generateDescription = [
  `Generate a song: ${tracksPerTask} takes from a style description, a title and lyrics (or \`instrumental: true\` without lyrics).`,
  `Credits are charged when the request is accepted, per model: ${prices}; a failed generation is refunded automatically.`,
  `Models: aether (the default and the best), echo, and nocturne, which is deprecated (kept for backward compatibility, not for new integrations).`,
  `${aetherOnlyParameters.join(", ")} are understood by aether only; with another model they are refused.`,
  "Returns the pending task at once; call wait_for_generation with its id to get the finished tracks (MP3 links and covers).",
  "Called as a task (MCP tasks), it answers the task at once with the generation's id; tasks/result waits for the song.",
  "Pass idempotency_key to retry a call safely: the same key and arguments never charge twice.",
  "persona_id (from create_persona) sings with a kept voice and palette.",
  "Call get_account first to see the credit balance and limits."
].join(" ")

const createTask = (
  { idempotency_key: idempotencyKey, ...fields }: z.output<typeof GenerateMusicArguments>,
  { request }: ToolCall
): Promise<Outcome<GenerationTask>> =>
  invoke(request, fields, (caller) => caller.generations.create(fields), idempotencyKey)

const extendDescription = [
  "Extend a song: a new generation that keeps a track of a ready task up to continue_at seconds (default: its end)",
  "and continues it in the same key, tempo, instrumentation and voice to a proper ending, singing new lyrics when given.",
  "Any generate_music field may be given; an absent one is the source's.",
  `Charged as a generation of its model when accepted: ${prices}; refunded automatically if it fails.`,
  "track_id is a track's id (`trk_...`) from a ready task of this account (get_generation or wait_for_generation shows them).",
  "Returns the pending task at once; call wait_for_generation with its id for the finished tracks (whole songs: the source, then the continuation).",
  "Called as a task (MCP tasks), it answers the task at once with the generation's id.",
  "Pass idempotency_key to retry a call safely."
].join(" ")

const extendTask = (
  { idempotency_key: idempotencyKey, ...fields }: z.output<typeof ExtendTrackArguments>,
  { request }: ToolCall
): Promise<Outcome<GenerationTask>> => invoke(request, fields, (caller) => caller.tracks.extend(fields), idempotencyKey)

const exportPrices = exportFormats.map((format) => `${format} ${exportPriceOf[format]}`).join(", ")

const exportDescription = [
  "Take a track of a ready task as wav (the mix as 16-bit 44.1 kHz PCM), midi (a Standard MIDI File of the parts,",
  "with the sung syllables as lyric events), stems (one WAV per part: vocals, drums, bass, ... that add up to the mix)",
  "or timed_lyrics (every sung word with its start and end in seconds, plus .lrc and WebVTT files).",
  `Credits charged when accepted, per format: ${exportPrices}; refunded automatically if it fails.`,
  "Asking for a format this account already has ready for the track returns that export and charges nothing.",
  "timed_lyrics of an instrumental track is refused (track_has_no_lyrics).",
  "Returns the export (`exp_...`), usually pending; call wait_for_export with its id. A ready export lists its files,",
  "each also given as a resource link with its media type. Called as a task (MCP tasks), it answers the task at once",
  "with the export's id. Pass idempotency_key to retry a call safely."
].join(" ")

const exportTask = (
  { idempotency_key: idempotencyKey, ...fields }: z.output<typeof ExportTrackArguments>,
  { request }: ToolCall
): Promise<Outcome<Export>> => invoke(request, fields, (caller) => caller.tracks.export(fields), idempotencyKey)

/** Spends credits and starts a job at the provider each call without a key; destroys nothing. */
const paid: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true
}

export const WaitForUploadParams = UploadIdParams.extend({
  id: UploadIdParams.shape.id.describe("The upload's id (`upl_...`), as upload_audio returned it."),
  timeout_seconds: timeoutSeconds("upload")
})

const megabytes = (bytes: number) => `${bytes / (1024 * 1024)} MB`

const uploadDescription = [
  "Upload your own audio (Pro plan or higher; free of credits, each plan keeps a number of uploads).",
  `Give the file as data, base64 of at most ${megabytes(maxInlineUploadBytes)} with its content_type`,
  `(${uploadContentTypes.join(", ")}), or as url, an http(s) address Lyre fetches: public addresses only (no loopback,`,
  `private or link-local address), at most ${megabytes(maxUploadBytes)}, within ${uploadFetchTimeoutSeconds} s.`,
  "The file must decode as what it says and last 5 s to 8 min; otherwise it is refused (invalid_audio) and nothing is kept.",
  "Returns the pending upload (`upl_...`); call wait_for_upload with its id. Once ready it has a track_id (`trk_...`)",
  "that cover_track, add_vocals, add_instrumental, edit_track, extend_track, export_track and create_persona take,",
  "and the analysis (bpm, key, time signature, loudness, beats, chords). Called as a task (MCP tasks), it answers the",
  "task at once with the upload's id; tasks/result waits until it is listened to.",
  "Pass idempotency_key to retry a call safely: the same key and file answer the first upload, counted once."
].join(" ")

/** An upload is free, but counted against the plan's allowance: its key keeps a retry from counting twice. */
export const UploadAudioArguments = UploadFromRequest.extend({ idempotency_key: idempotencyKey })

const startUpload = (
  { idempotency_key: key, ...fields }: z.output<typeof UploadAudioArguments>,
  { request }: ToolCall
): Promise<Outcome<Upload>> => invoke(request, fields, (caller) => caller.uploads.createFrom(fields), key)

/** The track tasks of DESIGN.md section 11: a generation made from a track, paid and followed like one. */
const trackTaskTail = [
  "Any generate_music field may be given; an absent one is the source's.",
  `Charged as a generation of its model when accepted: ${prices}; refunded automatically if it fails.`,
  "track_id is a track (`trk_...`) of this account: of a ready task, or a ready upload's track_id.",
  "Returns the pending task at once; call wait_for_generation with its id for the finished tracks.",
  "Called as a task (MCP tasks), it answers the task at once with the generation's id.",
  "Pass idempotency_key to retry a call safely."
].join(" ")

export const CoverTrackArguments = CoverRequest.extend({ idempotency_key: idempotencyKey })
export const AddVocalsArguments = VocalsRequest.extend({ idempotency_key: idempotencyKey })
export const AddInstrumentalArguments = InstrumentalRequest.extend({ idempotency_key: idempotencyKey })
export const EditTrackArguments = EditRequest.extend({ idempotency_key: idempotencyKey })

const coverTask = ({ idempotency_key: key, ...fields }: z.output<typeof CoverTrackArguments>, { request }: ToolCall) =>
  invoke(request, fields, (caller) => caller.tracks.cover(fields), key)
const vocalsTask = ({ idempotency_key: key, ...fields }: z.output<typeof AddVocalsArguments>, { request }: ToolCall) =>
  invoke(request, fields, (caller) => caller.tracks.vocals(fields), key)
const instrumentalTask = (
  { idempotency_key: key, ...fields }: z.output<typeof AddInstrumentalArguments>,
  { request }: ToolCall
) => invoke(request, fields, (caller) => caller.tracks.instrumental(fields), key)
const editTask = ({ idempotency_key: key, ...fields }: z.output<typeof EditTrackArguments>, { request }: ToolCall) =>
  invoke(request, fields, (caller) => caller.tracks.edit(fields), key)

/**
 * The request's fields as the tool's arguments (its cross-field rule, `lyrics` with `instruction`,
 * is the procedure's and comes back as a tool error naming the field).
 */
export const WriteLyricsArguments = LyricsRequestFields.extend({ idempotency_key: idempotencyKey })

export const WaitForLyricsParams = GetLyricsParams.extend({
  id: GetLyricsParams.shape.id.describe("The lyrics task's id (`lyt_...`), as write_lyrics returned it."),
  timeout_seconds: timeoutSeconds("lyrics task")
})

const lyricsDescription = [
  `Write song lyrics: two variations (each a title and words with ${lyricsSectionNames.map((name) => `[${name}]`).join(", ")}`,
  "headers) from a prompt (theme, mood, story), optionally a style, title, language (BCP 47) and sections in order.",
  "With track_id (`trk_...`, a track of this account) the words are written to fit that track's melody; with lyrics",
  'and instruction ("make the chorus rhyme") existing words are revised. Needs the lyrics:agent scope.',
  `Costs ${lyricsPrice} credits when accepted; refunded automatically if it fails.`,
  "Returns the pending task (`lyt_...`) at once; call wait_for_lyrics with its id. Each ready variation's text can be",
  "passed as it stands as generate_music's lyrics. Called as a task (MCP tasks), it answers the task at once with the",
  "lyrics task's id; tasks/result waits for the words. Pass idempotency_key to retry a call safely."
].join(" ")

const lyricsTask = (
  { idempotency_key: key, ...fields }: z.output<typeof WriteLyricsArguments>,
  { request }: ToolCall
): Promise<Outcome<LyricsTask>> => invoke(request, fields, (caller) => caller.lyrics.create(fields), key)

/** Free and kept: a persona or an upload is a new record each call. */
const keeps: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false
}

export const tools: ReadonlyArray<LyreTool> = [
  defineTool({
    name: "generate_music",
    title: "Generate music",
    description: generateDescription,
    input: GenerateMusicArguments,
    output: GenerationTask,
    annotations: paid,
    run: async (args, call) => resultOf(await createTask(args, call), taskResult),
    startTask: createTask
  }),
  defineTool({
    name: "get_generation",
    title: "Get a generation task",
    description:
      "The task as it stands: `pending` (with previews, each take's stream_url to hear it while it is made, " +
      "once there is audio), `ready` with its tracks (audio_url, image_url, duration, lyrics), or " +
      "`failed` with the error and the credits refunded.",
    input: GetGenerationParams,
    output: GenerationTask,
    annotations: readOnly,
    run: async (args, { request }) =>
      resultOf(await invoke(request, args, (caller) => caller.generations.get(args)), taskResult)
  }),
  defineTool({
    name: "wait_for_generation",
    title: "Wait for a generation task",
    description:
      `Waits until the task is \`ready\` or \`failed\`, up to timeout_seconds (at most ${maxWaitSeconds}), and ` +
      "returns it; when time runs out, returns it still `pending` (call again). Sends progress notifications " +
      "while waiting when the request carries a progress token; once the song can be heard while it is made, " +
      "they name each take's stream address (resource links in _meta, under lyre/previews), and so does a " +
      "pending result. Songs usually take seconds to a few minutes.",
    input: WaitForGenerationParams,
    output: GenerationTask,
    annotations: readOnly,
    run: async (args, { request, signal, progress }) =>
      resultOf(
        await waitFor((id) => loadGeneration(request, id), args.id, args.timeout_seconds, signal, progress),
        taskResult
      ),
    // As a task, the wait is the generation itself: `tasks/result` waits for it.
    startTask: (args, { request }) => loadGeneration(request, args.id)
  }),
  defineTool({
    name: "list_generations",
    title: "List generation tasks",
    description:
      "The account's tasks, newest first, `limit` at a time (1 to 100, default 20). Page with " +
      "`starting_after` set to the last id seen while `has_more` is true.",
    input: ListGenerationsQuery,
    output: GenerationTaskList,
    annotations: readOnly,
    run: async (args, { request }) =>
      resultOf(await invoke(request, args, (caller) => caller.generations.list(args)), (list) => valueResult(list))
  }),
  defineTool({
    name: "extend_track",
    title: "Extend a track",
    description: extendDescription,
    input: ExtendTrackArguments,
    output: GenerationTask,
    annotations: paid,
    run: async (args, call) => resultOf(await extendTask(args, call), taskResult),
    startTask: extendTask
  }),
  defineTool({
    name: "export_track",
    title: "Export a track",
    description: exportDescription,
    input: ExportTrackArguments,
    output: Export,
    // A second call for a format already ready is free, but one while the first is pending
    // charges again: not idempotent without a key.
    annotations: paid,
    run: async (args, call) => resultOf(await exportTask(args, call), exportResult),
    startTask: exportTask
  }),
  defineTool({
    name: "wait_for_export",
    title: "Wait for an export",
    description:
      `Waits until the export is \`ready\` or \`failed\`, up to timeout_seconds (at most ${maxWaitSeconds}), and ` +
      "returns it: when ready, its files (url, content_type, bytes, stem) and a resource link to each; timed_lyrics " +
      "for that format. When time runs out, returns it still `pending` (call again). Sends progress notifications " +
      "while waiting when the request carries a progress token. Exports take seconds; stems the longest.",
    input: WaitForExportParams,
    output: Export,
    annotations: readOnly,
    run: async (args, { request, signal, progress }) =>
      resultOf(
        await waitFor((id) => loadExport(request, id), args.id, args.timeout_seconds, signal, progress),
        exportResult
      ),
    startTask: (args, { request }) => loadExport(request, args.id)
  }),
  defineTool({
    name: "write_lyrics",
    title: "Write lyrics",
    description: lyricsDescription,
    input: WriteLyricsArguments,
    output: LyricsTask,
    // Paid, but the words come from Lyre's own writer or its configured model.
    annotations: paid,
    run: async (args, call) => resultOf(await lyricsTask(args, call), lyricsResult),
    startTask: lyricsTask
  }),
  defineTool({
    name: "wait_for_lyrics",
    title: "Wait for a lyrics task",
    description:
      `Waits until the lyrics task is \`ready\` (its two variations) or \`failed\`, up to timeout_seconds (at most ` +
      `${maxWaitSeconds}), and returns it; when time runs out, returns it still \`pending\` (call again). Lyrics take seconds.`,
    input: WaitForLyricsParams,
    output: LyricsTask,
    annotations: readOnly,
    run: async (args, { request, signal, progress }) =>
      resultOf(
        await waitFor((id) => loadLyrics(request, id), args.id, args.timeout_seconds, signal, progress),
        lyricsResult
      ),
    startTask: (args, { request }) => loadLyrics(request, args.id)
  }),
  defineTool({
    name: "upload_audio",
    title: "Upload audio",
    description: uploadDescription,
    input: UploadAudioArguments,
    output: Upload,
    // Fetching a url reaches outside Lyre.
    annotations: { ...keeps, openWorldHint: true },
    run: async (args, call) => resultOf(await startUpload(args, call), uploadResult),
    startTask: startUpload
  }),
  defineTool({
    name: "get_upload",
    title: "Get an upload",
    description:
      "The upload as it stands: `pending` while it is listened to, `ready` with its track_id and analysis " +
      "(bpm, key, time signature, loudness, beats, chords), or `failed` with the error.",
    input: UploadIdParams,
    output: Upload,
    annotations: readOnly,
    run: async (args, { request }) => resultOf(await loadUpload(request, args.id), uploadResult)
  }),
  defineTool({
    name: "wait_for_upload",
    title: "Wait for an upload",
    description:
      `Waits until the upload is \`ready\` or \`failed\`, up to timeout_seconds (at most ${maxWaitSeconds}), and ` +
      "returns it; when time runs out, returns it still `pending` (call again). Sends progress notifications while " +
      "waiting when the request carries a progress token. Listening takes seconds to a minute.",
    input: WaitForUploadParams,
    output: Upload,
    annotations: readOnly,
    run: async (args, { request, signal, progress }) =>
      resultOf(
        await waitFor((id) => loadUpload(request, id), args.id, args.timeout_seconds, signal, progress),
        uploadResult
      ),
    startTask: (args, { request }) => loadUpload(request, args.id)
  }),
  defineTool({
    name: "list_uploads",
    title: "List uploads",
    description:
      "The account's uploads, newest first, `limit` at a time (1 to 100, default 20). Page with " +
      "`starting_after` set to the last id seen while `has_more` is true.",
    input: ListUploadsQuery,
    output: UploadList,
    annotations: readOnly,
    run: async (args, { request }) =>
      resultOf(await invoke(request, args, (caller) => caller.uploads.list(args)), (list) => valueResult(list))
  }),
  defineTool({
    name: "cover_track",
    title: "Cover a track",
    description:
      "Cover a track: the same song (melody, harmony, form, words) in a new style (required); audio_weight " +
      `(0 to 1) moves it between the source's rhythm (1) and the new style's (0). ${trackTaskTail}`,
    input: CoverTrackArguments,
    output: GenerationTask,
    annotations: paid,
    run: async (args, call) => resultOf(await coverTask(args, call), taskResult),
    startTask: coverTask
  }),
  defineTool({
    name: "add_vocals",
    title: "Add vocals to a track",
    description:
      "Add vocals: the source with lyrics (required) sung over it on a melody composed for its chords, in its " +
      `key and on its beat; style and vocal_gender shape the voice. ${trackTaskTail}`,
    input: AddVocalsArguments,
    output: GenerationTask,
    annotations: paid,
    run: async (args, call) => resultOf(await vocalsTask(args, call), taskResult),
    startTask: vocalsTask
  }),
  defineTool({
    name: "add_instrumental",
    title: "Add an accompaniment to a track",
    description:
      "Add an accompaniment: an arrangement in the given style (required) composed for the source's sung " +
      `melody, mixed with it. A track made without vocals is refused (track_has_no_lyrics); an upload is accompanied as heard. ${trackTaskTail}`,
    input: AddInstrumentalArguments,
    output: GenerationTask,
    annotations: paid,
    run: async (args, call) => resultOf(await instrumentalTask(args, call), taskResult),
    startTask: instrumentalTask
  }),
  defineTool({
    name: "edit_track",
    title: "Edit a span of a track",
    description:
      `Edit a span: from start to end (seconds, ${editSpanSeconds.min} to ${editSpanSeconds.max} apart, within ` +
      "the track) composed again, with new lyrics for it when given; outside the span, the source sample for sample. " +
      trackTaskTail,
    input: EditTrackArguments,
    output: GenerationTask,
    annotations: paid,
    run: async (args, call) => resultOf(await editTask(args, call), taskResult),
    startTask: editTask
  }),
  defineTool({
    name: "create_persona",
    title: "Make a persona",
    description:
      "Keep the voice (timbre, range, vibrato) and arrangement palette of a track of this account (of a ready " +
      "task or upload) under a name and description. Free. Returns the persona (`per_...`); give its id as persona_id " +
      "to generate_music or any track tool (aether only).",
    input: PersonaRequest,
    output: Persona,
    annotations: keeps,
    run: async (args, { request }) =>
      resultOf(await invoke(request, args, (caller) => caller.personas.create(args)), (persona) => valueResult(persona))
  }),
  defineTool({
    name: "get_persona",
    title: "Get a persona",
    description: "A persona of this account: its name, description, source track and voice.",
    input: GetPersonaParams,
    output: Persona,
    annotations: readOnly,
    run: async (args, { request }) =>
      resultOf(await invoke(request, args, (caller) => caller.personas.get(args)), (persona) => valueResult(persona))
  }),
  defineTool({
    name: "list_personas",
    title: "List personas",
    description:
      "The account's personas, newest first, `limit` at a time. Page with `starting_after` set to the last " +
      "id seen while `has_more` is true.",
    input: ListPersonasQuery,
    output: PersonaList,
    annotations: readOnly,
    run: async (args, { request }) =>
      resultOf(await invoke(request, args, (caller) => caller.personas.list(args)), (list) => valueResult(list))
  }),
  defineTool({
    name: "get_account",
    title: "Get the account",
    description:
      "The calling account: plan, credit balance (subscription and one-time), rate limits, and the " +
      "credential in use with its scopes. Consumes no credits; a connection test.",
    input: z.strictObject({}),
    output: Account,
    annotations: readOnly,
    run: async (_args, { request }) =>
      resultOf(await invoke(request, undefined, (caller) => caller.me()), (account) => valueResult(account))
  })
]

export const toolsByName: ReadonlyMap<string, LyreTool> = new Map(tools.map((tool) => [tool.name, tool]))

/** JSON Schema as MCP wants it: the 2020-12 dialect it assumes, so no `$schema` to trip older validators. */
const jsonSchemaOf = (schema: z.ZodType, io: "input" | "output"): Tool["inputSchema"] => {
  const { $schema: _dialect, ...rest }: Record<string, unknown> = z.toJSONSchema(schema, { io })
  return { ...rest, type: "object" }
}

/** The `tools/list` answer, computed once; the server card shows the same list. */
export const toolDefinitions: ReadonlyArray<Tool> = tools.map((tool) => ({
  name: tool.name,
  title: tool.title,
  description: tool.description,
  inputSchema: jsonSchemaOf(tool.input, "input"),
  outputSchema: jsonSchemaOf(tool.output, "output"),
  annotations: { title: tool.title, ...tool.annotations },
  ...(tool.startTask === undefined ? {} : { execution: { taskSupport: "optional" } })
}))
