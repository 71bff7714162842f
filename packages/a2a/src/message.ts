/**
 * What a `SendMessage` (0.3: `message/send`) asks for: which operation (a skill of the card:
 * a generation, a song tool or a track task on a track, an upload, a persona) and its input. The SDK hands every request over in
 * A2A 1.0's shapes, 0.3 ones translated by its compatibility layer, so this reads one shape for
 * both. The input is not validated here: core's schema judges it inside the procedure, so an
 * A2A agent gets the same 400s as a REST client. Only the message's own shape (the protocol's)
 * and the operation's name are checked here.
 */
import { createHash } from "node:crypto"
import { A2A_PROTOCOL_VERSION, Role } from "@a2a-js/sdk"
import type { SendMessageRequest } from "@a2a-js/sdk"
import { z } from "zod"
import { titleFromStyle } from "./title.ts"

const TextContent = z.object({ $case: z.literal("text"), value: z.string() })
const DataContent = z.object({ $case: z.literal("data"), value: z.record(z.string(), z.unknown()) })
const UrlContent = z.object({ $case: z.literal("url"), value: z.string() })
const RawContent = z.object({ $case: z.literal("raw"), value: z.instanceof(Uint8Array) })
const Part = z.object({
  content: z.union([TextContent, DataContent, UrlContent, RawContent], { error: "a part is text, data or a file" }),
  filename: z.string().optional(),
  mediaType: z.string().optional()
})

const Message = z.object({
  messageId: z.string().min(1),
  role: z.literal(Role.ROLE_USER, { error: "the message's role must be user" }),
  parts: z.array(Part).min(1),
  contextId: z.string(),
  taskId: z.string()
})

const SendParams = z.object({
  message: Message,
  configuration: z.object({ returnImmediately: z.boolean() }).optional()
})

const TaskIdParams = z.object({ id: z.string().min(1) })

/** The skills a message can ask for, by the id the agent card gives each (the MCP tools' names). */
export const operations = [
  "generate_music",
  "extend_track",
  "export_track",
  "upload_audio",
  "cover_track",
  "add_vocals",
  "add_instrumental",
  "edit_track",
  "create_persona",
  "lyrics"
] as const
export type Operation = (typeof operations)[number]

const isOperation = (u: unknown): u is Operation => operations.some((operation) => operation === u)

export type MessageProblem =
  | { readonly kind: "invalid"; readonly message: string; readonly param: string }
  /** A file with an operation other than an upload's. */
  | { readonly kind: "file_part"; readonly operation: Operation }
  | { readonly kind: "continues_task" }

export type ReadMessage =
  | {
      readonly ok: true
      readonly operation: Operation
      readonly input: unknown
      readonly messageId: string
      readonly contextId: string | undefined
      readonly blocking: boolean
    }
  | { readonly ok: false; readonly problem: MessageProblem }

const firstIssue = (error: z.ZodError): MessageProblem => {
  const issue = error.issues[0]
  const param = ["params", ...(issue?.path ?? []).map(String)].join(".")
  return { kind: "invalid", message: `${param}: ${issue?.message ?? "invalid"}`, param }
}

/**
 * Whether the answer waits for the end. 1.0 waits unless `returnImmediately`; 0.3 waited only
 * for `blocking: true`, which the SDK translates into `returnImmediately: false` (and a 0.3
 * message without a configuration into no configuration at all, answered at once as before).
 */
const blockingOf = (configuration: { readonly returnImmediately: boolean } | undefined, version: string): boolean =>
  configuration === undefined ? version === A2A_PROTOCOL_VERSION : !configuration.returnImmediately

/**
 * A file part is an upload: its bytes (base64 on the wire) as `data`, or its URL as `url`, with
 * its media type, under core's rules for either; a data part beside it may give the `title`
 * (absent: the file's name). Only one file per message, and only for `upload_audio`: a task on
 * the file names the upload's track_id in a message of its own, once the upload is ready.
 */
const uploadInput = (
  file: {
    readonly content: z.infer<typeof UrlContent> | z.infer<typeof RawContent>
    readonly filename?: string | undefined
    readonly mediaType?: string | undefined
  },
  fields: Record<string, unknown>
): Record<string, unknown> => {
  const source =
    file.content.$case === "url"
      ? { url: file.content.value }
      : { data: Buffer.from(file.content.value).toString("base64") }
  const named = file.filename === undefined || file.filename === "" ? {} : { title: file.filename }
  const typed = file.mediaType === undefined || file.mediaType === "" ? {} : { content_type: file.mediaType }
  return { ...named, ...typed, ...fields, ...source }
}

/**
 * A data part carries the request's fields, and `operation` names the skill when it is not a
 * generation (`extend_track`, `export_track`, `cover_track`, ... with the track's `track_id`); text
 * parts beside it are a human-readable note and are ignored. Text parts alone are a style
 * description, rendered as an instrumental. A file part is an upload (see uploadInput).
 */
export const readSendParams = (params: SendMessageRequest, version: string): ReadMessage => {
  const parsed = SendParams.safeParse(params)
  if (!parsed.success) return { ok: false, problem: firstIssue(parsed.error) }
  const { message, configuration } = parsed.data
  // Lyre tasks are one request each: there is nothing to add to a task once it exists.
  if (message.taskId !== "") return { ok: false, problem: { kind: "continues_task" } }
  const contents = message.parts.map((p) => p.content)
  const files = message.parts.flatMap((p) =>
    p.content.$case === "url" || p.content.$case === "raw" ? [{ ...p, content: p.content }] : []
  )
  const data = contents.flatMap((content) => (content.$case === "data" ? [content.value] : []))
  const blocking = blockingOf(configuration, version)
  if (data.length > 1) {
    return {
      ok: false,
      problem: { kind: "invalid", message: "Send one data part with the request.", param: "params.message.parts" }
    }
  }
  if (files.length > 1) {
    return {
      ok: false,
      problem: { kind: "invalid", message: "Send one file per upload.", param: "params.message.parts" }
    }
  }
  const { messageId } = message
  const contextId = message.contextId === "" ? undefined : message.contextId
  const [fields] = data
  const [file] = files
  const { operation = file === undefined ? "generate_music" : "upload_audio", ...input } = fields ?? {}
  if (!isOperation(operation)) {
    return {
      ok: false,
      problem: { kind: "invalid", message: `operation must be one of ${operations.join(", ")}.`, param: "operation" }
    }
  }
  if (file !== undefined) {
    if (operation !== "upload_audio") return { ok: false, problem: { kind: "file_part", operation } }
    return { ok: true, operation, input: uploadInput(file, input), messageId, contextId, blocking }
  }
  if (fields !== undefined) return { ok: true, operation, input, messageId, contextId, blocking }
  const style = contents
    .flatMap((content) => (content.$case === "text" ? [content.value] : []))
    .join("\n")
    .trim()
  return {
    ok: true,
    operation: "generate_music",
    input: { style, title: titleFromStyle(style), instrumental: true },
    messageId,
    contextId,
    blocking
  }
}

/**
 * A message is sent once: its `messageId` (the sender's, unique per message) is the create's
 * idempotency key, so a send retried after a lost answer charges once, whichever protocol
 * version carried it. Hashed, so any length fits, and named apart from the keys REST and MCP
 * clients choose.
 */
export const idempotencyKeyOf = (messageId: string): string =>
  `a2a:${createHash("sha256").update(messageId).digest("base64url")}`

export type ReadTaskId =
  | { readonly ok: true; readonly id: string }
  | { readonly ok: false; readonly problem: MessageProblem }

export const readTaskIdParams = (params: unknown): ReadTaskId => {
  const parsed = TaskIdParams.safeParse(params)
  return parsed.success ? { ok: true, id: parsed.data.id } : { ok: false, problem: firstIssue(parsed.error) }
}
