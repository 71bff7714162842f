/**
 * What a long-running tool starts: a generation task (`gen_...`, an extension too) or an
 * export (`exp_...`). Both are Lyre's own rows with `pending`, `ready` and `failed`; the id's
 * prefix (core's) says which procedure reads one, so an MCP task id needs no table of its own.
 */
import { isExportId } from "@lyre/core"
import type { Export, GenerationTask, Job } from "@lyre/core"
import { invoke } from "./procedures.ts"
import type { McpRequest, Outcome } from "./procedures.ts"


export const loadGeneration = (request: McpRequest, id: string): Promise<Outcome<GenerationTask>> =>
  invoke(request, { id }, (caller) => caller.generations.get({ id }))

export const loadExport = (request: McpRequest, id: string): Promise<Outcome<Export>> =>
  invoke(request, { id }, (caller) => caller.exports.get({ id }))

/** Either kind by its id; any other id is read as a generation's, and so is not found as one. */
export const loadJob = (request: McpRequest, id: string): Promise<Outcome<Job>> =>
  isExportId(id) ? loadExport(request, id) : loadGeneration(request, id)

/** The words of the wait's progress and of a working task's status message. */
export const pendingMessage = (id: string, elapsedSeconds: number): string =>
  `${isExportId(id) ? "Export" : "Task"} ${id} is pending after ${Math.round(elapsedSeconds)} s.`
