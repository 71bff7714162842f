import type { PersonaSubmission, ProviderSubmission, SourceTrack } from "@lyre/core/provider/outcomes"

export type ModelCodename = ProviderSubmission["model"]

/** Our codenames to the upstream's model names (DESIGN.md section 6). */
export const defaultModelMap: Readonly<Record<ModelCodename, string>> = {
  aether: "V4_5",
  echo: "V4",
  nocturne: "V3_5"
}

/** The upstream takes shorter titles than we do; 80 characters is safe for every model. */
export const MAX_UPSTREAM_TITLE = 80

/**
 * Fits a title into `max` UTF-16 units, cutting at the last word boundary when there is one in
 * the second half, and never inside a surrogate pair. The caller's full title stays on the task.
 */
export const shortenTitle = (title: string, max = MAX_UPSTREAM_TITLE): string => {
  if (title.length <= max) return title
  let cut = title.slice(0, max)
  // A high surrogate at the end would leave half an emoji.
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1)
  // The word boundary counts only if the next character starts a new word.
  const boundary = /\s/.test(title.charAt(cut.length)) ? cut.length : cut.search(/\s\S*$/)
  const shortened = boundary >= max / 2 ? cut.slice(0, boundary) : cut
  return shortened.replace(/[\s,;:\-–—]+$/u, "")
}

/**
 * The body of `POST /api/v1/generate`, exactly as section 6 lists it: custom mode, lyrics as
 * `prompt`, and every absent field left out rather than sent as null.
 */
export const generateBody = (
  submission: ProviderSubmission,
  modelMap: Readonly<Record<ModelCodename, string>>
): Record<string, unknown> => {
  const body: Record<string, unknown> = {
    customMode: true,
    instrumental: submission.instrumental,
    model: modelMap[submission.model],
    style: submission.style,
    title: shortenTitle(submission.title)
  }
  if (submission.lyrics !== null) body.prompt = submission.lyrics
  if (submission.negative_tags !== undefined) body.negativeTags = submission.negative_tags
  if (submission.vocal_gender !== undefined) body.vocalGender = submission.vocal_gender
  if (submission.style_weight !== undefined) body.styleWeight = submission.style_weight
  if (submission.weirdness_constraint !== undefined) body.weirdnessConstraint = submission.weirdness_constraint
  if (submission.audio_weight !== undefined) body.audioWeight = submission.audio_weight
  Object.assign(body, personaFieldOf(submission))
  if (submission.callbackUrl !== null) body.callBackUrl = submission.callbackUrl
  return body
}

/**
 * An instrumental extension has no lyrics, but `prompt` is required with custom parameters: the
 * upstream's own section tag for a part without singing stands in for them.
 */
export const INSTRUMENTAL_PROMPT = "[Instrumental]"

/**
 * Lyre's default `continue_at` is the source's whole length ("continue from its end"), but the
 * upstream takes only a point strictly inside the track: the end becomes the last hundredth of a
 * second before it. Any other point is sent as given (core has checked it is inside the track).
 */
const upstreamContinueAt = (extend: NonNullable<ProviderSubmission["extend"]>): number => {
  const duration = extend.source.duration
  return duration !== null && extend.continueAt === duration
    ? Math.floor((duration - 0.01) * 100) / 100
    : extend.continueAt
}

/**
 * The body of `POST /api/v1/generate/extend`: always custom parameters (`defaultParamFlag:
 * true`), since core has already merged the extension's request over its source's, so what we
 * send is what the task says. `audioId` is the upstream's id of the source track.
 */
export const extendBody = (
  submission: ProviderSubmission,
  extend: NonNullable<ProviderSubmission["extend"]>,
  modelMap: Readonly<Record<ModelCodename, string>>
): Record<string, unknown> => {
  const body: Record<string, unknown> = {
    defaultParamFlag: true,
    audioId: extend.source.providerTrackId,
    model: modelMap[submission.model],
    prompt: submission.lyrics ?? INSTRUMENTAL_PROMPT,
    style: submission.style,
    title: shortenTitle(submission.title),
    continueAt: upstreamContinueAt(extend),
    ...tuningOf(submission),
    ...personaFieldOf(submission)
  }
  if (submission.callbackUrl !== null) body.callBackUrl = submission.callbackUrl
  return body
}

/** The track a song tool works on, as the upstream names it: its generation task and audio id. */
const sourceFields = (source: SourceTrack) => ({ taskId: source.providerTaskId, audioId: source.providerTrackId })

const withCallback = (body: Record<string, unknown>, callbackUrl: string | null): Record<string, unknown> =>
  callbackUrl === null ? body : { ...body, callBackUrl: callbackUrl }

/** `POST /api/v1/wav/generate`. */
export const wavBody = (source: SourceTrack, callbackUrl: string | null) =>
  withCallback(sourceFields(source), callbackUrl)

/**
 * The separation the upstream offers for stems and, as its first step, for MIDI. `separate_vocal`
 * (vocals and instrumental) rather than `split_stem`: its two parts add up to the mix, it costs
 * the upstream's lower price, and the upstream warns that MIDI from a `split_stem` may be empty.
 */
export const SEPARATION_TYPE = "separate_vocal"

/** `POST /api/v1/vocal-removal/generate`. */
export const separationBody = (source: SourceTrack, callbackUrl: string | null) =>
  withCallback({ ...sourceFields(source), type: SEPARATION_TYPE }, callbackUrl)

/** `POST /api/v1/midi/generate`: the transcription of a finished separation, all its parts. */
export const midiBody = (separationTaskId: string, callbackUrl: string | null) =>
  withCallback({ taskId: separationTaskId }, callbackUrl)

/** `POST /api/v1/generate/get-timestamped-lyrics`. */
export const timestampedLyricsBody = (taskId: string, audioId: string) => ({ taskId, audioId })

/**
 * What the adapter keeps in `providerExportId` (opaque to core): the stage the export is at and
 * what that stage's record-info needs.
 * - `wav`, `stems`, `midi`: the upstream task to poll;
 * - `midi-separation`: the separation MIDI waits for, and the callback URL the transcription
 *   will be given once it is submitted (pollExport knows nothing else of the export);
 * - `lyrics`: the source's generation task and audio id, asked again on every poll.
 */
export type ExportStage =
  | { readonly stage: "wav" | "stems" | "midi"; readonly upstreamTaskId: string }
  | { readonly stage: "midi-separation"; readonly upstreamTaskId: string; readonly callbackUrl: string | null }
  | { readonly stage: "lyrics"; readonly taskId: string; readonly audioId: string }

const partsOf = (stage: ExportStage): ReadonlyArray<string> => {
  switch (stage.stage) {
    case "wav":
    case "stems":
    case "midi":
      return [stage.upstreamTaskId]
    case "midi-separation":
      return stage.callbackUrl === null ? [stage.upstreamTaskId] : [stage.upstreamTaskId, stage.callbackUrl]
    case "lyrics":
      return [stage.taskId, stage.audioId]
  }
}

/** `stage:part:part`, each part URI-encoded so that no `:` inside one splits it. */
export const encodeExportId = (stage: ExportStage): string =>
  [stage.stage, ...partsOf(stage)].map(encodeURIComponent).join(":")

const decodePart = (part: string): string | null => {
  try {
    const decoded = decodeURIComponent(part)
    return decoded === "" ? null : decoded
  } catch {
    return null
  }
}

/** Reads an id `encodeExportId` wrote; null for anything else. */
export const decodeExportId = (providerExportId: string): ExportStage | null => {
  const raw = providerExportId.split(":")
  const parts = raw.map(decodePart)
  if (parts.some((part) => part === null)) return null
  const [stage, first, second, ...rest] = parts as ReadonlyArray<string>
  if (first === undefined || rest.length > 0) return null
  switch (stage) {
    case "wav":
    case "stems":
    case "midi":
      return second === undefined ? { stage, upstreamTaskId: first } : null
    case "midi-separation":
      return { stage, upstreamTaskId: first, callbackUrl: second ?? null }
    case "lyrics":
      return second === undefined ? null : { stage, taskId: first, audioId: second }
    default:
      return null
  }
}

/** `POST /api/v1/generate/generate-persona`: the track's generation task and audio id, a name and a description. */
export const personaBody = (submission: PersonaSubmission) => ({
  ...sourceFields(submission.source),
  name: submission.name,
  description: submission.description
})

/** The optional tuning every creating endpoint takes, absent fields left out. */
const tuningOf = (submission: ProviderSubmission): Record<string, unknown> => {
  const body: Record<string, unknown> = {}
  if (submission.negative_tags !== undefined) body.negativeTags = submission.negative_tags
  if (submission.vocal_gender !== undefined) body.vocalGender = submission.vocal_gender
  if (submission.style_weight !== undefined) body.styleWeight = submission.style_weight
  if (submission.weirdness_constraint !== undefined) body.weirdnessConstraint = submission.weirdness_constraint
  if (submission.audio_weight !== undefined) body.audioWeight = submission.audio_weight
  return body
}

/** The upstream's `personaId` of a persona the request names, when the upstream made one. */
export const personaFieldOf = (submission: ProviderSubmission): Record<string, unknown> => {
  const id = submission.persona?.providerPersonaId
  return id === undefined || id === null ? {} : { personaId: id }
}

/**
 * `POST /api/v1/generate/upload-cover`: the source as `uploadUrl` (a signed address of our own
 * copy), in custom mode: the cover's style, title and, sung, its words as `prompt`.
 */
export const uploadCoverBody = (
  submission: ProviderSubmission,
  uploadUrl: string,
  modelMap: Readonly<Record<ModelCodename, string>>
): Record<string, unknown> =>
  withCallback(
    {
      uploadUrl,
      customMode: true,
      instrumental: submission.instrumental,
      model: modelMap[submission.model],
      style: submission.style,
      title: shortenTitle(submission.title),
      ...(submission.lyrics === null ? {} : { prompt: submission.lyrics }),
      ...tuningOf(submission),
      ...personaFieldOf(submission)
    },
    submission.callbackUrl
  )

/** `POST /api/v1/generate/upload-extend`: an extension of a track the upstream never made. */
export const uploadExtendBody = (
  submission: ProviderSubmission,
  extend: NonNullable<ProviderSubmission["extend"]>,
  uploadUrl: string,
  modelMap: Readonly<Record<ModelCodename, string>>
): Record<string, unknown> =>
  withCallback(
    {
      uploadUrl,
      defaultParamFlag: true,
      instrumental: submission.instrumental,
      model: modelMap[submission.model],
      style: submission.style,
      title: shortenTitle(submission.title),
      ...(submission.lyrics === null ? {} : { prompt: submission.lyrics }),
      continueAt: upstreamContinueAt(extend),
      ...tuningOf(submission),
      ...personaFieldOf(submission)
    },
    submission.callbackUrl
  )

/**
 * `POST /api/v1/generate/add-vocals`: the source as `uploadUrl`, the words to sing as `prompt`.
 * `negativeTags` is required there: an empty one excludes nothing. The endpoint takes only its
 * own models, so `model` is left to its default.
 */
export const addVocalsBody = (submission: ProviderSubmission, uploadUrl: string): Record<string, unknown> =>
  withCallback(
    {
      uploadUrl,
      prompt: submission.lyrics ?? "",
      title: shortenTitle(submission.title),
      style: submission.style,
      ...tuningOf(submission),
      negativeTags: submission.negative_tags ?? ""
    },
    submission.callbackUrl
  )

/** `POST /api/v1/generate/add-instrumental`: the source (its sung part) as `uploadUrl`, the style as `tags`. */
export const addInstrumentalBody = (submission: ProviderSubmission, uploadUrl: string): Record<string, unknown> =>
  withCallback(
    {
      uploadUrl,
      title: shortenTitle(submission.title),
      tags: submission.style,
      ...tuningOf(submission),
      negativeTags: submission.negative_tags ?? ""
    },
    submission.callbackUrl
  )

/** The shortest span the upstream replaces; Lyre takes spans from 2 s, widened here around their middle. */
export const MIN_UPSTREAM_SPAN = 6

/** A span of at least MIN_UPSTREAM_SPAN seconds around the asked one, inside the track, in hundredths. */
export const upstreamSpan = (
  start: number,
  end: number,
  duration: number | null
): { readonly start: number; readonly end: number } => {
  const length = Math.max(end - start, MIN_UPSTREAM_SPAN)
  const middle = (start + end) / 2
  const limit = duration ?? Infinity
  let from = Math.max(0, middle - length / 2)
  let to = from + length
  if (to > limit) {
    to = limit
    from = Math.max(0, to - length)
  }
  return { start: Math.floor(from * 100) / 100, end: Math.floor(to * 100) / 100 }
}

/**
 * `POST /api/v1/generate/replace-section`: a track the upstream made is named by its `taskId`
 * and `audioId`; `prompt` is the span's words and `fullLyrics` the song's after the change.
 */
export const replaceSectionBody = (
  submission: ProviderSubmission,
  edit: Extract<NonNullable<ProviderSubmission["derive"]>, { readonly kind: "edit" }>
): Record<string, unknown> => {
  const span = upstreamSpan(edit.start, edit.end, edit.source.duration)
  const sourceWords = edit.source.request.lyrics
  const words = submission.lyrics ?? sourceWords ?? INSTRUMENTAL_PROMPT
  const body: Record<string, unknown> = {
    ...sourceFields(edit.source),
    prompt: words,
    tags: submission.style,
    title: shortenTitle(submission.title),
    infillStartS: span.start,
    infillEndS: span.end,
    fullLyrics: sourceWords ?? words
  }
  if (submission.negative_tags !== undefined) body.negativeTags = submission.negative_tags
  return withCallback(body, submission.callbackUrl)
}
