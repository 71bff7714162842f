/**
 * Lyrics from the Suno-style upstream (`PROVIDER=http`), by its documented lyrics endpoint:
 * `POST {PROVIDER_URL}/api/v1/lyrics` `{prompt, callBackUrl}` answers `{code, msg, data: {taskId}}`;
 * `GET /api/v1/lyrics/record-info?taskId=` answers `{code, data: {status, response: {data: [{text,
 * title, status, errorMessage}]}, errorCode, errorMessage}}`; the callback (one stage, `complete`)
 * only makes the task due now. The body `code` is the truth: 200 takes the task, 430 (too
 * frequent) and 455 (maintenance) ask again later, any other code is a definite refusal; an answer
 * without a code (a time-out, a proxy's page) is asked again later too, within the deadline. The
 * upstream writes from a prompt alone (at most 200 words), so style, form, a track to fit and a
 * revision are told to it in the prompt.
 */
import { Effect, Layer, Option, Predicate, Redacted, Schema } from "effect"
import { LyricsWriter } from "@lyre/core"
import type { LyricsJob, LyricsStep } from "@lyre/core"
import { upstreamPrompt } from "./brief.ts"

export interface SunoLyricsWriterConfig {
  /** `PROVIDER_URL`, the upstream's root. */
  readonly baseUrl: string
  readonly apiKey: string
  readonly timeoutMs: number
}

const maybeText = Schema.optional(Schema.NullOr(Schema.String))

const SubmitAnswer = Schema.Struct({
  code: Schema.Number,
  msg: maybeText,
  data: Schema.optional(Schema.NullOr(Schema.Struct({ taskId: maybeText })))
})
const decodeSubmit = Schema.decodeUnknownOption(SubmitAnswer)

const RecordAnswer = Schema.Struct({
  code: Schema.Number,
  msg: maybeText,
  data: Schema.optional(
    Schema.NullOr(
      Schema.Struct({
        status: maybeText,
        errorMessage: maybeText,
        response: Schema.optional(
          Schema.NullOr(
            Schema.Struct({
              data: Schema.optional(
                Schema.NullOr(Schema.Array(Schema.Struct({ text: maybeText, title: maybeText, status: maybeText })))
              )
            })
          )
        )
      })
    )
  )
})
const decodeRecord = Schema.decodeUnknownOption(RecordAnswer)

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Body codes that mean "not now": the upstream is busy or in maintenance. */
const laterCodes = new Set([430, 455])

export const readLyricsSubmit = (status: number, text: string): LyricsStep => {
  const answer = decodeSubmit(parseJson(text))
  if (Option.isNone(answer)) return { _tag: "NotYet", message: `upstream answered HTTP ${status} without a body code` }
  const { code, msg, data } = answer.value
  if (code === 200 && typeof data?.taskId === "string" && data.taskId !== "") {
    return { _tag: "Taken", providerTaskId: data.taskId }
  }
  if (laterCodes.has(code)) return { _tag: "NotYet", message: `upstream code ${code}: ${msg ?? ""}` }
  return { _tag: "Failed", code: "lyrics_failed", detail: `upstream code ${code}: ${msg ?? ""}` }
}

export const readLyricsRecord = (status: number, text: string): LyricsStep => {
  const answer = decodeRecord(parseJson(text))
  if (Option.isNone(answer))
    return { _tag: "NotYet", message: `record-info answered HTTP ${status} without a body code` }
  const { code, msg, data } = answer.value
  if (code !== 200 || data === undefined || data === null) {
    return { _tag: "NotYet", message: `record-info code ${code}: ${msg ?? ""}` }
  }
  const drafts = (data.response?.data ?? []).filter((draft) => Predicate.isString(draft.text) && draft.text !== "")
  switch (data.status) {
    case "SUCCESS":
    case "CALLBACK_EXCEPTION":
      if (drafts.length > 0)
        return { _tag: "Written", variations: drafts.map((d) => ({ title: d.title ?? "", text: d.text ?? "" })) }
      return data.status === "SUCCESS"
        ? { _tag: "Failed", code: "lyrics_failed", detail: "SUCCESS without lyrics" }
        : { _tag: "Failed", code: "lyrics_failed", detail: "CALLBACK_EXCEPTION without lyrics" }
    case "SENSITIVE_WORD_ERROR":
      return { _tag: "Failed", code: "content_policy", detail: data.errorMessage ?? "SENSITIVE_WORD_ERROR" }
    case "CREATE_TASK_FAILED":
    case "GENERATE_LYRICS_FAILED":
      return { _tag: "Failed", code: "lyrics_failed", detail: `${data.status}: ${data.errorMessage ?? ""}` }
    default:
      return { _tag: "NotYet", message: `record-info status ${data.status ?? "none"}` }
  }
}

export const sunoLyricsWriterLayer = (config: SunoLyricsWriterConfig): Layer.Layer<LyricsWriter> => {
  const baseUrl = config.baseUrl.replace(/\/+$/, "")
  const apiKey = Redacted.make(config.apiKey)
  const exchange = (
    url: string,
    init: { readonly method: "GET" | "POST"; readonly body?: string },
    read: (status: number, text: string) => LyricsStep
  ): Effect.Effect<LyricsStep> =>
    Effect.promise(async (): Promise<LyricsStep> => {
      try {
        const answer = await fetch(url, {
          method: init.method,
          headers: { authorization: `Bearer ${Redacted.value(apiKey)}`, "content-type": "application/json" },
          ...(init.body === undefined ? {} : { body: init.body }),
          signal: AbortSignal.timeout(config.timeoutMs)
        })
        return read(answer.status, await answer.text())
      } catch (error) {
        return {
          _tag: "NotYet",
          message: `upstream unreachable: ${error instanceof Error ? error.message : String(error)}`
        }
      }
    })
  const step = (job: LyricsJob): Effect.Effect<LyricsStep> =>
    job.providerTaskId === null
      ? exchange(
          `${baseUrl}/api/v1/lyrics`,
          { method: "POST", body: JSON.stringify({ prompt: upstreamPrompt(job), callBackUrl: job.callbackUrl }) },
          readLyricsSubmit
        )
      : exchange(
          `${baseUrl}/api/v1/lyrics/record-info?taskId=${encodeURIComponent(job.providerTaskId)}`,
          { method: "GET" },
          readLyricsRecord
        )
  return Layer.succeed(LyricsWriter)(LyricsWriter.of({ name: "upstream", step }))
}
