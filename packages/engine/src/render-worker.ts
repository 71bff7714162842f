// Worker-thread entry: renders one take per message and transfers the bytes back.

import { parentPort } from "node:worker_threads"
import { renderTrack } from "./render.ts"
import type { EngineRequest, RenderOptions } from "./types.ts"

export interface JobMessage {
  readonly id: number
  readonly request: EngineRequest
  readonly taskId: string
  readonly index: number
  readonly options: RenderOptions
}

if (parentPort === null) throw new Error("render-worker must run in a worker thread")
const port = parentPort

port.on("message", (msg: JobMessage) => {
  renderTrack(msg.request, msg.taskId, msg.index, msg.options).then(
    (track) => {
      const transfer: ArrayBuffer[] = []
      if (track.mp3.buffer instanceof ArrayBuffer) transfer.push(track.mp3.buffer)
      if (track.png.buffer instanceof ArrayBuffer) transfer.push(track.png.buffer)
      port.postMessage({ id: msg.id, ok: true, track }, transfer)
    },
    (err: unknown) => {
      port.postMessage({ id: msg.id, ok: false, error: err instanceof Error ? `${err.message}\n${err.stack ?? ""}` : String(err) })
    }
  )
})
