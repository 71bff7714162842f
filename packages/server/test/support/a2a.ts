/** What the A2A tests share: the SDK's client with a credential, and raw JSON-RPC over fetch. */
import { randomUUID } from "node:crypto"
import type { MessageSendParams, Part } from "@a2a-js/sdk-0.3"
import { A2AClient } from "@a2a-js/sdk-0.3/client"
import type { Message, Task } from "@a2a-js/sdk"
import { A2AError } from "@a2a-js/sdk/errors"
import { expect } from "vitest"
import type { Json, TestServer } from "./harness.ts"

/** The SDK's client, from the agent card, sending `Authorization: Bearer <key>` on every call. */
export const a2aClient = (server: TestServer, key: string): Promise<A2AClient> => {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers)
    headers.set("authorization", `Bearer ${key}`)
    return fetch(input, { ...init, headers })
  }
  return A2AClient.fromCardUrl(`${server.url}/.well-known/agent-card.json`, { fetchImpl })
}

export const userMessage = (
  parts: Array<Part>,
  extra: Partial<MessageSendParams["message"]> = {}
): MessageSendParams => ({
  message: { kind: "message", role: "user", messageId: randomUUID(), parts, ...extra }
})

export const dataMessage = (data: Record<string, unknown>, configuration?: MessageSendParams["configuration"]) => ({
  ...userMessage([{ kind: "data", data }]),
  ...(configuration === undefined ? {} : { configuration })
})

export const textMessage = (text: string) => userMessage([{ kind: "text", text }])

/** One raw POST to /a2a: the HTTP status, headers and parsed body (null when empty). */
export const rpc = async (
  server: TestServer,
  body: unknown,
  options: {
    readonly key?: string
    readonly authorization?: string
    readonly raw?: string
    readonly contentType?: string
  } = {}
): Promise<{ status: number; headers: Headers; body: Json }> => {
  const headers: Record<string, string> = { "content-type": options.contentType ?? "application/json" }
  if (options.key !== undefined) headers["authorization"] = `Bearer ${options.key}`
  if (options.authorization !== undefined) headers["authorization"] = options.authorization
  const response = await fetch(`${server.url}/a2a`, {
    method: "POST",
    headers,
    body: options.raw ?? JSON.stringify(body)
  })
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: (text === "" ? null : JSON.parse(text)) as Json }
}

export const call = (method: string, params: unknown, id: string | number = 1) => ({
  jsonrpc: "2.0",
  id,
  method,
  params
})

/** A 1.x client's send answer as the Task it must be. */
export const asTask = (result: Message | Task): Task => {
  if ("messageId" in result) throw new Error("expected a task")
  return result
}

/** The A2AError a 1.x client call rejects with (its `data` is the error's details). */
export const rejectionOf = async (
  promise: Promise<unknown>
): Promise<A2AError & { envelopeCode?: number; data?: unknown }> => {
  const error = await promise.then(
    () => undefined,
    (cause: unknown) => cause
  )
  expect(error).toBeInstanceOf(A2AError)
  return error as A2AError & { envelopeCode?: number; data?: unknown }
}

/** The ErrorInfo of a domain in a 1.0 error's details. */
export const detailOf = (data: unknown, domain: string): Record<string, unknown> | undefined =>
  (Array.isArray(data) ? (data as Array<Record<string, unknown>>) : []).find((detail) => detail["domain"] === domain)
