import { Agent as HttpAgent, request as httpRequest } from "node:http"
import type { ClientRequest, IncomingMessage, RequestOptions } from "node:http"
import { Agent as HttpsAgent, request as httpsRequest } from "node:https"
import type { PollOutcome, ProviderSubmission, SubmitOutcome } from "@lyre/core/provider/outcomes"
import { Provider } from "@lyre/core/provider/Provider"
import { Context, Effect, Layer, Redacted } from "effect"
import { interpretRecordInfo, interpretSubmit } from "./sunoAnswers.ts"
import type { RawAnswer } from "./sunoAnswers.ts"
import { parseCallback } from "./sunoCallback.ts"
import type { ProviderCallback } from "./sunoCallback.ts"
import { defaultModelMap, generateBody } from "./sunoRequest.ts"
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
}

/**
 * The provider port for the Suno-style upstream of DESIGN.md section 6. It never fails: every
 * answer, time-out and broken connection becomes an outcome the worker acts on.
 */
export class SunoHttpProvider extends Context.Service<SunoHttpProvider, {
  submit(submission: ProviderSubmission): Effect.Effect<SubmitOutcome>
  poll(providerTaskId: string): Effect.Effect<PollOutcome>
  parseCallback(body: unknown): ProviderCallback | null
}>()("lyre/worker/provider/SunoHttpProvider") {
  static readonly layer = (config: SunoHttpProviderConfig) => Layer.effect(SunoHttpProvider, make(config))

  /** The core `Provider` port, served by this adapter; `name` labels it in logs. */
  static readonly providerLayer = (config: SunoHttpProviderConfig, name = "http") =>
    Layer.effect(
      Provider,
      Effect.map(SunoHttpProvider, (suno) => Provider.of({ name, ...suno, ...exportsNotSupported }))
    ).pipe(Layer.provide(SunoHttpProvider.layer(config)))
}

/** Song tools are not wired to this provider yet: every export is refused, so it is refunded. */
const exportsNotSupported = {
  submitExport: () =>
    Effect.succeed({ _tag: "Rejected", code: "provider_error", message: "Exports are not supported by this provider yet.", countsTowardCircuit: false } as const),
  pollExport: () => Effect.succeed({ _tag: "Failed", code: "provider_error", message: "Exports are not supported by this provider yet." } as const)
}

interface ExchangeFailure {
  readonly message: string
  /** The connection was never made (refused, no such host): nothing reached the upstream. */
  readonly notSent: boolean
}

const connectCodes = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"])

/** A connection reset or closed under a request (what a kept-alive connection the upstream closed gives). */
const isReset = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "code" in error &&
  (error.code === "ECONNRESET" || error.code === "EPIPE")

/** Looks through the error's causes for a connect-time failure code. */
const neverConnected = (error: unknown): boolean => {
  let current: unknown = error
  for (let depth = 0; depth < 6 && typeof current === "object" && current !== null; depth++) {
    if ("code" in current && typeof current.code === "string" && connectCodes.has(current.code)) return true
    if ("errors" in current && Array.isArray(current.errors)) {
      if (current.errors.length > 0 && current.errors.every((inner) => neverConnected(inner))) return true
    }
    current = "reason" in current && typeof current.reason === "object" ? current.reason : "cause" in current ? current.cause : undefined
  }
  return false
}

/** What one exchange sends: the method, the URL and, for a POST, the JSON body. */
interface Outgoing {
  readonly method: "GET" | "POST"
  readonly url: URL
  readonly body: string | null
}

const make = Effect.fnUntraced(function*(config: SunoHttpProviderConfig) {
  const baseUrl = config.baseUrl.replace(/\/+$/, "")
  const apiKey = typeof config.apiKey === "string" ? Redacted.make(config.apiKey) : config.apiKey
  const modelMap = { ...defaultModelMap, ...config.modelMap }
  const timeoutMs = config.timeoutMs ?? 10_000
  const secure = new URL(baseUrl).protocol === "https:"
  // node:http rather than fetch or Effect's HttpClient: a poll cost about half the CPU (measured
  // against the fake upstream), and the worker polls every task. Connections are kept alive;
  // with `timeout` set, the agent retires an idle connection a second before the upstream's
  // `Keep-Alive: timeout=` hint, so a request rarely meets a connection the upstream closed.
  const agent = yield* Effect.acquireRelease(
    Effect.sync(() => {
      const options = { keepAlive: true, timeout: 5_000, scheduling: "lifo" } as const
      return secure ? new HttpsAgent(options) : new HttpAgent(options)
    }),
    (agent) => Effect.sync(() => agent.destroy())
  )
  const send = secure ? httpsRequest : httpRequest

  /** One request, its answer read whole; rejects with the request's error. */
  const attempt = (outgoing: Outgoing, onRequest: (request: ClientRequest) => void) =>
    new Promise<{ readonly answer: RawAnswer } | { readonly error: unknown; readonly request: ClientRequest }>((resolve) => {
      const headers: Record<string, string | number> = { Authorization: `Bearer ${Redacted.value(apiKey)}` }
      if (outgoing.body !== null) {
        headers["Content-Type"] = "application/json"
        headers["Content-Length"] = Buffer.byteLength(outgoing.body)
      }
      const options: RequestOptions = { method: outgoing.method, agent, headers }
      const request = send(outgoing.url, options, (response: IncomingMessage) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () =>
          resolve({ answer: { status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") } }))
        response.on("error", (error) => resolve({ error, request }))
      })
      request.on("error", (error) => resolve({ error, request }))
      onRequest(request)
      request.end(outgoing.body ?? undefined)
    })

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
          finish(Effect.fail(
            neverConnected(error)
              ? { message: `Upstream unreachable (no connection): ${message}`, notSent: true }
              : { message: `Upstream unreachable: ${message}`, notSent: false }
          ))
        })
      }
      run(true)
      return Effect.sync(() => {
        over = true
        clearTimeout(timer)
        current?.destroy()
      })
    })

  const submit = Effect.fn("SunoHttpProvider.submit")(function*(submission: ProviderSubmission) {
    yield* Effect.annotateCurrentSpan({ taskId: submission.taskId, model: submission.model })
    const outgoing: Outgoing = {
      method: "POST",
      url: new URL(`${baseUrl}/api/v1/generate`),
      body: JSON.stringify(generateBody(submission, modelMap))
    }
    return yield* exchange(outgoing).pipe(
      Effect.map(interpretSubmit),
      Effect.catch((failure) =>
        Effect.succeed<SubmitOutcome>(
          failure.notSent
            // No connection was made, so the upstream cannot have the task: a definite failure.
            ? { _tag: "Rejected", code: "provider_error", message: failure.message, countsTowardCircuit: true }
            : { _tag: "Unknown", message: failure.message }
        )
      )
    )
  })

  // Untraced: every worker poll of every task comes through here.
  const poll = Effect.fnUntraced(function*(providerTaskId: string) {
    const outgoing: Outgoing = {
      method: "GET",
      url: new URL(`${baseUrl}/api/v1/generate/record-info?taskId=${encodeURIComponent(providerTaskId)}`),
      body: null
    }
    return yield* exchange(outgoing).pipe(
      Effect.map(interpretRecordInfo),
      Effect.catch((failure) => Effect.succeed<PollOutcome>({ _tag: "Unknown", message: failure.message }))
    )
  })

  return SunoHttpProvider.of({ submit, poll, parseCallback })
})
