/**
 * The REST client over `fetch`, for Node 20+ and browsers. Results carry core's inferred types;
 * failures are `LyreApiError` (the envelope) or `LyreConnectionError`. Rate limits (429) and an
 * unavailable model (503) are waited out as `Retry-After` says; a create sends one
 * `Idempotency-Key` for all its attempts, so a retried create is charged once.
 */
import { describeCause, failureOf, jsonOf } from "./answers.ts"
import { LyreApiError, LyreConnectionError } from "./errors.ts"
import { backoffMs, parseRetryAfter, sleep } from "./retry.ts"
import { postUpload, uploadBodyOf, uploadsPath } from "./upload.ts"
import type { UploadOptions, UploadSource } from "./upload.ts"
import { apiRootOf, DEFAULT_BASE_URL } from "./urls.ts"
import type {
  Account,
  CoverRequest,
  DeletedPersona,
  DeletedUpload,
  EditRequest,
  InstrumentalRequest,
  LyricsRequest,
  LyricsTask,
  LyricsTaskList,
  Persona,
  PersonaList,
  PersonaRequest,
  Upload,
  UploadList,
  VocalsRequest,
  Export,
  ExportFile,
  ExportFormat,
  ExportList,
  ExtendRequest,
  GenerateRequest,
  GenerationTask,
  GenerationTaskList,
  Preview,
  Track
} from "./types.ts"

export { apiRootOf, DEFAULT_BASE_URL, siteRootOf } from "./urls.ts"

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

export interface LyricsWaitProgress {
  readonly lyrics: LyricsTask
  readonly elapsedMs: number
}

export interface LyricsWaitOptions extends Omit<WaitOptions, "onProgress"> {
  readonly onProgress?: (progress: LyricsWaitProgress) => void
}

export interface UploadWaitProgress {
  readonly upload: Upload
  readonly elapsedMs: number
}

export interface UploadWaitOptions extends Omit<WaitOptions, "onProgress"> {
  readonly onProgress?: (progress: UploadWaitProgress) => void
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

const trackPath = (trackId: string): string => `/v1/music/tracks/${encodeURIComponent(trackId)}`

/** `?limit=...&starting_after=...` of a page, or nothing. */
const pageQuery = (options: ListOptions, extra: Record<string, string | undefined> = {}): string => {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(extra)) if (value !== undefined) query.set(name, value)
  if (options.limit !== undefined) query.set("limit", String(options.limit))
  if (options.startingAfter !== undefined) query.set("starting_after", options.startingAfter)
  return query.size === 0 ? "" : `?${query.toString()}`
}

interface Call {
  readonly method: "GET" | "POST" | "DELETE"
  readonly path: string
  readonly body?: unknown
  readonly idempotencyKey?: string | undefined
  readonly signal?: AbortSignal | undefined
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
      this.#create("/v1/music/generations", body, options),
    get: (id: string, options: RequestOptions = {}): Promise<GenerationTask> =>
      this.#call({ method: "GET", path: `/v1/music/generations/${encodeURIComponent(id)}`, signal: options.signal }),
    /** The account's tasks, newest first. */
    list: (options: ListOptions = {}): Promise<GenerationTaskList> =>
      this.#call({ method: "GET", path: `/v1/music/generations${pageQuery(options)}`, signal: options.signal })
  }

  /**
   * Song tools and tasks on a track of this account: of a ready task, or an upload's (another
   * account's track is 404 `not_found`). Each task is charged and answered as a create: the
   * pending task, priced as a generation of its model; fields left out are the source's.
   */
  readonly tracks = {
    /** A generation that continues the track from `continue_at` (default: its end). */
    extend: (trackId: string, body: ExtendRequest = {}, options: CreateOptions = {}): Promise<GenerationTask> =>
      this.#create(`${trackPath(trackId)}/extensions`, body, options),
    /** The same song (melody, harmony, form, words) in the new `style`; `audio_weight` 0-1 follows the source's rhythm. */
    cover: (trackId: string, body: CoverRequest, options: CreateOptions = {}): Promise<GenerationTask> =>
      this.#create(`${trackPath(trackId)}/covers`, body, options),
    /** The track with `lyrics` sung over it, in its key and on its beat. */
    vocals: (trackId: string, body: VocalsRequest, options: CreateOptions = {}): Promise<GenerationTask> =>
      this.#create(`${trackPath(trackId)}/vocals`, body, options),
    /** An accompaniment in `style` composed for the track's sung melody (a track made without vocals is 400 `track_has_no_lyrics`; an upload is accompanied as heard). */
    instrumental: (trackId: string, body: InstrumentalRequest, options: CreateOptions = {}): Promise<GenerationTask> =>
      this.#create(`${trackPath(trackId)}/instrumentals`, body, options),
    /** The span from `start` to `end` (seconds, 2 to 60 apart) made again, with new `lyrics` when given; the rest is the source's. */
    edit: (trackId: string, body: EditRequest, options: CreateOptions = {}): Promise<GenerationTask> =>
      this.#create(`${trackPath(trackId)}/edits`, body, options)
  }

  /** Your own audio (Pro plan or higher, free of credits): once `ready`, its `track_id` is a track every song tool takes. */
  readonly uploads = {
    /**
     * Sends the file as the raw body of `POST /v1/music/uploads` and answers the pending Upload.
     * `source` is a path (Node), a Blob or File, a web `ReadableStream` or a Node `Readable`;
     * `onProgress` is told the bytes sent. A path or Blob is sent again after a 429 or 503; a
     * stream cannot be, so its refusal is thrown at once. A file that is not audio is refused by
     * the server: `LyreApiError` 400 `invalid_audio`, nothing kept. One `Idempotency-Key` for all
     * its attempts, so a retried upload is kept and counted once.
     */
    create: async (source: UploadSource, given: UploadOptions = {}): Promise<Upload> => {
      const options = { ...given, idempotencyKey: given.idempotencyKey ?? globalThis.crypto.randomUUID() }
      const body = await uploadBodyOf(source, options)
      const request = {
        apiRoot: this.apiRoot,
        credential: this.#apiKey,
        fetch: this.#fetch,
        userAgent: this.#userAgent
      }
      const response = await this.#send(
        { method: "POST", path: uploadsPath, signal: options.signal },
        () => postUpload(request, body, options),
        true,
        body.replayable ? this.#maxRetries : 0
      )
      return jsonOf<Upload>(response, `${this.apiRoot}${uploadsPath}`)
    },
    get: (id: string, options: RequestOptions = {}): Promise<Upload> =>
      this.#call({ method: "GET", path: `${uploadsPath}/${encodeURIComponent(id)}`, signal: options.signal }),
    /** The account's uploads, newest first. */
    list: (options: ListOptions = {}): Promise<UploadList> =>
      this.#call({ method: "GET", path: `${uploadsPath}${pageQuery(options)}`, signal: options.signal }),
    /** Removes the file; tracks made from it stay. */
    delete: (id: string, options: RequestOptions = {}): Promise<DeletedUpload> =>
      this.#call({ method: "DELETE", path: `${uploadsPath}/${encodeURIComponent(id)}`, signal: options.signal })
  }

  /** Voices kept from a track of this account, named later as `persona_id` in any create (aether). Free. */
  readonly personas = {
    create: (body: PersonaRequest, options: RequestOptions = {}): Promise<Persona> =>
      this.#call({ method: "POST", path: "/v1/personas", body, signal: options.signal }),
    get: (id: string, options: RequestOptions = {}): Promise<Persona> =>
      this.#call({ method: "GET", path: `/v1/personas/${encodeURIComponent(id)}`, signal: options.signal }),
    /** The account's personas, newest first. */
    list: (options: ListOptions = {}): Promise<PersonaList> =>
      this.#call({ method: "GET", path: `/v1/personas${pageQuery(options)}`, signal: options.signal }),
    /** Later requests cannot name it; tracks made with it stay. */
    delete: (id: string, options: RequestOptions = {}): Promise<DeletedPersona> =>
      this.#call({ method: "DELETE", path: `/v1/personas/${encodeURIComponent(id)}`, signal: options.signal })
  }

  /** The lyrics agent (scope `lyrics:agent`): two variations of words a task, 2 credits, refunded if it fails. */
  readonly lyrics = {
    create: (body: LyricsRequest, options: CreateOptions = {}): Promise<LyricsTask> =>
      this.#create("/v1/lyrics", body, options),
    get: (id: string, options: RequestOptions = {}): Promise<LyricsTask> =>
      this.#call({ method: "GET", path: `/v1/lyrics/${encodeURIComponent(id)}`, signal: options.signal }),
    /** The account's lyrics tasks, newest first. */
    list: (options: ListOptions = {}): Promise<LyricsTaskList> =>
      this.#call({ method: "GET", path: `/v1/lyrics${pageQuery(options)}`, signal: options.signal })
  }

  readonly exports = {
    /**
     * The track as `wav`, `midi`, `stems` or `timed_lyrics`: the pending export, charged its
     * price, or the account's ready export of that track and format, charged nothing.
     */
    create: (trackId: string, format: ExportFormat, options: CreateOptions = {}): Promise<Export> =>
      this.#create(`${trackPath(trackId)}/exports`, { format }, options),
    get: (id: string, options: RequestOptions = {}): Promise<Export> =>
      this.#call({ method: "GET", path: `/v1/music/exports/${encodeURIComponent(id)}`, signal: options.signal }),
    /** The account's exports, newest first; of one track with `trackId`. */
    list: (options: ExportListOptions = {}): Promise<ExportList> =>
      this.#call({
        method: "GET",
        path: `/v1/music/exports${pageQuery(options, { track_id: options.trackId })}`,
        signal: options.signal
      })
  }

  /** Polls the task until it is `ready` or `failed`, and answers it (a failed task is an answer, not an error). */
  waitForGeneration(id: string, options: WaitOptions = {}): Promise<GenerationTask> {
    return this.#poll(
      (signal) => this.generations.get(id, signal),
      (task, elapsedMs) => options.onProgress?.({ task, elapsedMs }),
      options
    )
  }

  /**
   * Polls the task until its audio can be heard while it is made, and answers it: pending with
   * `previews` (each take's `stream_url`, for a player or `downloadStream`), or already `ready`
   * or `failed` (no previews then; a ready task's `tracks` are the final files). Audio before
   * `ready` comes from the upstream's first stage or the engine's first encoded frames.
   */
  waitForPreview(id: string, options: WaitOptions = {}): Promise<GenerationTask> {
    return this.#poll(
      (signal) => this.generations.get(id, signal),
      (task, elapsedMs) => options.onProgress?.({ task, elapsedMs }),
      options,
      (task) => task.status !== "pending" || task.previews.length > 0
    )
  }

  /** Polls the upload until it is `ready` (listened to) or `failed`, and answers it (a failed upload is an answer, not an error). */
  waitForUpload(id: string, options: UploadWaitOptions = {}): Promise<Upload> {
    return this.#poll(
      (signal) => this.uploads.get(id, signal),
      (found, elapsedMs) => options.onProgress?.({ upload: found, elapsedMs }),
      options
    )
  }

  /** Polls the lyrics task until it is `ready` (its two variations) or `failed`, and answers it. */
  waitForLyrics(id: string, options: LyricsWaitOptions = {}): Promise<LyricsTask> {
    return this.#poll(
      (signal) => this.lyrics.get(id, signal),
      (found, elapsedMs) => options.onProgress?.({ lyrics: found, elapsedMs }),
      options
    )
  }

  /** Polls the export until it is `ready` or `failed`, and answers it (a failed export is an answer, not an error). */
  waitForExport(id: string, options: ExportWaitOptions = {}): Promise<Export> {
    return this.#poll(
      (signal) => this.exports.get(id, signal),
      (found, elapsedMs) => options.onProgress?.({ export: found, elapsedMs }),
      options
    )
  }

  async #poll<A extends { readonly status: string }>(
    get: (options: RequestOptions) => Promise<A>,
    onProgress: (value: A, elapsedMs: number) => void,
    options: Omit<WaitOptions, "onProgress">,
    done: (value: A) => boolean = (value) => value.status !== "pending"
  ): Promise<A> {
    const signals = [
      options.signal,
      options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs)
    ].filter((s): s is AbortSignal => s !== undefined)
    const signal = signals.length === 0 ? undefined : AbortSignal.any(signals)
    const started = Date.now()
    for (;;) {
      const value = await get(signal === undefined ? {} : { signal })
      onProgress(value, Date.now() - started)
      if (done(value)) return value
      await sleep(options.intervalMs ?? 2_000, signal)
    }
  }

  /**
   * A track's audio (or cover), an export's file, or a preview's stream (chunked MP3 that ends
   * with its take; no size), as a stream with its size when known. Files are public: no
   * credential is sent (a stream's address is signed).
   */
  async downloadStream(source: Track | ExportFile | Preview, options: DownloadOptions = {}): Promise<DownloadStream> {
    const url =
      "stream_url" in source
        ? source.stream_url
        : "url" in source
          ? source.url
          : options.part === "image"
            ? source.image_url
            : source.audio_url
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
    const stream =
      onProgress === undefined
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

  /** A track's audio (or cover), an export's file, or a preview's whole stream, as bytes. */
  async download(source: Track | ExportFile | Preview, options: DownloadOptions = {}): Promise<Uint8Array> {
    const { stream } = await this.downloadStream(source, options)
    return new Uint8Array(await new Response(stream).arrayBuffer())
  }

  /** A charged create: one `Idempotency-Key` for all its attempts. */
  #create<A>(path: string, body: unknown, options: CreateOptions): Promise<A> {
    return this.#call({
      method: "POST",
      path,
      body,
      idempotencyKey: options.idempotencyKey ?? globalThis.crypto.randomUUID(),
      signal: options.signal
    })
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
    return jsonOf<A>(response, url)
  }

  /**
   * One request with its retries; answers a 2xx response with its body unread. A non-2xx
   * answer becomes the envelope's error (or a connection error when it is not an envelope).
   */
  async #send(
    call: Call,
    attempt: () => Promise<Response>,
    idempotent: boolean,
    maxRetries: number = this.#maxRetries
  ): Promise<Response> {
    for (let retry = 0; ; retry++) {
      let failure: LyreApiError | LyreConnectionError
      let delayMs: number
      try {
        const response = await attempt()
        if (response.ok) return response
        failure = await failureOf(response)
        const transient =
          response.status === 429 ||
          response.status === 503 ||
          (idempotent && failure instanceof LyreConnectionError && [502, 504].includes(response.status))
        if (!transient) throw failure
        const wait =
          failure instanceof LyreApiError
            ? failure.retryAfterSeconds
            : parseRetryAfter(response.headers.get("retry-after"))
        if (wait !== undefined && wait > this.#maxRetryAfterSeconds) throw failure
        delayMs = wait === undefined ? backoffMs(retry) : wait * 1_000
      } catch (cause) {
        if (cause instanceof LyreApiError || cause instanceof LyreConnectionError) throw cause
        if (call.signal?.aborted) throw call.signal.reason
        failure = new LyreConnectionError(
          `Could not reach ${new URL(call.path, this.apiRoot).origin}: ${describeCause(cause)}`,
          { cause }
        )
        // A request that is not idempotent may have been carried out: trying again could repeat it.
        if (!idempotent) throw failure
        delayMs = backoffMs(retry)
      }
      if (retry >= maxRetries) throw failure
      this.#onRetry?.({ attempt: retry + 1, delayMs, error: failure })
      await sleep(delayMs, call.signal)
    }
  }
}
