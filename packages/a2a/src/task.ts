/**
 * Our GenerationTask in A2A's words (1.0's, which the SDK's compatibility layer turns into
 * 0.3's): a Task whose state follows ours (`pending` -> working, `ready` -> completed,
 * `failed` -> failed), one artifact per track, and the events a stream sends as the task moves.
 */
import { Role, TaskState } from "@a2a-js/sdk"
import type { Artifact, Message, Part, StreamResponse, Task, TaskStatus, TaskStatusUpdateEvent } from "@a2a-js/sdk"
import type { GenerationTask, Track } from "@lyre/core"

const stateOf: { readonly [S in GenerationTask["status"]]: TaskState } = {
  pending: TaskState.TASK_STATE_WORKING,
  ready: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED
}

export const isFinished = (task: GenerationTask): boolean => task.status !== "pending"

/**
 * Tasks keep no A2A context of their own, so a context that the message did not name is derived
 * from the task id: `GetTask` then answers the same one `SendMessage` did.
 */
export const contextIdFor = (taskId: string): string => `ctx_${taskId}`

const part = (content: NonNullable<Part["content"]>, mediaType = "", filename = ""): Part =>
  ({ content, metadata: undefined, filename, mediaType })

export const artifactOf = (track: Track): Artifact => ({
  artifactId: track.id,
  name: track.title ?? `Track ${track.index + 1}`,
  description: "",
  parts: [
    part({ $case: "url", value: track.audio_url }, "audio/mpeg", `${track.id}.mp3`),
    part({ $case: "data", value: { ...track } })
  ],
  metadata: undefined,
  extensions: []
})

/** The failure told to an agent: our error code and message, and what was refunded. */
const failureMessage = (task: GenerationTask, contextId: string): Message => {
  const code = task.error?.code ?? "internal_error"
  const detail = task.error?.message ?? "The generation failed."
  return {
    messageId: `msg_${task.id}_failed`,
    contextId,
    taskId: task.id,
    role: Role.ROLE_AGENT,
    parts: [
      part({ $case: "text", value: `${detail} (${code}). ${task.credits_refunded} credits were refunded.` }),
      part({ $case: "data", value: { error: { code, message: detail }, credits_refunded: task.credits_refunded } })
    ],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: []
  }
}

const statusOf = (task: GenerationTask, contextId: string): TaskStatus => ({
  state: stateOf[task.status],
  timestamp: task.updated_at,
  message: task.status === "failed" ? failureMessage(task, contextId) : undefined
})

/** The task beside the A2A view: everything but the tracks, which are the artifacts. */
const metadataOf = (task: GenerationTask) => {
  const { tracks: _tracks, ...generation } = task
  return { generation }
}

export const toA2aTask = (task: GenerationTask, contextId: string): Task => ({
  id: task.id,
  contextId,
  status: statusOf(task, contextId),
  artifacts: task.status === "ready" ? task.tracks.map(artifactOf) : [],
  history: [],
  metadata: metadataOf(task)
})

/** A status event; a working one while the task works keeps a quiet stream alive through proxies. */
export const statusUpdate = (task: GenerationTask, contextId: string): StreamResponse => ({
  payload: {
    $case: "statusUpdate",
    value: { taskId: task.id, contextId, status: statusOf(task, contextId), metadata: metadataOf(task) } satisfies TaskStatusUpdateEvent
  }
})

export const taskEvent = (task: GenerationTask, contextId: string): StreamResponse =>
  ({ payload: { $case: "task", value: toA2aTask(task, contextId) } })

/**
 * What a stream sends when a task it follows ends: each artifact, then the final status (a
 * terminal state: 0.3's `final: true`, and the end of a 1.0 stream).
 */
export const endEvents = (task: GenerationTask, contextId: string): ReadonlyArray<StreamResponse> => [
  ...(task.status === "ready"
    ? task.tracks.map((track): StreamResponse => ({
      payload: {
        $case: "artifactUpdate",
        value: { taskId: task.id, contextId, artifact: artifactOf(track), append: false, lastChunk: true, metadata: undefined }
      }
    }))
    : []),
  statusUpdate(task, contextId)
]
