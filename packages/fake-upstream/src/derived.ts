/**
 * The upstream's endpoints that make a song from another (DESIGN.md section 11), as their public
 * documentation describes them: `upload-cover` and `upload-extend` (the source as `uploadUrl`),
 * `add-vocals`, `add-instrumental`, `replace-section` (a track the upstream made, by `taskId` and
 * `audioId`) and `generate-persona`. Each check answers the request the fake keeps or the message
 * of a code 400, strict enough that a malformed request from our adapter fails a test.
 */
import type { GenerateRequest, KnownTrack } from "./validate.ts"

/** The creating endpoints of section 11, as the fake records them. */
export type DerivedEndpoint = "upload-cover" | "upload-extend" | "add-vocals" | "add-instrumental" | "replace-section"

export interface DerivedRequest extends GenerateRequest {
  /** The address the upstream fetches the source from, when the endpoint takes one. */
  readonly uploadUrl: string | null
  /** How long the made song runs, as the fake reports it. */
  readonly baseDuration: number
}

const MODELS = new Set(["V4", "V4_5", "V4_5PLUS", "V4_5ALL", "V5"])
const TUNING = ["negativeTags", "vocalGender", "styleWeight", "weirdnessConstraint", "audioWeight"] as const
const MAX_TITLE = 80

type Fields = Record<string, unknown>

const text = (fields: Fields, key: string): string | null =>
  typeof fields[key] === "string" && (fields[key] as string).trim() !== "" ? (fields[key] as string) : null

const tuningProblem = (fields: Fields): string | null => {
  if (fields.negativeTags !== undefined && typeof fields.negativeTags !== "string")
    return "negativeTags must be a string"
  if (fields.vocalGender !== undefined && fields.vocalGender !== "m" && fields.vocalGender !== "f")
    return "vocalGender must be m or f"
  for (const key of ["styleWeight", "weirdnessConstraint", "audioWeight"]) {
    const value = fields[key]
    if (value !== undefined && !(typeof value === "number" && value >= 0 && value <= 1))
      return `${key} must be a number from 0 to 1`
  }
  return null
}

const callbackOf = (fields: Fields): string | null | undefined =>
  fields.callBackUrl === undefined
    ? null
    : typeof fields.callBackUrl === "string" && URL.canParse(fields.callBackUrl)
      ? fields.callBackUrl
      : undefined

const known = (endpoint: DerivedEndpoint): ReadonlySet<string> => {
  const common = ["callBackUrl", ...TUNING]
  switch (endpoint) {
    case "upload-cover":
      return new Set([
        ...common,
        "uploadUrl",
        "customMode",
        "instrumental",
        "model",
        "style",
        "title",
        "prompt",
        "personaId",
        "personaModel"
      ])
    case "upload-extend":
      return new Set([
        ...common,
        "uploadUrl",
        "defaultParamFlag",
        "instrumental",
        "model",
        "style",
        "title",
        "prompt",
        "continueAt",
        "personaId",
        "personaModel"
      ])
    case "add-vocals":
      return new Set([...common, "uploadUrl", "prompt", "title", "style", "model"])
    case "add-instrumental":
      return new Set([...common, "uploadUrl", "title", "tags", "model"])
    case "replace-section":
      return new Set([
        "taskId",
        "audioId",
        "prompt",
        "tags",
        "title",
        "negativeTags",
        "infillStartS",
        "infillEndS",
        "fullLyrics",
        "callBackUrl",
        "uploadUrl",
        "model"
      ])
  }
}

/** The checks of one endpoint. `tracks` names what the fake made, for `replace-section`. */
export const validateDerived = (
  endpoint: DerivedEndpoint,
  body: unknown,
  tracks: (audioId: string) => KnownTrack | undefined
): DerivedRequest | string => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return "body must be a JSON object"
  const fields = body as Fields
  const unknown = Object.keys(fields).find((key) => !known(endpoint).has(key))
  if (unknown !== undefined) return `unknown field ${unknown}`
  const problem = tuningProblem(fields)
  if (problem !== null) return problem
  const callBackUrl = callbackOf(fields)
  if (callBackUrl === undefined) return "callBackUrl must be a URL"
  const title = text(fields, "title")
  if (title === null) return "title is required"
  if (title.length > MAX_TITLE) return `title must be at most ${MAX_TITLE} characters`
  const uploadUrl = text(fields, "uploadUrl")
  if (endpoint !== "replace-section" && (uploadUrl === null || !URL.canParse(uploadUrl))) return "uploadUrl is required"
  if (fields.model !== undefined && (typeof fields.model !== "string" || !MODELS.has(fields.model)))
    return "model is not supported"
  const model = typeof fields.model === "string" ? fields.model : "V4_5PLUS"
  const made = (style: string, prompt: string, instrumental: boolean, baseDuration: number): DerivedRequest => ({
    title,
    style,
    prompt,
    model,
    instrumental,
    callBackUrl,
    uploadUrl,
    baseDuration
  })
  switch (endpoint) {
    case "upload-cover":
    case "upload-extend": {
      const custom = endpoint === "upload-cover" ? fields.customMode : fields.defaultParamFlag
      if (custom !== true) return `${endpoint === "upload-cover" ? "customMode" : "defaultParamFlag"} must be true`
      if (typeof fields.instrumental !== "boolean") return "instrumental must be a boolean"
      if (typeof fields.model !== "string") return "model is required"
      const style = text(fields, "style")
      if (style === null) return "style is required"
      const prompt = text(fields, "prompt")
      if (!fields.instrumental && prompt === null) return "prompt is required when instrumental is false"
      if (fields.personaId !== undefined && typeof fields.personaId !== "string") return "personaId must be a string"
      if (endpoint === "upload-extend" && !(typeof fields.continueAt === "number" && fields.continueAt > 0))
        return "continueAt must be more than 0"
      const continueAt = typeof fields.continueAt === "number" ? fields.continueAt : 0
      return made(style, prompt ?? "", fields.instrumental, endpoint === "upload-extend" ? continueAt + 60 : 120)
    }
    case "add-vocals": {
      const prompt = text(fields, "prompt")
      const style = text(fields, "style")
      if (prompt === null) return "prompt is required"
      if (style === null) return "style is required"
      if (typeof fields.negativeTags !== "string") return "negativeTags is required"
      return made(style, prompt, false, 120)
    }
    case "add-instrumental": {
      const tags = text(fields, "tags")
      if (tags === null) return "tags is required"
      if (typeof fields.negativeTags !== "string") return "negativeTags is required"
      return made(tags, "", false, 120)
    }
    case "replace-section": {
      if (typeof fields.taskId !== "string" || typeof fields.audioId !== "string")
        return "taskId and audioId are required"
      const track = tracks(fields.audioId)
      if (track === undefined) return "audioId does not exist"
      if (!track.ready) return "the audio is not generated yet"
      if (track.taskId !== fields.taskId) return "audioId does not belong to taskId"
      const prompt = text(fields, "prompt")
      const tags = text(fields, "tags")
      if (prompt === null) return "prompt is required"
      if (tags === null) return "tags is required"
      if (typeof fields.fullLyrics !== "string") return "fullLyrics is required"
      const start = fields.infillStartS
      const end = fields.infillEndS
      if (typeof start !== "number" || typeof end !== "number" || !(start >= 0) || !(end > start))
        return "infillStartS must be less than infillEndS"
      if (end - start < 6 || end - start > 60) return "the section must be 6 to 60 seconds long"
      if (end > track.duration) return "infillEndS must be within the audio"
      return { ...made(tags, prompt, false, track.duration), model: track.model }
    }
  }
}

/** `POST /api/v1/generate/generate-persona`: a finished track by `taskId` and `audioId`, a name and a description. */
export const validatePersona = (
  body: unknown,
  tracks: (audioId: string) => KnownTrack | undefined
): { readonly audioId: string; readonly name: string; readonly description: string } | string => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return "body must be a JSON object"
  const fields = body as Fields
  const unknown = Object.keys(fields).find(
    (key) => !["taskId", "audioId", "name", "description", "vocalStart", "vocalEnd", "style"].includes(key)
  )
  if (unknown !== undefined) return `unknown field ${unknown}`
  if (typeof fields.taskId !== "string" || typeof fields.audioId !== "string") return "taskId and audioId are required"
  const track = tracks(fields.audioId)
  if (track === undefined) return "audioId does not exist"
  if (!track.ready) return "the music is still being generated"
  if (track.taskId !== fields.taskId) return "audioId does not belong to taskId"
  const name = text(fields, "name")
  const description = text(fields, "description")
  if (name === null) return "name is required"
  if (description === null) return "description is required"
  return { audioId: fields.audioId, name, description }
}
