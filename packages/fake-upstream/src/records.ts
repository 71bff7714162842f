import type { CallbackStage, UpstreamStatus } from "./behaviour.ts"
import type { DerivedEndpoint } from "./derived.ts"
import type { JobKind, ToolKind } from "./tools.ts"

/** One `POST /api/v1/generate` or `/api/v1/generate/extend` as received, and how it was answered. */
export interface SubmissionRecord {
  readonly at: number
  readonly endpoint: "generate" | "extend" | DerivedEndpoint | "generate-persona"
  readonly authorized: boolean
  readonly body: unknown
  /** The title the request carried, when it had one. */
  readonly title: string | null
  readonly answer: "accepted" | "rejected" | "http_error" | "hang" | "dropped"
  /** Set when the fake created a task (also for `accept-then-hang`). */
  readonly taskId: string | null
  /** The body `code` answered, when one was. */
  readonly code: number | null
}

/** One `GET /api/v1/generate/record-info`. */
export interface PollRecord {
  readonly at: number
  readonly taskId: string
  /** The status answered, or null when the task is unknown or the poll was not answered normally. */
  readonly status: UpstreamStatus | null
}

/** One callback the fake sent, and what the receiver answered. */
export interface CallbackRecord {
  readonly at: number
  readonly taskId: string
  readonly stage: CallbackStage
  readonly url: string
  readonly body: unknown
  readonly statusCode: number | null
  readonly error: string | null
}

/** One request to a song tool's endpoint (`wav`, `vocal-removal`, `midi`, `timestamped-lyrics`). */
export interface ToolRequestRecord {
  readonly at: number
  readonly kind: ToolKind
  readonly authorized: boolean
  readonly body: unknown
  readonly answer: "accepted" | "rejected" | "http_error" | "hang" | "dropped"
  /** The task created (none for the timestamped lyrics, which answer at once). */
  readonly taskId: string | null
  readonly code: number | null
}

/** One `GET /api/v1/<tool>/record-info`. */
export interface ToolPollRecord {
  readonly at: number
  readonly kind: JobKind
  readonly taskId: string
  /** The successFlag answered, or null when the task is unknown or the poll was not answered normally. */
  readonly flag: string | number | null
}
