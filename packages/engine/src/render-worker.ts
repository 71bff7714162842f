// Worker-thread entry: runs one job per message and transfers the bytes back.

import { parentPort } from "node:worker_threads"
import { runJob, transferables, type JobMessage } from "./jobs.ts"

if (parentPort === null) throw new Error("render-worker must run in a worker thread")
const port = parentPort

port.on("message", (msg: JobMessage) => {
  runJob(msg).then(
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
