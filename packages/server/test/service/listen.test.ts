/**
 * The listener's drain (`RunningServer.close`): an answer whose head goes out once the drain has
 * begun says `Connection: close`, so no client sends another request on that connection, while
 * every answer keeps the status, message and headers its handler wrote. Seen from a raw socket,
 * as a client on a kept-alive connection sees it.
 */
import { connect } from "node:net"
import type { Socket } from "node:net"
import type { IncomingMessage, ServerResponse } from "node:http"
import { afterEach, describe, expect, it } from "vitest"
import { listen } from "../../src/http/server.ts"
import type { RunningServer } from "../../src/http/server.ts"

interface Answer {
  readonly statusLine: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** One client connection, its answers read one at a time (each with a Content-Length). */
const openConnection = async (port: number) => {
  const socket: Socket = connect(port, "127.0.0.1")
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve)
    socket.once("error", reject)
  })
  let buffered = ""
  let ended = false
  const waiting: Array<() => void> = []
  const wake = () => {
    for (const resume of waiting.splice(0)) resume()
  }
  socket.setEncoding("utf8")
  socket.on("data", (chunk: string) => {
    buffered += chunk
    wake()
  })
  socket.on("close", () => {
    ended = true
    wake()
  })
  const nextAnswer = async (): Promise<Answer> => {
    for (;;) {
      const headEnd = buffered.indexOf("\r\n\r\n")
      if (headEnd !== -1) {
        const [statusLine = "", ...lines] = buffered.slice(0, headEnd).split("\r\n")
        const headers = Object.fromEntries(
          lines.map((line) => {
            const colon = line.indexOf(":")
            return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()]
          })
        )
        const length = Number(headers["content-length"] ?? "0")
        if (buffered.length >= headEnd + 4 + length) {
          const body = buffered.slice(headEnd + 4, headEnd + 4 + length)
          buffered = buffered.slice(headEnd + 4 + length)
          return { statusLine, headers, body }
        }
      }
      if (ended) throw new Error(`the connection closed with ${JSON.stringify(buffered)} unread`)
      await new Promise<void>((resume) => waiting.push(resume))
    }
  }
  return {
    send: (path: string) => socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`),
    nextAnswer,
    closed: () => (ended ? Promise.resolve() : new Promise<void>((resume) => socket.once("close", () => resume()))),
    destroy: () => socket.destroy()
  }
}

let running: RunningServer | null = null
afterEach(async () => {
  await running?.close(100)
  running = null
})

/** The ways a handler writes its head: all three keep what they say, drain or not. */
const answer = (req: IncomingMessage, res: ServerResponse) => {
  if (req.url === "/message") res.writeHead(201, "Made", { "x-kind": "message", "content-length": 2 }).end("ok")
  else if (req.url === "/headers") res.writeHead(202, { "x-kind": "headers", "content-length": 2 }).end("ok")
  else {
    res.statusCode = 203
    res.setHeader("x-kind", "implicit")
    res.end("ok")
  }
}

/**
 * The last answer on `client` in a drain: as its handler wrote it, with `Connection: close`; then
 * the connection closes and the drain ends.
 */
const expectLastAnswer = async (
  client: Awaited<ReturnType<typeof openConnection>>,
  drained: Promise<void>,
  statusLine: string,
  kind: string
) => {
  const got = await client.nextAnswer()
  expect(got.statusLine).toBe(statusLine)
  expect(got.headers["x-kind"]).toBe(kind)
  expect(got.headers["connection"]).toBe("close")
  await client.closed()
  await drained
  running = null
}

/** A listener answering with `answer`, and a connection to it that one answer has kept alive. */
const keptAliveConnection = async () => {
  const started = await listen(async (req, res) => answer(req, res), 0, "127.0.0.1")
  running = started
  const client = await openConnection(started.port)
  client.send("/headers")
  expect((await client.nextAnswer()).headers["connection"]).toBe("keep-alive")
  return { started, client }
}

describe("the listener's drain", () => {
  it("before it, every answer keeps its connection and says what its handler wrote", async () => {
    running = await listen(async (req, res) => answer(req, res), 0, "127.0.0.1")
    const client = await openConnection(running.port)
    for (const [path, statusLine] of [
      ["/message", "HTTP/1.1 201 Made"],
      ["/headers", "HTTP/1.1 202 Accepted"],
      ["/implicit", "HTTP/1.1 203 Non-Authoritative Information"]
    ] as const) {
      client.send(path)
      const got = await client.nextAnswer()
      expect(got.statusLine).toBe(statusLine)
      expect(got.headers["x-kind"]).toBe(path.slice(1))
      expect(got.headers["connection"]).toBe("keep-alive")
      expect(got.body).toBe("ok")
    }
    client.destroy()
  })

  it("an answer in flight when it begins says Connection: close, and the connection then closes", async () => {
    let release = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    let arrived = () => {}
    const inHandler = new Promise<void>((resolve) => (arrived = resolve))
    running = await listen(
      async (req, res) => {
        arrived()
        await held
        answer(req, res)
      },
      0,
      "127.0.0.1"
    )
    const client = await openConnection(running.port)
    client.send("/message")
    await inHandler
    const closed = running.close(5_000)
    release()
    await expectLastAnswer(client, closed, "HTTP/1.1 201 Made", "message")
  })

  it("a connection accepted before it, its request not yet read, is answered, with Connection: close", async () => {
    running = await listen(async (req, res) => answer(req, res), 0, "127.0.0.1")
    const client = await openConnection(running.port)
    const { server } = running
    while ((await new Promise<number>((resolve) => server.getConnections((_, count) => resolve(count)))) === 0) {
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    const closed = running.close(5_000)
    client.send("/implicit")
    await expectLastAnswer(client, closed, "HTTP/1.1 203 Non-Authoritative Information", "implicit")
  })

  it("a kept-alive connection's next request, sent as it begins, is answered, with Connection: close", async () => {
    const { started, client } = await keptAliveConnection()
    // Between two requests, the next one on the wire and unread: to Node an idle connection,
    // which http.Server's close drops at once.
    const closed = started.close(5_000)
    client.send("/implicit")
    await expectLastAnswer(client, closed, "HTTP/1.1 203 Non-Authoritative Information", "implicit")
  })

  it("a connection left idle is dropped half a second into it, and the drain ends", async () => {
    const { started, client } = await keptAliveConnection()
    const began = performance.now()
    await started.close(5_000)
    await client.closed()
    const millis = performance.now() - began
    expect(millis).toBeGreaterThanOrEqual(450)
    expect(millis).toBeLessThan(2_000)
    running = null
  })
})
