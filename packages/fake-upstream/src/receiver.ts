/**
 * The other end of the fake's callbacks, for tests: a real HTTP server on 127.0.0.1 that hands
 * each JSON body it is sent (with the path and query it was sent to) to the test and answers
 * 200, standing in for the service's callback route.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

export interface CallbackReceiver {
  /** `http://127.0.0.1:<port>`: a callback URL is this and any path. */
  readonly origin: string
  readonly close: () => Promise<void>
}

export const startCallbackReceiver = async (
  onCallback: (path: string, body: unknown) => void
): Promise<CallbackReceiver> => {
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      onCallback(req.url ?? "", JSON.parse(Buffer.concat(chunks).toString("utf8")))
      res.writeHead(200).end("ok")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
