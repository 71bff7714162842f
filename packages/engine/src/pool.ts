// A small worker_threads pool: one job per worker at a time (a take, an extension's take or an
// export), jobs queued FIFO except that light jobs (a MIDI file, timed lyrics, a cached WAV:
// milliseconds each) go ahead of the renders waiting, so they never wait for seconds of synthesis.
// Workers start lazily, are unref'd while idle (an idle pool never holds the process
// open) and are replaced if one dies, failing only the job it was running.

import { availableParallelism } from "node:os"
import { extname } from "node:path"
import { Worker } from "node:worker_threads"
import type { PcmCacheOptions } from "./pcm-cache.ts"
import type { JobBody, JobMessage, JobResult } from "./jobs.ts"
import type { RenderOptions } from "./types.ts"

// The worker is a sibling module with this module's own extension: `.ts` where the workspace
// runs its sources, `.js` in the published build.
const workerUrl = new URL(`./render-worker${extname(new URL(import.meta.url).pathname)}`, import.meta.url)

interface Job {
  readonly message: JobMessage
  /** A take's MP3 pieces as its worker encodes them. */
  readonly onPiece: ((piece: Uint8Array) => void) | undefined
  readonly resolve: (r: JobResult) => void
  readonly reject: (e: Error) => void
}

interface Slot {
  worker: Worker | null
  job: Job | null
}

const isLight = (body: JobBody): boolean => body.kind === "export" && body.format !== "stems"

type Reply =
  | { readonly id: number; readonly piece: Uint8Array }
  | { readonly id: number; readonly ok: true; readonly result: JobResult }
  | { readonly id: number; readonly ok: false; readonly error: string }

export class RenderPool {
  private readonly slots: Slot[]
  private readonly queue: Job[] = []
  private nextId = 1
  private closed = false

  private readonly options: RenderOptions
  private readonly cache: PcmCacheOptions | null

  constructor(
    size: number = availableParallelism(),
    options: RenderOptions = {},
    cache: PcmCacheOptions | null = null
  ) {
    this.options = options
    this.cache = cache
    this.slots = Array.from({ length: Math.max(1, Math.floor(size)) }, () => ({ worker: null, job: null }))
  }

  get size(): number {
    return this.slots.length
  }

  /** Runs one job; a take's MP3 reaches `onPiece` piece by piece as it is encoded, before the job answers. */
  run(body: JobBody, onPiece?: (piece: Uint8Array) => void): Promise<JobResult> {
    if (this.closed) return Promise.reject(new Error("engine is closed"))
    return new Promise<JobResult>((resolve, reject) => {
      const job: Job = {
        message: { ...body, id: this.nextId++, options: this.options, cache: this.cache },
        onPiece,
        resolve,
        reject
      }
      if (isLight(body)) {
        const firstHeavy = this.queue.findIndex((j) => !isLight(j.message))
        this.queue.splice(firstHeavy < 0 ? this.queue.length : firstHeavy, 0, job)
      } else this.queue.push(job)
      this.pump()
    })
  }

  async close(): Promise<void> {
    this.closed = true
    for (const job of this.queue.splice(0)) job.reject(new Error("engine is closed"))
    await Promise.all(
      this.slots.map(async (slot) => {
        const w = slot.worker
        slot.worker = null
        if (slot.job !== null) {
          slot.job.reject(new Error("engine is closed"))
          slot.job = null
        }
        if (w !== null) await w.terminate()
      })
    )
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) return
      if (slot.job !== null) continue
      const job = this.queue.shift() as Job
      slot.job = job
      const w = slot.worker ?? this.spawn(slot)
      w.ref()
      w.postMessage(job.message)
    }
  }

  private spawn(slot: Slot): Worker {
    const w = new Worker(workerUrl)
    slot.worker = w
    w.on("message", (reply: Reply) => {
      const job = slot.job
      if (job === null || job.message.id !== reply.id) return
      if ("piece" in reply) {
        // A listener's trouble is the listener's: the take goes on whatever becomes of its stream.
        try {
          job.onPiece?.(reply.piece)
        } catch {}
        return
      }
      slot.job = null
      w.unref()
      if (reply.ok) job.resolve(reply.result)
      else job.reject(new Error(`render failed: ${reply.error}`))
      this.pump()
    })
    const fail = (err: Error): void => {
      if (slot.worker !== w) return
      slot.worker = null
      const job = slot.job
      slot.job = null
      if (job !== null) job.reject(err)
      if (!this.closed) this.pump()
    }
    w.on("error", (err) => fail(err))
    w.on("exit", (code) => fail(new Error(`render worker exited with code ${code}`)))
    return w
  }
}
