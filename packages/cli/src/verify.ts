/**
 * `lyre verify FILE`: a file's content credentials (C2PA), read and validated here by c2pa-rs
 * through the client library, with no call to the service. It prints the manifest chain (what
 * made the file, from what, when, signed by whom) and whether it is valid; it exits 1 when the
 * manifest is invalid or missing. A sidecar `FILE.c2pa` beside the file is read for formats
 * with no place for a manifest (MIDI, zips).
 */
import { existsSync, readFileSync } from "node:fs"
import type { Command } from "commander"
import { readContentCredentials } from "@lyre/client"
import type { ContentCredentialsReport } from "@lyre/client"
import { examples } from "./context.ts"
import type { CommandContext } from "./context.ts"
import { CliError } from "./errors.ts"

const readFile = (path: string, param: string): Buffer => {
  try {
    return readFileSync(path)
  } catch (cause) {
    throw new CliError(`Cannot read ${path}: ${cause instanceof Error ? cause.message : String(cause)}`, { param })
  }
}

/** The report as lines: the verdict, then each manifest of the chain. */
export const formatCredentials = (file: string, report: ContentCredentialsReport): string => {
  const lines = [`${file}: ${report.state}`]
  report.manifests.forEach((manifest, depth) => {
    const indent = "  ".repeat(depth + 1)
    lines.push(`${indent}${depth === 0 ? "manifest" : "ingredient's manifest"} ${manifest.label}`)
    if (manifest.title !== null) lines.push(`${indent}  title      ${manifest.title}`)
    if (manifest.claimGenerator !== null) lines.push(`${indent}  made with  ${manifest.claimGenerator}`)
    for (const action of manifest.actions) {
      const detail = [action.softwareAgent, action.digitalSourceType?.replace(/^.*\//, ""), action.description]
        .filter((part) => part !== null && part !== undefined)
        .join(", ")
      const when = action.when === null ? "" : ` at ${action.when}`
      lines.push(`${indent}  action     ${action.action}${detail === "" ? "" : ` (${detail})`}${when}`)
    }
    for (const ingredient of manifest.ingredients) {
      lines.push(`${indent}  from       ${ingredient.title} (${ingredient.relationship})`)
    }
    lines.push(
      `${indent}  signed by  ${manifest.signedBy ?? "unknown"}${manifest.signedAt === null ? "" : ` at ${manifest.signedAt}`}`
    )
  })
  for (const failure of report.failures) {
    lines.push(`  ${failure.code}${failure.explanation === null ? "" : `: ${failure.explanation}`}`)
  }
  return `${lines.join("\n")}\n`
}

export const addVerifyCommand = (program: Command, context: Pick<CommandContext, "globals" | "write">): void => {
  program
    .command("verify")
    .description(
      "Read a file's content credentials (C2PA) and check them; exits 1 when they are invalid or missing. No API key needed."
    )
    .argument("<file>", "an MP3 or WAV (manifest inside), or a MIDI file or zip with FILE.c2pa beside it")
    .option("--sidecar <path>", "the sidecar manifest, when not FILE.c2pa")
    .option("--trust <pem>", "a PEM file of trust anchors (the operator's CA): a chain under one reads Trusted")
    .addHelpText(
      "after",
      examples("lyre verify song.mp3", "lyre verify track.mid", "lyre verify song.wav --output json")
    )
    .action(async (file: string, flags: { sidecar?: string; trust?: string }, command: Command) => {
      const options = context.globals(command)
      const bytes = readFile(file, "file")
      const sidecarPath = flags.sidecar ?? (existsSync(`${file}.c2pa`) ? `${file}.c2pa` : undefined)
      const report = await readContentCredentials(bytes, {
        name: file,
        ...(sidecarPath === undefined ? {} : { sidecar: readFile(sidecarPath, "sidecar") }),
        ...(flags.trust === undefined ? {} : { trustAnchors: readFile(flags.trust, "trust").toString("utf8") })
      })
      context.write(options, { file, ...report }, formatCredentials(file, report))
      if (report.state === "Missing") throw new CliError(`${file} carries no content credentials.`, { param: "file" })
      if (report.state === "Invalid")
        throw new CliError(`${file}'s content credentials are invalid.`, { param: "file" })
    })
}
