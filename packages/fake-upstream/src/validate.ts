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
  "customMode", "instrumental", "model", "style", "title", "prompt", "negativeTags", "vocalGender",
  "styleWeight", "weirdnessConstraint", "audioWeight", "callBackUrl"
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
  if (fields.negativeTags !== undefined && typeof fields.negativeTags !== "string") return "negativeTags must be a string"
  if (fields.vocalGender !== undefined && fields.vocalGender !== "m" && fields.vocalGender !== "f") return "vocalGender must be m or f"
  for (const key of ["styleWeight", "weirdnessConstraint", "audioWeight"]) {
    if (fields[key] !== undefined && !isUnit(fields[key])) return `${key} must be a number from 0 to 1`
  }
  if (fields.callBackUrl !== undefined && (typeof fields.callBackUrl !== "string" || !URL.canParse(fields.callBackUrl))) {
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
