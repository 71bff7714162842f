/**
 * MCP tasks (protocol revision 2025-11-25) over Lyre's own: a task-augmented `tools/call`
 * answers at once with the generation task or the export, whose id is the MCP task id, and `tasks/get`,
 * `tasks/result`, `tasks/list` and `tasks/cancel` read it through the router. The SDK's
 * `tasks/get`, `tasks/list` and `tasks/cancel` handlers are used as they are; the store they call
 * is this one, made per HTTP request and holding nothing between requests, so any API process
 * answers for any task.
 */
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js"
import type { CallToolResult, Request, RequestId, Result, Task } from "@modelcontextprotocol/sdk/types.js"
import type { CreateTaskOptions, TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js"
import { errorTable, isExport, isExportId, isLyricsId, isUploadId, renderError } from "@lyre/core"
import type { ApiError, Upload } from "@lyre/core"
import { lyreJsonRpcCodes } from "@lyre/http"
import { isLyrics, isUpload, loadJob, pendingMessage } from "./jobs.ts"
import type { McpJob } from "./jobs.ts"
import { invoke } from "./procedures.ts"
import type { McpRequest, Outcome } from "./procedures.ts"
import { jobResult } from "./results.ts"
import { pollDelaysSeconds, steadyPollSeconds } from "./wait.ts"

/** What the server declares: tasks for `tools/call`, listed and (to be told no) cancelled. */
export const tasksCapability = { list: {}, cancel: {}, requests: { tools: { call: {} } } } as const

const statusOf: { readonly [S in McpJob["status"]]: Task["status"] } = {
  pending: "working",
  ready: "completed",
  failed: "failed"
}

/**
 * The interval a poller is asked to keep: the wait tool's schedule (1, 1, 2, 2, 3 s, then 5 s)
 * read by the task's age, so a `tasks/get` poller spends the per-minute budget as it does.
 */
export const pollIntervalFor = (ageSeconds: number): number => {
  let elapsed = 0
  for (const delay of pollDelaysSeconds) {
    elapsed += delay
    if (ageSeconds < elapsed) return delay * 1000
  }
  return steadyPollSeconds * 1000
}

/** An upload's: what listening heard, or why it gave up (uploads are free: nothing to refund). */
const uploadMessageOf = (upload: Upload): string =>
  upload.status === "ready"
    ? `Upload ${upload.id} is ready: track ${upload.track_id ?? ""}` +
      (upload.analysis === null ? "." : `, ${Math.round(upload.analysis.bpm)} bpm, ${upload.analysis.key}.`)
    : `${upload.error?.message ?? "Listening to the upload failed."} (${upload.error?.code ?? "internal_error"}).`

/** The status message, in the wait tool's words while pending, and the failure with its refund. */
const statusMessageOf = (task: McpJob, ageSeconds: number): string => {
  if (task.status === "pending") return pendingMessage(task, ageSeconds)
  if (isUpload(task)) return uploadMessageOf(task)
  if (isLyrics(task) && task.status === "ready") {
    return `Lyrics task ${task.id} is ready: ${task.variations.length} variations.`
  }
  if (isLyrics(task)) {
    return `${task.error?.message ?? "Writing the lyrics failed."} (${task.error?.code ?? "internal_error"}). ${task.credits_refunded} credits were refunded.`
  }
  if (task.status === "ready") {
    return isExport(task)
      ? `Export ${task.id} is ready: ${task.files.length} files.`
      : `Task ${task.id} is ready: ${task.tracks.length} tracks.`
  }
  return (
    `${task.error?.message ?? `The ${isExport(task) ? "export" : "generation"} failed.`} ` +
    `(${task.error?.code ?? "internal_error"}). ${task.credits_refunded} credits were refunded.`
  )
}

/** Lyre's task, export or upload as an MCP task: kept as long as the account's history (no ttl). */
export const mcpTaskOf = (task: McpJob, nowMillis: number): Task => {
  const ageSeconds = Math.max(0, (nowMillis - Date.parse(task.created_at)) / 1000)
  return {
    taskId: task.id,
    status: statusOf[task.status],
    statusMessage: statusMessageOf(task, ageSeconds),
    createdAt: task.created_at,
    lastUpdatedAt: task.updated_at,
    ttl: null,
    ...(task.status === "pending" ? { pollInterval: pollIntervalFor(ageSeconds) } : {})
  }
}

/**
 * What `tasks/result` answers: the result `wait_for_generation` (or `wait_for_export`) gives, an
 * error result when it failed.
 */
export const finalResultOf = (task: McpJob): CallToolResult =>
  task.status === "failed" ? { ...jobResult(task), isError: true } : jobResult(task)

const codeByStatus: Readonly<Record<number, number>> = {
  400: ErrorCode.InvalidParams,
  // MCP answers a task id it does not know with invalid params; so is another account's task.
  404: ErrorCode.InvalidParams,
  401: lyreJsonRpcCodes.unauthenticated,
  402: lyreJsonRpcCodes.paymentRequired,
  403: lyreJsonRpcCodes.forbidden,
  429: lyreJsonRpcCodes.rateLimited,
  503: lyreJsonRpcCodes.unavailable
}

/**
 * A domain failure where no task exists to carry it (a refused create, an unknown id): a
 * JSON-RPC error with the REST envelope in `data`, as for arguments failing the schema.
 */
export const mcpErrorFor = (error: ApiError): McpError =>
  new McpError(
    codeByStatus[errorTable[error._tag].status] ?? ErrorCode.InternalError,
    error.message,
    renderError(error).body
  )

const listPageSize = 20

/** The kinds `tasks/list` shows, in the order the cursor names them. */
const kinds = ["generation", "export", "upload"] as const
type Kind = (typeof kinds)[number]

const kindOf = (id: string): Kind => (isExportId(id) ? "export" : isUploadId(id) ? "upload" : "generation")

/** A page of one kind, as its list procedure answers it. */
export interface KindPage {
  readonly data: ReadonlyArray<McpJob>
  readonly has_more: boolean
}

/**
 * `tasks/list` shows generations, exports and uploads as one list, newest first. Its cursor is
 * the last id shown of each kind (`gen_...,exp_...,upl_...`; only the kinds shown so far): a kind
 * not shown yet is wholly older than the page, so it starts from its newest.
 */
const readCursor = (cursor: string | undefined): Partial<Record<Kind, string>> => {
  const position: Partial<Record<Kind, string>> = {}
  for (const id of cursor === undefined ? [] : cursor.split(",")) position[kindOf(id)] ??= id
  return position
}

/** The lists merged newest first: a page, and whether any list goes on past it. */
export const mergePage = (
  lists: Partial<Record<Kind, KindPage>>,
  cursor: string | undefined,
  size: number
): { readonly jobs: ReadonlyArray<McpJob>; readonly nextCursor: string | undefined } => {
  const merged: Array<McpJob> = kinds
    .flatMap((kind) => lists[kind]?.data ?? [])
    .sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at))
  const jobs = merged.slice(0, size)
  const more = merged.length > size || kinds.some((kind) => lists[kind]?.has_more === true)
  const previous = readCursor(cursor)
  const next = kinds
    .flatMap((kind) => {
      const last = jobs.findLast((job) => kindOf(job.id) === kind)?.id ?? previous[kind]
      return last === undefined ? [] : [last]
    })
    .join(",")
  return { jobs, nextCursor: more && next !== "" ? next : undefined }
}

/**
 * The SDK's TaskStore over the router, for one HTTP request: `tasks/get`, `tasks/list` and
 * `tasks/cancel` read through it (`tasks/result` is the wait tool's loop, in server.ts). Tasks
 * are created by the tools' procedures, never here; an MCP session id is not used, since the
 * credential decides whose tasks are visible (another account's is not found).
 */
export class LyreTaskStore implements TaskStore {
  readonly request: McpRequest

  constructor(request: McpRequest) {
    this.request = request
  }

  private load(taskId: string): Promise<Outcome<McpJob>> {
    return loadJob(this.request, taskId)
  }

  createTask(_params: CreateTaskOptions, _requestId: RequestId, request: Request): Promise<Task> {
    return Promise.reject(
      new McpError(ErrorCode.InternalError, `${request.method}: Lyre's tasks are created by their tools.`)
    )
  }

  async getTask(taskId: string): Promise<Task | null> {
    const outcome = await this.load(taskId)
    // Not found (another account's task too) is thrown rather than null: the envelope rides along.
    if (!outcome.ok) throw mcpErrorFor(outcome.error)
    return mcpTaskOf(outcome.value, Date.now())
  }

  storeTaskResult(taskId: string): Promise<void> {
    return Promise.reject(new McpError(ErrorCode.InternalError, `Task ${taskId}: results are the generation's own.`))
  }

  async getTaskResult(taskId: string): Promise<Result> {
    const outcome = await this.load(taskId)
    if (!outcome.ok) throw mcpErrorFor(outcome.error)
    return finalResultOf(outcome.value)
  }

  /** The SDK's `tasks/cancel` ends here for a task still working: a generation or export cannot be stopped. */
  updateTaskStatus(taskId: string): Promise<void> {
    const what = isExportId(taskId)
      ? "an export"
      : isUploadId(taskId)
        ? "an upload being listened to"
        : isLyricsId(taskId)
          ? "a lyrics task"
          : "a generation"
    return Promise.reject(
      new McpError(
        ErrorCode.InvalidParams,
        `Task ${taskId} cannot be cancelled: ${what} runs to its end once submitted (a failed one is refunded).`
      )
    )
  }

  /** Three procedure calls (generations, exports, uploads), each one request of the per-minute budget. */
  async listTasks(cursor?: string): Promise<{ tasks: Array<Task>; nextCursor?: string }> {
    const position = readCursor(cursor)
    const inputFor = (kind: Kind) => ({
      limit: listPageSize,
      ...(position[kind] === undefined ? {} : { starting_after: position[kind] })
    })
    const generationsInput = inputFor("generation")
    const generations = await invoke(this.request, generationsInput, (caller) =>
      caller.generations.list(generationsInput)
    )
    if (!generations.ok) throw mcpErrorFor(generations.error)
    const exportsInput = inputFor("export")
    const exports = await invoke(this.request, exportsInput, (caller) => caller.exports.list(exportsInput))
    if (!exports.ok) throw mcpErrorFor(exports.error)
    const uploadsInput = inputFor("upload")
    const uploads = await invoke(this.request, uploadsInput, (caller) => caller.uploads.list(uploadsInput))
    if (!uploads.ok) throw mcpErrorFor(uploads.error)
    const page = mergePage(
      { generation: generations.value, export: exports.value, upload: uploads.value },
      cursor,
      listPageSize
    )
    const now = Date.now()
    const tasks = page.jobs.map((job) => mcpTaskOf(job, now))
    return page.nextCursor === undefined ? { tasks } : { tasks, nextCursor: page.nextCursor }
  }
}
