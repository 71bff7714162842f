/**
 * The user's settings: a JSON file in the user's config directory, readable by its owner only,
 * overridden by `LYRE_API_KEY` / `LYRE_BASE_URL`, which the `--api-key` / `--base-url` flags
 * override in turn.
 */
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import envPaths from "env-paths"
import { DEFAULT_BASE_URL } from "@lyre/client"
import { CliError } from "./errors.ts"

export interface ConfigFile {
  readonly api_key?: string
  readonly base_url?: string
}

export type Source = "flag" | "environment" | "config file" | "default"

export interface Settings {
  readonly apiKey: { readonly value: string; readonly source: Source } | undefined
  readonly baseUrl: { readonly value: string; readonly source: Source }
}

/** `$XDG_CONFIG_HOME/lyre/config.json` or `~/.config/lyre/config.json` on Linux; the platform's place elsewhere. */
export const configPath = (): string => join(envPaths("lyre", { suffix: "" }).config, "config.json")

export const readConfig = (path: string = configPath()): ConfigFile => {
  let text: string
  try {
    text = readFileSync(path, "utf8")
  } catch (cause) {
    if (cause instanceof Error && "code" in cause && cause.code === "ENOENT") return {}
    throw new CliError(`Cannot read ${path}: ${cause instanceof Error ? cause.message : String(cause)}`)
  }
  const parsed: unknown = (() => {
    try {
      return JSON.parse(text)
    } catch {
      return undefined
    }
  })()
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new CliError(`${path} is not a JSON object; fix it or run \`lyre config clear\`.`)
  }
  const file: Record<string, unknown> = { ...parsed }
  return {
    ...(typeof file["api_key"] === "string" ? { api_key: file["api_key"] } : {}),
    ...(typeof file["base_url"] === "string" ? { base_url: file["base_url"] } : {})
  }
}

/** Writes the file with mode 0600 (and its directory 0700), also when it existed with a wider mode. */
export const writeConfig = (config: ConfigFile, path: string = configPath()): void => {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 })
  chmodSync(path, 0o600)
}

export const clearConfig = (path: string = configPath()): boolean => {
  try {
    rmSync(path)
    return true
  } catch (cause) {
    if (cause instanceof Error && "code" in cause && cause.code === "ENOENT") return false
    throw cause
  }
}

/** A base URL must be http(s); it may name the site root or the API root (`.../api`). */
export const checkBaseUrl = (value: string): string => {
  const trimmed = value.trim()
  let url: URL
  try {
    url = new URL(trimmed)
  } catch {
    throw new CliError(`Not a URL: ${value}`)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new CliError(`The base URL must be http or https: ${value}`)
  return trimmed.replace(/\/+$/, "")
}

const pick = (
  flag: string | undefined,
  environment: string | undefined,
  file: string | undefined
): { readonly value: string; readonly source: Source } | undefined => {
  if (flag !== undefined && flag !== "") return { value: flag, source: "flag" }
  if (environment !== undefined && environment !== "") return { value: environment, source: "environment" }
  if (file !== undefined && file !== "") return { value: file, source: "config file" }
  return undefined
}

export const resolveSettings = (
  flags: { readonly apiKey?: string | undefined; readonly baseUrl?: string | undefined },
  environment: NodeJS.ProcessEnv,
  file: ConfigFile
): Settings => ({
  apiKey: pick(flags.apiKey, environment["LYRE_API_KEY"], file.api_key),
  baseUrl: pick(flags.baseUrl, environment["LYRE_BASE_URL"], file.base_url) ?? {
    value: DEFAULT_BASE_URL,
    source: "default"
  }
})

/** `lyr_live_AbCd…wXyZ`: enough to tell keys apart, never enough to use one. */
export const maskKey = (key: string): string => {
  const prefix = key.startsWith("lyr_live_") ? "lyr_live_" : ""
  const secret = key.slice(prefix.length)
  if (secret.length <= 8) return `${prefix}${"*".repeat(secret.length)}`
  return `${prefix}${secret.slice(0, 4)}…${secret.slice(-4)}`
}
