/**
 * What the service counts, as one call per event at the place it happens. The calls are plain
 * synchronous functions: they sit on the hot paths (every request, every poll), where an Effect
 * per update would cost more than the update. Without a composition root that provides the
 * Prometheus implementation (`PrometheusMetrics.ts`), every call is a no-op, so tests and
 * tools that build core's layers alone need nothing.
 */
import { Context, Effect } from "effect"

export type ProviderCall = "submit" | "record-info" | "export-submit" | "export-record-info"
export type CallbackResult = "accepted" | "ignored" | "progress" | "refused"
export type RehostKind = "audio" | "cover"
export type DeliveryOutcome = "succeeded" | "retrying" | "dead"
export type RedisFallbackUse = "rate_limit" | "deny_list"
/** What became of a submission outcome the database did not take (SubmissionBacklog). */
export type KeptSubmissionResult = "kept" | "recorded" | "past_deadline" | "turned_away" | "failed"

export interface MetricsShape {
  /** False for the no-op: callers may skip work done only to measure (timers). */
  readonly enabled: boolean
  /** One finished HTTP request; `route` is a template (`/api/v1/music/generations/{id}`), never a raw path. */
  readonly httpRequest: (surface: string, route: string, method: string, status: number, seconds: number) => void
  /** A task was created and charged `credits`. */
  readonly taskCreated: (model: string, credits: number) => void
  readonly taskReady: (model: string) => void
  /** A task failed with `code` and `creditsRefunded` went back to the account. */
  readonly taskFailed: (model: string, code: string, creditsRefunded: number) => void
  /** An export (song tools) was created and charged; one became ready; one failed (and was refunded). */
  readonly exportCreated: (format: string) => void
  readonly exportReady: (format: string) => void
  readonly exportFailed: (format: string, code: string) => void
  /** One call to the provider; `result` is the outcome's tag in lower case (accepted, pending, unknown...). */
  readonly providerCall: (call: ProviderCall, result: string, seconds: number) => void
  /** A provider failure opened the model's circuit. */
  readonly circuitOpened: (model: string) => void
  readonly callback: (result: CallbackResult) => void
  readonly rehosted: (kind: RehostKind, bytes: number, seconds: number) => void
  /** The built-in engine rendered `audioSeconds` of music in `renderSeconds`. */
  readonly engineRender: (renderSeconds: number, audioSeconds: number) => void
  /** One webhook attempt, by what it made of its delivery, and how long the receiver took. */
  readonly webhookAttempt: (outcome: DeliveryOutcome, seconds: number) => void
  /** Redis went away (true) or came back (false): this process answers limits and the deny-list itself meanwhile. */
  readonly redisFallback: (active: boolean) => void
  /** One answer given by a process-local fallback because Redis was away. */
  readonly redisFallbackAnswer: (use: RedisFallbackUse) => void
  /** A submission outcome the database did not take was kept, or one kept was settled (or turned away at the cap). */
  readonly keptSubmission: (result: KeptSubmissionResult) => void
  /** How many such outcomes this process keeps now. */
  readonly keptSubmissions: (count: number) => void
  /** The Prometheus text of every metric, database gauges read now. */
  readonly render: Effect.Effect<string>
  readonly contentType: string
}

const ignore = (): void => undefined

export const noopMetrics: MetricsShape = {
  enabled: false,
  httpRequest: ignore,
  taskCreated: ignore,
  taskReady: ignore,
  taskFailed: ignore,
  exportCreated: ignore,
  exportReady: ignore,
  exportFailed: ignore,
  providerCall: ignore,
  circuitOpened: ignore,
  callback: ignore,
  rehosted: ignore,
  engineRender: ignore,
  webhookAttempt: ignore,
  redisFallback: ignore,
  redisFallbackAnswer: ignore,
  keptSubmission: ignore,
  keptSubmissions: ignore,
  render: Effect.succeed(""),
  contentType: "text/plain; version=0.0.4; charset=utf-8"
}

/** The metrics of this process; a no-op unless the composition root provides a registry. */
export const Metrics = Context.Reference<MetricsShape>("lyre/core/services/Metrics", {
  defaultValue: () => noopMetrics
})
