import type { CallbackStage, UpstreamStatus } from "./behaviour.ts"
import { currentStatus, failureOf, trackDuration } from "./task.ts"
import type { FakeTask } from "./task.ts"

interface Track {
  readonly id: string
  readonly audioUrl: string
  readonly streamAudioUrl: string
  readonly imageUrl: string
  readonly prompt: string
  readonly modelName: string
  readonly title: string
  readonly tags: string
  readonly createTime: number
  readonly duration: number | null
}

/**
 * The task's tracks as far as `status` has got: text first (no audio yet), then the first
 * track's audio, then everything. Failed tasks have none.
 */
const tracksAt = (task: FakeTask, baseUrl: string, status: UpstreamStatus): ReadonlyArray<Track> => {
  const withAudio =
    status === "SUCCESS" || status === "CALLBACK_EXCEPTION"
      ? task.trackIds.length
      : status === "FIRST_SUCCESS"
        ? 1
        : status === "TEXT_SUCCESS"
          ? 0
          : -1
  if (withAudio < 0) return []
  return task.trackIds.map((id, index) => ({
    id,
    audioUrl: index < withAudio ? `${baseUrl}/files/${id}.mp3` : "",
    streamAudioUrl: task.behaviour.stream === "none" ? "" : `${baseUrl}/stream/${id}.mp3`,
    imageUrl: `${baseUrl}/files/${id}.png`,
    prompt: task.prompt,
    modelName: task.model,
    title: task.title,
    tags: task.style,
    createTime: task.createTime,
    duration: index < withAudio ? trackDuration(task, index) : null
  }))
}

const snakeTrack = (track: Track) => ({
  id: track.id,
  audio_url: track.audioUrl,
  stream_audio_url: track.streamAudioUrl,
  image_url: track.imageUrl,
  prompt: track.prompt,
  model_name: track.modelName,
  title: track.title,
  tags: track.tags,
  createTime: track.createTime,
  duration: track.duration
})

/** `GET /api/v1/generate/record-info` for a known task. */
export const recordInfoBody = (task: FakeTask, baseUrl: string) => {
  const status = currentStatus(task)
  const tracks = tracksAt(task, baseUrl, status)
  const failure = failureOf(status)
  const sunoData = task.behaviour.recordInfoCasing === "snake" ? tracks.map(snakeTrack) : tracks
  return {
    code: 200,
    msg: "success",
    data: {
      taskId: task.taskId,
      status,
      type: "GENERATE",
      response: tracks.length === 0 ? null : { taskId: task.taskId, sunoData },
      errorCode: failure?.code ?? null,
      errorMessage: failure?.message ?? null
    }
  }
}

/** The snake_case callback body the upstream POSTs to `callBackUrl`. */
export const callbackBody = (task: FakeTask, baseUrl: string, stage: CallbackStage) => {
  if (stage === "error") {
    const failure = failureOf(task.behaviour.outcome) ?? { code: 500, message: "Generation failed" }
    return { code: failure.code, msg: failure.message, data: { callbackType: "error", task_id: task.taskId, data: [] } }
  }
  const status: UpstreamStatus = stage === "text" ? "TEXT_SUCCESS" : stage === "first" ? "FIRST_SUCCESS" : "SUCCESS"
  const tracks = tracksAt(task, baseUrl, status).map(snakeTrack)
  return {
    code: 200,
    msg: stage === "complete" ? "All generated successfully." : `${stage} generation completed`,
    data: { callbackType: stage, task_id: task.taskId, data: tracks }
  }
}
