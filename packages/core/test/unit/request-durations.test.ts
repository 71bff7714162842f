/**
 * What `/metrics` shows of the durations and counts the service records, through the Metrics
 * calls the hot paths make and the text a scrape renders: each request in the series of its
 * surface, route template, method and status, buckets cumulative up to +Inf, and a series only
 * once something was counted in it. The scrape's database gauges are handed in, read as given.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { prometheusMetricsOf } from "../../src/observability/PrometheusMetrics.ts"
import type { ServiceGauges } from "../../src/observability/PrometheusMetrics.ts"

const settings = { generationTimeoutSeconds: 600 }
// Durations below are binary fractions, so that their sums print exactly.
const bounds = [
  "0.001",
  "0.0025",
  "0.005",
  "0.01",
  "0.025",
  "0.05",
  "0.1",
  "0.25",
  "0.5",
  "1",
  "2.5",
  "5",
  "10",
  "+Inf"
]

const rendered = (metrics: ReturnType<typeof prometheusMetricsOf>) =>
  Effect.runPromise(metrics.render).then((text) => text.split("\n"))

/** The lines of one series of a histogram: its buckets in order, then its sum and count. */
const histogramLines = (name: string, labels: string, buckets: ReadonlyArray<number>, sum: number) => [
  ...bounds.map((le, i) => `${name}_bucket{le="${le}",${labels}} ${buckets[i]}`),
  `${name}_sum{${labels}} ${sum}`,
  `${name}_count{${labels}} ${buckets[buckets.length - 1]}`
]

/** Whether `lines` holds `expected` one after the other. */
const containsRun = (lines: ReadonlyArray<string>, expected: ReadonlyArray<string>) => {
  const start = lines.indexOf(expected[0] ?? "")
  return start >= 0 && expected.every((line, i) => lines[start + i] === line)
}

describe("HTTP request durations", () => {
  const metrics = prometheusMetricsOf(settings, Effect.succeed(undefined))
  metrics.httpRequest("rest", "/api/v1/me", "GET", 200, 0.0009765625)
  metrics.httpRequest("rest", "/api/v1/me", "GET", 200, 0.00390625)
  metrics.httpRequest("rest", "/api/v1/me", "GET", 401, 0.001)
  metrics.httpRequest("rest", "/api/v1/music/generations", "POST", 202, 12)
  metrics.httpRequest("trpc", "/trpc/me", "GET", 200, 0.25)

  it("counts each request in its surface's, route's, method's and status's series, buckets cumulative", async () => {
    const lines = await rendered(metrics)
    const name = "lyre_http_request_duration_seconds"
    expect(
      containsRun(
        lines,
        histogramLines(
          name,
          'surface="rest",route="/api/v1/me",method="GET",status="200"',
          [1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2],
          0.0048828125
        )
      )
    ).toBe(true)
    expect(
      containsRun(
        lines,
        histogramLines(
          name,
          'surface="rest",route="/api/v1/me",method="GET",status="401"',
          [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
          0.001
        )
      )
    ).toBe(true)
    expect(
      containsRun(
        lines,
        histogramLines(
          name,
          'surface="trpc",route="/trpc/me",method="GET",status="200"',
          [0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1],
          0.25
        )
      )
    ).toBe(true)
  })

  it("counts a duration above every bound in +Inf alone", async () => {
    const lines = await rendered(metrics)
    expect(
      containsRun(
        lines,
        histogramLines(
          "lyre_http_request_duration_seconds",
          'surface="rest",route="/api/v1/music/generations",method="POST",status="202"',
          [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
          12
        )
      )
    ).toBe(true)
  })
})

describe("the other histograms and the counters", () => {
  it("measures provider calls by call and result, and re-hosting by kind in bytes and time", async () => {
    const metrics = prometheusMetricsOf(settings, Effect.succeed(undefined))
    metrics.providerCall("submit", "accepted", 0.00390625)
    metrics.providerCall("record-info", "pending", 0.002)
    metrics.providerCall("submit", "accepted", 0.25)
    metrics.rehosted("audio", 8192, 0.02)
    metrics.rehosted("audio", 4096, 0.03)
    const lines = await rendered(metrics)
    expect(
      containsRun(
        lines,
        histogramLines(
          "lyre_provider_call_duration_seconds",
          'call="submit",result="accepted"',
          [0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2],
          0.25390625
        )
      )
    ).toBe(true)
    expect(lines).toContain('lyre_provider_call_duration_seconds_count{call="record-info",result="pending"} 1')
    expect(lines).toContain('lyre_rehost_bytes_total{kind="audio"} 12288')
    expect(lines).toContain('lyre_rehost_duration_seconds_count{kind="audio"} 2')
  })

  it("shows a counter's series only once counted: a failure refunding nothing adds no refund series", async () => {
    const metrics = prometheusMetricsOf(settings, Effect.succeed(undefined))
    metrics.taskCreated("aether", 50)
    metrics.taskCreated("aether", 50)
    metrics.taskFailed("aether", "provider_error", 50)
    metrics.taskFailed("echo", "content_policy", 0)
    const lines = await rendered(metrics)
    expect(lines).toContain('lyre_tasks_created_total{model="aether"} 2')
    expect(lines).toContain('lyre_credits_debited_total{model="aether"} 100')
    expect(lines).toContain('lyre_tasks_failed_total{model="aether",code="provider_error"} 1')
    expect(lines).toContain('lyre_tasks_failed_total{model="echo",code="content_policy"} 1')
    expect(lines).toContain('lyre_credits_refunded_total{model="aether"} 50')
    expect(lines.filter((line) => line.startsWith('lyre_credits_refunded_total{model="echo"'))).toEqual([])
    expect(lines.filter((line) => line.startsWith("lyre_tasks_ready_total{"))).toEqual([])
  })

  it("sets the service's gauges from what the scrape reads, the oldest task's age from its deadline", async () => {
    const gauges: ServiceGauges = {
      pending: 3,
      exports_pending: 1,
      oldest_deadline_in: 540,
      backlog: 7,
      oldest_due_for: 2.5,
      circuits: [
        ["aether", false],
        ["nocturne", true]
      ]
    }
    const lines = await rendered(prometheusMetricsOf(settings, Effect.succeed(gauges)))
    expect(lines).toContain("lyre_tasks_pending 3")
    expect(lines).toContain("lyre_exports_pending 1")
    expect(lines).toContain("lyre_tasks_pending_oldest_age_seconds 60")
    expect(lines).toContain("lyre_webhook_backlog 7")
    expect(lines).toContain("lyre_webhook_oldest_due_seconds 2.5")
    expect(lines).toContain('lyre_provider_circuit_open{model="aether"} 0')
    expect(lines).toContain('lyre_provider_circuit_open{model="nocturne"} 1')
  })
})
