/**
 * The end of an upload refused before its body was read, shared by REST and the dashboard's
 * upload call (decision 0075).
 */
import type { IncomingMessage, ServerResponse } from "node:http"

/** How long the rest of a refused upload is read and dropped before its connection is closed. */
const lingerMs = 2_000

/**
 * An upload refused before its end leaves its client still sending. Closing at once would make
 * the client's next writes reset the connection, and a reset can destroy the answer before the
 * client reads it (fetch then reports `write EPIPE`, not the refusal). So the rest is read and
 * dropped for a short while (a lingering close, RFC 9112 section 9.6), then the connection is
 * closed if the body has still not ended: never drained for longer than that (0075).
 */
export const lingerThenClose = (req: IncomingMessage, res: ServerResponse): void => {
  res.once("finish", () => {
    req.resume()
    setTimeout(() => {
      if (!req.complete) req.socket.destroy()
    }, lingerMs).unref()
  })
}
