/**
 * Our GenerationTask or Export in A2A's words (1.0's, which the SDK's compatibility layer turns
 * into 0.3's): a Task whose state follows ours (`pending` -> working, `ready` -> completed,
 * `failed` -> failed), one artifact per track (an export: one with its files), and the events a
 * stream sends as the task moves.
 */
import { Role, TaskState } from "@a2a-js/sdk"
import type { Artifact, Message, Part, StreamResponse, Task, TaskStatus, TaskStatusUpdateEvent } from "@a2a-js/sdk"
import { isExport } from "@lyre/core"
import type { Export, GenerationTask, Job, Track } from "@lyre/core"

/** What an A2A task is in Lyre: a generation (an extension too) or an export, told apart by core's id prefix. */


const stateOf: { readonly [S in Job["status"]]: TaskState } = {
  pending: TaskState.TASK_STATE_WORKING,
  ready: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED
}

export const isFinished = (task: Job): boolean => task.status !== "pending"

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

/** An export's one artifact: each file as a file part (its media type and name), then the Export as data. */
export const exportArtifactOf = (exported: Export): Artifact => ({
  artifactId: exported.id,
  name: `${exported.format} of ${exported.track_id}`,
  description: "",
  parts: [
    ...exported.files.map((file) => part({ $case: "url", value: file.url }, file.content_type, file.name)),
    part({ $case: "data", value: { ...exported } })
  ],
  metadata: undefined,
  extensions: []
})

const artifactsOf = (job: Job): Array<Artifact> =>
  job.status !== "ready" ? [] : isExport(job) ? [exportArtifactOf(job)] : job.tracks.map(artifactOf)

/** The failure told to an agent: our error code and message, and what was refunded. */
const failureMessage = (task: Job, contextId: string): Message => {
  const code = task.error?.code ?? "internal_error"
  const detail = task.error?.message ?? (isExport(task) ? "The export failed." : "The generation failed.")
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

const statusOf = (task: Job, contextId: string): TaskStatus => ({
  state: stateOf[task.status],
  timestamp: task.updated_at,
  message: task.status === "failed" ? failureMessage(task, contextId) : undefined
})

/** The task beside the A2A view: everything but the tracks or files, which are the artifacts. */
const metadataOf = (task: Job) => {
  if (isExport(task)) {
    const { files: _files, ...exported } = task
    return { export: exported }
  }
  const { tracks: _tracks, ...generation } = task
  return { generation }
}

export const toA2aTask = (task: Job, contextId: string): Task => ({
  id: task.id,
  contextId,
  status: statusOf(task, contextId),
  artifacts: artifactsOf(task),
  history: [],
  metadata: metadataOf(task)
})

/** A status event; a working one while the task works keeps a quiet stream alive through proxies. */
export const statusUpdate = (task: Job, contextId: string): StreamResponse => ({
  payload: {
    $case: "statusUpdate",
    value: { taskId: task.id, contextId, status: statusOf(task, contextId), metadata: metadataOf(task) } satisfies TaskStatusUpdateEvent
  }
})

export const taskEvent = (task: Job, contextId: string): StreamResponse =>
  ({ payload: { $case: "task", value: toA2aTask(task, contextId) } })

/**
 * What a stream sends when a task it follows ends: each artifact, then the final status (a
 * terminal state: 0.3's `final: true`, and the end of a 1.0 stream).
 */
export const endEvents = (task: Job, contextId: string): ReadonlyArray<StreamResponse> => [
  ...artifactsOf(task).map((artifact): StreamResponse => ({
    payload: {
      $case: "artifactUpdate",
      value: { taskId: task.id, contextId, artifact, append: false, lastChunk: true, metadata: undefined }
    }
  })),
  statusUpdate(task, contextId)
]
