/**
 * The upstream's lyrics endpoint (docs.sunoapi.org, "Generate Lyrics"): `POST /api/v1/lyrics`
 * `{prompt (at most 200 words), callBackUrl}` answers a task id; `GET /api/v1/lyrics/record-info`
 * shows its status (`PENDING`, `SUCCESS`, `CREATE_TASK_FAILED`, `GENERATE_LYRICS_FAILED`,
 * `CALLBACK_EXCEPTION`, `SENSITIVE_WORD_ERROR`) and, once done, several variations `{text, title,
 * status, errorMessage}`; one callback (`complete`) carries the same.
 */
import type { ResolvedBehaviour } from "./behaviour.ts"

export interface LyricsRequest {
  readonly prompt: string
  readonly callBackUrl: string
}

/** What the fake keeps about one accepted lyrics task. */
export interface FakeLyrics {
  readonly taskId: string
  readonly prompt: string
  readonly callBackUrl: string
  readonly behaviour: ResolvedBehaviour
  polls: number
  /** Set once its callback has gone out. */
  called: boolean
}

/** `prompt` a non-empty string of at most 200 words, `callBackUrl` a URL: the request, or why not. */
export const validateLyrics = (body: unknown): LyricsRequest | { readonly code: number; readonly msg: string } => {
  if (typeof body !== "object" || body === null) return { code: 400, msg: "Body must be an object" }
  const { prompt, callBackUrl } = body as Record<string, unknown>
  if (typeof prompt !== "string" || prompt.trim() === "") return { code: 400, msg: "prompt is required" }
  if (prompt.trim().split(/\s+/).length > 200) return { code: 413, msg: "prompt is too long" }
  if (typeof callBackUrl !== "string" || !URL.canParse(callBackUrl))
    return { code: 400, msg: "callBackUrl is required" }
  return { prompt, callBackUrl }
}

export const lyricsDone = (task: FakeLyrics): boolean => task.called || task.polls >= task.behaviour.pollsBeforeDone

/** record-info's status now, in the lyrics endpoint's words. */
export const lyricsStatus = (task: FakeLyrics): string => {
  if (!lyricsDone(task)) return "PENDING"
  const outcome = task.behaviour.outcome
  return outcome === "GENERATE_AUDIO_FAILED" ? "GENERATE_LYRICS_FAILED" : outcome
}

const succeeded = (status: string): boolean => status === "SUCCESS" || status === "CALLBACK_EXCEPTION"

/** Two variations written from the prompt's words, as the upstream gives several. */
const variations = (task: FakeLyrics) => {
  const words = task.prompt.split(/\s+/).slice(0, 6).join(" ")
  return [1, 2].map((n) => ({
    text: `[Verse]\n${words}, take ${n}\nUnder the city lights\n\n[Chorus]\nSing it loud, ${words}\nAll night`,
    title: `Fake Lyrics ${n}`,
    status: "complete",
    errorMessage: ""
  }))
}

const failure = (status: string): { readonly code: number | null; readonly message: string | null } =>
  succeeded(status) || status === "PENDING"
    ? { code: null, message: null }
    : status === "SENSITIVE_WORD_ERROR"
      ? { code: 400, message: "Sensitive words detected" }
      : { code: 500, message: status === "CREATE_TASK_FAILED" ? "Create task failed" : "Generate lyrics failed" }

export const lyricsRecordBody = (task: FakeLyrics) => {
  const status = lyricsStatus(task)
  const { code, message } = failure(status)
  return {
    code: 200,
    msg: "success",
    data: {
      taskId: task.taskId,
      param: JSON.stringify({ prompt: task.prompt }),
      response: { taskId: task.taskId, data: succeeded(status) ? variations(task) : [] },
      status,
      type: "LYRICS",
      errorCode: code,
      errorMessage: message
    }
  }
}

export const lyricsCallbackBody = (task: FakeLyrics) => {
  const status = lyricsStatus({ ...task, called: true })
  const { code, message } = failure(status)
  return {
    code: code ?? 200,
    msg: message ?? "All generated successfully.",
    data: { callbackType: "complete", taskId: task.taskId, data: succeeded(status) ? variations(task) : [] }
  }
}
