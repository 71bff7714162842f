/**
 * One MCP server definition: its identity, and the handlers of `tools/list`, `tools/call` and
 * `tasks/result` (`initialize`, `ping`, `tasks/get`, `tasks/list` and `tasks/cancel` are the
 * SDK's, over Lyre's task store).
 * Stateless: a fresh server per HTTP request.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js"
import {
  CallToolRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  ListToolsRequestSchema,
  McpError,
  RELATED_TASK_META_KEY
} from "@modelcontextprotocol/sdk/types.js"
import type { ProgressToken, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js"
import type { McpRequest } from "./procedures.ts"
import { finalResultOf, LyreTaskStore, mcpErrorFor, mcpTaskOf, tasksCapability } from "./tasks.ts"
import { toolDefinitions, toolsByName } from "./tools.ts"
import { loadJob, pendingMessage, pendingPreviews } from "./jobs.ts"
import { previewLinks, previewsMetaKey } from "./previews.ts"
import { waitFor } from "./wait.ts"
import type { Progress } from "./wait.ts"

/** The interface's description version; the service and its surfaces share it. */
export const serviceVersion = "0.1.0"

export const serverIdentity = {
  name: "lyre",
  title: "Lyre",
  description:
    "Music generation: songs with vocals or instrumentals from a style, a title and lyrics, and covers, " +
    "vocals, accompaniments and edits of your own audio."
} as const

/** What `initialize` declares; the server card shows the same. */
export const serverCapabilities = { tools: { listChanged: false }, tasks: tasksCapability } as const

const instructions =
  "Lyre generates songs. Call generate_music with a style, a title and lyrics (or instrumental: true); " +
  "it charges credits and returns a pending task. Then call wait_for_generation with the task id until it is " +
  "ready: its tracks carry MP3 links (audio_url) and covers. Once the song can be heard while it is made, the wait's " +
  "progress (with a progress token) and a pending result name and link each take's stream address (previews). " +
  "A client with MCP tasks may call generate_music as a task instead and read tasks/result. On a track of a ready task (trk_...), extend_track continues the song (a new " +
  "generation, waited for with wait_for_generation) and export_track takes it as wav, midi, stems or timed_lyrics " +
  "(waited for with wait_for_export; its files come as resource links). upload_audio takes your own audio (base64 data " +
  "or a url), waited for with wait_for_upload; its track_id goes to cover_track, add_vocals, add_instrumental, " +
  "edit_track (each a generation, waited for with wait_for_generation) and create_persona, whose id is persona_id on " +
  "generate_music. get_account shows the credit balance and limits."

/**
 * Without one, every server builds its own Ajv instance (for elicitation, which Lyre never
 * sends): most of the SDK's cost per request. One validator serves every request.
 */
const jsonSchemaValidator = new AjvJsonSchemaValidator()

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>

/**
 * Progress notifications for a request that carries a progress token; nothing otherwise. A
 * generation with audio to hear names its streams in the message and links them in `_meta`.
 */
const progressSender =
  (progressToken: ProgressToken | undefined, extra: Extra): Progress =>
  (progress, total, job) => {
    if (progressToken === undefined) return Promise.resolve()
    const links = previewLinks(job.id, pendingPreviews(job))
    return extra.sendNotification({
      method: "notifications/progress",
      params: {
        progressToken,
        progress,
        ...(total === undefined ? {} : { total }),
        message: pendingMessage(job, progress),
        ...(links.length === 0 ? {} : { _meta: { [previewsMetaKey]: links } })
      }
    })
  }

export const makeMcpServer = (request: McpRequest, websiteUrl: string): Server => {
  const server = new Server(
    { name: serverIdentity.name, title: serverIdentity.title, version: serviceVersion, websiteUrl },
    {
      capabilities: serverCapabilities,
      instructions,
      jsonSchemaValidator,
      taskStore: new LyreTaskStore(request)
    }
  )
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...toolDefinitions] }))
  server.setRequestHandler(CallToolRequestSchema, async (call, extra) => {
    const tool = toolsByName.get(call.params.name)
    if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${call.params.name}`)
    const progressToken = call.params._meta?.progressToken
    const toolCall = {
      request,
      signal: AbortSignal.any([extra.signal, request.signal]),
      progress: progressSender(progressToken, extra)
    }
    if (call.params.task === undefined) return tool.call(call.params.arguments ?? {}, toolCall)
    if (tool.startTask === undefined) {
      throw new McpError(
        ErrorCode.MethodNotFound,
        `${call.params.name} answers at once and cannot be called as a task.`
      )
    }
    const started = await tool.startTask(call.params.arguments ?? {}, toolCall)
    if (!started.ok) throw mcpErrorFor(started.error)
    return { task: mcpTaskOf(started.value, Date.now()) }
  })
  // The SDK's own `tasks/result` polls the store at the task's interval and says nothing while
  // it waits; this one is the wait tool's loop, with its schedule and progress notifications.
  server.setRequestHandler(GetTaskPayloadRequestSchema, async (call, extra) => {
    const { taskId } = call.params
    const signal = AbortSignal.any([extra.signal, request.signal])
    const outcome = await waitFor(
      (id) => loadJob(request, id),
      taskId,
      Number.POSITIVE_INFINITY,
      signal,
      progressSender(call.params._meta?.progressToken, extra)
    )
    if (!outcome.ok) throw mcpErrorFor(outcome.error)
    if (outcome.value.status === "pending") throw new McpError(ErrorCode.ConnectionClosed, "The client went away.")
    return { ...finalResultOf(outcome.value), _meta: { [RELATED_TASK_META_KEY]: { taskId } } }
  })
  return server
}
