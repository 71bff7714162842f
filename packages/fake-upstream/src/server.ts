import { randomUUID } from "node:crypto"
import { Agent as HttpAgent, createServer, request as httpRequest } from "node:http"
import type { ClientRequest, IncomingMessage, ServerResponse } from "node:http"
import { Agent as HttpsAgent, request as httpsRequest } from "node:https"
import type { AddressInfo } from "node:net"
import { autoStages, defaultBehaviour } from "./behaviour.ts"
import type { Behaviour, CallbackStage, ResolvedBehaviour, UpstreamStatus } from "./behaviour.ts"
import { makeAudio, PNG } from "./files.ts"
import { callbackBody, recordInfoBody } from "./payloads.ts"
import type { CallbackRecord, PollRecord, SubmissionRecord, ToolPollRecord, ToolRequestRecord } from "./records.ts"
import { currentStatus, stageProgress, trackDuration } from "./task.ts"
import type { FakeTask } from "./task.ts"
import {
  jobCallbackBody,
  jobDone,
  jobFlag,
  jobRecordBody,
  jobSucceeded,
  makeWav,
  partFile,
  partsFor,
  timestampedLyricsBody
} from "./tools.ts"
import type { FakeJob, JobKind, ToolKind } from "./tools.ts"
import { validateDerived, validatePersona } from "./derived.ts"
import { lyricsCallbackBody, lyricsRecordBody, lyricsStatus, validateLyrics } from "./lyrics.ts"
import type { FakeLyrics } from "./lyrics.ts"
import type { DerivedEndpoint } from "./derived.ts"
import { validateExtend, validateGenerate, validateMidi, validateTrackTool } from "./validate.ts"
import type { ExtendRequest, GenerateRequest, KnownTrack } from "./validate.ts"

export interface FakeUpstreamOptions {
  /** The key `Authorization: Bearer ...` must carry. */
  readonly apiKey: string
  /** 0 (default) picks a free port. */
  readonly port?: number
  /** Size of every audio file served, in bytes (default 64 KiB; benches use 1 MB). */
  readonly audioBytes?: number
}

/** A song tool's task as tests see it. */
export interface JobView {
  readonly kind: JobKind
  readonly taskId: string
  readonly audioId: string
  readonly flag: string | number
  readonly polls: number
  readonly callBackUrl: string | null
  /** A separation's part ids (what `midi/generate` may name as `audioId`). */
  readonly partIds: ReadonlyArray<string>
}

/** A task as tests see it. */
export interface TaskView {
  readonly taskId: string
  readonly title: string
  readonly status: UpstreamStatus
  readonly polls: number
  readonly callBackUrl: string | null
  readonly trackIds: ReadonlyArray<string>
}

export interface FakeUpstreamControl {
  /** Replaces the default behaviour (fields not given keep the well-behaved defaults). */
  setDefault(behaviour: Behaviour): void
  /** Every submission whose title is exactly `title` behaves so. Title rules win over `next`. */
  onTitle(title: string, behaviour: Behaviour): void
  /** The next submissions, in order, behave so (one behaviour each). */
  next(...behaviours: ReadonlyArray<Behaviour>): void
  /**
   * Every `kind` request on a track of a task titled `title` behaves so (for MIDI: on a
   * separation of such a track). Wins over `nextTool`.
   */
  onTrackOf(title: string, kind: ToolKind, behaviour: Behaviour): void
  /** The next `kind` requests, in order, behave so. */
  nextTool(kind: ToolKind, ...behaviours: ReadonlyArray<Behaviour>): void
  /** Forgets rules and records; tasks already created stay. */
  reset(): void
  readonly submissions: ReadonlyArray<SubmissionRecord>
  readonly polls: ReadonlyArray<PollRecord>
  readonly callbacks: ReadonlyArray<CallbackRecord>
  /** Paths of the files downloaded. */
  readonly downloads: ReadonlyArray<string>
  /** Every `uploadUrl` the fake fetched, and the HTTP status it got (null: no answer). */
  readonly uploads: ReadonlyArray<{ readonly url: string; readonly status: number | null }>
  /** The personas made, by the upstream's `personaId`. */
  readonly personas: ReadonlyArray<{ readonly personaId: string; readonly audioId: string; readonly name: string }>
  submissionsFor(title: string): ReadonlyArray<SubmissionRecord>
  /** Requests to the song tools' endpoints, and their record-info polls. */
  readonly toolRequests: ReadonlyArray<ToolRequestRecord>
  readonly toolPolls: ReadonlyArray<ToolPollRecord>
  toolRequestsFor(kind: ToolKind): ReadonlyArray<ToolRequestRecord>
  task(taskId: string): TaskView | undefined
  job(taskId: string): JobView | undefined
  /** A lyrics task (`POST /api/v1/lyrics`): its status now, polls and prompt. */
  lyrics(taskId: string): { readonly status: string; readonly polls: number; readonly prompt: string } | undefined
  /**
   * Sends one callback now (to the task's `callBackUrl` unless `url` is given), whatever the task's
   * state. With `advance`, record-info first shows what the callback announces (as the scheduled
   * callbacks do), so `complete` finishes a task that polls alone would keep pending.
   */
  sendCallback(
    taskId: string,
    stage: CallbackStage,
    options?: { readonly url?: string; readonly advance?: boolean }
  ): Promise<CallbackRecord>
  /** Resolves once every callback scheduled so far has been sent and answered. */
  settled(): Promise<void>
  /** The most connections the fake held open at once, since it started or was reset. */
  mostConnections(): number
}

export interface FakeUpstream {
  /** `http://127.0.0.1:<port>`: the `PROVIDER_URL`. */
  readonly url: string
  readonly control: FakeUpstreamControl
  /** Stops the server, drops hanging requests and cancels pending callbacks. */
  close(): Promise<void>
}

const MAX_BODY = 1024 * 1024
const CALLBACK_TIMEOUT_MS = 15_000

const json = (res: ServerResponse, status: number, body: unknown): void => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) }).end(text)
}

const readBody = (req: IncomingMessage): Promise<string | null> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size <= MAX_BODY) chunks.push(chunk)
    })
    req.on("end", () => resolve(size > MAX_BODY ? null : Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

/** Starts a real HTTP server on 127.0.0.1 speaking the upstream contract of DESIGN.md section 6. */
export const startFakeUpstream = async (options: FakeUpstreamOptions): Promise<FakeUpstream> => {
  const audio = makeAudio(options.audioBytes ?? 64 * 1024)
  const wavBytes = makeWav(options.audioBytes ?? 64 * 1024)
  const tasks = new Map<string, FakeTask>()
  const filesOf = new Map<string, FakeTask>()
  let base: ResolvedBehaviour = defaultBehaviour
  let byTitle = new Map<string, Behaviour>()
  let queue: Array<Behaviour> = []
  let toolRules = new Map<string, Behaviour>()
  let toolQueues = new Map<ToolKind, Array<Behaviour>>()
  const jobs = new Map<string, FakeJob>()
  const lyricsTasks = new Map<string, FakeLyrics>()
  /** Served file names of the song tools' results, to the job that made each. */
  const jobFiles = new Map<string, FakeJob>()
  const toolRequests: Array<ToolRequestRecord> = []
  const toolPolls: Array<ToolPollRecord> = []
  const submissions: Array<SubmissionRecord> = []
  const polls: Array<PollRecord> = []
  const callbacks: Array<CallbackRecord> = []
  const downloads: Array<string> = []
  const uploads: Array<{ readonly url: string; readonly status: number | null }> = []
  const personas: Array<{ readonly personaId: string; readonly audioId: string; readonly name: string }> = []
  const inFlight = new Set<Promise<unknown>>()
  /** Callbacks waiting for their delay, with the function that marks them done if cancelled. */
  const timers = new Map<NodeJS.Timeout, () => void>()
  const aborter = new AbortController()
  /** Callbacks in flight, destroyed on close. */
  const sending = new Set<ClientRequest>()
  let url = ""

  const behaviourFor = (title: string): ResolvedBehaviour => {
    const rule = byTitle.get(title) ?? queue.shift() ?? {}
    return { ...base, ...rule }
  }

  const toolRuleKey = (title: string, kind: ToolKind): string => `${kind}\u0000${title}`

  const toolBehaviourFor = (kind: ToolKind, sourceTitle: string): ResolvedBehaviour => {
    const rule = toolRules.get(toolRuleKey(sourceTitle, kind)) ?? toolQueues.get(kind)?.shift() ?? {}
    return { ...base, ...rule }
  }

  /** A track the fake handed out, as the song tools' checks see it. */
  const knownTrack = (audioId: string): KnownTrack | undefined => {
    const task = filesOf.get(audioId)
    if (task === undefined) return undefined
    const status = currentStatus(task)
    return {
      taskId: task.taskId,
      model: task.model,
      duration: trackDuration(task, task.trackIds.indexOf(audioId)),
      ready: status === "SUCCESS" || status === "CALLBACK_EXCEPTION"
    }
  }

  const track = <A>(promise: Promise<A>): Promise<A> => {
    inFlight.add(promise)
    void promise.finally(() => inFlight.delete(promise))
    return promise
  }

  // Callbacks go out over node:http with kept-alive connections: a benchmark sends thousands,
  // and fetch cost several times as much per request.
  const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) }

  /** POSTs `text` to `target`; answers the status, or an error message. Redirects are not followed. */
  const post = (
    target: string,
    text: string
  ): Promise<{ readonly statusCode: number | null; readonly error: string | null }> =>
    new Promise((resolve) => {
      let url: URL
      try {
        url = new URL(target)
      } catch {
        return resolve({ statusCode: null, error: `Invalid URL ${target}` })
      }
      const secure = url.protocol === "https:"
      if (!secure && url.protocol !== "http:")
        return resolve({ statusCode: null, error: `Unsupported protocol ${url.protocol}` })
      if (aborter.signal.aborted) return resolve({ statusCode: null, error: "The fake upstream is closed" })
      const headers = { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) }
      // Closing destroys the callbacks in flight (a set of requests: a signal per request cost
      // listeners on every one).
      const options = { method: "POST", headers }
      const request = secure
        ? httpsRequest(url, { ...options, agent: agents.https })
        : httpRequest(url, { ...options, agent: agents.http })
      let settled = false
      const finish = (statusCode: number | null, error: string | null): void => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        sending.delete(request)
        resolve({ statusCode, error })
      }
      sending.add(request)
      const timer = setTimeout(
        () => request.destroy(new Error(`No answer within ${CALLBACK_TIMEOUT_MS} ms`)),
        CALLBACK_TIMEOUT_MS
      )
      request.on("response", (response) => {
        const statusCode = response.statusCode ?? null
        response.on("error", (cause) => finish(statusCode, cause.message))
        response.on("end", () => finish(statusCode, null))
        response.on("close", () => finish(statusCode, "The answer was cut short"))
        response.resume()
      })
      request.on("error", (cause) => finish(null, cause.message))
      request.end(text)
    })

  const sendCallback = async (task: FakeTask, stage: CallbackStage, target: string): Promise<CallbackRecord> => {
    const body = callbackBody(task, url, stage)
    const { statusCode, error } = await post(target, JSON.stringify(body))
    const record: CallbackRecord = { at: Date.now(), taskId: task.taskId, stage, url: target, body, statusCode, error }
    callbacks.push(record)
    return record
  }

  /** Sends the behaviour's callbacks, one after another, each `callbackCopies` times. */
  const scheduleCallbacks = (task: FakeTask): void => {
    const target = task.callBackUrl
    const plan = task.behaviour.callbacks
    if (target === null || plan === "none") return
    const stages = plan === "auto" ? autoStages(task.behaviour.outcome) : plan
    let release = (): void => {}
    track(new Promise<void>((resolve) => (release = resolve)))
    const timer = setTimeout(() => {
      timers.delete(timer)
      const run = async (): Promise<void> => {
        for (const stage of stages) {
          // Record-info must already show what the callback announces.
          task.callbackProgress = Math.max(task.callbackProgress, stageProgress(stage))
          for (let copy = 0; copy < task.behaviour.callbackCopies && !aborter.signal.aborted; copy++) {
            await sendCallback(task, stage, target)
          }
        }
      }
      void run().finally(release)
    }, task.behaviour.callbackDelayMs)
    timers.set(timer, release)
  }

  const sendJobCallback = async (job: FakeJob, target: string): Promise<CallbackRecord> => {
    const body = jobCallbackBody(job, url)
    const { statusCode, error } = await post(target, JSON.stringify(body))
    const stage = jobSucceeded({ ...job, called: true }) ? "complete" : "error"
    const record: CallbackRecord = { at: Date.now(), taskId: job.taskId, stage, url: target, body, statusCode, error }
    callbacks.push(record)
    return record
  }

  /** A song tool calls back once, when done (`callbackCopies` times); any plan but "none" sends it. */
  const scheduleJobCallback = (job: FakeJob): void => {
    const target = job.callBackUrl
    if (target === null || job.behaviour.callbacks === "none") return
    let release = (): void => {}
    track(new Promise<void>((resolve) => (release = resolve)))
    const timer = setTimeout(() => {
      timers.delete(timer)
      const run = async (): Promise<void> => {
        // Record-info must already show what the callback announces.
        job.called = true
        for (let copy = 0; copy < job.behaviour.callbackCopies && !aborter.signal.aborted; copy++) {
          await sendJobCallback(job, target)
        }
      }
      void run().finally(release)
    }, job.behaviour.callbackDelayMs)
    timers.set(timer, release)
  }

  const newTaskId = (): string => randomUUID().replaceAll("-", "")

  /** A lyrics task calls back once, when done (`callbackCopies` times); any plan but "none" sends it. */
  const scheduleLyricsCallback = (task: FakeLyrics): void => {
    if (task.behaviour.callbacks === "none") return
    let release = (): void => {}
    track(new Promise<void>((resolve) => (release = resolve)))
    const timer = setTimeout(() => {
      timers.delete(timer)
      const run = async (): Promise<void> => {
        task.called = true
        const body = lyricsCallbackBody(task)
        for (let copy = 0; copy < task.behaviour.callbackCopies && !aborter.signal.aborted; copy++) {
          const { statusCode, error } = await post(task.callBackUrl, JSON.stringify(body))
          const stage = body.code === 200 ? "complete" : "error"
          callbacks.push({ at: Date.now(), taskId: task.taskId, stage, url: task.callBackUrl, body, statusCode, error })
        }
      }
      void run().finally(release)
    }, task.behaviour.callbackDelayMs)
    timers.set(timer, release)
  }

  const createJob = (
    kind: JobKind,
    fields: Pick<FakeJob, "audioId" | "duration" | "callBackUrl" | "parts" | "separationTaskId">,
    behaviour: ResolvedBehaviour
  ): FakeJob => {
    const job: FakeJob = {
      kind,
      taskId: newTaskId(),
      behaviour,
      createTime: Date.now(),
      polls: 0,
      called: false,
      ...fields
    }
    jobs.set(job.taskId, job)
    if (kind === "wav") jobFiles.set(`${job.taskId}.wav`, job)
    for (const part of job.parts) jobFiles.set(partFile(part), job)
    scheduleJobCallback(job)
    return job
  }

  const createTask = (
    request: GenerateRequest,
    behaviour: ResolvedBehaviour,
    extra: { readonly baseDuration: number; readonly instrumental: boolean } = {
      baseDuration: 120,
      instrumental: request.instrumental
    }
  ): FakeTask => {
    const taskId = newTaskId()
    const task: FakeTask = {
      taskId,
      title: request.title,
      style: request.style,
      prompt: request.prompt,
      model: request.model,
      callBackUrl: request.callBackUrl,
      behaviour,
      trackIds: Array.from({ length: behaviour.trackCount }, () => randomUUID()),
      baseDuration: extra.baseDuration,
      instrumental: extra.instrumental,
      createTime: Date.now(),
      polls: 0,
      callbackProgress: 0
    }
    tasks.set(taskId, task)
    for (const id of task.trackIds) filesOf.set(id, task)
    scheduleCallbacks(task)
    return task
  }

  const authorized = (req: IncomingMessage): boolean => req.headers.authorization === `Bearer ${options.apiKey}`

  type Answer = "accepted" | "rejected" | "http_error" | "hang" | "dropped"
  /** An endpoint's checks: the request, or the body code and message refusing it. */
  type Checked<R> =
    | { readonly _tag: "Valid"; readonly request: R }
    | { readonly _tag: "Refused"; readonly code: number; readonly msg: string }

  /**
   * One creating endpoint, as the upstream answers them all: the body read whole (413 past the
   * limit), JSON (400), the key (401), the endpoint's checks (400 or its own code), then what the
   * behaviour says: accept (the endpoint's answer), a body code, an HTTP error page, a hang, a drop.
   */
  const submitTo = async <R>(
    req: IncomingMessage,
    res: ServerResponse,
    endpoint: {
      readonly record: (
        fields: { readonly answer: Answer; readonly taskId: string | null; readonly code: number | null },
        body: unknown
      ) => void
      readonly validate: (body: unknown) => Checked<R> | Promise<Checked<R>>
      readonly behaviourOf: (request: R) => ResolvedBehaviour
      /** Creates what the request asks for; answers the task id (null: nothing to keep) and the answer's data. */
      readonly accept: (
        request: R,
        behaviour: ResolvedBehaviour
      ) => { readonly taskId: string | null; readonly data: unknown }
    }
  ): Promise<void> => {
    const { record } = endpoint
    const text = await readBody(req)
    if (text === null) {
      record({ answer: "rejected", taskId: null, code: 413 }, null)
      return json(res, 200, { code: 413, msg: "Request body too large", data: null })
    }
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      record({ answer: "rejected", taskId: null, code: 400 }, text)
      return json(res, 200, { code: 400, msg: "Body is not JSON", data: null })
    }
    if (!authorized(req)) {
      record({ answer: "rejected", taskId: null, code: 401 }, body)
      return json(res, 200, { code: 401, msg: "Unauthorized", data: null })
    }
    const checked = await endpoint.validate(body)
    if (checked._tag === "Refused") {
      record({ answer: "rejected", taskId: null, code: checked.code }, body)
      return json(res, 200, { code: checked.code, msg: checked.msg, data: null })
    }
    const valid = checked.request
    const behaviour = endpoint.behaviourOf(valid)
    const submit = behaviour.submit
    if (submit === "hang") return record({ answer: "hang", taskId: null, code: null }, body)
    if (submit === "drop") {
      record({ answer: "dropped", taskId: null, code: null }, body)
      req.socket.destroy()
      return
    }
    if (submit === "accept-then-hang") {
      return record({ answer: "hang", taskId: endpoint.accept(valid, behaviour).taskId, code: null }, body)
    }
    if (submit === "accept") {
      const { taskId, data } = endpoint.accept(valid, behaviour)
      record({ answer: "accepted", taskId, code: 200 }, body)
      return json(res, 200, { code: 200, msg: "success", data })
    }
    if ("answerWhen" in submit) {
      if (submit.code !== undefined && submit.code !== 200) {
        record({ answer: "rejected", taskId: null, code: submit.code }, body)
        await submit.answerWhen
        return json(res, 200, { code: submit.code, msg: `Upstream error ${submit.code}`, data: null })
      }
      const { taskId, data } = endpoint.accept(valid, behaviour)
      record({ answer: "accepted", taskId, code: 200 }, body)
      await submit.answerWhen
      return json(res, 200, { code: 200, msg: "success", data })
    }
    if ("code" in submit) {
      record({ answer: "rejected", taskId: null, code: submit.code }, body)
      return json(res, 200, { code: submit.code, msg: submit.msg ?? `Upstream error ${submit.code}`, data: null })
    }
    record({ answer: "http_error", taskId: null, code: null }, body)
    const page = submit.body ?? `<html><body><h1>${submit.httpStatus}</h1></body></html>`
    res
      .writeHead(submit.httpStatus, { "Content-Type": "text/html", "Content-Length": Buffer.byteLength(page) })
      .end(page)
  }

  const refusal = (msg: string, code = 400) => ({ _tag: "Refused", code, msg }) as const
  const accepted = <R>(request: R) => ({ _tag: "Valid", request }) as const
  /** A validator's answer: its message refuses with code 400. */
  const checked = <R>(result: R | string): Checked<R> =>
    typeof result === "string" ? refusal(result) : accepted(result)

  const recordSubmission =
    (req: IncomingMessage, endpoint: SubmissionRecord["endpoint"]) =>
    (fields: Pick<SubmissionRecord, "answer" | "taskId" | "code">, body: unknown): void => {
      const title =
        typeof body === "object" && body !== null && "title" in body && typeof body.title === "string"
          ? body.title
          : null
      submissions.push({ at: Date.now(), endpoint, authorized: authorized(req), body, title, ...fields })
    }

  const recordTool =
    (req: IncomingMessage, kind: ToolKind) =>
    (fields: Pick<ToolRequestRecord, "answer" | "taskId" | "code">, body: unknown): void => {
      toolRequests.push({ at: Date.now(), kind, authorized: authorized(req), body, ...fields })
    }

  const generate = (req: IncomingMessage, res: ServerResponse) =>
    submitTo(req, res, {
      record: recordSubmission(req, "generate"),
      validate: (body) => checked(validateGenerate(body)),
      behaviourOf: (request) => behaviourFor(request.title),
      accept: (request, behaviour) => {
        const taskId = createTask(request, behaviour).taskId
        return { taskId, data: { taskId } }
      }
    })

  /** An extension is a generation task of its own: the source up to `continueAt`, then more. */
  const extend = (req: IncomingMessage, res: ServerResponse) =>
    submitTo(req, res, {
      record: recordSubmission(req, "extend"),
      validate: (body): Checked<ExtendRequest> => {
        const request = validateExtend(body, knownTrack)
        if (typeof request === "string") return refusal(request)
        const source = filesOf.get(request.audioId)
        if (!request.inherit || source === undefined) return accepted(request)
        return accepted({
          ...request,
          title: source.title,
          style: source.style,
          prompt: source.prompt,
          instrumental: source.instrumental
        })
      },
      behaviourOf: (request) => behaviourFor(request.title),
      accept: (request, behaviour) => {
        const source = filesOf.get(request.audioId)
        const taskId = createTask(request, behaviour, {
          baseDuration: request.continueAt + 60,
          instrumental: request.inherit ? (source?.instrumental ?? false) : false
        }).taskId
        return { taskId, data: { taskId } }
      }
    })

  const sourceTitle = (audioId: string): string => filesOf.get(audioId)?.title ?? ""

  /** Fetches an `uploadUrl` as the upstream does before it takes the task: whole, within 10 s. */
  const fetchUpload = async (target: string): Promise<boolean> => {
    const status = await fetch(target, { signal: AbortSignal.timeout(10_000) }).then(
      async (response) => {
        await response.arrayBuffer()
        return response.status
      },
      () => null
    )
    uploads.push({ url: target, status })
    return status === 200
  }

  /** The endpoints that make a song from another: a generation task of their own, polled as any. */
  const derived = (endpoint: DerivedEndpoint) => (req: IncomingMessage, res: ServerResponse) =>
    submitTo(req, res, {
      record: recordSubmission(req, endpoint),
      validate: async (body) => {
        const request = validateDerived(endpoint, body, knownTrack)
        if (typeof request === "string") return refusal(request)
        if (request.uploadUrl !== null && !(await fetchUpload(request.uploadUrl)))
          return refusal("uploadUrl could not be fetched")
        return accepted(request)
      },
      behaviourOf: (request) => behaviourFor(request.title),
      accept: (request, behaviour) => {
        const taskId = createTask(request, behaviour, {
          baseDuration: request.baseDuration,
          instrumental: request.instrumental
        }).taskId
        return { taskId, data: { taskId } }
      }
    })

  /** A persona is made at once; each audio makes one. */
  const persona = (req: IncomingMessage, res: ServerResponse) =>
    submitTo(req, res, {
      record: recordSubmission(req, "generate-persona"),
      validate: (body) => {
        const request = validatePersona(body, knownTrack)
        if (typeof request === "string") return refusal(request)
        return personas.some((made) => made.audioId === request.audioId)
          ? refusal("A persona already exists for this audio", 409)
          : accepted(request)
      },
      behaviourOf: (request) => behaviourFor(request.name),
      accept: (request) => {
        const personaId = newTaskId()
        personas.push({ personaId, audioId: request.audioId, name: request.name })
        return { taskId: null, data: { personaId, name: request.name, description: request.description } }
      }
    })

  const wav = (req: IncomingMessage, res: ServerResponse) =>
    submitTo(req, res, {
      record: recordTool(req, "wav"),
      validate: (body) => {
        const request = validateTrackTool(body, knownTrack, "wav")
        if (typeof request === "string") return refusal(request)
        // One WAV record per track, as the upstream keeps them: a second is a conflict.
        const existing = [...jobs.values()].some(
          (job) => job.kind === "wav" && job.audioId === request.audioId && (!jobDone(job) || jobSucceeded(job))
        )
        return existing ? refusal("WAV record already exists", 409) : accepted(request)
      },
      behaviourOf: (request) => toolBehaviourFor("wav", sourceTitle(request.audioId)),
      accept: (request, behaviour) => {
        const taskId = createJob(
          "wav",
          {
            audioId: request.audioId,
            duration: knownTrack(request.audioId)?.duration ?? 0,
            callBackUrl: request.callBackUrl,
            parts: [],
            separationTaskId: null
          },
          behaviour
        ).taskId
        return { taskId, data: { taskId } }
      }
    })

  const separate = (req: IncomingMessage, res: ServerResponse) =>
    submitTo(req, res, {
      record: recordTool(req, "vocal-removal"),
      validate: (body) => checked(validateTrackTool(body, knownTrack, "vocal-removal")),
      behaviourOf: (request) => toolBehaviourFor("vocal-removal", sourceTitle(request.audioId)),
      accept: (request, behaviour) => {
        const taskId = createJob(
          "vocal-removal",
          {
            audioId: request.audioId,
            duration: knownTrack(request.audioId)?.duration ?? 0,
            callBackUrl: request.callBackUrl,
            parts: partsFor(request.type, randomUUID),
            separationTaskId: null
          },
          behaviour
        ).taskId
        return { taskId, data: { taskId } }
      }
    })

  const midi = (req: IncomingMessage, res: ServerResponse) =>
    submitTo(req, res, {
      record: recordTool(req, "midi"),
      validate: (body) =>
        checked(
          validateMidi(body, (taskId) => {
            const job = jobs.get(taskId)
            return job?.kind === "vocal-removal"
              ? { ready: jobSucceeded(job), partIds: job.parts.map((part) => part.id) }
              : undefined
          })
        ),
      behaviourOf: (request) => toolBehaviourFor("midi", sourceTitle(jobs.get(request.taskId)?.audioId ?? "")),
      accept: (request, behaviour) => {
        const separation = jobs.get(request.taskId)
        const taskId = createJob(
          "midi",
          {
            audioId: separation?.audioId ?? "",
            duration: separation?.duration ?? 0,
            callBackUrl: request.callBackUrl,
            parts: [],
            separationTaskId: request.taskId
          },
          behaviour
        ).taskId
        return { taskId, data: { taskId } }
      }
    })

  /** Answered at once: nothing is created, the words come in the answer. */
  const timestampedLyrics = (req: IncomingMessage, res: ServerResponse) =>
    submitTo(req, res, {
      record: recordTool(req, "timestamped-lyrics"),
      validate: (body) => checked(validateTrackTool(body, knownTrack, "timestamped-lyrics")),
      behaviourOf: (request) => toolBehaviourFor("timestamped-lyrics", sourceTitle(request.audioId)),
      accept: (request) => {
        const task = filesOf.get(request.audioId)
        const duration = knownTrack(request.audioId)?.duration ?? 0
        const lyrics = task === undefined || task.instrumental ? "" : task.prompt
        return { taskId: null, data: timestampedLyricsBody(lyrics, duration).data }
      }
    })

  const lyrics = (req: IncomingMessage, res: ServerResponse) =>
    submitTo(req, res, {
      record: recordTool(req, "lyrics"),
      validate: (body) => {
        const request = validateLyrics(body)
        return "code" in request ? refusal(request.msg, request.code) : accepted(request)
      },
      behaviourOf: () => toolBehaviourFor("lyrics", ""),
      accept: (request, behaviour) => {
        const task: FakeLyrics = { taskId: newTaskId(), ...request, behaviour, polls: 0, called: false }
        lyricsTasks.set(task.taskId, task)
        scheduleLyricsCallback(task)
        return { taskId: task.taskId, data: { taskId: task.taskId } }
      }
    })

  const lyricsRecordInfo = (req: IncomingMessage, res: ServerResponse, query: URLSearchParams): void => {
    const taskId = query.get("taskId") ?? ""
    if (!authorized(req)) return json(res, 200, { code: 401, msg: "Unauthorized", data: null })
    const task = lyricsTasks.get(taskId)
    if (task === undefined)
      return json(res, 200, { code: taskId === "" ? 400 : 404, msg: "Task not found", data: null })
    const poll = task.behaviour.poll
    if (poll === "hang") return
    if (poll !== "answer" && "code" in poll)
      return json(res, 200, { code: poll.code, msg: poll.msg ?? `Upstream error ${poll.code}`, data: null })
    if (poll !== "answer") {
      res.writeHead(poll.httpStatus, { "Content-Type": "text/html" }).end(poll.body ?? "<html></html>")
      return
    }
    const body = lyricsRecordBody(task)
    task.polls++
    json(res, 200, body)
  }

  const recordInfo = (req: IncomingMessage, res: ServerResponse, query: URLSearchParams): void => {
    const taskId = query.get("taskId") ?? ""
    if (!authorized(req)) return json(res, 200, { code: 401, msg: "Unauthorized", data: null })
    const task = tasks.get(taskId)
    if (task === undefined) {
      polls.push({ at: Date.now(), taskId, status: null })
      return json(res, 200, {
        code: taskId === "" ? 400 : 404,
        msg: taskId === "" ? "taskId is required" : "Task not found",
        data: null
      })
    }
    const poll = task.behaviour.poll
    if (poll !== "answer") {
      polls.push({ at: Date.now(), taskId, status: null })
      if (poll === "hang") return
      if ("code" in poll)
        return json(res, 200, { code: poll.code, msg: poll.msg ?? `Upstream error ${poll.code}`, data: null })
      const page = poll.body ?? `<html><body><h1>${poll.httpStatus}</h1></body></html>`
      res.writeHead(poll.httpStatus, { "Content-Type": "text/html" }).end(page)
      return
    }
    const body = recordInfoBody(task, url)
    task.polls++
    polls.push({ at: Date.now(), taskId, status: body.data.status })
    json(res, 200, body)
  }

  const jobRecordInfo = (req: IncomingMessage, res: ServerResponse, kind: JobKind, query: URLSearchParams): void => {
    const taskId = query.get("taskId") ?? ""
    if (!authorized(req)) return json(res, 200, { code: 401, msg: "Unauthorized", data: null })
    const job = jobs.get(taskId)
    if (job === undefined || job.kind !== kind) {
      toolPolls.push({ at: Date.now(), kind, taskId, flag: null })
      return json(res, 200, {
        code: taskId === "" ? 400 : 404,
        msg: taskId === "" ? "taskId is required" : "Task not found",
        data: null
      })
    }
    const poll = job.behaviour.poll
    if (poll !== "answer") {
      toolPolls.push({ at: Date.now(), kind, taskId, flag: null })
      if (poll === "hang") return
      if ("code" in poll)
        return json(res, 200, { code: poll.code, msg: poll.msg ?? `Upstream error ${poll.code}`, data: null })
      const page = poll.body ?? `<html><body><h1>${poll.httpStatus}</h1></body></html>`
      res.writeHead(poll.httpStatus, { "Content-Type": "text/html" }).end(page)
      return
    }
    const body = jobRecordBody(job, url)
    job.polls++
    toolPolls.push({ at: Date.now(), kind, taskId, flag: body.data.successFlag })
    json(res, 200, body)
  }

  /** What a served file name is, and whose: a track's audio or cover, or a song tool's result. */
  const fileOf = (
    name: string
  ): { readonly bytes: Buffer; readonly type: string; readonly missing: boolean } | undefined => {
    const owned = jobFiles.get(name)
    if (owned !== undefined) {
      if (!jobSucceeded(owned)) return undefined
      return name.endsWith(".wav")
        ? { bytes: wavBytes, type: "audio/wav", missing: owned.behaviour.files === "missing" }
        : { bytes: audio, type: "audio/mpeg", missing: owned.behaviour.files === "missing" }
    }
    const match = /^([0-9a-f-]+)\.(mp3|png)$/.exec(name)
    const task = match?.[1] === undefined ? undefined : filesOf.get(match[1])
    if (match === null || task === undefined) return undefined
    return match[2] === "mp3"
      ? { bytes: audio, type: "audio/mpeg", missing: task.behaviour.files === "missing" }
      : { bytes: PNG, type: "image/png", missing: task.behaviour.files === "missing" }
  }

  const file = (req: IncomingMessage, res: ServerResponse, name: string): void => {
    const found = fileOf(name)
    if (found === undefined || found.missing) {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("not found")
      return
    }
    downloads.push(`/files/${name}`)
    const bytes = found.bytes
    res.writeHead(200, { "Content-Type": found.type, "Content-Length": bytes.length })
    res.end(req.method === "HEAD" ? undefined : bytes)
  }

  /** A track's audio while it is made: chunked (no length), half, then the rest or a broken connection. */
  const stream = (req: IncomingMessage, res: ServerResponse, name: string): void => {
    const match = /^([0-9a-f-]+)\.mp3$/.exec(name)
    const task = match?.[1] === undefined ? undefined : filesOf.get(match[1])
    if (task === undefined) {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("not found")
      return
    }
    downloads.push(`/stream/${name}`)
    res.writeHead(200, { "Content-Type": "audio/mpeg" })
    if (req.method === "HEAD") {
      res.end()
      return
    }
    const half = audio.length >> 1
    res.write(audio.subarray(0, half), () => {
      if (task.behaviour.stream === "break") res.destroy()
      else res.end(audio.subarray(half))
    })
  }

  const server = createServer((req, res) => {
    const target = new URL(req.url ?? "/", "http://fake")
    const posts: Readonly<Record<string, (req: IncomingMessage, res: ServerResponse) => Promise<void>>> = {
      "/api/v1/generate": generate,
      "/api/v1/generate/extend": extend,
      "/api/v1/wav/generate": wav,
      "/api/v1/vocal-removal/generate": separate,
      "/api/v1/midi/generate": midi,
      "/api/v1/generate/get-timestamped-lyrics": timestampedLyrics,
      "/api/v1/generate/upload-cover": derived("upload-cover"),
      "/api/v1/generate/upload-extend": derived("upload-extend"),
      "/api/v1/generate/add-vocals": derived("add-vocals"),
      "/api/v1/generate/add-instrumental": derived("add-instrumental"),
      "/api/v1/generate/replace-section": derived("replace-section"),
      "/api/v1/generate/generate-persona": persona,
      "/api/v1/lyrics": lyrics
    }
    const records: Readonly<Record<string, JobKind>> = {
      "/api/v1/wav/record-info": "wav",
      "/api/v1/vocal-removal/record-info": "vocal-removal",
      "/api/v1/midi/record-info": "midi"
    }
    const post = req.method === "POST" ? posts[target.pathname] : undefined
    const jobKind = req.method === "GET" ? records[target.pathname] : undefined
    if (post !== undefined) {
      void post(req, res).catch(() => res.destroy())
    } else if (jobKind !== undefined) {
      jobRecordInfo(req, res, jobKind, target.searchParams)
    } else if (req.method === "GET" && target.pathname === "/api/v1/lyrics/record-info") {
      lyricsRecordInfo(req, res, target.searchParams)
    } else if (req.method === "GET" && target.pathname === "/api/v1/generate/record-info") {
      recordInfo(req, res, target.searchParams)
    } else if ((req.method === "GET" || req.method === "HEAD") && target.pathname.startsWith("/files/")) {
      file(req, res, target.pathname.slice("/files/".length))
    } else if ((req.method === "GET" || req.method === "HEAD") && target.pathname.startsWith("/stream/")) {
      stream(req, res, target.pathname.slice("/stream/".length))
    } else {
      json(res, 404, { code: 404, msg: "Not found", data: null })
    }
  })
  let openConnections = 0
  let mostConnections = 0
  server.on("connection", (socket) => {
    mostConnections = Math.max(mostConnections, ++openConnections)
    socket.once("close", () => openConnections--)
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, "127.0.0.1", resolve)
  })
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const control: FakeUpstreamControl = {
    setDefault: (behaviour) => {
      base = { ...defaultBehaviour, ...behaviour }
    },
    onTitle: (title, behaviour) => {
      byTitle.set(title, behaviour)
    },
    next: (...behaviours) => {
      queue.push(...behaviours)
    },
    onTrackOf: (title, kind, behaviour) => {
      toolRules.set(toolRuleKey(title, kind), behaviour)
    },
    nextTool: (kind, ...behaviours) => {
      toolQueues.set(kind, [...(toolQueues.get(kind) ?? []), ...behaviours])
    },
    reset: () => {
      base = defaultBehaviour
      byTitle = new Map()
      queue = []
      toolRules = new Map()
      toolQueues = new Map()
      toolRequests.length = 0
      toolPolls.length = 0
      submissions.length = 0
      polls.length = 0
      callbacks.length = 0
      downloads.length = 0
      uploads.length = 0
      mostConnections = openConnections
    },
    submissions,
    polls,
    callbacks,
    downloads,
    uploads,
    personas,
    submissionsFor: (title) => submissions.filter((submission) => submission.title === title),
    toolRequests,
    toolPolls,
    toolRequestsFor: (kind) => toolRequests.filter((request) => request.kind === kind),
    job: (taskId) => {
      const job = jobs.get(taskId)
      return job === undefined
        ? undefined
        : {
            kind: job.kind,
            taskId,
            audioId: job.audioId,
            flag: jobFlag(job),
            polls: job.polls,
            callBackUrl: job.callBackUrl,
            partIds: job.parts.map((part) => part.id)
          }
    },
    lyrics: (taskId) => {
      const task = lyricsTasks.get(taskId)
      return task === undefined ? undefined : { status: lyricsStatus(task), polls: task.polls, prompt: task.prompt }
    },
    task: (taskId) => {
      const task = tasks.get(taskId)
      return task === undefined
        ? undefined
        : {
            taskId,
            title: task.title,
            status: currentStatus(task),
            polls: task.polls,
            callBackUrl: task.callBackUrl,
            trackIds: task.trackIds
          }
    },
    sendCallback: (taskId, stage, extra = {}) => {
      const job = jobs.get(taskId)
      const jobTarget = extra.url ?? job?.callBackUrl
      if (job !== undefined && jobTarget !== undefined && jobTarget !== null)
        return track(sendJobCallback(job, jobTarget))
      const task = tasks.get(taskId)
      const target = extra.url ?? task?.callBackUrl
      if (task === undefined || target === undefined || target === null) {
        return Promise.reject(new Error(`No task ${taskId} with a callback URL`))
      }
      if (extra.advance === true) task.callbackProgress = Math.max(task.callbackProgress, stageProgress(stage))
      return track(sendCallback(task, stage, target))
    },
    settled: async () => {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight])
    },
    mostConnections: () => mostConnections
  }

  return {
    url,
    control,
    close: async () => {
      aborter.abort()
      for (const request of sending) request.destroy(new Error("The fake upstream is closed"))
      for (const [timer, release] of timers) {
        clearTimeout(timer)
        release()
      }
      timers.clear()
      agents.http.destroy()
      agents.https.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
