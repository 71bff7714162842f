/**
 * An upload's file as the raw body of `POST {api}/v1/music/uploads` (DESIGN.md section 11): a
 * path on disk (Node), a Blob (or File), or a stream, with its `Content-Type` and, when known,
 * its `Content-Length`, so a file past the limit is refused before it is sent. Whether the bytes
 * are audio is the server's to judge: its refusal comes back as `LyreApiError`.
 */
import { uploadContentTypeOfFileName } from "@lyre/core/domain/contentTypes"
import { describeCause, failureOf, jsonOf } from "./answers.ts"
import { LyreConnectionError } from "./errors.ts"
import type { Upload } from "./types.ts"
import { apiRootOf, DEFAULT_BASE_URL } from "./urls.ts"

/**
 * What to upload: a file path (Node only), a Blob or File, a web `ReadableStream`, or any async
 * iterable of bytes (a Node `Readable`, such as `fs.createReadStream(...)`).
 */
export type UploadSource = string | Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>

export interface UploadOptions {
  /** A name for the upload (at most 200 characters). */
  readonly title?: string
  /**
   * The file's type. Default: a Blob's or File's own type, else a path's or File's extension
   * (`.mp3`, `.wav`, `.flac`, `.ogg`), else `application/octet-stream` (which the server refuses
   * as not audio).
   */
  readonly contentType?: string
  /** A stream's length in bytes, sent as `Content-Length` (a path's and a Blob's are known). */
  readonly size?: number
  /** Told as the body is sent; `total` is null for a stream of unknown size. */
  readonly onProgress?: (sent: number, total: number | null) => void
  readonly signal?: AbortSignal
  /**
   * Sent as `Idempotency-Key`: the same key and file again answer the first upload, counted once
   * against the plan's allowance. `LyreClient` makes one per upload when none is given.
   */
  readonly idempotencyKey?: string
}

/** One attempt's body; `replayable` says whether another attempt can send it again. */
export interface UploadBody {
  readonly make: () => NonNullable<RequestInit["body"]>
  readonly contentType: string
  readonly size: number | null
  readonly replayable: boolean
  /** The body is a stream: fetch needs `duplex: "half"`. */
  readonly streamed: boolean
}

const isBlob = (source: UploadSource): source is Blob => typeof Blob !== "undefined" && source instanceof Blob

const counted = (
  stream: ReadableStream<Uint8Array>,
  total: number | null,
  onProgress: (sent: number, total: number | null) => void
): ReadableStream<Uint8Array> => {
  let sent = 0
  return stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        sent += chunk.byteLength
        onProgress(sent, total)
        controller.enqueue(chunk)
      }
    })
  )
}

/** A path opened as a Blob backed by the file (read as it is sent, never whole in memory). */
const openPath = async (path: string): Promise<Blob> => {
  // Imported here only: a browser bundle never reaches it.
  const { openAsBlob } = await import("node:fs")
  return openAsBlob(path)
}

/** The body of an upload, and how to send it again when it can be. */
export const uploadBodyOf = async (source: UploadSource, options: UploadOptions = {}): Promise<UploadBody> => {
  const onProgress = options.onProgress
  if (typeof source === "string" || isBlob(source)) {
    const blob = typeof source === "string" ? await openPath(source) : source
    const name =
      typeof source === "string" ? source : "name" in source && typeof source.name === "string" ? source.name : ""
    // A type given on the Blob is deliberate; a path's Blob has none, and its name says it.
    const contentType =
      options.contentType ?? (blob.type || uploadContentTypeOfFileName(name) || "application/octet-stream")
    // Without progress a Blob goes as it is (fetch reads it as it sends; browsers stream a
    // request body only over HTTP/2); with progress it goes as a counted stream.
    const streamed = onProgress !== undefined
    return {
      make: () => (onProgress === undefined ? blob : counted(blob.stream(), blob.size, onProgress)),
      contentType,
      size: blob.size,
      replayable: true,
      streamed
    }
  }
  const stream = source instanceof ReadableStream ? source : ReadableStream.from(source)
  const size = options.size ?? null
  return {
    make: () => (onProgress === undefined ? stream : counted(stream, size, onProgress)),
    contentType: options.contentType ?? "application/octet-stream",
    size,
    replayable: false,
    streamed: true
  }
}

/** Where and as whom: `uploadAudio` takes the options given to `createLyreTrpcClient` as they are. */
export interface UploadTarget {
  /** The site root or the API root (`.../api`); default `http://127.0.0.1:8080`. */
  readonly baseUrl?: string
  readonly credential?: string
  readonly getCredential?: () => string | undefined | Promise<string | undefined>
  readonly fetch?: typeof globalThis.fetch
  readonly userAgent?: string
}

export const uploadsPath = "/v1/music/uploads"

/** One POST of the body, answered as it came (a refusal included); a network failure rejects. */
export const postUpload = (
  request: {
    readonly apiRoot: string
    readonly credential: string | undefined
    readonly fetch: typeof globalThis.fetch
    readonly userAgent?: string | undefined
  },
  body: UploadBody,
  options: UploadOptions
): Promise<Response> => {
  const query = options.title === undefined ? "" : `?${new URLSearchParams({ title: options.title }).toString()}`
  const headers: Record<string, string> = { accept: "application/json", "content-type": body.contentType }
  if (request.credential !== undefined) headers["authorization"] = `Bearer ${request.credential}`
  if (request.userAgent !== undefined) headers["user-agent"] = request.userAgent
  if (options.idempotencyKey !== undefined) headers["idempotency-key"] = options.idempotencyKey
  // A declared length lets the server refuse a file past its limit before it is sent.
  if (body.size !== null) headers["content-length"] = String(body.size)
  const init: RequestInit & { duplex?: "half" } = {
    method: "POST",
    headers,
    body: body.make(),
    // A stream body is sent as it is read, which fetch requires be said.
    ...(body.streamed ? { duplex: "half" } : {}),
    ...(options.signal === undefined ? {} : { signal: options.signal })
  }
  return request.fetch(`${request.apiRoot}${uploadsPath}${query}`, init)
}

/**
 * Uploads a file by REST with the credential of a tRPC client's options (tRPC speaks JSON, so
 * `trpc.uploads.create` cannot carry a file): answers the pending Upload, which
 * `trpc.uploads.get` then follows to `ready`. Sent once: a refusal is thrown as `LyreApiError`,
 * no answer as `LyreConnectionError`.
 */
export const uploadAudio = async (
  target: UploadTarget,
  source: UploadSource,
  options: UploadOptions = {}
): Promise<Upload> => {
  const apiRoot = apiRootOf(target.baseUrl ?? DEFAULT_BASE_URL)
  const credential = target.getCredential === undefined ? target.credential : await target.getCredential()
  const body = await uploadBodyOf(source, options)
  let response: Response
  try {
    response = await postUpload(
      { apiRoot, credential, fetch: target.fetch ?? globalThis.fetch.bind(globalThis), userAgent: target.userAgent },
      body,
      options
    )
  } catch (cause) {
    if (options.signal?.aborted) throw options.signal.reason
    throw new LyreConnectionError(`Could not reach ${new URL(apiRoot).origin}: ${describeCause(cause)}`, { cause })
  }
  if (!response.ok) throw await failureOf(response)
  return jsonOf<Upload>(response, `${apiRoot}${uploadsPath}`)
}
