/**
 * What the fake upstream does with one submission. Every field is optional; the default is a
 * well-behaved upstream that accepts, finishes on the first poll and sends its callbacks at once.
 */

/** The `status` values of record-info. */
export type UpstreamStatus =
  | "PENDING"
  | "TEXT_SUCCESS"
  | "FIRST_SUCCESS"
  | "SUCCESS"
  | "CREATE_TASK_FAILED"
  | "GENERATE_AUDIO_FAILED"
  | "SENSITIVE_WORD_ERROR"
  | "CALLBACK_EXCEPTION"

/** The final record-info status a task reaches. */
export type Outcome = Exclude<UpstreamStatus, "PENDING" | "TEXT_SUCCESS" | "FIRST_SUCCESS">

export type CallbackStage = "text" | "first" | "complete" | "error"

/**
 * How `POST /api/v1/generate` answers:
 * - `"accept"`: body code 200 with a task id;
 * - `{ code }`: HTTP 200 with that body code (400, 401, 404, 405, 413, 429, 430, 455, 500...);
 * - `{ httpStatus }`: that HTTP status with `body` (default: an HTML error page, no body code);
 * - `"hang"`: never answers (until the server closes), and creates nothing;
 * - `"accept-then-hang"`: creates the task (its callbacks will come) but never answers;
 * - `"drop"`: destroys the connection without answering;
 * - `{ answerWhen, code? }`: decides at once and answers once `answerWhen` resolves, so a test
 *   can change the world (stop the caller's database) between the upstream's decision and its
 *   answer. Without `code` it accepts as `"accept"` does (the task is created at once and its
 *   callbacks come as the behaviour says); with one it answers that body code as `{ code }` does.
 */
export type SubmitBehaviour =
  | "accept"
  | "hang"
  | "accept-then-hang"
  | "drop"
  | { readonly code: number; readonly msg?: string }
  | { readonly httpStatus: number; readonly body?: string }
  | { readonly answerWhen: Promise<void>; readonly code?: number }

/** How `GET /api/v1/generate/record-info` answers for this task. */
export type PollBehaviour =
  | "answer"
  | "hang"
  | { readonly code: number; readonly msg?: string }
  | { readonly httpStatus: number; readonly body?: string }

export interface Behaviour {
  readonly submit?: SubmitBehaviour
  /** Where the task ends. Default `SUCCESS`. */
  readonly outcome?: Outcome
  /**
   * Polls answered with a pending status (PENDING, TEXT_SUCCESS, then FIRST_SUCCESS) before the
   * outcome shows. Default 0: the first poll sees the outcome. `Infinity`: only the final
   * callback finishes the task.
   */
  readonly pollsBeforeDone?: number
  readonly poll?: PollBehaviour
  /** Tracks the task produces (default 2, the upstream's convention); 0 makes a CALLBACK_EXCEPTION a failure. */
  readonly trackCount?: number
  /** `"auto"` (default) sends the stages the outcome implies; `"none"` sends nothing; or list the stages to send. */
  readonly callbacks?: "auto" | "none" | ReadonlyArray<CallbackStage>
  /** Wait before the first callback, in ms (default 0). A long wait makes the callbacks late. */
  readonly callbackDelayMs?: number
  /** How many times each callback is sent (default 1; 2 or more sends duplicates). */
  readonly callbackCopies?: number
  /** Casing of record-info's track fields (default `camel`, as the upstream documents). */
  readonly recordInfoCasing?: "camel" | "snake"
  /** `"missing"` makes the task's audio and image URLs answer 404. */
  readonly files?: "serve" | "missing"
  /**
   * The tracks' `streamAudioUrl` (offered from the `first` stage on, at `/stream/{id}.mp3`):
   * `"serve"` (default) sends the audio chunked, half then the rest; `"break"` sends half and then
   * breaks the connection, as a stream that fails midway; `"none"` offers no stream (an empty
   * `streamAudioUrl`), as a model that cannot be heard before it is done.
   */
  readonly stream?: "serve" | "break" | "none"
}

export type ResolvedBehaviour = Required<Behaviour>

export const defaultBehaviour: ResolvedBehaviour = {
  submit: "accept",
  outcome: "SUCCESS",
  pollsBeforeDone: 0,
  poll: "answer",
  trackCount: 2,
  callbacks: "auto",
  callbackDelayMs: 0,
  callbackCopies: 1,
  recordInfoCasing: "camel",
  files: "serve",
  stream: "serve"
}

/** The stages a real upstream would send on the way to `outcome`. */
export const autoStages = (outcome: Outcome): ReadonlyArray<CallbackStage> => {
  switch (outcome) {
    case "SUCCESS":
    case "CALLBACK_EXCEPTION":
      return ["text", "first", "complete"]
    case "CREATE_TASK_FAILED":
    case "GENERATE_AUDIO_FAILED":
    case "SENSITIVE_WORD_ERROR":
      return ["error"]
  }
}
