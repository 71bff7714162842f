/**
 * The built-in engine behind the provider port: the embedded default's provider. A submission
 * starts rendering both takes in the engine's worker threads and is accepted at once; the
 * renders are written to a staging folder and handed over as `file:` URLs, which re-hosting
 * copies into storage like any provider's files. When a render ends, the engine calls back to
 * the task's callback URL exactly as the upstream would, so the worker looks at once instead of
 * at its next poll. Output is deterministic (same request and task id, same bytes), so a
 * process that restarts mid-render simply renders again from the request it staged.
 *
 * Song tools ride the same path: an extension is a submission with `extend` (the engine renders
 * the source up to `continue_at` and then its continuation); an export is staged under its own
 * id, rendered again from the track's source (its request, task id, index and extension chain,
 * all the engine needs), and handed over as `file:` URLs, or for timed lyrics as the words alone.
 */
import { createWriteStream } from "node:fs"
import type { WriteStream } from "node:fs"
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises"
import { finished } from "node:stream/promises"
import { join } from "node:path"
import { buffer } from "node:stream/consumers"
import { pathToFileURL } from "node:url"
import { Effect, Layer } from "effect"
import { Metrics, Provider } from "@lyre/core"
import type { MetricsShape } from "@lyre/core"
import type {
  ExportPollOutcome,
  ExportSubmission,
  PollOutcome,
  ProviderExportFile,
  ProviderPreview,
  ProviderSubmission,
  ProviderTrack,
  SourceTrack,
  TimedWord,
  UploadSource
} from "@lyre/core/provider/outcomes"
import { DEFAULT_PCM_CACHE, makeEngine, TAKES } from "@lyre/engine"
import type { Engine, EngineRequest, ExportFormat, TrackDerivation, TrackSource } from "@lyre/engine"
import { Storage } from "../storage/Storage.ts"
import { parseCallback } from "./sunoCallback.ts"

export interface EngineProviderOptions {
  /** Where renders wait for re-hosting; swept of anything older than an hour. */
  readonly stagingDir: string
  /**
   * Where the engine keeps each take's PCM for WAV exports (its own default is the system's
   * temporary folder); the service keeps it with its data, so a restart keeps it too.
   */
  readonly pcmCacheDir?: string | undefined
  readonly threads?: number | undefined
  /** Each take cut after this many seconds, with a fade (ENGINE_MAX_SECONDS); unset, whole songs. */
  readonly maxSeconds?: number | undefined
}

type RenderState =
  | {
      readonly status: "rendering"
      /** Each take's growing MP3 (`file:`), once the first of them has audio (DESIGN.md section 14). */
      readonly previews?: ReadonlyArray<ProviderPreview> | undefined
    }
  | {
      readonly status: "done"
      readonly tracks: ReadonlyArray<ProviderTrack>
      readonly previews: ReadonlyArray<ProviderPreview> | undefined
    }
  | { readonly status: "failed"; readonly message: string }

type ExportState =
  | { readonly status: "rendering" }
  | {
      readonly status: "done"
      readonly files: ReadonlyArray<ProviderExportFile>
      readonly timedLyrics: ReadonlyArray<TimedWord> | null
    }
  | { readonly status: "failed"; readonly message: string }

interface StagedRequest {
  readonly request: EngineRequest
  readonly callbackUrl: string | null
  /** An extension: the track it continues, and from which second. */
  readonly extend?: { readonly source: TrackSource; readonly continueAt: number } | undefined
  /** A cover, vocals, an instrumental or an edit: what it is made from (src/arrange/ in the engine). */
  readonly derives?: TrackDerivation | undefined
  /** A persona's track, whose voice and palette the takes are sung and played with. */
  readonly persona?: TrackSource | undefined
}

interface StagedExport {
  readonly source: TrackSource
  readonly format: ExportFormat
  readonly callbackUrl: string | null
}

const stagingMaxAgeMs = 60 * 60 * 1000

const engineRequestOf = (submission: SourceTrack["request"]): EngineRequest => ({
  style: submission.style,
  title: submission.title,
  lyrics: submission.instrumental ? null : submission.lyrics,
  instrumental: submission.instrumental,
  model: submission.model,
  vocal_gender: submission.vocal_gender,
  negative_tags: submission.negative_tags,
  style_weight: submission.style_weight,
  weirdness_constraint: submission.weirdness_constraint,
  audio_weight: submission.audio_weight
})

/** Where the engine reads an upload's file. */
type UploadPathOf = (upload: UploadSource) => string

/** The engine's derivation of a track made from another. */
const derivationOf = (derive: NonNullable<ProviderSubmission["derive"]>, pathOf: UploadPathOf): TrackDerivation =>
  derive.kind === "edit"
    ? { kind: "edit", source: trackSourceOf(derive.source, pathOf), start: derive.start, end: derive.end }
    : { kind: derive.kind, source: trackSourceOf(derive.source, pathOf) }

/**
 * What the engine needs to render a track again: the request and task id that seeded it, and its
 * chain; an upload at its root is read where `pathOf` says (`stageUploads` makes sure it is there).
 */
export const trackSourceOf = (source: SourceTrack, pathOf: UploadPathOf): TrackSource => ({
  request: engineRequestOf(source.request),
  taskId: source.taskId,
  index: source.index,
  extends:
    source.extends === null
      ? undefined
      : { source: trackSourceOf(source.extends.source, pathOf), continueAt: source.extends.continueAt },
  // Present only when set, so that a plain track's source (and its cache key) is what it was.
  ...(source.derives === null ? {} : { derives: derivationOf(source.derives, pathOf) }),
  ...(source.request.persona === undefined ? {} : { persona: trackSourceOf(source.request.persona.source, pathOf) }),
  upload:
    source.upload === undefined
      ? undefined
      : {
          id: source.upload.uploadId,
          audioPath: pathOf(source.upload),
          contentType: source.upload.contentType,
          duration: source.upload.duration,
          analysis: source.upload.analysis,
          transcription: source.upload.transcription
        }
})

/** The uploads at the roots of a chain. */
const uploadsOf = (source: SourceTrack): ReadonlyArray<UploadSource> => [
  ...(source.upload === undefined ? [] : [source.upload]),
  ...(source.extends === null ? [] : uploadsOf(source.extends.source)),
  ...(source.derives === null ? [] : uploadsOf(source.derives.source)),
  ...(source.request.persona === undefined ? [] : uploadsOf(source.request.persona.source))
]

/** The upstream's callback shape, so the one callback parser serves both providers. */
const stageCallback = (taskId: string, stage: "first" | "complete" | "error") =>
  JSON.stringify({
    code: stage === "error" ? 500 : 200,
    msg: stage === "error" ? "render failed" : "success",
    data: { callbackType: stage, task_id: taskId, data: [] }
  })

/** A take's MP3 while it is encoded: `{index}.mp3.part`, renamed to `{index}.mp3` when whole. */
export const growingFileOf = (folder: string, index: number): string => join(folder, `${index}.mp3.part`)

/**
 * The growing files of one task's takes: each piece of a take is appended the moment the
 * engine hands it out, so `/files/streams/...` can serve what is written and wait for the rest.
 * When the take is done its file is renamed to the final name (a reader holding it open reads
 * on to the end); when the render fails the files go, and readers end where they are.
 */
const growingFiles = (folder: string, count: number, started: () => void) => {
  const streams: Array<WriteStream | null> = Array.from({ length: count }, () => null)
  let first = true
  const open = (index: number): WriteStream => {
    const existing = streams[index]
    if (existing !== null && existing !== undefined) return existing
    const stream = createWriteStream(growingFileOf(folder, index))
    // A write that fails (a full disk) ends the stream, never the take.
    stream.on("error", () => undefined)
    streams[index] = stream
    return stream
  }
  return {
    /** Every take's file, empty: a listener may start on a take whose audio has not begun. */
    create: () => {
      for (let index = 0; index < count; index++) open(index)
    },
    piece: (index: number, piece: Uint8Array) => {
      if (index < 0 || index >= count) return
      open(index).write(piece)
      if (first) {
        first = false
        started()
      }
    },
    close: () =>
      Promise.all(
        streams.map(async (stream) => {
          if (stream === null) return
          stream.end()
          await finished(stream).catch(() => undefined)
        })
      ),
    /** The take's file under its final name, when it holds exactly the final bytes; false otherwise. */
    settle: async (index: number, bytes: number, finalPath: string): Promise<boolean> => {
      const part = growingFileOf(folder, index)
      const info = await stat(part).catch(() => null)
      if (info === null || info.size !== bytes) return false
      await rename(part, finalPath)
      return true
    },
    remove: () => Promise.all(streams.map((_, index) => rm(growingFileOf(folder, index), { force: true })))
  }
}

const makeEngineProvider = (
  engine: Engine,
  options: EngineProviderOptions,
  metrics: MetricsShape,
  storage: Storage["Service"]
) => {
  const renders = new Map<string, RenderState>()
  const exports = new Map<string, ExportState>()
  const folderOf = (taskId: string) => join(options.stagingDir, taskId)

  /** Copies of uploads kept in a bucket: one per upload, shared by every job made from it. */
  const uploadCopies = join(options.stagingDir, "uploads")

  /**
   * An upload's file where storage keeps it, when that is a file on this machine; else its one
   * copy here. Never a copy per job (a task or an export made from an upload reads its source).
   */
  const uploadPathOf: UploadPathOf = (upload) =>
    storage.localPath(upload.storageKey) ??
    join(uploadCopies, `${upload.uploadId}.${upload.storageKey.slice(upload.storageKey.lastIndexOf(".") + 1)}`)

  /** Makes sure the files of the uploads a job starts from can be read: in storage, or copied once from a bucket. */
  const stageUploads = (sources: ReadonlyArray<SourceTrack | undefined>) =>
    Effect.forEach(
      sources.flatMap((source) => (source === undefined ? [] : uploadsOf(source))),
      (upload) =>
        Effect.gen(function* () {
          const info = yield* storage.stat(upload.storageKey)
          if (info === null || info.size === 0)
            return yield* Effect.die(new Error(`the upload ${upload.uploadId} has no file`))
          if (storage.localPath(upload.storageKey) !== null) return
          const path = uploadPathOf(upload)
          const copied = yield* Effect.promise(() =>
            stat(path).then(
              async (found) => {
                if (found.size !== info.size) return false
                await utimes(path, new Date(), new Date())
                return true
              },
              () => false
            )
          )
          if (copied) return
          const bytes = yield* Effect.promise(() =>
            buffer(storage.read(upload.storageKey, { start: 0, end: info.size - 1 }))
          )
          yield* Effect.promise(async () => {
            await mkdir(uploadCopies, { recursive: true })
            // Whole or not at all: another job may be reading the same copy.
            const temporary = `${path}.${process.pid}.part`
            await writeFile(temporary, bytes)
            await rename(temporary, path)
          })
        }),
      { discard: true }
    )

  const sweep = async () => {
    const now = Date.now()
    for (const entry of await readdir(options.stagingDir).catch(() => [])) {
      const folder = join(options.stagingDir, entry)
      if (folder === uploadCopies) {
        // Each copy by its own age: a job that uses one touches it, so it outlives the job's folder.
        for (const copy of await readdir(uploadCopies).catch(() => [])) {
          const info = await stat(join(uploadCopies, copy)).catch(() => null)
          if (info !== null && now - info.mtimeMs > stagingMaxAgeMs) await rm(join(uploadCopies, copy), { force: true })
        }
        continue
      }
      const info = await stat(folder).catch(() => null)
      if (info !== null && now - info.mtimeMs > stagingMaxAgeMs) {
        renders.delete(entry)
        exports.delete(entry)
        await rm(folder, { recursive: true, force: true })
      }
    }
  }

  const notify = async (callbackUrl: string | null, taskId: string, stage: "first" | "complete" | "error") => {
    if (callbackUrl === null) return
    await fetch(callbackUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: stageCallback(taskId, stage),
      signal: AbortSignal.timeout(15_000)
    }).then(
      (response) => response.body?.cancel(),
      () => undefined
    )
  }

  const render = (taskId: string, staged: StagedRequest) => {
    renders.set(taskId, { status: "rendering" })
    const folder = folderOf(taskId)
    const growing = growingFiles(folder, TAKES, () => {
      // The first piece of audio: the takes can be heard while they are made (section 14).
      if (renders.get(taskId)?.status !== "rendering") return
      const previews = Array.from({ length: TAKES }, (_, index) => ({
        index,
        url: pathToFileURL(growingFileOf(folder, index)).toString()
      }))
      renders.set(taskId, { status: "rendering", previews })
      void notify(staged.callbackUrl, taskId, "first")
    })
    const onAudio = growing.piece
    void (async () => {
      try {
        const started = performance.now()
        growing.create()
        const arranged = staged.derives !== undefined || staged.persona !== undefined
        const takes =
          staged.extend !== undefined
            ? await engine.extend(staged.extend.source, staged.extend.continueAt, staged.request, taskId, onAudio)
            : arranged
              ? await engine.arrange(
                  Array.from({ length: TAKES }, (_, index) => ({
                    request: staged.request,
                    taskId,
                    index,
                    ...(staged.derives === undefined ? {} : { derives: staged.derives }),
                    ...(staged.persona === undefined ? {} : { persona: staged.persona })
                  })),
                  onAudio
                )
              : await engine.render(staged.request, taskId, onAudio)
        metrics.engineRender(
          (performance.now() - started) / 1000,
          takes.reduce((sum, take) => sum + take.duration, 0)
        )
        await growing.close()
        const tracks: Array<ProviderTrack> = []
        for (const take of takes) {
          const audio = join(folder, `${take.index}.mp3`)
          const cover = join(folder, `${take.index}-cover.png`)
          // The streamed file is the final file (the engine's pieces join to it byte for byte).
          if (!(await growing.settle(take.index, take.mp3.length, audio))) await writeFile(audio, take.mp3)
          await writeFile(cover, take.png)
          tracks.push({
            providerTrackId: `${taskId}-${take.index}`,
            audioUrl: pathToFileURL(audio).toString(),
            imageUrl: pathToFileURL(cover).toString(),
            lyrics: take.lyrics,
            title: take.title,
            tags: take.tags,
            duration: take.duration
          })
        }
        const current = renders.get(taskId)
        renders.set(taskId, {
          status: "done",
          tracks,
          previews: current?.status === "rendering" ? current.previews : undefined
        })
        await notify(staged.callbackUrl, taskId, "complete")
      } catch (cause) {
        await growing.close()
        await growing.remove()
        renders.set(taskId, { status: "failed", message: `The engine could not render this request: ${String(cause)}` })
        await notify(staged.callbackUrl, taskId, "error")
      }
    })()
  }

  const submit = (submission: ProviderSubmission) =>
    stageUploads([submission.extend?.source, submission.derive?.source, submission.persona?.source]).pipe(
      Effect.andThen(
        Effect.promise(async () => {
          const staged: StagedRequest = {
            request: engineRequestOf(submission),
            callbackUrl: submission.callbackUrl,
            extend:
              submission.extend === undefined
                ? undefined
                : {
                    source: trackSourceOf(submission.extend.source, uploadPathOf),
                    continueAt: submission.extend.continueAt
                  },
            derives: submission.derive === undefined ? undefined : derivationOf(submission.derive, uploadPathOf),
            persona:
              submission.persona === undefined ? undefined : trackSourceOf(submission.persona.source, uploadPathOf)
          }
          await mkdir(folderOf(submission.taskId), { recursive: true })
          await writeFile(join(folderOf(submission.taskId), "request.json"), JSON.stringify(staged))
          if (!renders.has(submission.taskId)) render(submission.taskId, staged)
          void sweep()
          return { _tag: "Accepted", providerTaskId: submission.taskId } as const
        })
      )
    )

  const poll = (providerTaskId: string) =>
    Effect.promise(async (): Promise<PollOutcome> => {
      const state = renders.get(providerTaskId)
      if (state === undefined) {
        // Not rendering here: this process restarted since the submission. Render again.
        const staged = await readFile(join(folderOf(providerTaskId), "request.json"), "utf8").then(
          (text) => JSON.parse(text) as StagedRequest,
          () => null
        )
        if (staged === null)
          return { _tag: "Failed", code: "provider_error", message: "The engine has no record of this task." }
        render(providerTaskId, staged)
        return { _tag: "Pending" }
      }
      if (state.status === "rendering") return { _tag: "Pending", previews: state.previews }
      if (state.status === "failed") return { _tag: "Failed", code: "provider_error", message: state.message }
      return { _tag: "Succeeded", tracks: state.tracks, previews: state.previews }
    })

  const renderExport = (exportId: string, staged: StagedExport) => {
    exports.set(exportId, { status: "rendering" })
    void (async () => {
      try {
        const result = await engine.export(staged.source, staged.format)
        const folder = folderOf(exportId)
        const files: Array<ProviderExportFile> = []
        for (const [index, file] of result.files.entries()) {
          const path = join(folder, `${index}-${file.name.replace(/[^A-Za-z0-9._-]/g, "_")}`)
          await writeFile(path, file.bytes)
          files.push({
            name: file.name,
            contentType: file.contentType,
            stem: file.stem,
            content: { _tag: "Url", url: pathToFileURL(path).toString() }
          })
        }
        exports.set(exportId, { status: "done", files, timedLyrics: result.timedLyrics })
        await notify(staged.callbackUrl, exportId, "complete")
      } catch (cause) {
        exports.set(exportId, {
          status: "failed",
          message: `The engine could not render this export: ${String(cause)}`
        })
        await notify(staged.callbackUrl, exportId, "error")
      }
    })()
  }

  const submitExport = (submission: ExportSubmission) =>
    stageUploads([submission.source]).pipe(
      Effect.andThen(
        Effect.promise(async () => {
          const staged: StagedExport = {
            source: trackSourceOf(submission.source, uploadPathOf),
            format: submission.format,
            callbackUrl: submission.callbackUrl
          }
          await mkdir(folderOf(submission.exportId), { recursive: true })
          await writeFile(join(folderOf(submission.exportId), "export.json"), JSON.stringify(staged))
          if (!exports.has(submission.exportId)) renderExport(submission.exportId, staged)
          void sweep()
          return { _tag: "Accepted", providerTaskId: submission.exportId } as const
        })
      )
    )

  const pollExport = (providerExportId: string) =>
    Effect.promise(async (): Promise<ExportPollOutcome> => {
      const state = exports.get(providerExportId)
      if (state === undefined) {
        const staged = await readFile(join(folderOf(providerExportId), "export.json"), "utf8").then(
          (text) => JSON.parse(text) as StagedExport,
          () => null
        )
        if (staged === null)
          return { _tag: "Failed", code: "provider_error", message: "The engine has no record of this export." }
        renderExport(providerExportId, staged)
        return { _tag: "Pending" }
      }
      if (state.status === "rendering") return { _tag: "Pending" }
      if (state.status === "failed") return { _tag: "Failed", code: "provider_error", message: state.message }
      return { _tag: "Succeeded", files: state.files, timedLyrics: state.timedLyrics }
    })

  // The engine keeps nothing of a persona: a task naming one renders its track's voice again.
  const createPersona = () => Effect.succeed({ _tag: "Created", providerPersonaId: null } as const)

  return Provider.of({ name: "engine", submit, poll, parseCallback, submitExport, pollExport, createPersona })
}

/** The engine as the provider; its worker threads live as long as the layer. */
export const engineProviderLayer = (options: EngineProviderOptions): Layer.Layer<Provider, never, Storage> =>
  Layer.effect(Provider)(
    Effect.gen(function* () {
      yield* Effect.promise(() => mkdir(options.stagingDir, { recursive: true }))
      const engine = yield* Effect.acquireRelease(
        Effect.sync(() =>
          makeEngine({
            threads: options.threads,
            ...(options.maxSeconds === undefined ? {} : { render: { maxSeconds: options.maxSeconds } }),
            ...(options.pcmCacheDir === undefined
              ? {}
              : { pcmCache: { ...DEFAULT_PCM_CACHE, dir: options.pcmCacheDir } })
          })
        ),
        (running) => Effect.promise(() => running.close())
      )
      return makeEngineProvider(engine, options, yield* Metrics, yield* Storage)
    })
  )
