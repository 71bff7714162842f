/** The fields of a generate request the fake keeps, once the body passed the upstream's checks. */
export interface GenerateRequest {
  readonly title: string
  readonly style: string
  readonly prompt: string
  readonly model: string
  readonly instrumental: boolean
  readonly callBackUrl: string | null
}

const MODELS = new Set(["V3_5", "V4", "V4_5", "V4_5PLUS", "V5"])
const KNOWN = new Set([
  "customMode",
  "instrumental",
  "model",
  "style",
  "title",
  "prompt",
  "negativeTags",
  "vocalGender",
  "styleWeight",
  "weirdnessConstraint",
  "audioWeight",
  "callBackUrl",
  "personaId",
  "personaModel"
])
/** The upstream's title limit for the older models; the adapter must shorten to fit it. */
export const MAX_TITLE = 80

const isUnit = (value: unknown): boolean => typeof value === "number" && value >= 0 && value <= 1

/**
 * The upstream's custom-mode checks, strict enough that a malformed request from our adapter
 * fails a test instead of passing silently. Answers the request or the message of a code 400.
 */
export const validateGenerate = (body: unknown): GenerateRequest | string => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return "body must be a JSON object"
  const fields = body as Record<string, unknown>
  const unknown = Object.keys(fields).find((key) => !KNOWN.has(key))
  if (unknown !== undefined) return `unknown field ${unknown}`
  if (fields.customMode !== true) return "customMode must be true"
  if (typeof fields.instrumental !== "boolean") return "instrumental must be a boolean"
  if (typeof fields.model !== "string" || !MODELS.has(fields.model)) return "model is not supported"
  if (typeof fields.style !== "string" || fields.style.length === 0) return "style is required"
  if (typeof fields.title !== "string" || fields.title.length === 0) return "title is required"
  if (fields.title.length > MAX_TITLE) return `title must be at most ${MAX_TITLE} characters`
  if (!fields.instrumental && (typeof fields.prompt !== "string" || fields.prompt.trim() === "")) {
    return "prompt is required when instrumental is false"
  }
  if (fields.prompt !== undefined && typeof fields.prompt !== "string") return "prompt must be a string"
  if (fields.negativeTags !== undefined && typeof fields.negativeTags !== "string")
    return "negativeTags must be a string"
  if (fields.vocalGender !== undefined && fields.vocalGender !== "m" && fields.vocalGender !== "f")
    return "vocalGender must be m or f"
  for (const key of ["styleWeight", "weirdnessConstraint", "audioWeight"]) {
    if (fields[key] !== undefined && !isUnit(fields[key])) return `${key} must be a number from 0 to 1`
  }
  if (
    fields.callBackUrl !== undefined &&
    (typeof fields.callBackUrl !== "string" || !URL.canParse(fields.callBackUrl))
  ) {
    return "callBackUrl must be a URL"
  }
  return {
    title: fields.title,
    style: fields.style,
    prompt: typeof fields.prompt === "string" ? fields.prompt : "",
    model: fields.model,
    instrumental: fields.instrumental,
    callBackUrl: typeof fields.callBackUrl === "string" ? fields.callBackUrl : null
  }
}

/** What the fake knows of a track a song tool names, to check a request against. */
export interface KnownTrack {
  /** The generation (or extension) task that made it. */
  readonly taskId: string
  readonly model: string
  readonly duration: number
  /** The task is done: record-info shows its audio. */
  readonly ready: boolean
}

const EXTEND_KNOWN = new Set([
  "defaultParamFlag",
  "audioId",
  "model",
  "callBackUrl",
  "prompt",
  "style",
  "title",
  "continueAt",
  "personaId",
  "personaModel",
  "negativeTags",
  "vocalGender",
  "styleWeight",
  "weirdnessConstraint",
  "audioWeight"
])

const objectOf = (body: unknown): Record<string, unknown> | string =>
  typeof body !== "object" || body === null || Array.isArray(body)
    ? "body must be a JSON object"
    : (body as Record<string, unknown>)

const unknownField = (fields: Record<string, unknown>, known: ReadonlySet<string>): string | null => {
  const unknown = Object.keys(fields).find((key) => !known.has(key))
  return unknown === undefined ? null : `unknown field ${unknown}`
}

const callbackOf = (fields: Record<string, unknown>): string | null | undefined =>
  fields.callBackUrl === undefined
    ? null
    : typeof fields.callBackUrl === "string" && URL.canParse(fields.callBackUrl)
      ? fields.callBackUrl
      : undefined

/** A track the request names by `audioId`: known, and done. */
const trackOf = (
  fields: Record<string, unknown>,
  tracks: (audioId: string) => KnownTrack | undefined
): { readonly audioId: string; readonly track: KnownTrack } | string => {
  if (typeof fields.audioId !== "string" || fields.audioId === "") return "audioId is required"
  const track = tracks(fields.audioId)
  if (track === undefined) return "audioId does not exist"
  if (!track.ready) return "the audio is not generated yet"
  return { audioId: fields.audioId, track }
}

export interface ExtendRequest extends GenerateRequest {
  readonly audioId: string
  readonly continueAt: number
  /** `defaultParamFlag: false`: title, style and lyrics are the source's. */
  readonly inherit: boolean
}

/**
 * `POST /api/v1/generate/extend`. With `defaultParamFlag: true` prompt, style, title and
 * continueAt are required (continueAt inside the source: more than 0, less than its duration); with
 * false only audioId, the rest is the source's. The model must be the source's.
 */
export const validateExtend = (
  body: unknown,
  tracks: (audioId: string) => KnownTrack | undefined
): ExtendRequest | string => {
  const fields = objectOf(body)
  if (typeof fields === "string") return fields
  const unknown = unknownField(fields, EXTEND_KNOWN)
  if (unknown !== null) return unknown
  if (typeof fields.defaultParamFlag !== "boolean") return "defaultParamFlag must be a boolean"
  const source = trackOf(fields, tracks)
  if (typeof source === "string") return source
  if (typeof fields.model !== "string" || !MODELS.has(fields.model)) return "model is not supported"
  if (fields.model !== source.track.model) return "model must be the same as the source music's"
  const callBackUrl = callbackOf(fields)
  if (callBackUrl === undefined) return "callBackUrl must be a URL"
  if (!fields.defaultParamFlag) {
    return {
      audioId: source.audioId,
      continueAt: source.track.duration,
      inherit: true,
      title: "",
      style: "",
      prompt: "",
      model: fields.model,
      instrumental: false,
      callBackUrl
    }
  }
  if (typeof fields.prompt !== "string" || fields.prompt.trim() === "") return "prompt is required"
  if (typeof fields.style !== "string" || fields.style.length === 0) return "style is required"
  if (typeof fields.title !== "string" || fields.title.length === 0) return "title is required"
  if (fields.title.length > MAX_TITLE) return `title must be at most ${MAX_TITLE} characters`
  if (
    typeof fields.continueAt !== "number" ||
    !(fields.continueAt > 0) ||
    !(fields.continueAt < source.track.duration)
  ) {
    return "continueAt must be more than 0 and less than the audio's duration"
  }
  if (fields.negativeTags !== undefined && typeof fields.negativeTags !== "string")
    return "negativeTags must be a string"
  if (fields.vocalGender !== undefined && fields.vocalGender !== "m" && fields.vocalGender !== "f")
    return "vocalGender must be m or f"
  for (const key of ["styleWeight", "weirdnessConstraint", "audioWeight"]) {
    if (fields[key] !== undefined && !isUnit(fields[key])) return `${key} must be a number from 0 to 1`
  }
  return {
    audioId: source.audioId,
    continueAt: fields.continueAt,
    inherit: false,
    title: fields.title,
    style: fields.style,
    prompt: fields.prompt,
    model: fields.model,
    instrumental: false,
    callBackUrl
  }
}

/** A song tool's request on one track: the generation task and the track's audio id. */
export interface TrackToolRequest {
  readonly taskId: string
  readonly audioId: string
  readonly callBackUrl: string | null
  /** The vocal-removal `type`. */
  readonly type: "separate_vocal" | "split_stem"
}

/**
 * `POST /api/v1/wav/generate`, `/api/v1/vocal-removal/generate` and
 * `/api/v1/generate/get-timestamped-lyrics`: `taskId` and `audioId` of a finished track, the one
 * naming the other's task.
 */
export const validateTrackTool = (
  body: unknown,
  tracks: (audioId: string) => KnownTrack | undefined,
  kind: "wav" | "vocal-removal" | "timestamped-lyrics"
): TrackToolRequest | string => {
  const fields = objectOf(body)
  if (typeof fields === "string") return fields
  const known = new Set([
    "taskId",
    "audioId",
    ...(kind === "timestamped-lyrics" ? [] : ["callBackUrl"]),
    ...(kind === "vocal-removal" ? ["type"] : [])
  ])
  const unknown = unknownField(fields, known)
  if (unknown !== null) return unknown
  if (typeof fields.taskId !== "string" || fields.taskId === "") return "taskId is required"
  const source = trackOf(fields, tracks)
  if (typeof source === "string") return source
  if (source.track.taskId !== fields.taskId) return "audioId does not belong to taskId"
  const callBackUrl = callbackOf(fields)
  if (callBackUrl === undefined) return "callBackUrl must be a URL"
  const type = fields.type ?? "separate_vocal"
  if (type !== "separate_vocal" && type !== "split_stem") return "type must be separate_vocal or split_stem"
  return { taskId: fields.taskId, audioId: source.audioId, callBackUrl, type }
}

/** `POST /api/v1/midi/generate`: `taskId` of a finished separation, optionally one of its parts. */
export const validateMidi = (
  body: unknown,
  separations: (taskId: string) => { readonly ready: boolean; readonly partIds: ReadonlyArray<string> } | undefined
): { readonly taskId: string; readonly audioId: string | null; readonly callBackUrl: string | null } | string => {
  const fields = objectOf(body)
  if (typeof fields === "string") return fields
  const unknown = unknownField(fields, new Set(["taskId", "audioId", "callBackUrl"]))
  if (unknown !== null) return unknown
  if (typeof fields.taskId !== "string" || fields.taskId === "") return "taskId is required"
  const separation = separations(fields.taskId)
  if (separation === undefined) return "taskId is not a vocal separation task"
  if (!separation.ready) return "the vocal separation is not finished"
  if (
    fields.audioId !== undefined &&
    (typeof fields.audioId !== "string" || !separation.partIds.includes(fields.audioId))
  ) {
    return "audioId is not a part of this separation"
  }
  const callBackUrl = callbackOf(fields)
  if (callBackUrl === undefined) return "callBackUrl must be a URL"
  return { taskId: fields.taskId, audioId: typeof fields.audioId === "string" ? fields.audioId : null, callBackUrl }
}
