/**
 * Traces over OTLP/HTTP (`OTEL_EXPORTER_OTLP_ENDPOINT`), with Effect's own exporter: the spans
 * core already opens (`Effect.fn`) are sent to `{endpoint}/v1/traces` as JSON.
 *
 * One trace per request: the HTTP handler opens a server span per request and runs the request
 * inside it (an AsyncLocalStorage made here, by the composition root, not a module global).
 * Every program a surface runs for the request starts its own fiber with no parent span; the
 * tracer below gives such a span the request's span as its parent, so REST, tRPC and any other
 * surface join the request's trace without passing anything through core. Every span of a
 * request carries `request_id`, copied from its parent when the asynchronous context is gone.
 *
 * Off (the default), none of this exists: no tracer, no storage, no span per request.
 */
import { AsyncLocalStorage } from "node:async_hooks"
import { Context, Effect, Exit, Layer, Option, Tracer } from "effect"
import { TaskTraces } from "@lyre/core"
import { FetchHttpClient } from "effect/http"
import { OtlpExporter, OtlpSerialization, OtlpTracer } from "effect/observability"

/** The span of one request, open until its answer is sent. */
export interface RequestSpan {
  readonly traceId: string
  /** Runs the request's handling inside the span's context. */
  readonly run: <A>(handle: () => A) => A
  readonly end: (status: number) => void
}

export interface RequestTracingShape {
  readonly enabled: boolean
  readonly begin: (requestId: string, method: string, route: string) => RequestSpan | null
}

/** How the HTTP handler opens request spans; disabled unless tracing is configured. */
export const RequestTracing = Context.Reference<RequestTracingShape>("lyre/server/RequestTracing", {
  defaultValue: () => ({ enabled: false, begin: () => null })
})

interface RequestContext {
  readonly span: Tracer.Span
  readonly requestId: string
}

const requestIdKey = "request_id"

const nowNanos = (): bigint => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1_000_000))

const requestIdOf = (parent: Option.Option<Tracer.AnySpan>): unknown =>
  Option.isSome(parent) && parent.value._tag === "Span" ? parent.value.attributes.get(requestIdKey) : undefined

/** The exporter's tracer, with each request's spans joined under the request's span. */
const joinRequests = (inner: Tracer.Tracer, requests: AsyncLocalStorage<RequestContext>): Tracer.Tracer =>
  Tracer.make({
    span(options) {
      const request = requests.getStore()
      const adopt = request !== undefined && Option.isNone(options.parent) && !options.root
      const span = inner.span(adopt ? { ...options, parent: Option.some(request.span) } : options)
      const requestId = request?.requestId ?? requestIdOf(options.parent)
      if (requestId !== undefined) span.attribute(requestIdKey, requestId)
      return span
    },
    ...(inner.context === undefined ? {} : { context: inner.context })
  })

const requestTracing = (inner: Tracer.Tracer, requests: AsyncLocalStorage<RequestContext>): RequestTracingShape => ({
  enabled: true,
  begin: (requestId, method, route) => {
    const span = inner.span({
      name: `${method} ${route}`,
      parent: Option.none(),
      annotations: Context.empty(),
      links: [],
      startTime: nowNanos(),
      kind: "server",
      root: true,
      sampled: true
    })
    span.attribute(requestIdKey, requestId)
    span.attribute("http.request.method", method)
    span.attribute("http.route", route)
    const context: RequestContext = { span, requestId }
    return {
      traceId: span.traceId,
      run: (handle) => requests.run(context, handle),
      end: (status) => {
        span.attribute("http.response.status_code", status)
        span.end(nowNanos(), Exit.void)
      }
    }
  }
})

export interface TracingOptions {
  /** `OTEL_EXPORTER_OTLP_ENDPOINT`: spans are posted to `{endpoint}/v1/traces`. */
  readonly endpoint: string
  /** `lyre-api` or `lyre-worker`. */
  readonly serviceName: string
  readonly exportIntervalMillis?: number
}

/** The tracer and the request spans of a process that exports its traces. */
export const tracingLayer = (options: TracingOptions): Layer.Layer<never> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const requests = new AsyncLocalStorage<RequestContext>()
      const inner = yield* OtlpTracer.make({
        url: `${options.endpoint}/v1/traces`,
        resource: { serviceName: options.serviceName },
        ...(options.exportIntervalMillis === undefined ? {} : { exportInterval: options.exportIntervalMillis })
      })
      return Context.make(Tracer.Tracer, joinRequests(inner, requests)).pipe(
        Context.add(RequestTracing, requestTracing(inner, requests)),
        Context.add(TaskTraces, true)
      )
    })
  ).pipe(
    Layer.provide(OtlpExporter.layerFlusher),
    Layer.provide(OtlpSerialization.layerJson),
    Layer.provide(FetchHttpClient.layer)
  )
