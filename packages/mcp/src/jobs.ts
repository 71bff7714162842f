/**
 * What a long-running tool starts: a generation task (`gen_...`, an extension or a track task
 * too), an export (`exp_...`) or an upload being listened to (`upl_...`). Each is Lyre's own row
 * with `pending`, `ready` and `failed`; the id's prefix (core's) says which procedure reads one,
 * so an MCP task id needs no table of its own.
 */
import { isExportId, isLyricsId, isUploadId } from "@lyre/core"
import type { Export, GenerationTask, Job, LyricsTask, Preview, Upload } from "@lyre/core"
import { listenSentence } from "./previews.ts"
import { invoke } from "./procedures.ts"
import type { McpRequest, Outcome } from "./procedures.ts"

/** Anything an MCP task stands for. */
export type McpJob = Job | Upload | LyricsTask

export const isUpload = (job: McpJob): job is Upload => isUploadId(job.id)

export const isLyrics = (job: McpJob): job is LyricsTask => isLyricsId(job.id)

export const loadGeneration = (request: McpRequest, id: string): Promise<Outcome<GenerationTask>> =>
  invoke(request, { id }, (caller) => caller.generations.get({ id }))

export const loadExport = (request: McpRequest, id: string): Promise<Outcome<Export>> =>
  invoke(request, { id }, (caller) => caller.exports.get({ id }))

export const loadUpload = (request: McpRequest, id: string): Promise<Outcome<Upload>> =>
  invoke(request, { id }, (caller) => caller.uploads.get({ id }))

export const loadLyrics = (request: McpRequest, id: string): Promise<Outcome<LyricsTask>> =>
  invoke(request, { id }, (caller) => caller.lyrics.get({ id }))

/** Any kind by its id; any other id is read as a generation's, and so is not found as one. */
export const loadJob = (request: McpRequest, id: string): Promise<Outcome<McpJob>> =>
  isExportId(id)
    ? loadExport(request, id)
    : isUploadId(id)
      ? loadUpload(request, id)
      : isLyricsId(id)
        ? loadLyrics(request, id)
        : loadGeneration(request, id)

const kindOf = (id: string): string =>
  isExportId(id) ? "Export" : isUploadId(id) ? "Upload" : isLyricsId(id) ? "Lyrics task" : "Task"

/** A pending generation's streams of its takes being made; nothing for any other job or state. */
export const pendingPreviews = (job: McpJob): ReadonlyArray<Preview> =>
  job.status === "pending" && "previews" in job ? job.previews : []

/**
 * The words of the wait's progress and of a working task's status message, with the addresses of
 * its audio while it is made once there is some.
 */
export const pendingMessage = (job: McpJob, elapsedSeconds: number): string =>
  `${kindOf(job.id)} ${job.id} is pending after ${Math.round(elapsedSeconds)} s.${listenSentence(pendingPreviews(job))}`
