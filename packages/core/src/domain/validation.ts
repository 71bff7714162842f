/**
 * Turns schema issues into the interface's 400 codes: an unknown property, a missing one, a bad
 * value, or a parameter the chosen model does not take. The first issue wins, and `param`
 * always names the field at fault.
 */
import { Predicate } from "effect"
import { InvalidParameter, MissingParameter, ParameterNotSupportedForModel, UnknownParameter } from "./errors.ts"
import { GenerateRequest } from "./models.ts"

export interface SchemaIssue {
  readonly code: string
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
  readonly keys?: ReadonlyArray<string>
  readonly params?: Readonly<Record<string, unknown>>
}

export type RequestValidationError =
  | MissingParameter
  | InvalidParameter
  | UnknownParameter
  | ParameterNotSupportedForModel

export const validationErrorFrom = (issues: ReadonlyArray<SchemaIssue>, rawInput: unknown): RequestValidationError => {
  // Unknown properties first: a misspelt field is the likeliest cause of every other issue.
  const unknown = issues.find((issue) => issue.code === "unrecognized_keys")
  if (unknown !== undefined) {
    const name = [...unknown.path.map(String), unknown.keys?.[0] ?? ""].filter((s) => s !== "").join(".")
    return new UnknownParameter({ message: `Unknown parameter: ${name}.`, param: name })
  }
  const issue = issues[0]
  if (issue === undefined) return new InvalidParameter({ message: "The request is invalid." })
  if (issue.path.length === 0) {
    return new InvalidParameter({ message: "The request body must be a JSON object." })
  }
  const param = issue.path.map(String).join(".")
  const lyreCode = issue.params?.["lyre"]
  if (lyreCode === "parameter_not_supported_for_model") {
    return new ParameterNotSupportedForModel({ message: issue.message, param })
  }
  const top = String(issue.path[0])
  const absent =
    lyreCode === "missing_parameter" ||
    (issue.path.length === 1 &&
      (issue.code === "invalid_type" || issue.code === "invalid_value") &&
      (!Predicate.isObject(rawInput) || !(top in rawInput)))
  if (absent) return new MissingParameter({ message: `Missing required parameter: ${param}.`, param })
  const detail = lyreCode === undefined ? `${param}: ${issue.message}` : issue.message
  return new InvalidParameter({ message: detail, param })
}

/** A create request checked as the service checks it: the value with its defaults, or the 400 it would answer. */
export const validateGenerateRequest = (
  input: unknown
):
  | { readonly ok: true; readonly value: GenerateRequest }
  | { readonly ok: false; readonly error: RequestValidationError } => {
  const parsed = GenerateRequest.safeParse(input)
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, error: validationErrorFrom(parsed.error.issues, input) }
}
