// Worker-thread entry: runs one job per message and transfers the bytes back; a take's MP3 is also
// sent piece by piece as it is encoded (`{id, piece}`), so the take can be heard before it is done.

import { parentPort } from "node:worker_threads"
import { runJob, transferables, type JobMessage } from "./jobs.ts"

if (parentPort === null) throw new Error("render-worker must run in a worker thread")
const port = parentPort

port.on("message", (msg: JobMessage) => {
  // The piece is also part of the file being built: a copy crosses (transferred, not cloned again).
  const sink = (piece: Uint8Array): void => {
    const copy = piece.slice()
    port.postMessage({ id: msg.id, piece: copy }, [copy.buffer])
  }
  runJob(msg, sink).then(
    (result) => port.postMessage({ id: msg.id, ok: true, result }, transferables(result)),
    (err: unknown) => {
      port.postMessage({
        id: msg.id,
        ok: false,
        error: err instanceof Error ? `${err.message}\n${err.stack ?? ""}` : String(err)
      })
    }
  )
})
