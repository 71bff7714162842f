/**
 * The `lyre` commands on commander. Results go to standard output (`--output table|json`),
 * progress and errors to standard error; exit 0 on success, 2 when the task (or export) failed,
 * 1 otherwise.
 */
import { readFileSync } from "node:fs"
import { Command, CommanderError, Option } from "commander"
import { LyreApiError, LyreClient, LyreConnectionError, apiRootOf } from "@lyre/client"
import type { Export, ExportFormat, GenerationTask, LyricsRequest } from "@lyre/client"
import { checkBaseUrl, clearConfig, configPath, maskKey, readConfig, resolveSettings, writeConfig } from "./config.ts"
import { displayFor } from "./display.ts"
import type { Display } from "./display.ts"
import { saveExportFiles, saveTracks } from "./download.ts"
import { CliError, exitCodes, TaskFailed } from "./errors.ts"
import {
  formatAccount,
  formatExport,
  formatList,
  formatLyricLines,
  formatLyricsTask,
  formatTask,
  json
} from "./format.ts"
import { examples } from "./context.ts"
import { listenerFor, playHelp } from "./listen.ts"
import type { Listener } from "./listen.ts"
import type { GlobalOptions, Io } from "./context.ts"
import { addOwnAudioCommands } from "./ownAudio.ts"
import { addVerifyCommand } from "./verify.ts"
import { pageOf, withPaging } from "./paging.ts"
import { addRequestFlags, numberish, requestFields } from "./requestFlags.ts"
import type { Flags } from "./requestFlags.ts"

export const version = "0.1.0"
export type { Io } from "./context.ts"

const readStdin = async (stdin: NodeJS.ReadStream): Promise<string> => {
  if (stdin.isTTY)
    throw new CliError("Standard input is a terminal: pipe the text in (for example `lyre ... - < lyrics.txt`).")
  const chunks: Array<Buffer> = []
  for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)))
  return Buffer.concat(chunks).toString("utf8")
}

const readTextFile = (path: string, param: string): string => {
  try {
    return readFileSync(path, "utf8")
  } catch (cause) {
    throw new CliError(`Cannot read ${path}: ${cause instanceof Error ? cause.message : String(cause)}`, { param })
  }
}

const seconds = (ms: number): string => `${Math.floor(ms / 1000)}s`

export const createProgram = (io: Io): Command => {
  const program = new Command()
    .name("lyre")
    .description("The command-line client of the Lyre music generation API.")
    .version(version)
    .addOption(new Option("--api-key <key>", "API key (overrides LYRE_API_KEY and the config file)"))
    .addOption(
      new Option(
        "--base-url <url>",
        "site root or API root, e.g. http://127.0.0.1:8080 or .../api (overrides LYRE_BASE_URL and the config file)"
      )
    )
    .addOption(new Option("-o, --output <format>", "result format").choices(["table", "json"]).default("table"))
    .showHelpAfterError()
    // Help, --version and a usage error end `run` with commander's exit code rather than
    // exiting the process, so that `run` can be called in a process that goes on (the tests).
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .addHelpText(
      "after",
      examples(
        "lyre config set-key lyr_live_...",
        "lyre generate --style 'lofi hip hop, mellow' --title 'Rain' --lyrics-file rain.txt --wait --download songs/",
        "lyre list --limit 5 --output json",
        "lyre export trk_... --format stems --download songs/",
        "lyre lyrics 'a harbour town at dusk' --sections Verse,Chorus",
        "lyre lyrics trk_... --lrc",
        "lyre upload demo.wav --wait",
        "lyre cover trk_... --style 'bossa nova' --download songs/"
      ) +
        "\nSettings: --api-key/--base-url win over LYRE_API_KEY/LYRE_BASE_URL, which win over the config file" +
        ` (${configPath()}).\nExit codes: 0 success, 2 the generation, export or upload failed, 1 any other error.\n`
    )

  const globals = (command: Command): GlobalOptions => command.optsWithGlobals<GlobalOptions>()

  const write = (options: GlobalOptions, value: unknown, table: string): void => {
    io.stdout.write(options.output === "json" ? json(value) : table)
  }

  const displayOf = (options: GlobalOptions): Display => displayFor(io.stderr, io.stdout, options.output === "json")

  const clientOf = (options: GlobalOptions, display: Display): LyreClient => {
    const settings = resolveSettings(options, io.env, readConfig())
    if (settings.apiKey === undefined) {
      throw new CliError("No API key: run `lyre config set-key`, set LYRE_API_KEY or pass --api-key.")
    }
    return new LyreClient({
      apiKey: settings.apiKey.value,
      baseUrl: checkBaseUrl(settings.baseUrl.value),
      userAgent: `lyre-cli/${version}`,
      maxRetries: 4,
      maxRetryAfterSeconds: 120,
      onRetry: ({ delayMs, error }) => {
        const why = error instanceof LyreApiError ? `${error.message} (${error.code})` : error.message
        display.note(`${why}; retrying in ${Math.ceil(delayMs / 1000)} s`)
      }
    })
  }

  /** Polls with live progress until `wait` answers; a failed task or export is reported. */
  const follow = async <A extends { readonly status: string; readonly error: { readonly message: string } | null }>(
    id: string,
    display: Display,
    wait: () => Promise<A>
  ): Promise<A> => {
    const started = Date.now()
    // On a terminal the elapsed time moves every second; plain output gets a line every 15 s.
    const show = () => {
      const elapsed = Date.now() - started
      display.progress(`${id}  pending  ${seconds(elapsed)}`, `pending ${Math.floor(elapsed / 15_000)}`)
    }
    show()
    const ticker = setInterval(show, 1_000)
    try {
      const settled = await wait()
      const elapsed = seconds(Date.now() - started)
      if (settled.status === "failed")
        display.fail(`${id}  failed after ${elapsed}: ${settled.error?.message ?? "unknown error"}`)
      else display.succeed(`${id}  ready in ${elapsed}`)
      return settled
    } finally {
      clearInterval(ticker)
    }
  }

  /** A failed task ends the command with exit 2. The listener is told each poll's task (its previews). */
  const waitFor = (client: LyreClient, id: string, display: Display, listener?: Listener): Promise<GenerationTask> =>
    follow(id, display, () =>
      client.waitForGeneration(id, {
        intervalMs: 1_000,
        ...(listener === undefined ? {} : { onProgress: ({ task }) => listener.heard(task) })
      })
    )

  const waitForExport = (client: LyreClient, found: Export, display: Display): Promise<Export> =>
    found.status === "pending"
      ? follow(found.id, display, () => client.waitForExport(found.id, { intervalMs: 1_000 }))
      : Promise.resolve(found)

  const failedExport = (found: Export): TaskFailed =>
    new TaskFailed(
      `Export ${found.id} failed: ${found.error?.message ?? "unknown error"}` +
        (found.error === null ? "" : ` (${found.error.code})`) +
        (found.credits_refunded > 0 ? `; ${found.credits_refunded} credits refunded.` : ".")
    )

  /** The lyrics from `--lyrics`, `--lyrics-file` or standard input (`-`), given at most once. */
  const lyricsOf = async (
    stdinMarker: string | undefined,
    flags: Record<string, string | boolean | undefined>
  ): Promise<string | undefined> => {
    if (stdinMarker !== undefined && stdinMarker !== "-") {
      throw new CliError(
        `Unexpected argument ${stdinMarker}: give the lyrics with --lyrics, --lyrics-file or - (standard input).`,
        { param: "lyrics" }
      )
    }
    const sources = [flags["lyrics"], flags["lyricsFile"], stdinMarker].filter((s) => s !== undefined)
    if (sources.length > 1)
      throw new CliError("Give the lyrics once: --lyrics, --lyrics-file or - (standard input).", { param: "lyrics" })
    const lyricsFlag = typeof flags["lyrics"] === "string" ? flags["lyrics"] : undefined
    const lyricsFile = typeof flags["lyricsFile"] === "string" ? flags["lyricsFile"] : undefined
    return stdinMarker === "-" || lyricsFlag === "-" || lyricsFile === "-"
      ? await readStdin(io.stdin)
      : lyricsFile !== undefined
        ? readTextFile(lyricsFile, "lyrics")
        : lyricsFlag
  }

  const failedTask = (task: GenerationTask): TaskFailed =>
    new TaskFailed(
      `Generation ${task.id} failed: ${task.error?.message ?? "unknown error"}` +
        (task.error === null ? "" : ` (${task.error.code})`) +
        (task.credits_refunded > 0 ? `; ${task.credits_refunded} credits refunded.` : ".")
    )

  const download = async (client: LyreClient, task: GenerationTask, directory: string, display: Display) => {
    const saved = await saveTracks(client, task.id, task.tracks, directory, display)
    display.succeed(`Saved ${saved.length} files to ${directory}`)
    return saved
  }

  /**
   * After a generation or an extension is created: print the pending task, or with `--wait` or
   * `--download` follow it to the end, saving its files; a failed task exits with its error.
   */
  const finishCreated = async (
    options: GlobalOptions,
    client: LyreClient,
    display: Display,
    created: GenerationTask,
    flags: Flags
  ): Promise<void> => {
    const directory = typeof flags["download"] === "string" ? flags["download"] : undefined
    const playing = flags["play"] === true
    if (flags["wait"] !== true && directory === undefined && !playing) {
      write(options, created, formatTask(created))
      return
    }
    const listener = listenerFor(display, io.env, playing)
    const task = await waitFor(client, created.id, display, listener)
    if (task.status === "failed") {
      write(options, task, formatTask(task))
      throw failedTask(task)
    }
    if (directory !== undefined) await download(client, task, directory, display)
    write(options, task, formatTask(task))
    await listener.finish(task)
  }

  // config ---------------------------------------------------------------------------------
  const config = program
    .command("config")
    .description("Store the API key and base URL in the user's config file (mode 0600).")
    .addHelpText(
      "after",
      examples(
        "lyre config set-key lyr_live_...",
        "echo $KEY | lyre config set-key",
        "lyre config set-base-url https://lyre.example",
        "lyre config show"
      )
    )

  config
    .command("set-key")
    .description(
      "Save the API key; without an argument it is read from standard input (keeps it out of shell history)."
    )
    .argument("[key]", "the API key, lyr_live_...")
    .addHelpText("after", examples("lyre config set-key lyr_live_...", "lyre config set-key < key.txt"))
    .action(async (key: string | undefined) => {
      const value = (key ?? (await readStdin(io.stdin))).trim()
      if (value === "") throw new CliError("The API key is empty.")
      writeConfig({ ...readConfig(), api_key: value })
      io.stderr.write(`Saved the API key ${maskKey(value)} to ${configPath()}\n`)
    })

  config
    .command("set-base-url")
    .description("Save the base URL: the site root (http://host:8080) or the API root (.../api); both work.")
    .argument("<url>")
    .addHelpText(
      "after",
      examples("lyre config set-base-url https://lyre.example", "lyre config set-base-url http://127.0.0.1:8080/api")
    )
    .action((url: string) => {
      const value = checkBaseUrl(url)
      writeConfig({ ...readConfig(), base_url: value })
      io.stderr.write(`Saved the base URL ${value} (API root ${apiRootOf(value)}) to ${configPath()}\n`)
    })

  config
    .command("show")
    .description("Show the settings in force and where each comes from; the key is masked.")
    .addHelpText(
      "after",
      examples("lyre config show", "LYRE_BASE_URL=http://localhost:9000 lyre config show --output json")
    )
    .action((_options: unknown, command: Command) => {
      const options = globals(command)
      const settings = resolveSettings(options, io.env, readConfig())
      const key = settings.apiKey === undefined ? null : maskKey(settings.apiKey.value)
      const value = {
        config_file: configPath(),
        api_key: key,
        api_key_source: settings.apiKey?.source ?? null,
        base_url: settings.baseUrl.value,
        base_url_source: settings.baseUrl.source,
        api_root: apiRootOf(checkBaseUrl(settings.baseUrl.value))
      }
      write(
        options,
        value,
        `config file  ${value.config_file}\n` +
          `api key      ${key === null ? "(none)" : `${key} (${settings.apiKey?.source ?? ""})`}\n` +
          `base url     ${value.base_url} (${value.base_url_source})\n` +
          `api root     ${value.api_root}\n`
      )
    })

  config
    .command("clear")
    .description("Delete the config file.")
    .action(() => {
      io.stderr.write(clearConfig() ? `Deleted ${configPath()}\n` : `No config file at ${configPath()}\n`)
    })

  // me ---------------------------------------------------------------------------------------
  program
    .command("me")
    .description("The account behind the key: plan, credits, rate limits. Costs nothing; a connection test.")
    .addHelpText("after", examples("lyre me", "lyre me --output json"))
    .action(async (_options: unknown, command: Command) => {
      const options = globals(command)
      const account = await clientOf(options, displayOf(options)).me()
      write(options, account, formatAccount(account))
    })

  // generate ---------------------------------------------------------------------------------
  const generate = program
    .command("generate")
    .description("Generate songs: charges the model's credits and answers the task (add --wait to see it through).")
    .argument("[stdin]", "`-` to read the lyrics from standard input")
    .requiredOption("--style <text>", "genre, vocal type, tempo, mood (1 to 1000 characters)")
    .requiredOption("--title <text>", "song title (1 to 200 characters)")
    .option("--lyrics <text>", "the lyrics to sing (`-` reads standard input)")
    .option("--lyrics-file <file>", "read the lyrics from a file (`-` reads standard input)")
  addRequestFlags(
    generate,
    [
      "instrumental",
      "model",
      "vocalGender",
      "negativeTags",
      "styleWeight",
      "weirdnessConstraint",
      "audioWeight",
      "persona"
    ],
    false
  )
  generate
    .option(
      "--wait",
      "wait until the task is ready or failed, with progress and its stream address once it can be heard"
    )
    .option("--download <dir>", "wait, then save each track's MP3 and cover into this directory")
    .option("--play", playHelp)
    .addHelpText(
      "after",
      `${examples(
        "lyre generate --style 'synthwave, 110 bpm' --title 'Night Drive' --lyrics '[Verse] Neon lights' --wait",
        "lyre generate --style 'lofi hip hop' --title 'Rain' --instrumental --play",
        "lyre generate --style 'ambient piano' --title 'Snow' --instrumental --model echo --download ./songs",
        "cat lyrics.txt | lyre generate --style 'folk' --title 'Home' - --output json"
      )}\nThe request is checked with the server's own rules before it is sent.\n`
    )
    .action(
      async (
        stdinMarker: string | undefined,
        flags: Record<string, string | boolean | undefined>,
        command: Command
      ) => {
        const options = globals(command)
        const lyrics = await lyricsOf(stdinMarker, flags)
        const raw = requestFields(flags, lyrics)
        // Loaded here only: the schema brings zod and effect, two thirds of the CLI's start-up time.
        const { validateGenerate } = await import("./validate.ts")
        const body = validateGenerate(raw)
        const display = displayOf(options)
        const client = clientOf(options, display)
        const created = await client.generations.create(body)
        await finishCreated(options, client, display, created, flags)
      }
    )

  // get, wait, list, download -----------------------------------------------------------------
  program
    .command("get")
    .description("Show a task as it is now (exit 0 whatever its status).")
    .argument("<id>", "task id, gen_...")
    .addHelpText("after", examples("lyre get gen_...", "lyre get gen_... --output json"))
    .action(async (id: string, _options: unknown, command: Command) => {
      const options = globals(command)
      const task = await clientOf(options, displayOf(options)).generations.get(id)
      write(options, task, formatTask(task))
    })

  program
    .command("wait")
    .description(
      "Wait until a task is ready (exit 0) or failed (exit 2), with progress and its stream address once it can be heard."
    )
    .argument("<id>", "task id, gen_...")
    .option("--play", playHelp)
    .addHelpText(
      "after",
      examples("lyre wait gen_...", "lyre wait gen_... --play", "lyre wait gen_... --output json > task.json")
    )
    .action(async (id: string, flags: { readonly play?: boolean }, command: Command) => {
      const options = globals(command)
      const display = displayOf(options)
      const listener = listenerFor(display, io.env, flags.play === true)
      const task = await waitFor(clientOf(options, display), id, display, listener)
      write(options, task, formatTask(task))
      if (task.status === "failed") throw failedTask(task)
      await listener.finish(task)
    })

  withPaging(program.command("list").description("The account's tasks, newest first."))
    .addHelpText(
      "after",
      examples("lyre list", "lyre list --limit 100 --output json", "lyre list --starting-after gen_...")
    )
    .action(async (flags: { limit?: string; startingAfter?: string }, command: Command) => {
      const options = globals(command)
      const list = await clientOf(options, displayOf(options)).generations.list(pageOf(flags))
      write(options, list, formatList(list))
    })

  program
    .command("download")
    .description("Save a ready task's MP3s and covers, named from the title and track index.")
    .argument("<id>", "task id, gen_...")
    .argument("[dir]", "where to save (default: the current directory)", ".")
    .addHelpText("after", examples("lyre download gen_...", "lyre download gen_... ./songs --output json"))
    .action(async (id: string, directory: string, _options: unknown, command: Command) => {
      const options = globals(command)
      const display = displayOf(options)
      const client = clientOf(options, display)
      const task = await client.generations.get(id)
      if (task.status === "failed") throw failedTask(task)
      if (task.status === "pending")
        throw new CliError(`Generation ${id} is still pending: run \`lyre wait ${id}\` first.`)
      const saved = await download(client, task, directory, display)
      write(options, { task_id: task.id, files: saved }, saved.map((file) => `${file.path}\n`).join(""))
    })

  // song tools ---------------------------------------------------------------------------------
  const extend = program
    .command("extend")
    .description(
      "Continue a track from a point (default: its end): a new generation, priced by its model; fields left out are the track's."
    )
    .argument("<track>", "track id, trk_... (lyre get shows a task's tracks)")
    .argument("[stdin]", "`-` to read the new lyrics from standard input")
    .option(
      "--continue-at <seconds>",
      "where the continuation begins: above 0 and below the track's length (default: its end)"
    )
    .option("--lyrics <text>", "lyrics for the continuation (`-` reads standard input)")
    .option("--lyrics-file <file>", "read them from a file (`-` reads standard input)")
    .option("--style <text>", "a new style (default: the track's)")
  addRequestFlags(extend, ["title", "instrumental", "model", "persona"], true)
  extend
    .option("--wait", "wait until the new task is ready or failed, with progress and its stream address")
    .option("--download <dir>", "wait, then save each new track's MP3 and cover into this directory")
    .option("--play", playHelp)
    .addHelpText(
      "after",
      `${examples(
        "lyre extend trk_... --continue-at 95 --lyrics-file bridge.txt --wait",
        "lyre extend trk_... --title 'Rain (extended)' --download ./songs",
        "lyre extend trk_... --output json"
      )}\nThe new songs are whole: the track up to --continue-at, then the continuation to an ending.\n`
    )
    .action(
      async (
        trackId: string,
        stdinMarker: string | undefined,
        flags: Record<string, string | boolean | undefined>,
        command: Command
      ) => {
        const options = globals(command)
        const lyrics = await lyricsOf(stdinMarker, flags)
        const text = (name: string) => (typeof flags[name] === "string" ? flags[name] : undefined)
        const raw: Record<string, unknown> = {
          ...(text("continueAt") === undefined ? {} : { continue_at: numberish(text("continueAt")) }),
          ...requestFields(flags, lyrics)
        }
        const { validateExtend } = await import("./validate.ts")
        const body = validateExtend(trackId, raw)
        const display = displayOf(options)
        const client = clientOf(options, display)
        const created = await client.tracks.extend(trackId, body)
        await finishCreated(options, client, display, created, flags)
      }
    )

  program
    .command("export")
    .description(
      "Take a track as WAV (5 credits), MIDI (5), stems (20) or timed lyrics (5); a format you already have is answered free."
    )
    .argument("<track>", "track id, trk_...")
    .addOption(
      new Option("--format <format>", "what to make")
        .choices(["wav", "midi", "stems", "timed-lyrics", "timed_lyrics"])
        .makeOptionMandatory()
    )
    .option("--wait", "wait until the export is ready or failed, with progress")
    .option("--download <dir>", "wait, then save its files into this directory")
    .addHelpText(
      "after",
      examples(
        "lyre export trk_... --format wav --download ./songs",
        "lyre export trk_... --format stems --wait --output json",
        "lyre export trk_... --format midi"
      )
    )
    .action(async (trackId: string, flags: { format: string; wait?: boolean; download?: string }, command: Command) => {
      const options = globals(command)
      const display = displayOf(options)
      const client = clientOf(options, display)
      const format = (flags.format === "timed-lyrics" ? "timed_lyrics" : flags.format) as ExportFormat
      const created = await client.exports.create(trackId, format)
      if (flags.wait !== true && flags.download === undefined) {
        write(options, created, formatExport(created))
        return
      }
      const found = await waitForExport(client, created, display)
      if (found.status === "failed") {
        write(options, found, formatExport(found))
        throw failedExport(found)
      }
      if (flags.download !== undefined) {
        const task = await client.generations.get(found.task_id)
        const saved = await saveExportFiles(
          client,
          found,
          task.tracks.find((t) => t.id === found.track_id),
          flags.download,
          display
        )
        display.succeed(`Saved ${saved.length} files to ${flags.download}`)
      }
      write(options, found, formatExport(found))
    })

  /** The timed words of a track, as `lyre lyrics trk_...` printed them before lyrics were written. */
  const timedLyrics = async (trackId: string, lrc: boolean, options: GlobalOptions): Promise<void> => {
    const display = displayOf(options)
    const client = clientOf(options, display)
    // A ready or pending export of the track is reused: asking twice never pays twice.
    const existing = (await client.exports.list({ trackId, limit: 100 })).data.find(
      (e) => e.format === "timed_lyrics" && e.status !== "failed"
    )
    const found = await waitForExport(
      client,
      existing ?? (await client.exports.create(trackId, "timed_lyrics")),
      display
    )
    if (found.status === "failed") {
      write(options, found, formatExport(found))
      throw failedExport(found)
    }
    const words = found.timed_lyrics ?? []
    const { lyricLines, toLrc } = await import("@lyre/core/domain/exports")
    if (lrc) io.stdout.write(toLrc(words))
    else write(options, found, formatLyricLines(lyricLines(words)))
  }

  program
    .command("lyrics")
    .description(
      "Write lyrics (2 credits, the lyrics:agent scope): two variations for a prompt, fitted to a track's melody " +
        "with --fit, or revising a file's words with --revise (the prompt is then the instruction). " +
        "A track id alone (trk_...) prints that track's timed lyrics instead (the timed-lyrics export, 5 credits unless you have it)."
    )
    .argument("<prompt>", "what the song is about; or a track id, trk_..., for its timed lyrics")
    .option("--fit <track>", "write words that fit this track's melody (trk_...)")
    .option("--revise <file>", "revise the words in this file (- for standard input) as the prompt says")
    .option("--style <style>", "the style of the song the words are for")
    .option("--title <title>", "a title to write to")
    .option("--language <tag>", "BCP 47 language tag, e.g. en, es, pt-BR")
    .option(
      "--sections <list>",
      "the form, comma-separated: Intro, Verse, Pre-Chorus, Chorus, Bridge, Outro, Hook, Break"
    )
    .option("--no-wait", "print the pending task instead of waiting for the words")
    .option("--lrc", "with a track id: print LRC (a time tag per line and per word) instead of the table")
    .addHelpText(
      "after",
      examples(
        "lyre lyrics 'a harbour town at dusk' --style folk --sections Verse,Chorus,Verse,Chorus",
        "lyre lyrics 'a second verse about leaving' --fit trk_...",
        "lyre lyrics 'make the chorus rhyme' --revise words.txt --output json",
        "lyre lyrics trk_... --lrc > song.lrc"
      )
    )
    .action(
      async (
        prompt: string,
        flags: {
          fit?: string
          revise?: string
          style?: string
          title?: string
          language?: string
          sections?: string
          wait: boolean
          lrc?: boolean
        },
        command: Command
      ) => {
        const options = globals(command)
        const writing = [flags.fit, flags.revise, flags.style, flags.title, flags.language, flags.sections].some(
          (flag) => flag !== undefined
        )
        if (!writing && /^trk_[0-9A-Za-z]{24}$/.test(prompt)) return timedLyrics(prompt, flags.lrc === true, options)
        const revised =
          flags.revise === undefined
            ? undefined
            : flags.revise === "-"
              ? await readStdin(io.stdin)
              : readTextFile(flags.revise, "lyrics")
        const display = displayOf(options)
        const client = clientOf(options, display)
        const created = await client.lyrics.create({
          prompt,
          ...(flags.style === undefined ? {} : { style: flags.style }),
          ...(flags.title === undefined ? {} : { title: flags.title }),
          ...(flags.language === undefined ? {} : { language: flags.language }),
          ...(flags.sections === undefined
            ? {}
            : { sections: flags.sections.split(",").map((name) => name.trim()) as LyricsRequest["sections"] }),
          ...(flags.fit === undefined ? {} : { track_id: flags.fit }),
          ...(revised === undefined ? {} : { lyrics: revised, instruction: prompt })
        })
        if (!flags.wait) {
          write(options, created, formatLyricsTask(created))
          return
        }
        const task = await follow(created.id, display, () => client.waitForLyrics(created.id, { intervalMs: 500 }))
        write(options, task, formatLyricsTask(task))
        if (task.status === "failed") {
          throw new TaskFailed(
            `Lyrics ${task.id} failed: ${task.error?.message ?? "unknown error"}` +
              (task.error === null ? "" : ` (${task.error.code})`) +
              (task.credits_refunded > 0 ? `; ${task.credits_refunded} credits refunded.` : ".")
          )
        }
      }
    )

  // your own audio: upload, uploads, cover, vocals, accompany, edit, personas (ownAudio.ts)
  addOwnAudioCommands(program, { io, globals, write, displayOf, clientOf, follow, finishCreated, lyricsOf })
  addVerifyCommand(program, { globals, write })

  return program
}

/** Runs the CLI and answers its exit code; every failure is reported on standard error. */
export const run = async (argv: ReadonlyArray<string>, io: Io): Promise<number> => {
  try {
    await createProgram(io).parseAsync([...argv])
    return exitCodes.ok
  } catch (error) {
    // Commander has printed the help, version or usage error already.
    if (error instanceof CommanderError) return error.exitCode
    if (error instanceof TaskFailed) {
      io.stderr.write(`lyre: ${error.message}\n`)
      return exitCodes.taskFailed
    }
    if (error instanceof LyreApiError) {
      const details = [
        error.param === undefined ? undefined : `param: ${error.param}`,
        `${error.type}/${error.code}`,
        error.requestId === undefined ? undefined : `request ${error.requestId}`
      ].filter((d) => d !== undefined)
      io.stderr.write(`lyre: ${error.message} (${details.join("; ")})\n`)
    } else if (error instanceof CliError) {
      const details = [error.param === undefined ? undefined : `param: ${error.param}`, error.code].filter(
        (d) => d !== undefined
      )
      io.stderr.write(`lyre: ${error.message}${details.length === 0 ? "" : ` (${details.join("; ")})`}\n`)
    } else if (error instanceof LyreConnectionError) {
      io.stderr.write(`lyre: ${error.message}\n`)
    } else {
      io.stderr.write(`lyre: ${error instanceof Error ? error.message : String(error)}\n`)
    }
    return exitCodes.error
  }
}
