import { randomUUID } from "node:crypto"
import { Agent as HttpAgent, createServer, request as httpRequest } from "node:http"
import type { ClientRequest, IncomingMessage, ServerResponse } from "node:http"
import { Agent as HttpsAgent, request as httpsRequest } from "node:https"
import type { AddressInfo } from "node:net"
import { autoStages, defaultBehaviour } from "./behaviour.ts"
import type { Behaviour, CallbackStage, ResolvedBehaviour, UpstreamStatus } from "./behaviour.ts"
import { makeAudio, PNG } from "./files.ts"
import { callbackBody, recordInfoBody } from "./payloads.ts"
import type { CallbackRecord, PollRecord, SubmissionRecord } from "./records.ts"
import { currentStatus, stageProgress } from "./task.ts"
import type { FakeTask } from "./task.ts"
import { validateGenerate } from "./validate.ts"

export interface FakeUpstreamOptions {
  /** The key `Authorization: Bearer ...` must carry. */
  readonly apiKey: string
  /** 0 (default) picks a free port. */
  readonly port?: number
  /** Size of every audio file served, in bytes (default 64 KiB; benches use 1 MB). */
  readonly audioBytes?: number
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
  /** Forgets rules and records; tasks already created stay. */
  reset(): void
  readonly submissions: ReadonlyArray<SubmissionRecord>
  readonly polls: ReadonlyArray<PollRecord>
  readonly callbacks: ReadonlyArray<CallbackRecord>
  /** Paths of the files downloaded. */
  readonly downloads: ReadonlyArray<string>
  submissionsFor(title: string): ReadonlyArray<SubmissionRecord>
  task(taskId: string): TaskView | undefined
  /** Sends one callback now (to the task's `callBackUrl` unless `url` is given), whatever the task's state. */
  sendCallback(taskId: string, stage: CallbackStage, options?: { readonly url?: string }): Promise<CallbackRecord>
  /** Resolves once every callback scheduled so far has been sent and answered. */
  settled(): Promise<void>
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
  const tasks = new Map<string, FakeTask>()
  const filesOf = new Map<string, FakeTask>()
  let base: ResolvedBehaviour = defaultBehaviour
  let byTitle = new Map<string, Behaviour>()
  let queue: Array<Behaviour> = []
  const submissions: Array<SubmissionRecord> = []
  const polls: Array<PollRecord> = []
  const callbacks: Array<CallbackRecord> = []
  const downloads: Array<string> = []
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

  const track = <A>(promise: Promise<A>): Promise<A> => {
    inFlight.add(promise)
    void promise.finally(() => inFlight.delete(promise))
    return promise
  }

  // Callbacks go out over node:http with kept-alive connections: a benchmark sends thousands,
  // and fetch cost several times as much per request.
  const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) }

  /** POSTs `text` to `target`; answers the status, or an error message. Redirects are not followed. */
  const post = (target: string, text: string): Promise<{ readonly statusCode: number | null; readonly error: string | null }> =>
    new Promise((resolve) => {
      let url: URL
      try {
        url = new URL(target)
      } catch {
        return resolve({ statusCode: null, error: `Invalid URL ${target}` })
      }
      const secure = url.protocol === "https:"
      if (!secure && url.protocol !== "http:") return resolve({ statusCode: null, error: `Unsupported protocol ${url.protocol}` })
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
      const timer = setTimeout(() => request.destroy(new Error(`No answer within ${CALLBACK_TIMEOUT_MS} ms`)), CALLBACK_TIMEOUT_MS)
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

  const createTask = (request: Exclude<ReturnType<typeof validateGenerate>, string>, behaviour: ResolvedBehaviour): FakeTask => {
    const taskId = randomUUID().replaceAll("-", "")
    const task: FakeTask = {
      taskId,
      title: request.title,
      style: request.style,
      prompt: request.prompt,
      model: request.model,
      callBackUrl: request.callBackUrl,
      behaviour,
      trackIds: Array.from({ length: behaviour.trackCount }, () => randomUUID()),
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

  const generate = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const text = await readBody(req)
    const record = (fields: Omit<SubmissionRecord, "at" | "body" | "title" | "authorized">, body: unknown): void => {
      const title = typeof body === "object" && body !== null && "title" in body && typeof body.title === "string" ? body.title : null
      submissions.push({ at: Date.now(), authorized: authorized(req), body, title, ...fields })
    }
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
    const request = validateGenerate(body)
    if (typeof request === "string") {
      record({ answer: "rejected", taskId: null, code: 400 }, body)
      return json(res, 200, { code: 400, msg: request, data: null })
    }
    const behaviour = behaviourFor(request.title)
    const submit = behaviour.submit
    if (submit === "hang") return record({ answer: "hang", taskId: null, code: null }, body)
    if (submit === "drop") {
      record({ answer: "dropped", taskId: null, code: null }, body)
      req.socket.destroy()
      return
    }
    if (submit === "accept-then-hang") {
      return record({ answer: "hang", taskId: createTask(request, behaviour).taskId, code: null }, body)
    }
    if (submit === "accept") {
      const task = createTask(request, behaviour)
      record({ answer: "accepted", taskId: task.taskId, code: 200 }, body)
      return json(res, 200, { code: 200, msg: "success", data: { taskId: task.taskId } })
    }
    if ("code" in submit) {
      record({ answer: "rejected", taskId: null, code: submit.code }, body)
      return json(res, 200, { code: submit.code, msg: submit.msg ?? `Upstream error ${submit.code}`, data: null })
    }
    record({ answer: "http_error", taskId: null, code: null }, body)
    const page = submit.body ?? `<html><body><h1>${submit.httpStatus}</h1></body></html>`
    res.writeHead(submit.httpStatus, { "Content-Type": "text/html", "Content-Length": Buffer.byteLength(page) }).end(page)
  }

  const recordInfo = (req: IncomingMessage, res: ServerResponse, query: URLSearchParams): void => {
    const taskId = query.get("taskId") ?? ""
    if (!authorized(req)) return json(res, 200, { code: 401, msg: "Unauthorized", data: null })
    const task = tasks.get(taskId)
    if (task === undefined) {
      polls.push({ at: Date.now(), taskId, status: null })
      return json(res, 200, { code: taskId === "" ? 400 : 404, msg: taskId === "" ? "taskId is required" : "Task not found", data: null })
    }
    const poll = task.behaviour.poll
    if (poll !== "answer") {
      polls.push({ at: Date.now(), taskId, status: null })
      if (poll === "hang") return
      if ("code" in poll) return json(res, 200, { code: poll.code, msg: poll.msg ?? `Upstream error ${poll.code}`, data: null })
      const page = poll.body ?? `<html><body><h1>${poll.httpStatus}</h1></body></html>`
      res.writeHead(poll.httpStatus, { "Content-Type": "text/html" }).end(page)
      return
    }
    const body = recordInfoBody(task, url)
    task.polls++
    polls.push({ at: Date.now(), taskId, status: body.data.status })
    json(res, 200, body)
  }

  const file = (req: IncomingMessage, res: ServerResponse, name: string): void => {
    const match = /^([0-9a-f-]+)\.(mp3|png)$/.exec(name)
    const task = match?.[1] === undefined ? undefined : filesOf.get(match[1])
    if (match === null || task === undefined || task.behaviour.files === "missing") {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("not found")
      return
    }
    downloads.push(`/files/${name}`)
    const bytes = match[2] === "mp3" ? audio : PNG
    res.writeHead(200, {
      "Content-Type": match[2] === "mp3" ? "audio/mpeg" : "image/png",
      "Content-Length": bytes.length
    })
    res.end(req.method === "HEAD" ? undefined : bytes)
  }

  const server = createServer((req, res) => {
    const target = new URL(req.url ?? "/", "http://fake")
    if (req.method === "POST" && target.pathname === "/api/v1/generate") {
      void generate(req, res).catch(() => res.destroy())
    } else if (req.method === "GET" && target.pathname === "/api/v1/generate/record-info") {
      recordInfo(req, res, target.searchParams)
    } else if ((req.method === "GET" || req.method === "HEAD") && target.pathname.startsWith("/files/")) {
      file(req, res, target.pathname.slice("/files/".length))
    } else {
      json(res, 404, { code: 404, msg: "Not found", data: null })
    }
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
    reset: () => {
      base = defaultBehaviour
      byTitle = new Map()
      queue = []
      submissions.length = 0
      polls.length = 0
      callbacks.length = 0
      downloads.length = 0
    },
    submissions,
    polls,
    callbacks,
    downloads,
    submissionsFor: (title) => submissions.filter((submission) => submission.title === title),
    task: (taskId) => {
      const task = tasks.get(taskId)
      return task === undefined ? undefined : {
        taskId,
        title: task.title,
        status: currentStatus(task),
        polls: task.polls,
        callBackUrl: task.callBackUrl,
        trackIds: task.trackIds
      }
    },
    sendCallback: (taskId, stage, extra = {}) => {
      const task = tasks.get(taskId)
      const target = extra.url ?? task?.callBackUrl
      if (task === undefined || target === undefined || target === null) {
        return Promise.reject(new Error(`No task ${taskId} with a callback URL`))
      }
      return track(sendCallback(task, stage, target))
    },
    settled: async () => {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight])
    }
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
