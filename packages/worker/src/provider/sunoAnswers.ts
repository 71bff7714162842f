import type {
  ExportPollOutcome,
  PersonaOutcome,
  PollOutcome,
  ProviderExportFile,
  ProviderPreview,
  ProviderTrack,
  SubmitOutcome,
  TimedWord
} from "@lyre/core/provider/outcomes"
import { Option, Predicate, Schema } from "effect"

/**
 * The upstream's answers, read leniently: every field may be missing or null, and both
 * camelCase (record-info as documented) and snake_case (callbacks, some mirrors) are accepted.
 */
const maybe = <S extends Schema.Constraint>(schema: S) => Schema.optional(Schema.NullOr(schema))
const maybeText = maybe(Schema.String)

/** A track of record-info: every field absent, null or a string, the duration a number. */
interface SunoTrack {
  readonly id?: string | null
  readonly audioUrl?: string | null
  readonly audio_url?: string | null
  readonly imageUrl?: string | null
  readonly image_url?: string | null
  /** The track's audio while it is made (from the `first` stage on); not checked by `isSunoTrack`, read only if text. */
  readonly streamAudioUrl?: unknown
  readonly stream_audio_url?: unknown
  readonly prompt?: string | null
  readonly title?: string | null
  readonly tags?: string | null
  readonly duration?: number | null
}

const trackTextFields = ["id", "audioUrl", "audio_url", "imageUrl", "image_url", "prompt", "title", "tags"] as const

/** What `maybeText` accepts: absent, null or a string. */
const isMaybeText = (value: unknown): value is string | null | undefined =>
  value === undefined || value === null || typeof value === "string"

const isMaybeNumber = (value: unknown): value is number | null | undefined =>
  value === undefined || value === null || typeof value === "number"

const isSunoTrack = (track: unknown): track is SunoTrack =>
  Predicate.isObject(track) &&
  trackTextFields.every((field) => isMaybeText(track[field])) &&
  isMaybeNumber(track["duration"])

/** Absent, null, or an array of tracks each read by the rules of `isSunoTrack`. */
const isMaybeTracks = (value: unknown): value is ReadonlyArray<SunoTrack> | null | undefined =>
  value === undefined || value === null || (Array.isArray(value) && value.every(isSunoTrack))

/**
 * A record-info answer read by the same lenient rules as the schemas here: `code` a number;
 * `msg`, and in `data` (absent, null or an object) `status`, `errorMessage` and `error_message`,
 * each absent, null or a string; `data.response` absent, null or an object whose `sunoData` and
 * `suno_data` are each absent, null or an array of tracks. Other fields are ignored. By hand, as
 * `readSubmitAnswer`: the worker reads one a task, and Schema's parser cost it tens of thousands
 * of instructions each (decision 0119). undefined when the answer breaks a rule.
 */
const readRecordInfoAnswer = (json: unknown) => {
  if (!Predicate.isObject(json) || typeof json["code"] !== "number" || !isMaybeText(json["msg"])) return undefined
  const { code, msg } = json
  const data = json["data"]
  if (data === undefined || data === null) return { code, msg, data: undefined }
  if (!Predicate.isObject(data)) return undefined
  const { status, errorMessage, error_message } = data
  if (!isMaybeText(status) || !isMaybeText(errorMessage) || !isMaybeText(error_message)) return undefined
  const response = data["response"]
  if (response === undefined || response === null)
    return { code, msg, data: { status, errorMessage, error_message, tracks: undefined } }
  if (!Predicate.isObject(response)) return undefined
  const { sunoData, suno_data } = response
  if (!isMaybeTracks(sunoData) || !isMaybeTracks(suno_data)) return undefined
  return { code, msg, data: { status, errorMessage, error_message, tracks: sunoData ?? suno_data } }
}

/**
 * A generate answer read by the same lenient rules as the schemas here (`code` a number, `msg`,
 * `data.taskId` and `data.task_id` each absent, null or a string, `data` absent, null or an
 * object; other fields ignored), but by hand: it is read on every create's request path, where a
 * Schema decode was the one use of Schema's parser (decision 0112). undefined when the answer
 * breaks a rule.
 */
const readSubmitAnswer = (json: unknown) => {
  // Predicate.isObject refuses arrays, as the schemas' `Struct` does.
  if (!Predicate.isObject(json) || typeof json["code"] !== "number" || !isMaybeText(json["msg"])) return undefined
  const data = json["data"]
  if (data === undefined || data === null) return { code: json["code"], msg: json["msg"], taskId: undefined }
  if (!Predicate.isObject(data) || !isMaybeText(data["taskId"]) || !isMaybeText(data["task_id"])) return undefined
  return { code: json["code"], msg: json["msg"], taskId: data["taskId"] ?? data["task_id"] ?? undefined }
}

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
  const read = readSubmitAnswer(parseJson(answer.text))
  if (read === undefined) {
    return { _tag: "Unknown", message: `Upstream answered HTTP ${answer.status} without a body code` }
  }
  const { code, msg, taskId: providerTaskId } = read
  if (code === 200) {
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
    return [
      {
        providerTrackId: track.id,
        audioUrl,
        imageUrl: track.imageUrl || track.image_url || null,
        lyrics: track.prompt ?? null,
        title: track.title ?? null,
        tags: track.tags ?? null,
        duration: track.duration ?? null
      }
    ]
  })

/**
 * The tracks' stream addresses at the `first` stage (only http(s) ones), indexed as the tracks
 * will be: in the order of those with an id. `previews` only when there is one.
 */
const withPreviews = (tracks: ReadonlyArray<SunoTrack>): { readonly previews?: ReadonlyArray<ProviderPreview> } => {
  const previews = tracks
    .filter((track) => track.id)
    .flatMap((track, index) => {
      const url = [track.streamAudioUrl, track.stream_audio_url].find((u) => typeof u === "string" && u !== "")
      return typeof url === "string" && /^https?:\/\//i.test(url) ? [{ index, url }] : []
    })
  return previews.length === 0 ? {} : { previews }
}

/** Reads a record-info answer into the port's outcome, by the status table of section 6. */
export const interpretRecordInfo = (answer: RawAnswer): PollOutcome => {
  const read = readRecordInfoAnswer(parseJson(answer.text))
  if (read === undefined) {
    return { _tag: "Unknown", message: `Upstream answered HTTP ${answer.status} without a readable record` }
  }
  const { code, msg, data } = read
  if (code !== 200 || !data?.status) {
    return { _tag: "Unknown", message: `Upstream record-info answered code ${code}${msg ? `: ${msg}` : ""}` }
  }
  const tracks = toTracks(data.tracks ?? [])
  const reason = data.errorMessage || data.error_message || data.status
  switch (data.status) {
    case "PENDING":
    case "TEXT_SUCCESS":
      return { _tag: "Pending" }
    case "FIRST_SUCCESS":
      return { _tag: "Pending", ...withPreviews(data.tracks ?? []) }
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

/** A record-info of the song tools' own endpoints: `successFlag` rather than `status`. */
const ToolRecord = <S extends Schema.Constraint>(response: S) =>
  Schema.Struct({
    code: Schema.Number,
    msg: maybeText,
    data: maybe(
      Schema.Struct({
        successFlag: maybe(Schema.Union([Schema.String, Schema.Number])),
        response: maybe(response),
        errorMessage: maybeText,
        error_message: maybeText
      })
    )
  })

const decodeWavRecord = Schema.decodeUnknownOption(
  ToolRecord(Schema.Struct({ audioWavUrl: maybeText, audio_wav_url: maybeText }))
)
const decodeSeparationRecord = Schema.decodeUnknownOption(ToolRecord(Schema.Record(Schema.String, Schema.Unknown)))

/** A note as the upstream writes it: times are numbers in record-info, sometimes strings in callbacks. */
const Seconds = Schema.Union([Schema.Finite, Schema.FiniteFromString])
const MidiInstrument = Schema.Struct({
  name: maybeText,
  notes: maybe(
    Schema.Array(Schema.Struct({ pitch: Schema.Number, start: Seconds, end: Seconds, velocity: maybe(Schema.Number) }))
  )
})
export type MidiInstrument = typeof MidiInstrument.Type

const MidiRecord = Schema.Struct({
  code: Schema.Number,
  msg: maybeText,
  data: maybe(
    Schema.Struct({
      successFlag: maybe(Schema.Union([Schema.String, Schema.Number])),
      midiData: maybe(Schema.Struct({ instruments: maybe(Schema.Array(MidiInstrument)) })),
      errorMessage: maybeText,
      error_message: maybeText
    })
  )
})
const decodeMidiRecord = Schema.decodeUnknownOption(MidiRecord)

const LyricsAnswer = Schema.Struct({
  code: Schema.Number,
  msg: maybeText,
  data: maybe(
    Schema.Struct({
      alignedWords: maybe(
        Schema.Array(Schema.Struct({ word: maybeText, startS: maybe(Schema.Number), endS: maybe(Schema.Number) }))
      )
    })
  )
})
const decodeLyricsAnswer = Schema.decodeUnknownOption(LyricsAnswer)

const unreadable = (answer: RawAnswer): ExportPollOutcome => ({
  _tag: "Unknown",
  message: `Upstream answered HTTP ${answer.status} without a readable record`
})

const notAnswered = (code: number, msg: string | null | undefined): ExportPollOutcome => ({
  _tag: "Unknown",
  message: `Upstream record-info answered code ${code}${msg ? `: ${msg}` : ""}`
})

const failed = (reason: string): ExportPollOutcome => ({
  _tag: "Failed",
  code: "provider_error",
  message: `Upstream failed: ${reason}`
})

/**
 * The status table the WAV and separation record-infos share: PENDING, SUCCESS, a failure of
 * creation or of the work itself, and CALLBACK_EXCEPTION, which says nothing about the work (done
 * when its result is there, as for generation).
 */
const byFlag = (flag: string | number, files: ReadonlyArray<ProviderExportFile>, reason: string): ExportPollOutcome => {
  switch (flag) {
    case "PENDING":
      return { _tag: "Pending" }
    case "SUCCESS":
    case "CALLBACK_EXCEPTION":
      return files.length > 0
        ? { _tag: "Succeeded", files, timedLyrics: null }
        : failed(flag === "SUCCESS" ? "success without any file" : reason)
    case "CREATE_TASK_FAILED":
    case "GENERATE_WAV_FAILED":
    case "GENERATE_AUDIO_FAILED":
      return failed(reason)
    default:
      return { _tag: "Unknown", message: `Upstream reported an unknown status ${flag}` }
  }
}

/** `GET /api/v1/wav/record-info`: one WAV of the whole track. */
export const interpretWavRecordInfo = (answer: RawAnswer): ExportPollOutcome => {
  const decoded = decodeWavRecord(parseJson(answer.text))
  if (Option.isNone(decoded)) return unreadable(answer)
  const { code, msg, data } = decoded.value
  if (code !== 200 || data?.successFlag == null) return notAnswered(code, msg)
  const url = data.response?.audioWavUrl || data.response?.audio_wav_url
  const files: ReadonlyArray<ProviderExportFile> = url
    ? [{ name: "track.wav", contentType: "audio/wav", stem: null, content: { _tag: "Url", url } }]
    : []
  return byFlag(data.successFlag, files, data.errorMessage || data.error_message || String(data.successFlag))
}

/**
 * The separation's parts, by the record-info field that carries each (camelCase as documented,
 * snake_case as its callbacks write them). `originUrl` is the mix itself, not a part.
 */
const STEM_FIELDS: ReadonlyArray<readonly [field: string, stem: string]> = [
  ["vocalUrl", "vocals"],
  ["instrumentalUrl", "instrumental"],
  ["backingVocalsUrl", "backing_vocals"],
  ["drumsUrl", "drums"],
  ["bassUrl", "bass"],
  ["guitarUrl", "guitar"],
  ["pianoUrl", "piano"],
  ["keyboardUrl", "keyboard"],
  ["percussionUrl", "percussion"],
  ["stringsUrl", "strings"],
  ["synthUrl", "synth"],
  ["fxUrl", "fx"],
  ["brassUrl", "brass"],
  ["woodwindsUrl", "woodwinds"]
]

const snakeOf = (field: string): string => field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)

const stemFiles = (response: Readonly<Record<string, unknown>>): ReadonlyArray<ProviderExportFile> =>
  STEM_FIELDS.flatMap(([field, stem]) => {
    const url = response[field] ?? response[snakeOf(field)]
    return typeof url === "string" && url !== ""
      ? [{ name: `${stem}.mp3`, contentType: "audio/mpeg", stem, content: { _tag: "Url", url } } as const]
      : []
  })

/** `GET /api/v1/vocal-removal/record-info`: the separated parts, each an MP3 as the upstream makes them. */
export const interpretSeparationRecordInfo = (answer: RawAnswer): ExportPollOutcome => {
  const decoded = decodeSeparationRecord(parseJson(answer.text))
  if (Option.isNone(decoded)) return unreadable(answer)
  const { code, msg, data } = decoded.value
  if (code !== 200 || data?.successFlag == null) return notAnswered(code, msg)
  const files = stemFiles(data.response ?? {})
  return byFlag(data.successFlag, files, data.errorMessage || data.error_message || String(data.successFlag))
}

/** Where a transcription stands: its parts once done. */
export type MidiRecordOutcome =
  | Exclude<ExportPollOutcome, { readonly _tag: "Succeeded" }>
  | { readonly _tag: "Transcribed"; readonly instruments: ReadonlyArray<MidiInstrument> }

/**
 * `GET /api/v1/midi/record-info`. Its `successFlag` is a number: 0 pending, 1 done, 2 the task
 * could not be created, 3 the transcription failed (the status names are read too).
 */
export const interpretMidiRecordInfo = (answer: RawAnswer): MidiRecordOutcome => {
  const decoded = decodeMidiRecord(parseJson(answer.text))
  if (Option.isNone(decoded))
    return { _tag: "Unknown", message: `Upstream answered HTTP ${answer.status} without a readable record` }
  const { code, msg, data } = decoded.value
  if (code !== 200 || data?.successFlag == null) {
    return { _tag: "Unknown", message: `Upstream record-info answered code ${code}${msg ? `: ${msg}` : ""}` }
  }
  const reason = data.errorMessage || data.error_message || `successFlag ${data.successFlag}`
  switch (data.successFlag) {
    case 0:
    case "0":
    case "PENDING":
      return { _tag: "Pending" }
    case 1:
    case "1":
    case "SUCCESS": {
      const instruments = (data.midiData?.instruments ?? []).filter((instrument) => (instrument.notes?.length ?? 0) > 0)
      return instruments.length > 0
        ? { _tag: "Transcribed", instruments }
        : { _tag: "Failed", code: "provider_error", message: "Upstream transcribed no notes" }
    }
    case 2:
    case 3:
    case "2":
    case "3":
    case "CREATE_TASK_FAILED":
    case "GENERATE_MIDI_FAILED":
      return { _tag: "Failed", code: "provider_error", message: `Upstream failed: ${reason}` }
    default:
      return { _tag: "Unknown", message: `Upstream reported an unknown status ${data.successFlag}` }
  }
}

/** Answer codes of the synchronous lyrics call that are a definite refusal; the rest may pass. */
const REFUSALS = new Set([400, 401, 404, 405, 413, 429])

/** A section tag such as `[Verse]` is not sung; the upstream glues it to the first word of its section. */
const sungText = (word: string): string =>
  word
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\s+/g, " ")
    .trim()

/**
 * `POST /api/v1/generate/get-timestamped-lyrics`, which answers at once. Each aligned word
 * becomes a TimedWord, in order, without its section tags; times are clamped so that none runs
 * backwards. A code that refuses for good fails the export; anything else may pass, so it is
 * Unknown and the next poll asks again.
 */
export const interpretTimestampedLyrics = (answer: RawAnswer): ExportPollOutcome => {
  const decoded = decodeLyricsAnswer(parseJson(answer.text))
  if (Option.isNone(decoded)) return unreadable(answer)
  const { code, msg, data } = decoded.value
  if (code !== 200) {
    return REFUSALS.has(code)
      ? {
          _tag: "Failed",
          code: "provider_error",
          message: `Upstream refused the lyrics (code ${code}${msg ? `: ${msg}` : ""})`
        }
      : notAnswered(code, msg)
  }
  const words: Array<TimedWord> = []
  for (const aligned of data?.alignedWords ?? []) {
    const text = sungText(aligned.word ?? "")
    if (text === "" || aligned.startS == null || aligned.endS == null) continue
    const start = Math.max(0, aligned.startS, words.at(-1)?.start ?? 0)
    words.push({ text, start, end: Math.max(start, aligned.endS) })
  }
  return words.length > 0
    ? { _tag: "Succeeded", files: [], timedLyrics: words }
    : { _tag: "Failed", code: "provider_error", message: "Upstream has no timed lyrics for this track" }
}

const PersonaAnswer = Schema.Struct({
  code: Schema.Number,
  msg: maybeText,
  data: maybe(Schema.Struct({ personaId: maybeText, persona_id: maybeText }))
})
const decodePersonaAnswer = Schema.decodeUnknownOption(PersonaAnswer)

/**
 * Reads a `generate-persona` answer: made at once, its `personaId` in `data`. Anything else,
 * unreadable answers included, is a refusal: a persona is free, so the caller simply asks again.
 */
export const interpretPersona = (answer: RawAnswer): PersonaOutcome => {
  const decoded = decodePersonaAnswer(parseJson(answer.text))
  if (Option.isNone(decoded))
    return { _tag: "Rejected", message: `Upstream answered HTTP ${answer.status} without a body code` }
  const { code, msg, data } = decoded.value
  const personaId = data?.personaId ?? data?.persona_id
  if (code !== 200 || personaId === undefined || personaId === null || personaId === "") {
    return { _tag: "Rejected", message: `Upstream refused the persona (code ${code}): ${msg ?? ""}` }
  }
  return { _tag: "Created", providerPersonaId: personaId }
}
