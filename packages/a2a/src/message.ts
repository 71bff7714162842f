/**
 * What an A2A `message/send` asks for, read into a GenerateRequest-shaped input. The input is
 * not validated here: core's schema judges it inside the create procedure, so an A2A agent gets
 * the same 400s as a REST client. Only the message's own shape (the protocol's) is checked here.
 */
import { createHash } from "node:crypto"
import type { MessageSendParams } from "@a2a-js/sdk"
import { z } from "zod"
import { titleFromStyle } from "./title.ts"

const TextPart = z.object({ kind: z.literal("text"), text: z.string() })
const DataPart = z.object({ kind: z.literal("data"), data: z.record(z.string(), z.unknown()) })
const FilePart = z.object({ kind: z.literal("file") })
const AnyPart = z.union([TextPart, DataPart, FilePart])

const Message = z.object({
  kind: z.literal("message"),
  messageId: z.string().min(1),
  role: z.literal("user"),
  parts: z.array(AnyPart).min(1),
  contextId: z.string().min(1).optional(),
  taskId: z.string().optional()
})

const SendParams = z.object({
  message: Message,
  configuration: z.object({ blocking: z.boolean().optional() }).optional()
})

const TaskIdParams = z.object({ id: z.string() })

export type MessageProblem =
  | { readonly kind: "invalid"; readonly message: string; readonly param: string }
  | { readonly kind: "file_part" }
  | { readonly kind: "continues_task" }

export type ReadMessage =
  | {
    readonly ok: true
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
 * A data part carries the GenerateRequest fields (text parts beside it are a human-readable
 * note and are ignored); text parts alone are a style description, rendered as an instrumental.
 */
export const readSendParams = (params: MessageSendParams): ReadMessage => {
  const parsed = SendParams.safeParse(params)
  if (!parsed.success) return { ok: false, problem: firstIssue(parsed.error) }
  const { message, configuration } = parsed.data
  // Lyre tasks are one request each: there is nothing to add to a task once it exists.
  if (message.taskId !== undefined) return { ok: false, problem: { kind: "continues_task" } }
  const parts = message.parts
  if (parts.some((part) => part.kind === "file")) return { ok: false, problem: { kind: "file_part" } }
  const data = parts.flatMap((part) => (part.kind === "data" ? [part.data] : []))
  const blocking = configuration?.blocking === true
  if (data.length > 1) {
    return {
      ok: false,
      problem: { kind: "invalid", message: "Send one data part with the generation request.", param: "params.message.parts" }
    }
  }
  const { messageId, contextId } = message
  if (data[0] !== undefined) return { ok: true, input: data[0], messageId, contextId, blocking }
  const style = parts.flatMap((part) => (part.kind === "text" ? [part.text] : [])).join("\n").trim()
  return { ok: true, input: { style, title: titleFromStyle(style), instrumental: true }, messageId, contextId, blocking }
}

/**
 * A message is sent once: its `messageId` (the sender's, unique per message) is the create's
 * idempotency key, so a `message/send` retried after a lost answer charges once. Hashed, so any
 * length fits, and named apart from the keys REST and MCP clients choose.
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
