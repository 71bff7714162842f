/**
 * Our GenerationTask, Export or Upload in A2A's words (1.0's, which the SDK's compatibility layer turns
 * into 0.3's): a Task whose state follows ours (`pending` -> working, `ready` -> completed,
 * `failed` -> failed), one artifact per track (an export: one with its files), and the events a
 * stream sends as the task moves.
 */
import { Role, TaskState } from "@a2a-js/sdk"
import type { Artifact, Message, Part, StreamResponse, Task, TaskStatus, TaskStatusUpdateEvent } from "@a2a-js/sdk"
import { isExport, isLyricsId, isUploadId } from "@lyre/core"
import type { Export, Job, LyricsTask, Persona, Preview, Track, Upload } from "@lyre/core"

/**
 * What an A2A task is in Lyre: a generation (an extension or a track task too), an export or an
 * upload being listened to, told apart by core's id prefix.
 */
export type A2aJob = Job | Upload | LyricsTask

export const isUpload = (job: A2aJob): job is Upload => isUploadId(job.id)

export const isLyrics = (job: A2aJob): job is LyricsTask => isLyricsId(job.id)

const stateOf: { readonly [S in A2aJob["status"]]: TaskState } = {
  pending: TaskState.TASK_STATE_WORKING,
  ready: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED
}

export const isFinished = (task: A2aJob): boolean => task.status !== "pending"

/**
 * Tasks keep no A2A context of their own, so a context that the message did not name is derived
 * from the task id: `GetTask` then answers the same one `SendMessage` did.
 */
export const contextIdFor = (taskId: string): string => `ctx_${taskId}`

const part = (content: NonNullable<Part["content"]>, mediaType = "", filename = ""): Part => ({
  content,
  metadata: undefined,
  filename,
  mediaType
})

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

/** A ready upload's one artifact: the Upload as data (its track_id, for any track task, and its analysis). */
export const uploadArtifactOf = (upload: Upload): Artifact => ({
  artifactId: upload.id,
  name: upload.title ?? `Upload ${upload.id}`,
  description: "",
  parts: [part({ $case: "data", value: { ...upload } })],
  metadata: undefined,
  extensions: []
})

/** A ready lyrics task's artifacts: one per variation, its words as text (a generation's `lyrics`) and as data. */
export const lyricsArtifactsOf = (task: LyricsTask): Array<Artifact> =>
  task.variations.map((variation, index) => ({
    artifactId: `${task.id}_${index}`,
    name: variation.title,
    description: "",
    parts: [
      part({ $case: "text", value: variation.text }, "text/plain"),
      part({ $case: "data", value: { ...variation } })
    ],
    metadata: undefined,
    extensions: []
  }))

const artifactsOf = (job: A2aJob): Array<Artifact> =>
  job.status !== "ready"
    ? []
    : isUpload(job)
      ? [uploadArtifactOf(job)]
      : isLyrics(job)
        ? lyricsArtifactsOf(job)
        : isExport(job)
          ? [exportArtifactOf(job)]
          : job.tracks.map(artifactOf)

/** An upload is free: its failure has nothing to refund. */
const failureMessage = (task: A2aJob, contextId: string): Message =>
  isUpload(task) ? uploadFailureMessage(task, contextId) : paidFailureMessage(task, contextId)

const uploadFailureMessage = (upload: Upload, contextId: string): Message => {
  const code = upload.error?.code ?? "internal_error"
  const detail = upload.error?.message ?? "Listening to the upload failed."
  return {
    messageId: `msg_${upload.id}_failed`,
    contextId,
    taskId: upload.id,
    role: Role.ROLE_AGENT,
    parts: [
      part({ $case: "text", value: `${detail} (${code}).` }),
      part({ $case: "data", value: { error: { code, message: detail } } })
    ],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: []
  }
}

/** The failure told to an agent: our error code and message, and what was refunded. */
const paidFailureMessage = (task: Job | LyricsTask, contextId: string): Message => {
  const code = task.error?.code ?? "internal_error"
  const detail =
    task.error?.message ??
    (isLyricsId(task.id)
      ? "Writing the lyrics failed."
      : isExport(task as Job)
        ? "The export failed."
        : "The generation failed.")
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

/** A pending generation's streams of its takes being made (DESIGN.md section 14); none for other jobs. */
const previewsOf = (task: A2aJob): ReadonlyArray<Preview> =>
  task.status === "pending" && "previews" in task ? task.previews : []

/** Whether the task has audio to hear before it is ready: a stream says so once, when it first has. */
export const hasPreviews = (task: A2aJob): boolean => previewsOf(task).length > 0

/**
 * A working task's audio while it is made (decision 0128): a sentence with the addresses for a
 * person, each take's stream as a file by URL (0.3's file part), and the previews as data.
 */
const previewsMessage = (task: A2aJob, previews: ReadonlyArray<Preview>, contextId: string): Message => ({
  messageId: `msg_${task.id}_streaming`,
  contextId,
  taskId: task.id,
  role: Role.ROLE_AGENT,
  parts: [
    part({
      $case: "text",
      value: `Hear it while it is made: ${previews.map((preview) => preview.stream_url).join(" ")}`
    }),
    ...previews.map((preview) =>
      part({ $case: "url", value: preview.stream_url }, "audio/mpeg", `${task.id}-${preview.index}-stream.mp3`)
    ),
    part({ $case: "data", value: { previews: [...previews] } })
  ],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: []
})

const statusMessageOf = (task: A2aJob, contextId: string): Message | undefined => {
  if (task.status === "failed") return failureMessage(task, contextId)
  const previews = previewsOf(task)
  return previews.length === 0 ? undefined : previewsMessage(task, previews, contextId)
}

const statusOf = (task: A2aJob, contextId: string): TaskStatus => ({
  state: stateOf[task.status],
  timestamp: task.updated_at,
  message: statusMessageOf(task, contextId)
})

/** The task beside the A2A view: everything but the tracks or files, which are the artifacts. */
const metadataOf = (task: A2aJob) => {
  if (isUpload(task)) return { upload: task }
  if (isLyrics(task)) {
    const { variations: _variations, ...lyrics } = task
    return { lyrics }
  }
  if (isExport(task)) {
    const { files: _files, ...exported } = task
    return { export: exported }
  }
  const { tracks: _tracks, ...generation } = task
  return { generation }
}

export const toA2aTask = (task: A2aJob, contextId: string): Task => ({
  id: task.id,
  contextId,
  status: statusOf(task, contextId),
  artifacts: artifactsOf(task),
  history: [],
  metadata: metadataOf(task)
})

/** A status event; a working one while the task works keeps a quiet stream alive through proxies. */
export const statusUpdate = (task: A2aJob, contextId: string): StreamResponse => ({
  payload: {
    $case: "statusUpdate",
    value: {
      taskId: task.id,
      contextId,
      status: statusOf(task, contextId),
      metadata: metadataOf(task)
    } satisfies TaskStatusUpdateEvent
  }
})

export const taskEvent = (task: A2aJob, contextId: string): StreamResponse => ({
  payload: { $case: "task", value: toA2aTask(task, contextId) }
})

/**
 * What a stream sends when a task it follows ends: each artifact, then the final status (a
 * terminal state: 0.3's `final: true`, and the end of a 1.0 stream).
 */
export const endEvents = (task: A2aJob, contextId: string): ReadonlyArray<StreamResponse> => [
  ...artifactsOf(task).map(
    (artifact): StreamResponse => ({
      payload: {
        $case: "artifactUpdate",
        value: { taskId: task.id, contextId, artifact, append: false, lastChunk: true, metadata: undefined }
      }
    })
  ),
  statusUpdate(task, contextId)
]

/**
 * A persona is made at once and is free: no task to follow, so the answer is a message, its
 * text for a person and the Persona as data (its id is `persona_id` in a later request).
 */
export const personaMessage = (persona: Persona, contextId: string): Message => ({
  messageId: `msg_${persona.id}`,
  contextId,
  taskId: "",
  role: Role.ROLE_AGENT,
  parts: [
    part({
      $case: "text",
      value: `Persona ${persona.id} (${persona.name}) keeps the voice of ${persona.track_id}; give it as persona_id.`
    }),
    part({ $case: "data", value: { ...persona } })
  ],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: []
})
