/**
 * RequestDurations and CountedHistogram count on their own but must render exactly as
 * prom-client's histogram does: the same observations through both give the same exposition
 * text and the same JSON.
 */
import { Histogram, Registry } from "prom-client"
import { describe, expect, it } from "vitest"
import { CountedHistogram } from "../../src/observability/CountedHistogram.ts"
import { RequestDurations } from "../../src/observability/RequestDurations.ts"

const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const labelNames = ["surface", "route", "method", "status"] as const
const configuration = (registry: Registry) => ({
  name: "lyre_http_request_duration_seconds",
  help: "HTTP requests by surface, route template, method and status, and how long each took to answer.",
  labelNames,
  buckets,
  registers: [registry]
})

const observations: ReadonlyArray<readonly [string, string, string, number, number]> = [
  ["rest", "/api/v1/me", "GET", 200, 0.0004],
  ["rest", "/api/v1/me", "GET", 200, 0.003],
  ["rest", "/api/v1/me", "GET", 401, 0.001],
  ["rest", "/api/v1/music/generations", "POST", 202, 0.02],
  ["rest", "/api/v1/music/generations", "POST", 202, 12],
  ["trpc", "/trpc/me", "GET", 200, 0.25],
  ["admin", "/admin/v1/accounts/{id}", "GET", 404, 10]
]

describe("RequestDurations", () => {
  const theirs = new Registry()
  const ours = new Registry()
  const histogram = new Histogram(configuration(theirs))
  const durations = new RequestDurations(configuration(ours))
  for (const [surface, route, method, status, seconds] of observations) {
    histogram.labels(surface, route, method, String(status)).observe(seconds)
    durations.record(surface, route, method, status, seconds)
  }

  it("renders the exposition text prom-client's histogram renders", async () => {
    expect(await ours.metrics()).toBe(await theirs.metrics())
  })

  it("gives the JSON prom-client's histogram gives", async () => {
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON())
  })

  it("starts again from nothing when the registry is reset", async () => {
    ours.resetMetrics()
    theirs.resetMetrics()
    expect(await ours.metrics()).toBe(await theirs.metrics())
    expect(await ours.metrics()).not.toContain("_bucket")
  })
})

describe("CountedHistogram", () => {
  const providerConfiguration = (registry: Registry) => ({
    name: "lyre_provider_call_duration_seconds",
    help: "Calls to the music provider by call and result, with their latency.",
    labelNames: ["call", "result"] as const,
    buckets,
    registers: [registry]
  })
  // Interleaved, as calls come: prom-client shows its series in the order first observed.
  const calls: ReadonlyArray<readonly [string, string, number]> = [
    ["submit", "accepted", 0.004],
    ["record-info", "pending", 0.002],
    ["submit", "accepted", 0.3],
    ["submit", "rejected", 11],
    ["record-info", "pending", 0.0009],
    ["record-info", "ready", 0.05]
  ]

  it("renders the text and JSON prom-client's histogram renders, series in the order first observed", async () => {
    const theirs = new Registry()
    const ours = new Registry()
    const histogram = new Histogram(providerConfiguration(theirs))
    const counted = new CountedHistogram(providerConfiguration(ours))
    for (const [call, result, seconds] of calls) {
      histogram.labels(call, result).observe(seconds)
      counted.series({ call, result }).observe(seconds)
    }
    expect(await ours.metrics()).toBe(await theirs.metrics())
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON())
  })

  it("counts a kept series from nothing after a reset, as prom-client's child does", async () => {
    const theirs = new Registry()
    const ours = new Registry()
    const child = new Histogram(providerConfiguration(theirs)).labels("submit", "accepted")
    const kept = new CountedHistogram(providerConfiguration(ours)).series({ call: "submit", result: "accepted" })
    child.observe(0.2)
    kept.observe(0.2)
    theirs.resetMetrics()
    ours.resetMetrics()
    expect(await ours.metrics()).toBe(await theirs.metrics())
    child.observe(0.004)
    kept.observe(0.004)
    expect(await ours.metrics()).toBe(await theirs.metrics())
  })
})
