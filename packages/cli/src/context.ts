/**
 * What every command shares, handed from createProgram to the modules that add commands: the
 * process's streams, the global flags, the client, output, progress, following a task.
 */
import type { Command } from "commander"
import type { GenerationTask, LyreClient } from "@lyre/client"
import type { Display } from "./display.ts"
import type { OutputFormat } from "./format.ts"
import type { Flags } from "./requestFlags.ts"

export interface Io {
  readonly env: NodeJS.ProcessEnv
  readonly stdout: NodeJS.WriteStream
  readonly stderr: NodeJS.WriteStream
  readonly stdin: NodeJS.ReadStream
}

export interface GlobalOptions {
  readonly apiKey?: string
  readonly baseUrl?: string
  readonly output: OutputFormat
}

/** The `Examples:` block at the end of a command's help. */
export const examples = (...lines: ReadonlyArray<string>): string =>
  `\nExamples:\n${lines.map((l) => `  $ ${l}`).join("\n")}\n`

export interface CommandContext {
  readonly io: Io
  readonly globals: (command: Command) => GlobalOptions
  /** The result on standard output: the API's object with `--output json`, else the table. */
  readonly write: (options: GlobalOptions, value: unknown, table: string) => void
  readonly displayOf: (options: GlobalOptions) => Display
  readonly clientOf: (options: GlobalOptions, display: Display) => LyreClient
  /** Polls with live progress until `wait` answers; a failed task, export or upload is reported. */
  readonly follow: <A extends { readonly status: string; readonly error: { readonly message: string } | null }>(
    id: string,
    display: Display,
    wait: () => Promise<A>
  ) => Promise<A>
  /**
   * Prints a created task, or with `--wait`/`--download`/`--play` follows it (printing its stream
   * address once it can be heard, played with `playing`) and saves its songs; a failed one exits 2.
   */
  readonly finishCreated: (
    options: GlobalOptions,
    client: LyreClient,
    display: Display,
    created: GenerationTask,
    /** `--wait`, `--download DIR` and `--play`, as the command was given them. */
    flags: Flags
  ) => Promise<void>
  /** The lyrics from `--lyrics`, `--lyrics-file` or standard input (`-`), given at most once. */
  readonly lyricsOf: (stdinMarker: string | undefined, flags: Flags) => Promise<string | undefined>
}
