/**
 * A webhook receiver for tests: a real HTTP server on 127.0.0.1 that keeps every request it got
 * (raw body, signature header, arrival time) and answers as the test tells it, per event id:
 * a status, slowly, never (hang), by closing the connection, or with a redirect.
 */
import { createServer } from "node:http"
import type { IncomingMessage, Server, ServerResponse } from "node:http"
import type { Socket } from "node:net"

export type Answer =
  | { readonly kind: "status"; readonly status: number; readonly body?: string; readonly delayMs?: number }
  | { readonly kind: "hang" }
  | { readonly kind: "close" }
  | { readonly kind: "redirect"; readonly location: string }

export interface Received {
  readonly rawBody: string
  readonly signature: string | undefined
  readonly eventId: string
  readonly type: string
  readonly arrivedAt: number
}

export interface Receiver {
  readonly url: string
  readonly port: number
  readonly received: Array<Received>
  /** How to answer the n-th request (0-based) for an event id; default 200 at once. */
  answer: (eventId: string, nth: number) => Answer
  /** Requests of one event, in arrival order. */
  readonly of: (eventId: string) => ReadonlyArray<Received>
  /** Resolves when `predicate` holds over what was received, or rejects after `withinMs`. */
  readonly waitFor: (predicate: (received: ReadonlyArray<Received>) => boolean, withinMs?: number) => Promise<void>
  /** Stops listening (connections refused) until `reopen`. */
  readonly stop: () => Promise<void>
  readonly reopen: () => Promise<void>
  readonly close: () => Promise<void>
}

const eventIdOf = (rawBody: string): { id: string; type: string } => {
  try {
    const parsed: unknown = JSON.parse(rawBody)
    if (typeof parsed === "object" && parsed !== null && "id" in parsed && "type" in parsed) {
      return { id: String(parsed.id), type: String(parsed.type) }
    }
  } catch {
    // Not an envelope: recorded under an empty id.
  }
  return { id: "", type: "" }
}

export const startReceiver = async (port = 0): Promise<Receiver> => {
  const received: Array<Received> = []
  const sockets = new Set<Socket>()
  const hanging = new Set<ServerResponse>()
  const receiver: Receiver = {
    url: "",
    port: 0,
    received,
    answer: () => ({ kind: "status", status: 200 }),
    of: (eventId) => received.filter((r) => r.eventId === eventId),
    waitFor: async (predicate, withinMs = 15_000) => {
      const until = Date.now() + withinMs
      while (!predicate(received)) {
        if (Date.now() > until)
          throw new Error(`receiver: condition not met within ${withinMs} ms (${received.length} received)`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    },
    stop: () => closeServer(),
    reopen: () => openServer(),
    close: () => closeServer()
  }

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8")
      const { id, type } = eventIdOf(rawBody)
      const nth = received.filter((r) => r.eventId === id).length
      const header = req.headers["x-service-signature"]
      received.push({
        rawBody,
        signature: Array.isArray(header) ? header[0] : header,
        eventId: id,
        type,
        arrivedAt: Date.now()
      })
      const answer = receiver.answer(id, nth)
      switch (answer.kind) {
        case "status": {
          const send = () => {
            res.writeHead(answer.status, { "content-type": "text/plain" })
            res.end(answer.body ?? "ok")
          }
          if (answer.delayMs === undefined) send()
          else setTimeout(send, answer.delayMs)
          return
        }
        case "hang":
          hanging.add(res)
          return
        case "close":
          req.socket.destroy()
          return
        case "redirect":
          res.writeHead(302, { location: answer.location })
          res.end()
          return
      }
    })
  }

  let server: Server | null = null
  const openServer = () =>
    new Promise<void>((resolve) => {
      const next = createServer(handle)
      next.on("connection", (socket) => {
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
      })
      next.listen(receiver.port, "127.0.0.1", () => {
        const address = next.address()
        const bound = typeof address === "object" && address !== null ? address.port : 0
        Object.assign(receiver, { port: bound, url: `http://127.0.0.1:${bound}/hooks` })
        server = next
        resolve()
      })
    })
  const closeServer = () =>
    new Promise<void>((resolve) => {
      const current = server
      server = null
      if (current === null) return resolve()
      for (const res of hanging) res.destroy()
      hanging.clear()
      for (const socket of sockets) socket.destroy()
      current.close(() => resolve())
    })

  Object.assign(receiver, { port })
  await openServer()
  return receiver
}
