/**
 * One MCP server definition: its identity, and the handlers of `tools/list` and `tools/call`
 * (`initialize`, `ping` and the `tasks/*` methods are the SDK's, over Lyre's task store).
 * Stateless: a fresh server per HTTP request.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import type { McpRequest } from "./procedures.ts"
import { LyreTaskStore, mcpErrorFor, mcpTaskOf, tasksCapability } from "./tasks.ts"
import { toolDefinitions, toolsByName } from "./tools.ts"

/** The interface's description version; the service and its surfaces share it. */
export const serviceVersion = "0.1.0"

export const serverIdentity = {
  name: "lyre",
  title: "Lyre",
  description: "Music generation: songs with vocals or instrumentals from a style, a title and lyrics."
} as const

/** What `initialize` declares; the server card shows the same. */
export const serverCapabilities = { tools: { listChanged: false }, tasks: tasksCapability } as const

const instructions = "Lyre generates songs. Call generate_music with a style, a title and lyrics (or instrumental: true); " +
  "it charges credits and returns a pending task. Then call wait_for_generation with the task id until it is " +
  "ready: its tracks carry MP3 links (audio_url) and covers. A client with MCP tasks may call generate_music as a task " +
  "instead and read tasks/result. get_account shows the credit balance and limits."

/**
 * Without one, every server builds its own Ajv instance (for elicitation, which Lyre never
 * sends): most of the SDK's cost per request. One validator serves every request.
 */
const jsonSchemaValidator = new AjvJsonSchemaValidator()

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
      progress: (progress: number, total: number, message: string) =>
        progressToken === undefined
          ? Promise.resolve()
          : extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress, total, message } })
    }
    if (call.params.task === undefined) return tool.call(call.params.arguments ?? {}, toolCall)
    if (tool.startTask === undefined) {
      throw new McpError(ErrorCode.MethodNotFound, `${call.params.name} answers at once and cannot be called as a task.`)
    }
    const started = await tool.startTask(call.params.arguments ?? {}, toolCall)
    if (!started.ok) throw mcpErrorFor(started.error)
    return { task: mcpTaskOf(started.value, Date.now()) }
  })
  return server
}
