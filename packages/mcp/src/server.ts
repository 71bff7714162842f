/**
 * One MCP server definition: its identity, and the handlers of `tools/list` and `tools/call`
 * (`initialize` and `ping` are the SDK's). Stateless: a fresh server per HTTP request.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import type { McpRequest } from "./procedures.ts"
import { toolDefinitions, toolsByName } from "./tools.ts"

/** The interface's description version; the service and its surfaces share it. */
export const serviceVersion = "0.1.0"

export const serverIdentity = {
  name: "lyre",
  title: "Lyre",
  description: "Music generation: songs with vocals or instrumentals from a style, a title and lyrics."
} as const

const instructions = "Lyre generates songs. Call generate_music with a style, a title and lyrics (or instrumental: true); " +
  "it charges credits and returns a pending task. Then call wait_for_generation with the task id until it is " +
  "ready: its tracks carry MP3 links (audio_url) and covers. get_account shows the credit balance and limits."

/**
 * Without one, every server builds its own Ajv instance (for elicitation, which Lyre never
 * sends): most of the SDK's cost per request. One validator serves every request.
 */
const jsonSchemaValidator = new AjvJsonSchemaValidator()

export const makeMcpServer = (request: McpRequest, websiteUrl: string): Server => {
  const server = new Server(
    { name: serverIdentity.name, title: serverIdentity.title, version: serviceVersion, websiteUrl },
    { capabilities: { tools: { listChanged: false } }, instructions, jsonSchemaValidator }
  )
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...toolDefinitions] }))
  server.setRequestHandler(CallToolRequestSchema, async (call, extra) => {
    const tool = toolsByName.get(call.params.name)
    if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${call.params.name}`)
    const progressToken = call.params._meta?.progressToken
    return tool.call(call.params.arguments ?? {}, {
      request,
      signal: AbortSignal.any([extra.signal, request.signal]),
      progress: (progress, total, message) =>
        progressToken === undefined
          ? Promise.resolve()
          : extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress, total, message } })
    })
  })
  return server
}
