/**
 * A track's exports as the song tools see them: the account's exports of the track, followed
 * while any is pending, and a create that answers the ready one the account already has.
 */
import { useCallback, useEffect, useState } from "preact/hooks"
import type { ExportFormat } from "@lyre/core/domain/models"
import { api } from "../api.ts"
import type { ApiProblem, Outputs } from "../api.ts"
import { attempt } from "../ui.tsx"

export type Export = Outputs["exports"]["get"]

const followEveryMillis = 1_000
const retryEveryMillis = 3_000

export interface TrackExports {
  /** Newest first; undefined until the first answer. */
  readonly exports: ReadonlyArray<Export> | undefined
  readonly problem: ApiProblem | null
  /** The newest export of a format that is ready or on its way, if any. */
  readonly latest: (format: ExportFormat) => Export | undefined
  readonly create: (format: ExportFormat) => Promise<void>
}

/** Loads nothing until `enabled`: a page of twenty songs should not ask for forty lists unasked. */
export const useTrackExports = (trackId: string, enabled: boolean): TrackExports => {
  const [exports, setExports] = useState<ReadonlyArray<Export> | undefined>(undefined)
  const [problem, setProblem] = useState<ApiProblem | null>(null)
  const [loadProblem, setLoadProblem] = useState<ApiProblem | null>(null)
  const load = useCallback(async () => {
    const result = await attempt(() => api.exports.list.query({ track_id: trackId, limit: 100 }))
    setLoadProblem(result.ok ? null : result.problem)
    if (result.ok) setExports(result.value.data)
    return result.ok ? result.value.data : undefined
  }, [trackId])
  useEffect(() => {
    if (enabled) void load()
  }, [load, enabled])
  const pending = exports?.some((e) => e.status === "pending") ?? false
  useEffect(() => {
    if (!pending) return
    const timer = setInterval(() => void load(), followEveryMillis)
    return () => clearInterval(timer)
  }, [pending, load])
  // A first load that failed (a busy server's 503, a dropped connection) is tried again while a
  // tool is open: the tools would otherwise say "Loading…" for good. The problem shows meanwhile.
  const unanswered = enabled && exports === undefined && loadProblem !== null
  useEffect(() => {
    if (!unanswered) return
    const timer = setInterval(() => void load(), retryEveryMillis)
    return () => clearInterval(timer)
  }, [unanswered, load])
  const latest = (format: ExportFormat) => exports?.find((e) => e.format === format && e.status !== "failed")
  const create = async (format: ExportFormat) => {
    const result = await attempt(() => api.tracks.export.mutate({ track_id: trackId, format }))
    setProblem(result.ok ? null : result.problem)
    if (result.ok) await load()
  }
  return { exports, problem: problem ?? loadProblem, latest, create }
}
