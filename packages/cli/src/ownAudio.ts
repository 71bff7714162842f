/**
 * Your own audio (DESIGN.md section 11): `upload` and `uploads`, the tasks on a track (`cover`,
 * `vocals`, `accompany`, `edit`) and `personas`. Each calls the same REST routes as every client;
 * a paid task is checked with the server's own schema first, as `generate` and `extend` are,
 * while whether a file is audio is the server's alone to say.
 */
import { statSync } from "node:fs"
import { basename } from "node:path"
import type { Command } from "commander"
import type { GenerationTask, LyreClient, Upload, UploadSource } from "@lyre/client"
import { examples } from "./context.ts"
import type { CommandContext } from "./context.ts"
import type { Display } from "./display.ts"
import { CliError, TaskFailed } from "./errors.ts"
import { playHelp } from "./listen.ts"
import { formatBytes, formatPersona, formatPersonaList, formatUpload, formatUploadList } from "./format.ts"
import { pageOf, withPaging } from "./paging.ts"
import { addRequestFlags, numberish, requestFields } from "./requestFlags.ts"
import type { Flags, RequestFlag } from "./requestFlags.ts"

type Validate = typeof import("./validate.ts")["validateTrackTask"]

/** One task on a track as a command: its flags, and how its body reaches the client. */
interface TrackTaskCommand {
  readonly name: string
  readonly description: string
  readonly style: "required" | "optional"
  readonly lyrics: boolean
  readonly flags: ReadonlyArray<RequestFlag>
  readonly options?: (command: Command) => void
  readonly fields?: (flags: Flags) => Record<string, unknown>
  readonly send: (
    client: LyreClient,
    trackId: string,
    raw: Record<string, unknown>,
    validate: Validate
  ) => Promise<GenerationTask>
  readonly examples: ReadonlyArray<string>
  readonly note?: string
}

const allFlags: ReadonlyArray<RequestFlag> = [
  "title",
  "instrumental",
  "model",
  "vocalGender",
  "negativeTags",
  "styleWeight",
  "weirdnessConstraint",
  "audioWeight",
  "persona"
]
const withoutFlags = (...left: ReadonlyArray<RequestFlag>) => allFlags.filter((f) => !left.includes(f))

const trackTasks: ReadonlyArray<TrackTaskCommand> = [
  {
    name: "cover",
    description:
      "Sing a track again in a new style: the same melody, harmony, form and words (a generation of the track's model, priced as one).",
    style: "required",
    lyrics: true,
    flags: allFlags,
    send: (client, id, raw, validate) => client.tracks.cover(id, validate("cover", id, raw)),
    examples: [
      "lyre cover trk_... --style 'bossa nova, acoustic guitar' --wait",
      "lyre cover trk_... --style 'synthwave' --audio-weight 0.8 --download ./songs",
      "lyre cover trk_... --style 'folk' --persona per_... --output json"
    ]
  },
  {
    name: "vocals",
    description:
      "Sing words over a track (an upload of your own, say), on a melody composed for its chords, in its key and on its beat.",
    style: "optional",
    lyrics: true,
    flags: withoutFlags("instrumental"),
    send: (client, id, raw, validate) => client.tracks.vocals(id, validate("vocals", id, raw)),
    examples: [
      "lyre vocals trk_... --lyrics-file words.txt --wait",
      "lyre vocals trk_... --lyrics '[Verse] Morning light' --vocal-gender f --download ./songs",
      "cat words.txt | lyre vocals trk_... - --output json"
    ]
  },
  {
    name: "accompany",
    description:
      "Compose an accompaniment in a style for a track's sung melody and mix it in (a track made without vocals is refused; an upload is accompanied as heard).",
    style: "required",
    lyrics: false,
    flags: withoutFlags("instrumental"),
    send: (client, id, raw, validate) => client.tracks.instrumental(id, validate("instrumental", id, raw)),
    examples: [
      "lyre accompany trk_... --style 'jazz trio' --wait",
      "lyre accompany trk_... --style 'string quartet' --download ./songs"
    ]
  },
  {
    name: "edit",
    description:
      "Make one span of a track again (2 to 60 s), with new words when given; outside it, the track sample for sample.",
    style: "optional",
    lyrics: true,
    flags: allFlags,
    options: (command) =>
      command
        .requiredOption("--start <seconds>", "where the span begins")
        .requiredOption("--end <seconds>", "where it ends: 2 to 60 s after --start, within the track"),
    fields: (flags) => ({
      start: numberish(typeof flags["start"] === "string" ? flags["start"] : undefined),
      end: numberish(typeof flags["end"] === "string" ? flags["end"] : undefined)
    }),
    send: (client, id, raw, validate) => client.tracks.edit(id, validate("edit", id, raw)),
    examples: [
      "lyre edit trk_... --start 30 --end 45 --lyrics-file chorus.txt --wait",
      "lyre edit trk_... --start 12.5 --end 20 --download ./songs"
    ],
    note: "\nThe span's price is the whole task's: a generation of the track's model.\n"
  }
]

/** The upload's source: a file (checked to be one, nothing more) or standard input with `-`. */
const sourceOf = (file: string, stdin: NodeJS.ReadStream): { readonly source: UploadSource; readonly name: string } => {
  if (file === "-") {
    if (stdin.isTTY)
      throw new CliError(
        "Standard input is a terminal: pipe the file in (for example `lyre upload - --content-type audio/wav < song.wav`)."
      )
    return { source: stdin, name: "standard input" }
  }
  let isFile: boolean
  try {
    isFile = statSync(file).isFile()
  } catch (cause) {
    throw new CliError(`Cannot read ${file}: ${cause instanceof Error ? cause.message : String(cause)}`, {
      param: "file"
    })
  }
  if (!isFile) throw new CliError(`${file} is not a file.`, { param: "file" })
  return { source: file, name: basename(file) }
}

export const addOwnAudioCommands = (program: Command, context: CommandContext): void => {
  const { io, globals, write, displayOf, clientOf, follow, finishCreated, lyricsOf } = context

  /** An upload followed to `ready`; a failed one is printed and exits 2. */
  const waitForUpload = async (
    options: ReturnType<typeof globals>,
    client: LyreClient,
    upload: Upload,
    display: Display
  ): Promise<void> => {
    const found =
      upload.status === "pending"
        ? await follow(upload.id, display, () => client.waitForUpload(upload.id, { intervalMs: 1_000 }))
        : upload
    write(options, found, formatUpload(found))
    if (found.status === "failed") {
      throw new TaskFailed(
        `Upload ${found.id} failed: ${found.error?.message ?? "unknown error"}${found.error === null ? "" : ` (${found.error.code})`}.`
      )
    }
  }

  // upload, uploads ---------------------------------------------------------------------------
  program
    .command("upload")
    .description(
      "Upload your own audio (MP3, WAV, FLAC or Ogg; 5 s to 8 min; free, on Pro plans and above); once ready its track takes every song tool."
    )
    .argument("<file>", "the audio file, or `-` to read standard input (then give --content-type)")
    .option("--title <text>", "a name for the upload (at most 200 characters)")
    .option(
      "--content-type <type>",
      "the file's type when its extension does not say: audio/mpeg, audio/wav, audio/flac or audio/ogg"
    )
    .option(
      "--idempotency-key <key>",
      "sent as Idempotency-Key: the same key and file again answer the first upload (default: one per call)"
    )
    .option("--wait", "wait until it is listened to (ready, with its tempo, key and chords) or failed")
    .addHelpText(
      "after",
      `${examples(
        "lyre upload demo.wav --title 'Demo' --wait",
        "lyre upload take.mp3 --wait --output json | jq -r .track_id",
        "lyre upload - --content-type audio/flac < take.flac"
      )}\nThe server judges the file: one that is not audio is refused with its message, and nothing is kept.\n`
    )
    .action(
      async (
        file: string,
        flags: { title?: string; contentType?: string; idempotencyKey?: string; wait?: boolean },
        command: Command
      ) => {
        const options = globals(command)
        const { source, name } = sourceOf(file, io.stdin)
        const display = displayOf(options)
        const client = clientOf(options, display)
        let sent = 0
        const upload = await client.uploads.create(source, {
          ...(flags.title === undefined ? {} : { title: flags.title }),
          ...(flags.contentType === undefined ? {} : { contentType: flags.contentType }),
          ...(flags.idempotencyKey === undefined ? {} : { idempotencyKey: flags.idempotencyKey }),
          onProgress: (bytes, total) => {
            sent = bytes
            const share = total === null || total === 0 ? undefined : Math.floor((bytes / total) * 100)
            // Plain output (a log) gets a line at each quarter; a terminal sees every step.
            display.progress(
              `Uploading ${name}  ${formatBytes(bytes)}${total === null ? "" : ` of ${formatBytes(total)}`}${share === undefined ? "" : ` (${share}%)`}`,
              `upload ${share === undefined ? Math.floor(bytes / (1024 * 1024)) : Math.floor(share / 25)}`
            )
          }
        })
        display.note(`Uploaded ${name} (${formatBytes(Math.max(sent, upload.bytes))}) as ${upload.id}`)
        if (flags.wait === true) await waitForUpload(options, client, upload, display)
        else write(options, upload, formatUpload(upload))
      }
    )

  const uploads = program
    .command("uploads")
    .description("The account's uploads: list, show (and wait for) one, delete one.")
    .addHelpText(
      "after",
      examples("lyre uploads list", "lyre uploads get upl_... --wait", "lyre uploads delete upl_...")
    )

  withPaging(uploads.command("list").description("The account's uploads, newest first."))
    .addHelpText("after", examples("lyre uploads list", "lyre uploads list --limit 100 --output json"))
    .action(async (flags: { limit?: string; startingAfter?: string }, command: Command) => {
      const options = globals(command)
      const list = await clientOf(options, displayOf(options)).uploads.list(pageOf(flags))
      write(options, list, formatUploadList(list))
    })

  uploads
    .command("get")
    .description("Show an upload: its analysis once ready (tempo, key, chords) and its track.")
    .argument("<id>", "upload id, upl_...")
    .option("--wait", "wait until it is ready or failed")
    .addHelpText("after", examples("lyre uploads get upl_...", "lyre uploads get upl_... --wait --output json"))
    .action(async (id: string, flags: { wait?: boolean }, command: Command) => {
      const options = globals(command)
      const display = displayOf(options)
      const client = clientOf(options, display)
      const upload = await client.uploads.get(id)
      if (flags.wait === true) await waitForUpload(options, client, upload, display)
      else write(options, upload, formatUpload(upload))
    })

  uploads
    .command("delete")
    .description("Delete an upload: its file goes; the songs made from it stay.")
    .argument("<id>", "upload id, upl_...")
    .addHelpText("after", examples("lyre uploads delete upl_..."))
    .action(async (id: string, _flags: unknown, command: Command) => {
      const options = globals(command)
      const deleted = await clientOf(options, displayOf(options)).uploads.delete(id)
      write(options, deleted, `Deleted ${deleted.id}\n`)
    })

  // tasks on a track ----------------------------------------------------------------------------
  for (const task of trackTasks) {
    const command = program
      .command(task.name)
      .description(task.description)
      .argument("<track>", "track id, trk_... (of a song, or an upload's track_id)")
    if (task.lyrics) command.argument("[stdin]", "`-` to read the lyrics from standard input")
    task.options?.(command)
    if (task.style === "required")
      command.requiredOption("--style <text>", "the new style: genre, instruments, tempo, mood")
    else command.option("--style <text>", "a style (default: the track's)")
    if (task.lyrics) {
      command
        .option("--lyrics <text>", "the words to sing (`-` reads standard input)")
        .option("--lyrics-file <file>", "read them from a file (`-` reads standard input)")
    }
    addRequestFlags(command, task.flags, true)
    command
      .option("--wait", "wait until the new task is ready or failed, with progress and its stream address")
      .option("--download <dir>", "wait, then save each new track's MP3 and cover into this directory")
      .option("--play", playHelp)
      .addHelpText(
        "after",
        examples(...task.examples, `lyre ${task.name} trk_... --output json`) +
          (task.note ?? "") +
          "The request is checked with the server's own rules before it is sent.\n"
      )
      .action(async (trackId: string, ...rest: Array<unknown>) => {
        // commander passes the optional `[stdin]` only to the commands that declare it.
        const self = rest.at(-1) as Command
        const flags = rest.at(-2) as Flags
        const stdinMarker = task.lyrics ? (rest[0] as string | undefined) : undefined
        const options = globals(self)
        const lyrics = task.lyrics ? await lyricsOf(stdinMarker, flags) : undefined
        const raw = { ...task.fields?.(flags), ...requestFields(flags, lyrics) }
        const { validateTrackTask } = await import("./validate.ts")
        const display = displayOf(options)
        const client = clientOf(options, display)
        const created = await task.send(client, trackId, raw, validateTrackTask)
        await finishCreated(options, client, display, created, flags)
      })
  }

  // personas ----------------------------------------------------------------------------------
  const personas = program
    .command("personas")
    .description("Voices kept from your tracks, to sing later songs (--persona on generate, cover, ...). Free.")
    .addHelpText(
      "after",
      examples(
        "lyre personas create trk_... --name 'Night singer' --description 'A bright voice over synths'",
        "lyre personas list",
        "lyre generate --style 'synthpop' --title 'Later' --lyrics-file words.txt --persona per_... --wait",
        "lyre personas delete per_..."
      )
    )

  personas
    .command("create")
    .description("Keep the voice (timbre, range, vibrato) and arrangement palette of a track of this account.")
    .argument("<track>", "track id, trk_...")
    .requiredOption("--name <text>", "a name to know it by (1 to 200 characters)")
    .requiredOption("--description <text>", "what the voice and style are like (1 to 1000 characters)")
    .addHelpText(
      "after",
      examples(
        "lyre personas create trk_... --name 'Night singer' --description 'Bright, breathy'",
        "lyre personas create trk_... --name N --description D -o json"
      )
    )
    .action(async (trackId: string, flags: { name: string; description: string }, command: Command) => {
      const options = globals(command)
      const persona = await clientOf(options, displayOf(options)).personas.create({
        track_id: trackId,
        name: flags.name,
        description: flags.description
      })
      write(options, persona, formatPersona(persona))
    })

  withPaging(personas.command("list").description("The account's personas, newest first."))
    .addHelpText("after", examples("lyre personas list", "lyre personas list --output json"))
    .action(async (flags: { limit?: string; startingAfter?: string }, command: Command) => {
      const options = globals(command)
      const list = await clientOf(options, displayOf(options)).personas.list(pageOf(flags))
      write(options, list, formatPersonaList(list))
    })

  personas
    .command("get")
    .description("Show a persona.")
    .argument("<id>", "persona id, per_...")
    .addHelpText("after", examples("lyre personas get per_..."))
    .action(async (id: string, _flags: unknown, command: Command) => {
      const options = globals(command)
      const persona = await clientOf(options, displayOf(options)).personas.get(id)
      write(options, persona, formatPersona(persona))
    })

  personas
    .command("delete")
    .description("Delete a persona: later requests cannot name it; the songs made with it stay.")
    .argument("<id>", "persona id, per_...")
    .addHelpText("after", examples("lyre personas delete per_..."))
    .action(async (id: string, _flags: unknown, command: Command) => {
      const options = globals(command)
      const deleted = await clientOf(options, displayOf(options)).personas.delete(id)
      write(options, deleted, `Deleted ${deleted.id}\n`)
    })
}
