// @lyre/engine: the built-in offline music engine. Two takes per task, rendered in a
// worker_threads pool; same request + task id => the same bytes.

import { availableParallelism } from "node:os"
import { RenderPool } from "./pool.ts"
import type { Engine, EngineRequest, EngineTrack, RenderOptions } from "./types.ts"

export type { Engine, EngineRequest, EngineTrack, ModelName, RenderOptions } from "./types.ts"
export { renderTrack } from "./render.ts"
export { parseStyle } from "./style.ts"

/** Takes rendered per task: two audibly different versions of the same request. */
export const TAKES = 2

export function makeEngine(options?: { readonly threads?: number; readonly render?: RenderOptions }): Engine {
  const pool = new RenderPool(options?.threads ?? availableParallelism())
  const renderOptions = options?.render ?? {}
  return {
    async render(request: EngineRequest, taskId: string): Promise<ReadonlyArray<EngineTrack>> {
      const takes: Promise<EngineTrack>[] = []
      for (let i = 0; i < TAKES; i++) takes.push(pool.run(request, taskId, i, renderOptions))
      return Promise.all(takes)
    },
    close: () => pool.close()
  }
}
