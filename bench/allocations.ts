/**
 * What a service allocates, by the function that allocates it, sampled through its inspector
 * (the service started with `--inspect` on a port of ours, support.ts' `freePort`). V8's
 * sampling heap profiler keeps only what is still alive unless told otherwise; with the objects
 * later collected included it gives all a request allocates, which is what its young-generation
 * collections cost with.
 */
import { placeOf } from "./on-cpu.ts"
import type { CallFrame } from "./on-cpu.ts"

interface ProfileNode {
  readonly callFrame: CallFrame
  readonly selfSize: number
  readonly children?: ReadonlyArray<ProfileNode>
}

export interface AllocationSampling {
  /**
   * Stops sampling and gives the bytes allocated meanwhile by each allocating function, and by
   * each chain of three callers of the function named `callersOf`, when one is.
   */
  readonly stop: (callersOf?: string) => Promise<{
    readonly total: number
    readonly byFunction: ReadonlyArray<readonly [string, number]>
    readonly byCallers: ReadonlyArray<readonly [string, number]>
  }>
}

/** Starts sampling every `intervalBytes` (on average) in the process whose inspector is on `port`. */
export const sampleAllocations = async (port: number, intervalBytes = 512): Promise<AllocationSampling> => {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as ReadonlyArray<{
    readonly webSocketDebuggerUrl: string
  }>
  const socket = new WebSocket(targets[0]?.webSocketDebuggerUrl ?? "")
  await new Promise((resolve, reject) => {
    socket.addEventListener("open", resolve, { once: true })
    socket.addEventListener("error", reject, { once: true })
  })
  let lastId = 0
  const answers = new Map<number, (result: unknown) => void>()
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as { readonly id?: number; readonly result?: unknown }
    if (message.id !== undefined) answers.get(message.id)?.(message.result)
  })
  const send = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve) => {
      const id = ++lastId
      answers.set(id, resolve)
      socket.send(JSON.stringify({ id, method, params }))
    })
  await send("HeapProfiler.enable")
  await send("HeapProfiler.startSampling", {
    samplingInterval: intervalBytes,
    includeObjectsCollectedByMajorGC: true,
    // PROFILE_ALLOC_SURVIVORS=1: only what outlived a scavenge (promoted, whether or not since dead).
    includeObjectsCollectedByMinorGC: process.env["PROFILE_ALLOC_SURVIVORS"] !== "1"
  })
  return {
    stop: async (callersOf) => {
      const { profile } = (await send("HeapProfiler.stopSampling")) as {
        readonly profile: { readonly head: ProfileNode }
      }
      socket.close()
      const byFunction = new Map<string, number>()
      const byCallers = new Map<string, number>()
      let total = 0
      const visit = (node: ProfileNode, callers: ReadonlyArray<string>) => {
        const name = placeOf(node.callFrame)
        if (node.selfSize > 0) {
          byFunction.set(name, (byFunction.get(name) ?? 0) + node.selfSize)
          total += node.selfSize
          if (callersOf !== undefined && node.callFrame.functionName === callersOf) {
            const chain = callers.slice(-3).reverse().join(" < ")
            byCallers.set(chain, (byCallers.get(chain) ?? 0) + node.selfSize)
          }
        }
        for (const child of node.children ?? []) visit(child, [...callers, name])
      }
      visit(profile.head, [])
      const sorted = (bytes: Map<string, number>) => [...bytes].sort((a, b) => b[1] - a[1])
      return { total, byFunction: sorted(byFunction), byCallers: sorted(byCallers) }
    }
  }
}
