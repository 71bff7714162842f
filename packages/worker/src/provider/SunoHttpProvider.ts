import type { PollOutcome, ProviderSubmission, SubmitOutcome } from "@lyre/core/provider/outcomes"
import { Provider } from "@lyre/core/provider/Provider"
import { Cause, Context, Duration, Effect, Layer, Redacted } from "effect"
import { NodeHttpClient } from "@effect/platform-node"
import { HttpClient, HttpClientRequest } from "effect/http"
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
  /** Needs an `HttpClient` (for example `NodeHttpClient.layerUndici`). */
  static readonly layerNoDeps = (config: SunoHttpProviderConfig) => Layer.effect(SunoHttpProvider, make(config))

  static readonly layer = (config: SunoHttpProviderConfig) =>
    SunoHttpProvider.layerNoDeps(config).pipe(Layer.provide(NodeHttpClient.layerUndici))

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

const make = Effect.fnUntraced(function*(config: SunoHttpProviderConfig) {
  const baseUrl = config.baseUrl.replace(/\/+$/, "")
  const apiKey = typeof config.apiKey === "string" ? Redacted.make(config.apiKey) : config.apiKey
  const modelMap = { ...defaultModelMap, ...config.modelMap }
  const timeout = Duration.millis(config.timeoutMs ?? 10_000)
  const client = yield* HttpClient.HttpClient

  /**
   * Sends one request and reads the whole answer within the time limit. The time-out
   * interrupts the request, which aborts the connection, so a hanging upstream holds nothing.
   * The failure branch says what went wrong without the request (which carries the key).
   */
  const exchange = (request: HttpClientRequest.HttpClientRequest): Effect.Effect<RawAnswer, ExchangeFailure> =>
    client.execute(HttpClientRequest.bearerToken(request, apiKey)).pipe(
      Effect.flatMap((response) => Effect.map(response.text, (text): RawAnswer => ({ status: response.status, text }))),
      Effect.timeout(timeout),
      Effect.mapError((error): ExchangeFailure =>
        Cause.isTimeoutError(error)
          ? { message: `No answer from the upstream within ${Duration.toMillis(timeout)} ms`, notSent: false }
          : neverConnected(error)
          ? { message: `Upstream unreachable (no connection): ${error.message}`, notSent: true }
          : { message: `Upstream unreachable: ${error.message}`, notSent: false }
      )
    )

  const submit = Effect.fn("SunoHttpProvider.submit")(function*(submission: ProviderSubmission) {
    yield* Effect.annotateCurrentSpan({ taskId: submission.taskId, model: submission.model })
    const request = HttpClientRequest.post(`${baseUrl}/api/v1/generate`).pipe(
      HttpClientRequest.bodyJsonUnsafe(generateBody(submission, modelMap))
    )
    return yield* exchange(request).pipe(
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
    const request = HttpClientRequest.get(`${baseUrl}/api/v1/generate/record-info`).pipe(
      HttpClientRequest.setUrlParam("taskId", providerTaskId)
    )
    return yield* exchange(request).pipe(
      Effect.map(interpretRecordInfo),
      Effect.catch((failure) => Effect.succeed<PollOutcome>({ _tag: "Unknown", message: failure.message }))
    )
  })

  return SunoHttpProvider.of({ submit, poll, parseCallback })
})
