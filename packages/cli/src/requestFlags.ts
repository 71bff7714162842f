/**
 * The GenerateRequest fields as flags, shared by every command that makes songs (generate,
 * extend, cover, vocals, accompany, edit): one spelling, one translation into the body. The
 * body is then checked with the server's own schema (validate.ts), so no rule is restated here.
 */
import { Option } from "commander"
import type { Command } from "commander"

export type Flags = Record<string, string | boolean | undefined>

/** A GenerateRequest field the flags can give (`style` and `lyrics` are each command's own). */
export type RequestFlag =
  | "title"
  | "instrumental"
  | "model"
  | "vocalGender"
  | "negativeTags"
  | "styleWeight"
  | "weirdnessConstraint"
  | "audioWeight"
  | "persona"

/**
 * Adds the flags named, in the order of `generate --help`. `fromTrack`: a task on a track, whose
 * absent fields are the track's rather than the service's defaults.
 */
export const addRequestFlags = (command: Command, names: ReadonlyArray<RequestFlag>, fromTrack: boolean): Command => {
  const has = (name: RequestFlag) => names.includes(name)
  if (has("title"))
    command.option(
      "--title <text>",
      fromTrack ? "a new title (default: the track's)" : "song title (1 to 200 characters)"
    )
  if (has("instrumental"))
    command.option("--instrumental", fromTrack ? "no vocals in the new song" : "no vocals; no lyrics needed")
  if (has("model")) {
    command.addOption(
      new Option(
        "--model <model>",
        `aether (50 credits), echo (100) or nocturne (180${fromTrack ? "" : ", deprecated"}); default ${fromTrack ? "the track's" : "aether"}`
      )
    )
  }
  if (has("vocalGender")) command.addOption(new Option("--vocal-gender <m|f>", "voice register (aether only)"))
  if (has("negativeTags")) command.option("--negative-tags <text>", "what to avoid (aether only)")
  if (has("styleWeight")) command.option("--style-weight <0..1>", "aether only")
  if (has("weirdnessConstraint")) command.option("--weirdness-constraint <0..1>", "aether only")
  if (has("audioWeight")) {
    command.option(
      "--audio-weight <0..1>",
      fromTrack ? "how closely to follow the track: 1 its rhythm, 0 the new style's (aether only)" : "aether only"
    )
  }
  if (has("persona"))
    command.option(
      "--persona <id>",
      "a persona of this account, per_... (lyre personas list): its voice and palette (aether only)"
    )
  return command
}

/** A flag's number as JSON would carry it; anything else stays a string for the schema to refuse in the server's words. */
export const numberish = (value: string | undefined): number | string | undefined => {
  if (value === undefined) return undefined
  const n = Number(value)
  return value.trim() !== "" && Number.isFinite(n) ? n : value
}

/** The body the flags give: only the fields given, named as the API names them. */
export const requestFields = (flags: Flags, lyrics: string | undefined): Record<string, unknown> => {
  const text = (name: string) => (typeof flags[name] === "string" ? flags[name] : undefined)
  const fields: ReadonlyArray<readonly [string, unknown]> = [
    ["style", text("style")],
    ["title", text("title")],
    ["lyrics", lyrics],
    ["instrumental", flags["instrumental"] === true ? true : undefined],
    ["model", text("model")],
    ["vocal_gender", text("vocalGender")],
    ["negative_tags", text("negativeTags")],
    ["style_weight", numberish(text("styleWeight"))],
    ["weirdness_constraint", numberish(text("weirdnessConstraint"))],
    ["audio_weight", numberish(text("audioWeight"))],
    ["persona_id", text("persona")]
  ]
  return Object.fromEntries(fields.filter(([, value]) => value !== undefined))
}
