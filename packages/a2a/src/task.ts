/**
 * Our GenerationTask in A2A's words: a Task whose state follows ours (`pending` -> `working`,
 * `ready` -> `completed`, `failed` -> `failed`), one artifact per track, and the events a stream
 * sends as the task moves.
 */
import type { Artifact, Message, Task, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent } from "@a2a-js/sdk"
import type { GenerationTask, Track } from "@lyre/core"

const stateOf: { readonly [S in GenerationTask["status"]]: TaskState } = {
  pending: "working",
  ready: "completed",
  failed: "failed"
}

export const isFinished = (task: GenerationTask): boolean => task.status !== "pending"

/**
 * Tasks keep no A2A context of their own, so a context that the message did not name is derived
 * from the task id: `tasks/get` then answers the same one `message/send` did.
 */
export const contextIdFor = (taskId: string): string => `ctx_${taskId}`

export const artifactOf = (track: Track): Artifact => ({
  artifactId: track.id,
  name: track.title ?? `Track ${track.index + 1}`,
  parts: [
    { kind: "file", file: { uri: track.audio_url, mimeType: "audio/mpeg", name: `${track.id}.mp3` } },
    { kind: "data", data: { ...track } }
  ]
})

/** The failure told to an agent: our error code and message, and what was refunded. */
const failureMessage = (task: GenerationTask, contextId: string): Message => {
  const code = task.error?.code ?? "internal_error"
  const detail = task.error?.message ?? "The generation failed."
  return {
    kind: "message",
    role: "agent",
    messageId: `msg_${task.id}_failed`,
    taskId: task.id,
    contextId,
    parts: [
      { kind: "text", text: `${detail} (${code}). ${task.credits_refunded} credits were refunded.` },
      { kind: "data", data: { error: { code, message: detail }, credits_refunded: task.credits_refunded } }
    ]
  }
}

const statusOf = (task: GenerationTask, contextId: string): Task["status"] => ({
  state: stateOf[task.status],
  timestamp: task.updated_at,
  ...(task.status === "failed" ? { message: failureMessage(task, contextId) } : {})
})

/** The task beside the A2A view: everything but the tracks, which are the artifacts. */
const metadataOf = (task: GenerationTask) => {
  const { tracks: _tracks, ...generation } = task
  return { generation }
}

export const toA2aTask = (task: GenerationTask, contextId: string): Task => ({
  kind: "task",
  id: task.id,
  contextId,
  status: statusOf(task, contextId),
  ...(task.status === "ready" ? { artifacts: task.tracks.map(artifactOf) } : {}),
  metadata: metadataOf(task)
})

/** What a stream sends when a task it follows ends: each artifact, then the final status. */
export const endEvents = (
  task: GenerationTask,
  contextId: string
): ReadonlyArray<TaskArtifactUpdateEvent | TaskStatusUpdateEvent> => [
  ...(task.status === "ready"
    ? task.tracks.map((track): TaskArtifactUpdateEvent => ({
      kind: "artifact-update",
      taskId: task.id,
      contextId,
      artifact: artifactOf(track),
      lastChunk: true
    }))
    : []),
  finalStatus(task, contextId)
]

export const finalStatus = (task: GenerationTask, contextId: string): TaskStatusUpdateEvent => statusUpdate(task, contextId, true)

/** A status event; a non-final one while the task works keeps a quiet stream alive through proxies. */
export const statusUpdate = (task: GenerationTask, contextId: string, final: boolean): TaskStatusUpdateEvent => ({
  kind: "status-update",
  taskId: task.id,
  contextId,
  status: statusOf(task, contextId),
  final,
  metadata: metadataOf(task)
})
