/**
 * Ready tracks written straight into a test server's database, as a finished generation leaves
 * them: sources for the song tools and the tasks on a track, without rendering anything.
 */
import { randomBase62 } from "@lyre/core"
import { validSong } from "./harness.ts"
import type { TestAccount, TestServer } from "./harness.ts"

export interface Source {
  readonly taskId: string
  readonly trackId: string
}

/** A ready task of `account` with one track, as a finished generation leaves it. */
export const readyTrack = async (
  server: TestServer,
  account: TestAccount,
  options: {
    readonly instrumental?: boolean
    readonly model?: "aether" | "echo" | "nocturne"
    readonly status?: "ready" | "pending" | "failed"
    readonly extra?: Record<string, unknown>
  } = {}
): Promise<Source> => {
  const taskId = `gen_${randomBase62(24)}`
  const trackId = `trk_${randomBase62(24)}`
  const model = options.model ?? "aether"
  const request =
    options.instrumental === true
      ? { style: "ambient, 80 bpm", title: "Drift", instrumental: true, model, ...options.extra }
      : { ...validSong, instrumental: false, model, ...options.extra }
  const track = {
    id: trackId,
    audio_url: `${server.url}/files/${taskId}/0.mp3`,
    duration: 120,
    title: request.title,
    lyrics: options.instrumental === true ? null : validSong.lyrics,
    image_url: null,
    tags: request.style,
    index: 0
  }
  await server.query(
    `insert into generation_tasks (id, account_id, credential_subject, status, model, request, credits_used,
       debit_subscription, debit_onetime, deadline_at, created_at, updated_at, tracks, provider_task_id, submission_state)
     values ($1, $2, $3, $4, $5, $6::jsonb, 50, 0, 0, now(), now() - interval '1 minute', now(), $7::jsonb, $1, 'accepted')`,
    taskId,
    account.id,
    account.keyId,
    options.status ?? "ready",
    model,
    JSON.stringify(request),
    JSON.stringify([track])
  )
  await server.query(
    `insert into tracks (id, task_id, account_id, track_index, provider_track_id, duration, created_at)
     values ($1, $2, $3, 0, $4, 120, now())`,
    trackId,
    taskId,
    account.id,
    `${taskId}-0`
  )
  return { taskId, trackId }
}
