// Bench helper: one take of the bench's 2-minute song rendered and encoded in a fresh worker
// thread, reporting the thread's memory (V8 heap, external memory, ArrayBuffers) before and after,
// while the bench samples the process's RSS from outside. See engine-bench.ts.

import { parentPort, workerData } from "node:worker_threads"
import { renderTrack, type EngineRequest } from "../src/index.ts"

if (parentPort === null) throw new Error("memory-worker must run in a worker thread")
const port = parentPort
const { song, maxSeconds } = workerData as { readonly song: EngineRequest; readonly maxSeconds: number }

const mb = (bytes: number): number => bytes / 2 ** 20
const usage = (): { heap: number; external: number; arrayBuffers: number } => {
  const m = process.memoryUsage()
  return { heap: mb(m.heapUsed), external: mb(m.external), arrayBuffers: mb(m.arrayBuffers) }
}

const before = usage()
const track = await renderTrack(song, "bench-2min", 0, { maxSeconds })
port.postMessage({ before, after: usage(), bytes: track.mp3.length })
