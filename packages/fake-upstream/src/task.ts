import type { CallbackStage, ResolvedBehaviour, UpstreamStatus } from "./behaviour.ts"

/** What the fake upstream keeps about one accepted submission. */
export interface FakeTask {
  readonly taskId: string
  readonly title: string
  readonly style: string
  readonly prompt: string
  readonly model: string
  readonly callBackUrl: string | null
  readonly behaviour: ResolvedBehaviour
  readonly trackIds: ReadonlyArray<string>
  /** The first track's length in seconds (each next one is 7.5 s longer). */
  readonly baseDuration: number
  readonly instrumental: boolean
  readonly createTime: number
  polls: number
  /** Progress reached through sent callbacks: 0 none, 1 text, 2 first, 3 final. */
  callbackProgress: number
}

const PENDING_STEPS: ReadonlyArray<UpstreamStatus> = ["PENDING", "TEXT_SUCCESS", "FIRST_SUCCESS"]

/**
 * The status record-info shows now. A task moves on either by being polled or by having sent
 * its callbacks: a `complete` callback is only ever sent for a task record-info calls done, so a
 * worker that confirms a callback through record-info sees what the callback announced.
 */
export const currentStatus = (task: FakeTask): UpstreamStatus => {
  const byPolls = task.polls >= task.behaviour.pollsBeforeDone ? 3 : Math.min(task.polls, 2)
  const progress = Math.max(byPolls, task.callbackProgress)
  return progress >= 3 ? task.behaviour.outcome : (PENDING_STEPS[progress] ?? "PENDING")
}

export const stageProgress = (stage: CallbackStage): number => {
  switch (stage) {
    case "text":
      return 1
    case "first":
      return 2
    case "complete":
    case "error":
      return 3
  }
}

/** Error code and message record-info and the `error` callback give for a failed outcome. */
export const failureOf = (status: UpstreamStatus): { readonly code: number; readonly message: string } | null => {
  switch (status) {
    case "CREATE_TASK_FAILED":
      return { code: 500, message: "Create task failed" }
    case "GENERATE_AUDIO_FAILED":
      return { code: 500, message: "Generate audio failed" }
    case "SENSITIVE_WORD_ERROR":
      return { code: 400, message: "The description contains sensitive words" }
    case "CALLBACK_EXCEPTION":
      return { code: 500, message: "Callback to the caller failed" }
    default:
      return null
  }
}

/** The length of the task's track `index`, in seconds. */
export const trackDuration = (task: FakeTask, index: number): number => task.baseDuration + index * 7.5
