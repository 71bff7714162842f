/**
 * The REST client over `fetch`, for Node 20+ and browsers. Results carry core's inferred types;
 * failures are `LyreApiError` (the envelope) or `LyreConnectionError`. Rate limits (429) and an
 * unavailable model (503) are waited out as `Retry-After` says; a create sends one
 * `Idempotency-Key` for all its attempts, so a retried create is charged once.
 */
import { LyreApiError, LyreConnectionError, errorBodyOf } from "./errors.ts"
import { backoffMs, parseRetryAfter, sleep } from "./retry.ts"
import type {
  Account,
  Export,
  ExportFile,
  ExportFormat,
  ExportList,
  ExtendRequest,
  GenerateRequest,
  GenerationTask,
  GenerationTaskList,
  Track
} from "./types.ts"

/** Where `lyre` and the embedded default listen unless told otherwise. */
export const DEFAULT_BASE_URL = "http://127.0.0.1:8080"

/**
 * The API root (`.../api`) of a base URL that names either the site root or the API root:
 * `https://lyre.example` and `https://lyre.example/api` both give `https://lyre.example/api`.
 */
export const apiRootOf = (baseUrl: string): string => {
  const url = new URL(baseUrl)
  const path = url.pathname.replace(/\/+$/, "")
  url.pathname = path.endsWith("/api") ? path : `${path}/api`
  url.search = ""
  url.hash = ""
  return url.toString().replace(/\/+$/, "")
}

/** The site root (where `/trpc`, `/mcp` and `/files` live) of the same kind of base URL. */
export const siteRootOf = (baseUrl: string): string => apiRootOf(baseUrl).replace(/\/api$/, "")

export interface RetryInfo {
  /** 1 for the first retry. */
  readonly attempt: number
  readonly delayMs: number
  readonly error: LyreApiError | LyreConnectionError
}

export interface LyreClientOptions {
  /** An API key (`lyr_live_...`) or an OAuth access token. */
  readonly apiKey: string
  /** The site root or the API root (`.../api`); default `http://127.0.0.1:8080`. */
  readonly baseUrl?: string
  readonly fetch?: typeof globalThis.fetch
  /** Retries after the first attempt, for 429, 503 and (idempotent requests only) network errors. Default 2. */
  readonly maxRetries?: number
  /** A `Retry-After` longer than this is not waited out: the error is thrown at once. Default 60. */
  readonly maxRetryAfterSeconds?: number
  /** Sent as `User-Agent` when given. */
  readonly userAgent?: string
  /** Told before each retry's wait, to show it. */
  readonly onRetry?: (info: RetryInfo) => void
}

export interface RequestOptions {
  readonly signal?: AbortSignal
}

export interface CreateOptions extends RequestOptions {
  /** Reuse a key to make a create you may repeat (after a crash, say) charge once. Default: a new UUID per call. */
  readonly idempotencyKey?: string
}

export interface ListOptions extends RequestOptions {
  /** 1 to 100; the server's default is 20. */
  readonly limit?: number
  /** The id of the last task of the previous page. */
  readonly startingAfter?: string
}

export interface ExportListOptions extends ListOptions {
  /** Only the exports of this track. */
  readonly trackId?: string
}

export interface WaitProgress {
  readonly task: GenerationTask
  readonly elapsedMs: number
}

export interface ExportWaitProgress {
  readonly export: Export
  readonly elapsedMs: number
}

export interface ExportWaitOptions extends Omit<WaitOptions, "onProgress"> {
  readonly onProgress?: (progress: ExportWaitProgress) => void
}

export interface WaitOptions extends RequestOptions {
  readonly onProgress?: (progress: WaitProgress) => void
  /** Between polls; default 2000. */
  readonly intervalMs?: number
  /** Gives up with a `TimeoutError` after this long; default: never. */
  readonly timeoutMs?: number
}

export interface DownloadOptions extends RequestOptions {
  /** Of a track: its MP3 (default) or its cover image. An export's file has one part. */
  readonly part?: "audio" | "image"
  /** Told as bytes arrive; `total` is null when the server did not say. */
  readonly onProgress?: (received: number, total: number | null) => void
}

export interface DownloadStream {
  readonly url: string
  readonly stream: ReadableStream<Uint8Array>
  readonly size: number | null
  readonly contentType: string | null
}

interface Call {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly body?: unknown
  readonly idempotencyKey?: string | undefined
  readonly signal?: AbortSignal | undefined
}

const describe = (cause: unknown): string => {
  if (cause instanceof Error) {
    const inner = cause.cause instanceof Error ? `: ${cause.cause.message}` : ""
    return `${cause.message}${inner}`
  }
  return String(cause)
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

export class LyreClient {
  readonly apiRoot: string
  readonly #apiKey: string
  readonly #fetch: typeof globalThis.fetch
  readonly #maxRetries: number
  readonly #maxRetryAfterSeconds: number
  readonly #userAgent: string | undefined
  readonly #onRetry: ((info: RetryInfo) => void) | undefined

  constructor(options: LyreClientOptions) {
    this.apiRoot = apiRootOf(options.baseUrl ?? DEFAULT_BASE_URL)
    this.#apiKey = options.apiKey
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis)
    this.#maxRetries = options.maxRetries ?? 2
    this.#maxRetryAfterSeconds = options.maxRetryAfterSeconds ?? 60
    this.#userAgent = options.userAgent
    this.#onRetry = options.onRetry
  }

  /** The calling account: plan, credits, limits, the credential. A connection test; costs nothing. */
  me(options: RequestOptions = {}): Promise<Account> {
    return this.#call({ method: "GET", path: "/v1/me", signal: options.signal })
  }

  readonly generations = {
    /** Charges the model's credits and answers the pending task. */
    create: (body: GenerateRequest, options: CreateOptions = {}): Promise<GenerationTask> =>
      this.#call({
        method: "POST",
        path: "/v1/music/generations",
        body,
        idempotencyKey: options.idempotencyKey ?? globalThis.crypto.randomUUID(),
        signal: options.signal
      }),
    get: (id: string, options: RequestOptions = {}): Promise<GenerationTask> =>
      this.#call({ method: "GET", path: `/v1/music/generations/${encodeURIComponent(id)}`, signal: options.signal }),
    /** The account's tasks, newest first. */
    list: (options: ListOptions = {}): Promise<GenerationTaskList> => {
      const query = new URLSearchParams()
      if (options.limit !== undefined) query.set("limit", String(options.limit))
      if (options.startingAfter !== undefined) query.set("starting_after", options.startingAfter)
      const search = query.size === 0 ? "" : `?${query.toString()}`
      return this.#call({ method: "GET", path: `/v1/music/generations${search}`, signal: options.signal })
    }
  }

  /** Song tools on a track of a ready task of this account (another account's track is 404 `not_found`). */
  readonly tracks = {
    /**
     * A generation that continues the track from `continue_at` (default: its end); fields left
     * out are the source's. Charged and answered as a create: the pending task.
     */
    extend: (trackId: string, body: ExtendRequest = {}, options: CreateOptions = {}): Promise<GenerationTask> =>
      this.#call({
        method: "POST",
        path: `/v1/music/tracks/${encodeURIComponent(trackId)}/extensions`,
        body,
        idempotencyKey: options.idempotencyKey ?? globalThis.crypto.randomUUID(),
        signal: options.signal
      })
  }

  readonly exports = {
    /**
     * The track as `wav`, `midi`, `stems` or `timed_lyrics`: the pending export, charged its
     * price, or the account's ready export of that track and format, charged nothing.
     */
    create: (trackId: string, format: ExportFormat, options: CreateOptions = {}): Promise<Export> =>
      this.#call({
        method: "POST",
        path: `/v1/music/tracks/${encodeURIComponent(trackId)}/exports`,
        body: { format },
        idempotencyKey: options.idempotencyKey ?? globalThis.crypto.randomUUID(),
        signal: options.signal
      }),
    get: (id: string, options: RequestOptions = {}): Promise<Export> =>
      this.#call({ method: "GET", path: `/v1/music/exports/${encodeURIComponent(id)}`, signal: options.signal }),
    /** The account's exports, newest first; of one track with `trackId`. */
    list: (options: ExportListOptions = {}): Promise<ExportList> => {
      const query = new URLSearchParams()
      if (options.trackId !== undefined) query.set("track_id", options.trackId)
      if (options.limit !== undefined) query.set("limit", String(options.limit))
      if (options.startingAfter !== undefined) query.set("starting_after", options.startingAfter)
      const search = query.size === 0 ? "" : `?${query.toString()}`
      return this.#call({ method: "GET", path: `/v1/music/exports${search}`, signal: options.signal })
    }
  }

  /** Polls the task until it is `ready` or `failed`, and answers it (a failed task is an answer, not an error). */
  waitForGeneration(id: string, options: WaitOptions = {}): Promise<GenerationTask> {
    return this.#poll((signal) => this.generations.get(id, signal), (task, elapsedMs) => options.onProgress?.({ task, elapsedMs }), options)
  }

  /** Polls the export until it is `ready` or `failed`, and answers it (a failed export is an answer, not an error). */
  waitForExport(id: string, options: ExportWaitOptions = {}): Promise<Export> {
    return this.#poll((signal) => this.exports.get(id, signal), (found, elapsedMs) => options.onProgress?.({ export: found, elapsedMs }), options)
  }

  async #poll<A extends { readonly status: string }>(
    get: (options: RequestOptions) => Promise<A>,
    onProgress: (value: A, elapsedMs: number) => void,
    options: Omit<WaitOptions, "onProgress">
  ): Promise<A> {
    const signals = [options.signal, options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs)]
      .filter((s): s is AbortSignal => s !== undefined)
    const signal = signals.length === 0 ? undefined : AbortSignal.any(signals)
    const started = Date.now()
    for (;;) {
      const value = await get(signal === undefined ? {} : { signal })
      onProgress(value, Date.now() - started)
      if (value.status !== "pending") return value
      await sleep(options.intervalMs ?? 2_000, signal)
    }
  }

  /**
   * A track's audio (or cover), or an export's file, as a stream with its size when known.
   * Files are public: no credential is sent.
   */
  async downloadStream(source: Track | ExportFile, options: DownloadOptions = {}): Promise<DownloadStream> {
    const url = "url" in source ? source.url : options.part === "image" ? source.image_url : source.audio_url
    if (url === null) throw new LyreConnectionError("The track has no cover image.")
    const response = await this.#send(
      { method: "GET", path: url, signal: options.signal },
      () => this.#fetch(url, { headers: this.#baseHeaders(), ...(options.signal ? { signal: options.signal } : {}) }),
      true
    )
    if (response.body === null) throw new LyreConnectionError(`${url} answered no body.`, { status: response.status })
    const length = response.headers.get("content-length")
    const size = length === null ? null : Number(length)
    const onProgress = options.onProgress
    let received = 0
    const stream = onProgress === undefined
      ? response.body
      : response.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            received += chunk.byteLength
            onProgress(received, size)
            controller.enqueue(chunk)
          }
        })
      )
    return { url, stream, size, contentType: response.headers.get("content-type") }
  }

  /** A track's audio (or cover), or an export's file, as bytes. */
  async download(source: Track | ExportFile, options: DownloadOptions = {}): Promise<Uint8Array> {
    const { stream } = await this.downloadStream(source, options)
    return new Uint8Array(await new Response(stream).arrayBuffer())
  }

  #baseHeaders(): Record<string, string> {
    return this.#userAgent === undefined ? {} : { "user-agent": this.#userAgent }
  }

  async #call<A>(call: Call): Promise<A> {
    const url = `${this.apiRoot}${call.path}`
    const headers: Record<string, string> = {
      ...this.#baseHeaders(),
      accept: "application/json",
      authorization: `Bearer ${this.#apiKey}`
    }
    if (call.body !== undefined) headers["content-type"] = "application/json"
    if (call.idempotencyKey !== undefined) headers["idempotency-key"] = call.idempotencyKey
    const init: RequestInit = {
      method: call.method,
      headers,
      ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }),
      ...(call.signal === undefined ? {} : { signal: call.signal })
    }
    const idempotent = call.method === "GET" || call.idempotencyKey !== undefined
    const response = await this.#send(call, () => this.#fetch(url, init), idempotent)
    const text = await response.text().catch((cause: unknown) => {
      throw new LyreConnectionError(`The answer from ${url} was cut off: ${describe(cause)}`, { cause, status: response.status })
    })
    const json = parseJson(text)
    if (json === undefined) {
      throw new LyreConnectionError(`${url} answered ${response.status} with something that is not JSON.`, { status: response.status })
    }
    return json as A
  }

  /**
   * One request with its retries; answers a 2xx response with its body unread. A non-2xx
   * answer becomes the envelope's error (or a connection error when it is not an envelope).
   */
  async #send(call: Call, attempt: () => Promise<Response>, idempotent: boolean): Promise<Response> {
    for (let retry = 0; ; retry++) {
      let failure: LyreApiError | LyreConnectionError
      let delayMs: number
      try {
        const response = await attempt()
        if (response.ok) return response
        failure = await this.#failureOf(response)
        const transient = response.status === 429 || response.status === 503 ||
          (idempotent && failure instanceof LyreConnectionError && [502, 504].includes(response.status))
        if (!transient) throw failure
        const wait = failure instanceof LyreApiError ? failure.retryAfterSeconds : parseRetryAfter(response.headers.get("retry-after"))
        if (wait !== undefined && wait > this.#maxRetryAfterSeconds) throw failure
        delayMs = wait === undefined ? backoffMs(retry) : wait * 1_000
      } catch (cause) {
        if (cause instanceof LyreApiError || cause instanceof LyreConnectionError) throw cause
        if (call.signal?.aborted) throw call.signal.reason
        failure = new LyreConnectionError(`Could not reach ${new URL(call.path, this.apiRoot).origin}: ${describe(cause)}`, { cause })
        // A request that is not idempotent may have been carried out: trying again could repeat it.
        if (!idempotent) throw failure
        delayMs = backoffMs(retry)
      }
      if (retry >= this.#maxRetries) throw failure
      this.#onRetry?.({ attempt: retry + 1, delayMs, error: failure })
      await sleep(delayMs, call.signal)
    }
  }

  async #failureOf(response: Response): Promise<LyreApiError | LyreConnectionError> {
    const text = await response.text().catch(() => "")
    const body = errorBodyOf(parseJson(text))
    if (body === undefined) {
      return new LyreConnectionError(`${response.url || "The server"} answered ${response.status} without the API's error envelope.`, {
        status: response.status
      })
    }
    return new LyreApiError(response.status, body, {
      retryAfterSeconds: parseRetryAfter(response.headers.get("retry-after")),
      requestId: response.headers.get("x-request-id") ?? undefined
    })
  }
}
