import type { ClientRequest, IncomingMessage } from "node:http"
import type {
  ExportFormat,
  ExportPollOutcome,
  ExportSubmission,
  PersonaOutcome,
  PersonaSubmission,
  PollOutcome,
  ProviderSubmission,
  SourceTrack,
  SubmitOutcome
} from "@lyre/core/provider/outcomes"
import { fnTracedWhen, TaskTraces } from "@lyre/core/observability/TaskTraces"
import { Provider } from "@lyre/core/provider/Provider"
import { Context, Effect, Layer, Redacted } from "effect"
import {
  interpretMidiRecordInfo,
  interpretPersona,
  interpretRecordInfo,
  interpretSeparationRecordInfo,
  interpretSubmit,
  interpretTimestampedLyrics,
  interpretWavRecordInfo
} from "./sunoAnswers.ts"
import type { MidiRecordOutcome, RawAnswer } from "./sunoAnswers.ts"
import { parseCallback } from "./sunoCallback.ts"
import type { ProviderCallback } from "./sunoCallback.ts"
import { transcriptionFile } from "./sunoMidi.ts"
import { requestOptionsOf, transportFor, UpstreamConnections } from "./upstreamAgents.ts"
import {
  addInstrumentalBody,
  addVocalsBody,
  decodeExportId,
  defaultModelMap,
  encodeExportId,
  extendBody,
  generateBody,
  midiBody,
  personaBody,
  replaceSectionBody,
  separationBody,
  timestampedLyricsBody,
  uploadCoverBody,
  uploadExtendBody,
  wavBody
} from "./sunoRequest.ts"
import type { ModelCodename } from "./sunoRequest.ts"

export interface SunoHttpProviderConfig {
  /** `PROVIDER_URL`, the upstream's root (the adapter appends `/api/v1/...`). */
  readonly baseUrl: string
  /** `PROVIDER_API_KEY`. */
  readonly apiKey: string | Redacted.Redacted<string>
  /** Overrides of the codename to upstream model mapping. */
  readonly modelMap?: Partial<Record<ModelCodename, string>>
  /** Limit for each call, connect to last byte. Default 10 s. */
  readonly timeoutMs?: number
  /**
   * The signed, expiring address of one of our files, handed to the upstream as `uploadUrl`.
   * Without it, tasks that send a track's audio are refused at submission.
   */
  readonly signFileUrl?: (url: string) => string
}

/**
 * The provider port for the Suno-style upstream of DESIGN.md section 6. It never fails: every
 * answer, time-out and broken connection becomes an outcome the worker acts on.
 */
export class SunoHttpProvider extends Context.Service<
  SunoHttpProvider,
  {
    submit(submission: ProviderSubmission): Effect.Effect<SubmitOutcome>
    poll(providerTaskId: string): Effect.Effect<PollOutcome>
    submitExport(submission: ExportSubmission): Effect.Effect<SubmitOutcome>
    pollExport(providerExportId: string, format: ExportFormat): Effect.Effect<ExportPollOutcome>
    createPersona(submission: PersonaSubmission): Effect.Effect<PersonaOutcome>
    parseCallback(body: unknown): ProviderCallback | null
  }
>()("lyre/worker/provider/SunoHttpProvider") {
  static readonly layer = (config: SunoHttpProviderConfig) =>
    Layer.effect(SunoHttpProvider, make(config)).pipe(Layer.provide(UpstreamConnections.layer))

  /** The core `Provider` port, served by this adapter; `name` labels it in logs. */
  static readonly providerLayer = (config: SunoHttpProviderConfig, name = "http") =>
    Layer.effect(
      Provider,
      Effect.map(SunoHttpProvider, (suno) => Provider.of({ name, ...suno }))
    ).pipe(Layer.provide(SunoHttpProvider.layer(config)))
}

interface ExchangeFailure {
  readonly message: string
  /** The connection was never made (refused, no such host): nothing reached the upstream. */
  readonly notSent: boolean
}

const connectCodes = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"])

/** A connection reset or closed under a request (what a kept-alive connection the upstream closed gives). */
const isReset = (error: unknown): boolean =>
  typeof error === "object" &&
  error !== null &&
  "code" in error &&
  (error.code === "ECONNRESET" || error.code === "EPIPE")

/** Looks through the error's causes for a connect-time failure code. */
const neverConnected = (error: unknown): boolean => {
  let current: unknown = error
  for (let depth = 0; depth < 6 && typeof current === "object" && current !== null; depth++) {
    if ("code" in current && typeof current.code === "string" && connectCodes.has(current.code)) return true
    if ("errors" in current && Array.isArray(current.errors)) {
      if (current.errors.length > 0 && current.errors.every((inner) => neverConnected(inner))) return true
    }
    current =
      "reason" in current && typeof current.reason === "object"
        ? current.reason
        : "cause" in current
          ? current.cause
          : undefined
  }
  return false
}

/** What one exchange sends: the method, the URL and, for a POST, the JSON body. */
interface Outgoing {
  readonly method: "GET" | "POST"
  readonly url: URL
  readonly body: string | null
}

const make = Effect.fnUntraced(function* (config: SunoHttpProviderConfig) {
  const baseUrl = config.baseUrl.replace(/\/+$/, "")
  const apiKey = typeof config.apiKey === "string" ? Redacted.make(config.apiKey) : config.apiKey
  const modelMap = { ...defaultModelMap, ...config.modelMap }
  const timeoutMs = config.timeoutMs ?? 10_000
  const traced = yield* TaskTraces
  // node:http rather than fetch or Effect's HttpClient: a poll cost about half the CPU (measured
  // against the fake upstream), and the worker polls every task. Connections are kept alive and
  // bounded per origin (upstreamAgents.ts).
  const transport = transportFor(new URL(baseUrl), yield* UpstreamConnections)
  // The configuration refuses any other scheme (PROVIDER_URL), so this is a caller's mistake.
  if (transport === null) return yield* Effect.die(new Error(`the provider's URL is not http(s): ${baseUrl}`))
  const { agent, request: send } = transport

  /** One request, its answer read whole; rejects with the request's error. */
  const attempt = (outgoing: Outgoing, onRequest: (request: ClientRequest) => void) =>
    new Promise<{ readonly answer: RawAnswer } | { readonly error: unknown; readonly request: ClientRequest }>(
      (resolve) => {
        const headers: Record<string, string | number> = { Authorization: `Bearer ${Redacted.value(apiKey)}` }
        if (outgoing.body !== null) {
          headers["Content-Type"] = "application/json"
          headers["Content-Length"] = Buffer.byteLength(outgoing.body)
        }
        const request = send(
          requestOptionsOf(outgoing.url, agent, outgoing.method, headers),
          (response: IncomingMessage) => {
            const chunks: Array<Buffer> = []
            response.on("data", (chunk: Buffer) => chunks.push(chunk))
            response.on("end", () =>
              resolve({ answer: { status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") } })
            )
            response.on("error", (error) => resolve({ error, request }))
          }
        )
        request.on("error", (error) => resolve({ error, request }))
        onRequest(request)
        request.end(outgoing.body ?? undefined)
      }
    )

  /**
   * Sends one request and reads the whole answer within the time limit. On expiry (or
   * interruption) the request is destroyed, so a hanging upstream holds nothing. A GET that
   * fails on a kept-alive connection before any answer (the upstream closed it meanwhile) is
   * sent once more on a fresh one; a POST never is, since the upstream may have taken it. The
   * failure says what went wrong without the request (which carries the key).
   */
  const exchange = (outgoing: Outgoing): Effect.Effect<RawAnswer, ExchangeFailure> =>
    Effect.callback<RawAnswer, ExchangeFailure>((resume) => {
      let current: ClientRequest | null = null
      let over = false
      const finish = (result: Effect.Effect<RawAnswer, ExchangeFailure>): void => {
        if (over) return
        over = true
        clearTimeout(timer)
        resume(result)
      }
      const timer = setTimeout(() => {
        finish(Effect.fail({ message: `No answer from the upstream within ${timeoutMs} ms`, notSent: false }))
        current?.destroy()
      }, timeoutMs)
      const run = (retry: boolean): void => {
        void attempt(outgoing, (request) => (current = request)).then((result) => {
          if ("answer" in result) return finish(Effect.succeed(result.answer))
          const { error, request } = result
          if (over) return
          if (retry && outgoing.method === "GET" && request.reusedSocket && isReset(error)) return run(false)
          const message = error instanceof Error ? error.message : String(error)
          finish(
            Effect.fail(
              neverConnected(error)
                ? { message: `Upstream unreachable (no connection): ${message}`, notSent: true }
                : { message: `Upstream unreachable: ${message}`, notSent: false }
            )
          )
        })
      }
      run(true)
      return Effect.sync(() => {
        over = true
        clearTimeout(timer)
        current?.destroy()
      })
    })

  /** The address of each POST path, parsed once: the paths are a handful of constants. */
  const postUrls = new Map<string, URL>()
  const postUrlOf = (path: string): URL => {
    let url = postUrls.get(path)
    if (url === undefined) {
      url = new URL(`${baseUrl}${path}`)
      postUrls.set(path, url)
    }
    return url
  }

  /** POSTs a body that creates an upstream task, and reads the answer as a submission's outcome. */
  const create = (path: string, body: unknown): Effect.Effect<SubmitOutcome> =>
    exchange({ method: "POST", url: postUrlOf(path), body: JSON.stringify(body) }).pipe(
      Effect.map(interpretSubmit),
      Effect.catch((failure) =>
        Effect.succeed<SubmitOutcome>(
          failure.notSent
            ? // No connection was made, so the upstream cannot have the task: a definite failure.
              { _tag: "Rejected", code: "provider_error", message: failure.message, countsTowardCircuit: true }
            : { _tag: "Unknown", message: failure.message }
        )
      )
    )

  /** GETs a record-info and reads it; a time-out or broken connection is Unknown. */
  const recordInfo = <A>(
    path: string,
    taskId: string,
    read: (answer: RawAnswer) => A,
    unknown: (message: string) => A
  ) =>
    exchange({
      method: "GET",
      url: new URL(`${baseUrl}${path}?taskId=${encodeURIComponent(taskId)}`),
      body: null
    }).pipe(
      Effect.map(read),
      Effect.catch((failure) => Effect.succeed(unknown(failure.message)))
    )

  /** Our copy of a track, as a signed address the upstream may fetch within the hour. */
  const uploadUrlOf = (source: SourceTrack): string | null =>
    source.audioUrl === null || config.signFileUrl === undefined ? null : config.signFileUrl(source.audioUrl)

  const noUpload: SubmitOutcome = {
    _tag: "Rejected",
    code: "provider_error",
    message: "The source track has no file of ours to hand the upstream",
    countsTowardCircuit: false
  }

  /**
   * Where a task goes: a generation, an extension (of the upstream's own track, or of one it
   * never made, uploaded), and the tasks on a track of section 11. Every one is a generation
   * task of the upstream's, polled through the same record-info.
   */
  const route = (
    submission: ProviderSubmission
  ): { readonly path: string; readonly body: Record<string, unknown> } | null => {
    const { extend, derive } = submission
    if (extend !== undefined) {
      if (extend.source.providerTrackId !== "")
        return { path: "/api/v1/generate/extend", body: extendBody(submission, extend, modelMap) }
      const uploadUrl = uploadUrlOf(extend.source)
      return uploadUrl === null
        ? null
        : { path: "/api/v1/generate/upload-extend", body: uploadExtendBody(submission, extend, uploadUrl, modelMap) }
    }
    if (derive === undefined) return { path: "/api/v1/generate", body: generateBody(submission, modelMap) }
    if (derive.kind === "edit")
      return { path: "/api/v1/generate/replace-section", body: replaceSectionBody(submission, derive) }
    const uploadUrl = uploadUrlOf(derive.source)
    if (uploadUrl === null) return null
    switch (derive.kind) {
      case "cover":
        return { path: "/api/v1/generate/upload-cover", body: uploadCoverBody(submission, uploadUrl, modelMap) }
      case "vocals":
        return { path: "/api/v1/generate/add-vocals", body: addVocalsBody(submission, uploadUrl) }
      case "instrumental":
        return { path: "/api/v1/generate/add-instrumental", body: addInstrumentalBody(submission, uploadUrl) }
    }
  }

  const submit = fnTracedWhen(
    traced,
    "SunoHttpProvider.submit"
  )(function* (submission: ProviderSubmission) {
    if (traced) yield* Effect.annotateCurrentSpan({ taskId: submission.taskId, model: submission.model })
    const target = route(submission)
    return target === null ? noUpload : yield* create(target.path, target.body)
  })

  /** Tags an accepted upstream task with the stage it stands for. */
  const accepted = (outcome: SubmitOutcome, stage: (upstreamTaskId: string) => string): SubmitOutcome =>
    outcome._tag === "Accepted" ? { _tag: "Accepted", providerTaskId: stage(outcome.providerTaskId) } : outcome

  const submitExport = Effect.fn("SunoHttpProvider.submitExport")(function* (submission: ExportSubmission) {
    yield* Effect.annotateCurrentSpan({ exportId: submission.exportId, format: submission.format })
    const { source, callbackUrl } = submission
    switch (submission.format) {
      case "wav":
        return accepted(yield* create("/api/v1/wav/generate", wavBody(source, callbackUrl)), (upstreamTaskId) =>
          encodeExportId({ stage: "wav", upstreamTaskId })
        )
      case "stems":
        return accepted(
          yield* create("/api/v1/vocal-removal/generate", separationBody(source, callbackUrl)),
          (upstreamTaskId) => encodeExportId({ stage: "stems", upstreamTaskId })
        )
      case "midi":
        // The upstream transcribes separated parts: separation first, transcription once it is done.
        return accepted(
          yield* create("/api/v1/vocal-removal/generate", separationBody(source, callbackUrl)),
          (upstreamTaskId) => encodeExportId({ stage: "midi-separation", upstreamTaskId, callbackUrl })
        )
      case "timed_lyrics":
        // Answered at once by the upstream, so there is nothing to create: each poll asks.
        return {
          _tag: "Accepted",
          providerTaskId: encodeExportId({
            stage: "lyrics",
            taskId: source.providerTaskId,
            audioId: source.providerTrackId
          })
        } as const
    }
  })

  const unknownExport = (message: string): ExportPollOutcome => ({ _tag: "Unknown", message })

  /** A finished separation moves a MIDI export on to its transcription, submitted now. */
  const transcribe = (separationTaskId: string, callbackUrl: string | null): Effect.Effect<ExportPollOutcome> =>
    Effect.map(
      create("/api/v1/midi/generate", midiBody(separationTaskId, callbackUrl)),
      (outcome): ExportPollOutcome => {
        switch (outcome._tag) {
          case "Accepted":
            return {
              _tag: "Pending",
              providerExportId: encodeExportId({ stage: "midi", upstreamTaskId: outcome.providerTaskId })
            }
          case "Rejected":
            // Too frequent or maintenance passes: the separation stays, and the next poll asks again.
            return outcome.countsTowardCircuit
              ? { _tag: "Unknown", message: outcome.message }
              : { _tag: "Failed", code: outcome.code, message: outcome.message }
          case "Unknown":
            return outcome
        }
      }
    )

  const pollExport = Effect.fnUntraced(function* (providerExportId: string, format: ExportFormat) {
    const stage = decodeExportId(providerExportId)
    const expected =
      stage === null
        ? null
        : stage.stage === "lyrics"
          ? "timed_lyrics"
          : stage.stage === "midi-separation"
            ? "midi"
            : stage.stage
    if (stage === null || expected !== format) {
      // The id itself stays out of the message: it may hold the export's callback token.
      return {
        _tag: "Failed",
        code: "provider_error",
        message: `The upstream has no ${format} export under this id`
      } as const
    }
    switch (stage.stage) {
      case "wav":
        return yield* recordInfo("/api/v1/wav/record-info", stage.upstreamTaskId, interpretWavRecordInfo, unknownExport)
      case "stems":
        return yield* recordInfo(
          "/api/v1/vocal-removal/record-info",
          stage.upstreamTaskId,
          interpretSeparationRecordInfo,
          unknownExport
        )
      case "midi-separation": {
        const separation = yield* recordInfo(
          "/api/v1/vocal-removal/record-info",
          stage.upstreamTaskId,
          interpretSeparationRecordInfo,
          unknownExport
        )
        return separation._tag === "Succeeded" ? yield* transcribe(stage.upstreamTaskId, stage.callbackUrl) : separation
      }
      case "midi": {
        const transcription = yield* recordInfo(
          "/api/v1/midi/record-info",
          stage.upstreamTaskId,
          interpretMidiRecordInfo,
          (message): MidiRecordOutcome => ({ _tag: "Unknown", message })
        )
        return transcription._tag === "Transcribed"
          ? ({ _tag: "Succeeded", files: [transcriptionFile(transcription.instruments)], timedLyrics: null } as const)
          : transcription
      }
      case "lyrics":
        return yield* exchange({
          method: "POST",
          url: new URL(`${baseUrl}/api/v1/generate/get-timestamped-lyrics`),
          body: JSON.stringify(timestampedLyricsBody(stage.taskId, stage.audioId))
        }).pipe(
          Effect.map(interpretTimestampedLyrics),
          Effect.catch((failure) => Effect.succeed(unknownExport(failure.message)))
        )
    }
  })

  // Untraced: every worker poll of every task comes through here.
  const poll = (providerTaskId: string): Effect.Effect<PollOutcome> =>
    recordInfo(
      "/api/v1/generate/record-info",
      providerTaskId,
      interpretRecordInfo,
      (message): PollOutcome => ({ _tag: "Unknown", message })
    )

  const createPersona = Effect.fn("SunoHttpProvider.createPersona")(function* (submission: PersonaSubmission) {
    return yield* exchange({
      method: "POST",
      url: new URL(`${baseUrl}/api/v1/generate/generate-persona`),
      body: JSON.stringify(personaBody(submission))
    }).pipe(
      Effect.map(interpretPersona),
      Effect.catch((failure) => Effect.succeed<PersonaOutcome>({ _tag: "Rejected", message: failure.message }))
    )
  })

  return SunoHttpProvider.of({ submit, poll, submitExport, pollExport, createPersona, parseCallback })
})
