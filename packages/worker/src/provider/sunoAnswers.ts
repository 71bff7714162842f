import type { PollOutcome, ProviderTrack, SubmitOutcome } from "@lyre/core/provider/outcomes"
import { Option, Schema } from "effect"

/**
 * The upstream's answers, read leniently: every field may be missing or null, and both
 * camelCase (record-info as documented) and snake_case (callbacks, some mirrors) are accepted.
 */
const maybe = <S extends Schema.Constraint>(schema: S) => Schema.optional(Schema.NullOr(schema))
const maybeText = maybe(Schema.String)

const SunoTrack = Schema.Struct({
  id: maybeText,
  audioUrl: maybeText,
  audio_url: maybeText,
  imageUrl: maybeText,
  image_url: maybeText,
  prompt: maybeText,
  title: maybeText,
  tags: maybeText,
  duration: maybe(Schema.Number)
})
type SunoTrack = typeof SunoTrack.Type

const SubmitAnswer = Schema.Struct({
  code: Schema.Number,
  msg: maybeText,
  data: maybe(Schema.Struct({ taskId: maybeText, task_id: maybeText }))
})

const RecordInfoAnswer = Schema.Struct({
  code: Schema.Number,
  msg: maybeText,
  data: maybe(Schema.Struct({
    status: maybeText,
    response: maybe(Schema.Struct({
      sunoData: maybe(Schema.Array(SunoTrack)),
      suno_data: maybe(Schema.Array(SunoTrack))
    })),
    errorMessage: maybeText,
    error_message: maybeText
  }))
})

const decodeSubmitAnswer = Schema.decodeUnknownOption(SubmitAnswer)
const decodeRecordInfoAnswer = Schema.decodeUnknownOption(RecordInfoAnswer)

/** A raw HTTP answer: the status and the body text, before any interpretation. */
export interface RawAnswer {
  readonly status: number
  readonly text: string
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Body codes that are a definite refusal, and whether the model's circuit should hear of it. */
const CIRCUIT_CODES = new Set([430, 455])

/**
 * Reads a generate answer. The body `code` is the truth whatever the HTTP status; without one
 * (an HTML error page, a 502 from a proxy, a truncated body) we cannot know whether the
 * upstream took the task, so the outcome is Unknown and the worker reconciles.
 */
export const interpretSubmit = (answer: RawAnswer): SubmitOutcome => {
  const decoded = decodeSubmitAnswer(parseJson(answer.text))
  if (Option.isNone(decoded)) {
    return { _tag: "Unknown", message: `Upstream answered HTTP ${answer.status} without a body code` }
  }
  const { code, msg, data } = decoded.value
  if (code === 200) {
    const providerTaskId = data?.taskId ?? data?.task_id
    return providerTaskId
      ? { _tag: "Accepted", providerTaskId }
      : { _tag: "Unknown", message: "Upstream accepted the task without a task id" }
  }
  return {
    _tag: "Rejected",
    code: "provider_error",
    message: `Upstream refused the task (code ${code}${msg ? `: ${msg}` : ""})`,
    countsTowardCircuit: CIRCUIT_CODES.has(code)
  }
}

/** Tracks with an id and a downloadable audio file, in the upstream's order (our track index). */
const toTracks = (tracks: ReadonlyArray<SunoTrack>): ReadonlyArray<ProviderTrack> =>
  tracks.flatMap((track) => {
    const audioUrl = track.audioUrl || track.audio_url
    if (!track.id || !audioUrl) return []
    return [{
      providerTrackId: track.id,
      audioUrl,
      imageUrl: track.imageUrl || track.image_url || null,
      lyrics: track.prompt ?? null,
      title: track.title ?? null,
      tags: track.tags ?? null,
      duration: track.duration ?? null
    }]
  })

/** Reads a record-info answer into the port's outcome, by the status table of section 6. */
export const interpretRecordInfo = (answer: RawAnswer): PollOutcome => {
  const decoded = decodeRecordInfoAnswer(parseJson(answer.text))
  if (Option.isNone(decoded)) {
    return { _tag: "Unknown", message: `Upstream answered HTTP ${answer.status} without a readable record` }
  }
  const { code, msg, data } = decoded.value
  if (code !== 200 || !data?.status) {
    return { _tag: "Unknown", message: `Upstream record-info answered code ${code}${msg ? `: ${msg}` : ""}` }
  }
  const tracks = toTracks(data.response?.sunoData ?? data.response?.suno_data ?? [])
  const reason = data.errorMessage || data.error_message || data.status
  switch (data.status) {
    case "PENDING":
    case "TEXT_SUCCESS":
    case "FIRST_SUCCESS":
      return { _tag: "Pending" }
    case "SUCCESS":
      return tracks.length > 0
        ? { _tag: "Succeeded", tracks }
        : { _tag: "Failed", code: "provider_error", message: "Upstream reported success without any audio" }
    case "CALLBACK_EXCEPTION":
      // The upstream failed to call us back, which says nothing about the music itself.
      return tracks.length > 0
        ? { _tag: "Succeeded", tracks }
        : { _tag: "Failed", code: "provider_error", message: `Upstream failed: ${reason}` }
    case "CREATE_TASK_FAILED":
    case "GENERATE_AUDIO_FAILED":
      return { _tag: "Failed", code: "provider_error", message: `Upstream failed: ${reason}` }
    case "SENSITIVE_WORD_ERROR":
      return { _tag: "Failed", code: "content_policy", message: "The request was refused by the content policy" }
    default:
      return { _tag: "Unknown", message: `Upstream reported an unknown status ${data.status}` }
  }
}
