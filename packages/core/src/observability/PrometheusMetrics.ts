/**
 * The metrics on prom-client, in a registry of their own (never prom-client's global one): the
 * composition root builds one per process with `prometheusMetricsLayer` and serves `render` at
 * `/metrics`. Counters and histograms are updated where events happen; the gauges that describe
 * the whole service (pending tasks, the webhook backlog, open circuits) are read from the
 * database at each scrape, in one statement on partial indexes, so every process reports the
 * same truth and no update path pays for them.
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client"
import { Metrics } from "./Metrics.ts"
import type { MetricsShape } from "./Metrics.ts"

/**
 * Children by label values, kept: prom-client's `labels(...)` validates and builds a label object
 * on every call, which the hot paths need not pay per event.
 */
const cached1 = <C>(make: (a: string) => C) => {
  const children = new Map<string, C>()
  return (a: string): C => {
    const found = children.get(a)
    if (found !== undefined) return found
    const child = make(a)
    children.set(a, child)
    return child
  }
}

const cached2 = <C>(make: (a: string, b: string) => C) => {
  const children = new Map<string, (b: string) => C>()
  return (a: string, b: string): C => {
    let inner = children.get(a)
    if (inner === undefined) {
      inner = cached1((value) => make(a, value))
      children.set(a, inner)
    }
    return inner(b)
  }
}

/** Seconds, from a millisecond of overhead to the provider's and receivers' 10 s limits. */
const latencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** What the scrape reads from the database; undefined when it could not. */
export interface ServiceGauges {
  readonly pending: number
  readonly exports_pending: number
  readonly oldest_deadline_in: number | null
  readonly backlog: number
  readonly oldest_due_for: number | null
  /** Every model's circuit: `[model, open]`. */
  readonly circuits: ReadonlyArray<readonly [string, boolean]> | null
}

export interface PrometheusMetrics extends MetricsShape {
  readonly registry: Registry
}

/**
 * A fresh registry with every Lyre metric and the process's default metrics, the service's gauges
 * set from `readGauges` at each render. The generation timeout is handed in by the composition
 * root: observability sits below the platform's Settings.
 */
export const prometheusMetricsOf = (
  settings: { readonly generationTimeoutSeconds: number },
  readGauges: Effect.Effect<ServiceGauges | undefined>
): PrometheusMetrics => {
  const registry = new Registry()
  // The event-loop lag is sampled by a timer of this period: prom-client's 10 ms woke an idle
  // process 100 times a second (5 of its 10 ms of CPU a second with no request); ten samples a
  // second still give the lag's percentiles, each measured to the nanosecond.
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 })
  const registers = [registry]

  const httpDuration = new Histogram({
    name: "lyre_http_request_duration_seconds",
    help: "HTTP requests by surface, route template, method and status, and how long each took to answer.",
    labelNames: ["surface", "route", "method", "status"] as const,
    buckets: latencyBuckets,
    registers
  })
  const tasksCreated = new Counter({
    name: "lyre_tasks_created_total",
    help: "Generation tasks created (and charged), by model.",
    labelNames: ["model"] as const,
    registers
  })
  const tasksReady = new Counter({
    name: "lyre_tasks_ready_total",
    help: "Generation tasks that became ready, by model.",
    labelNames: ["model"] as const,
    registers
  })
  const tasksFailed = new Counter({
    name: "lyre_tasks_failed_total",
    help: "Generation tasks that failed (and were refunded), by model and error code.",
    labelNames: ["model", "code"] as const,
    registers
  })
  const exportsCreated = new Counter({
    name: "lyre_exports_created_total",
    help: "Exports (song tools) created and charged, by format.",
    labelNames: ["format"] as const,
    registers
  })
  const exportsReady = new Counter({
    name: "lyre_exports_ready_total",
    help: "Exports that became ready, by format.",
    labelNames: ["format"] as const,
    registers
  })
  const exportsFailed = new Counter({
    name: "lyre_exports_failed_total",
    help: "Exports that failed (and were refunded), by format and error code.",
    labelNames: ["format", "code"] as const,
    registers
  })
  const creditsDebited = new Counter({
    name: "lyre_credits_debited_total",
    help: "Credits charged by creates, by model.",
    labelNames: ["model"] as const,
    registers
  })
  const creditsRefunded = new Counter({
    name: "lyre_credits_refunded_total",
    help: "Credits returned by failed tasks, by model.",
    labelNames: ["model"] as const,
    registers
  })
  const providerDuration = new Histogram({
    name: "lyre_provider_call_duration_seconds",
    help: "Calls to the music provider by call (submit, record-info, export-submit, export-record-info) and result, with their latency.",
    labelNames: ["call", "result"] as const,
    buckets: latencyBuckets,
    registers
  })
  const circuitsOpened = new Counter({
    name: "lyre_provider_circuit_opened_total",
    help: "Times a model's provider circuit opened (5 provider failures in a minute).",
    labelNames: ["model"] as const,
    registers
  })
  const callbacks = new Counter({
    name: "lyre_provider_callbacks_total",
    help: "Provider callbacks by result: accepted (a task made due), ignored (nothing to change), progress, refused (unknown task or wrong token).",
    labelNames: ["result"] as const,
    registers
  })
  const rehostBytes = new Counter({
    name: "lyre_rehost_bytes_total",
    help: "Bytes of audio and covers copied into storage before a task became ready.",
    labelNames: ["kind"] as const,
    registers
  })
  const rehostDuration = new Histogram({
    name: "lyre_rehost_duration_seconds",
    help: "Time to copy one file (audio or cover) into storage.",
    labelNames: ["kind"] as const,
    buckets: latencyBuckets,
    registers
  })
  const engineRender = new Histogram({
    name: "lyre_engine_render_seconds",
    help: "Time the built-in engine took to render one task (both takes).",
    buckets: [0.25, 0.5, 1, 2, 4, 8, 16, 32, 64],
    registers
  })
  const engineRealtime = new Histogram({
    name: "lyre_engine_realtime_factor",
    help: "Seconds of music the built-in engine rendered per second of rendering.",
    buckets: [1, 2, 5, 10, 20, 30, 50, 80, 120, 200],
    registers
  })
  const webhookAttempts = new Histogram({
    name: "lyre_webhook_attempt_duration_seconds",
    help: "Webhook delivery attempts by outcome (succeeded, retrying, dead), with the receiver's latency.",
    labelNames: ["outcome"] as const,
    buckets: latencyBuckets,
    registers
  })
  const pending = new Gauge({
    name: "lyre_tasks_pending",
    help: "Tasks pending in the whole service (read from the database at scrape).",
    registers
  })
  const exportsPending = new Gauge({
    name: "lyre_exports_pending",
    help: "Exports pending in the whole service (read from the database at scrape).",
    registers
  })
  const pendingAge = new Gauge({
    name: "lyre_tasks_pending_oldest_age_seconds",
    help: "Age of the oldest pending task, 0 when none (read from the database at scrape).",
    registers
  })
  const backlog = new Gauge({
    name: "lyre_webhook_backlog",
    help: "Webhook deliveries waiting for an attempt, due or scheduled (read from the database at scrape).",
    registers
  })
  const backlogAge = new Gauge({
    name: "lyre_webhook_oldest_due_seconds",
    help: "How long the longest-waiting due webhook delivery has been due, 0 when none.",
    registers
  })
  const circuitOpen = new Gauge({
    name: "lyre_provider_circuit_open",
    help: "1 while the model's provider circuit is open (create answers 503), else 0 (read from the database at scrape).",
    labelNames: ["model"] as const,
    registers
  })

  const redisFallback = new Gauge({
    name: "lyre_redis_fallback",
    help: "1 while Redis is out of reach and this process answers rate limits and the deny-list from its own memory, else 0.",
    registers
  })
  redisFallback.set(0)
  const redisFallbackAnswers = new Counter({
    name: "lyre_redis_fallback_total",
    help: "Answers given by this process's fallbacks while Redis was out of reach, by use (rate_limit, deny_list).",
    labelNames: ["use"] as const,
    registers
  })
  const fallbackAnswer = cached1((use) => redisFallbackAnswers.labels(use))
  const keptSubmissions = new Gauge({
    name: "lyre_kept_submissions",
    help: "Submission outcomes this process keeps because the database did not take their record, to record when it answers.",
    registers
  })
  keptSubmissions.set(0)
  const keptSubmissionResults = new Counter({
    name: "lyre_kept_submissions_total",
    help:
      "Submission outcomes the database did not take, by what became of them " +
      "(kept, recorded, past_deadline, turned_away at the cap, failed).",
    labelNames: ["result"] as const,
    registers
  })
  const keptResult = cached1((result) => keptSubmissionResults.labels(result))

  const requestDurations = cached2((surface, route) =>
    cached2((method, status) => httpDuration.labels(surface, route, method, status))
  )
  const created = cached1((model) => ({
    task: tasksCreated.labels(model),
    credits: creditsDebited.labels(model)
  }))
  const ready = cached1((model) => tasksReady.labels(model))
  const failed = cached2((model, code) => tasksFailed.labels(model, code))
  const refunded = cached1((model) => creditsRefunded.labels(model))
  const exportCreated = cached1((format) => exportsCreated.labels(format))
  const exportReady = cached1((format) => exportsReady.labels(format))
  const exportFailed = cached2((format, code) => exportsFailed.labels(format, code))
  const provider = cached2((call, result) => providerDuration.labels(call, result))
  const opened = cached1((model) => circuitsOpened.labels(model))
  const callback = cached1((result) => callbacks.labels(result))
  const rehosted = cached1((kind) => ({ bytes: rehostBytes.labels(kind), time: rehostDuration.labels(kind) }))
  const attempts = cached1((outcome) => webhookAttempts.labels(outcome))

  const render = Effect.gen(function* () {
    const gauges = yield* readGauges
    if (gauges !== undefined) {
      pending.set(gauges.pending)
      exportsPending.set(gauges.exports_pending)
      pendingAge.set(
        gauges.oldest_deadline_in === null
          ? 0
          : Math.max(0, settings.generationTimeoutSeconds - gauges.oldest_deadline_in)
      )
      backlog.set(gauges.backlog)
      backlogAge.set(Math.max(0, gauges.oldest_due_for ?? 0))
      for (const [model, open] of gauges.circuits ?? []) circuitOpen.labels(model).set(open ? 1 : 0)
    }
    return yield* Effect.promise(() => registry.metrics())
  })

  const metrics: PrometheusMetrics = {
    enabled: true,
    registry,
    httpRequest: (surface, route, method, status, seconds) =>
      requestDurations(surface, route)(method, String(status)).observe(seconds),
    taskCreated: (model, credits) => {
      const child = created(model)
      child.task.inc()
      child.credits.inc(credits)
    },
    taskReady: (model) => ready(model).inc(),
    taskFailed: (model, code, creditsRefunded) => {
      failed(model, code).inc()
      if (creditsRefunded > 0) refunded(model).inc(creditsRefunded)
    },
    exportCreated: (format) => exportCreated(format).inc(),
    exportReady: (format) => exportReady(format).inc(),
    exportFailed: (format, code) => exportFailed(format, code).inc(),
    providerCall: (call, result, seconds) => provider(call, result).observe(seconds),
    circuitOpened: (model) => opened(model).inc(),
    callback: (result) => callback(result).inc(),
    rehosted: (kind, bytes, seconds) => {
      const child = rehosted(kind)
      child.bytes.inc(bytes)
      child.time.observe(seconds)
    },
    engineRender: (renderSeconds, audioSeconds) => {
      engineRender.observe(renderSeconds)
      if (renderSeconds > 0) engineRealtime.observe(audioSeconds / renderSeconds)
    },
    webhookAttempt: (outcome, seconds) => attempts(outcome).observe(seconds),
    redisFallback: (active) => redisFallback.set(active ? 1 : 0),
    redisFallbackAnswer: (use) => fallbackAnswer(use).inc(),
    keptSubmission: (result) => keptResult(result).inc(),
    keptSubmissions: (count) => keptSubmissions.set(count),
    render,
    contentType: registry.contentType
  }
  return metrics
}

/** The metrics with the service's gauges read from the database at each scrape; a failed read leaves them as they were. */
export const makePrometheusMetrics = Effect.fnUntraced(function* (settings: {
  readonly generationTimeoutSeconds: number
}) {
  const sql = yield* SqlClient
  // Deadlines are creation + the timeout, and the sweep's partial index orders them: the oldest
  // pending task is the one with the earliest deadline, found without reading the others.
  const readGauges = sql<ServiceGauges>`
    select
      (select count(*) from generation_tasks where status = 'pending')::int as pending,
      (select count(*) from exports where status = 'pending')::int as exports_pending,
      extract(epoch from (select min(deadline_at) from generation_tasks where status = 'pending') - now())::float8
        as oldest_deadline_in,
      (select count(*) from webhook_deliveries where status = 'pending')::int as backlog,
      extract(epoch from now() - (select min(next_attempt_at) from webhook_deliveries where status = 'pending'))::float8
        as oldest_due_for,
      (select json_agg(json_build_array(model, coalesce(open_until > now(), false)) order by model) from model_circuits)
        as circuits`
  return prometheusMetricsOf(
    settings,
    readGauges.pipe(
      Effect.map(([gauges]) => gauges),
      Effect.orElseSucceed(() => undefined)
    )
  )
})

/** The Metrics service on a fresh prom-client registry; needs the database for the scrape-time gauges. */
export const prometheusMetricsLayer = (settings: { readonly generationTimeoutSeconds: number }) =>
  Layer.effect(Metrics, makePrometheusMetrics(settings))
