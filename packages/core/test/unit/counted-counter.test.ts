/**
 * CountedCounter counts on its own but must render exactly as prom-client's counter does: the
 * same increments through both give the same exposition text and the same JSON.
 */
import { Counter, Registry } from "prom-client"
import { describe, expect, it } from "vitest"
import { CountedCounter } from "../../src/observability/CountedCounter.ts"

const configuration = (registry: Registry) => ({
  name: "lyre_tasks_failed_total",
  help: "Generation tasks that failed (and were refunded), by model and error code.",
  labelNames: ["model", "code"] as const,
  registers: [registry]
})

// Interleaved, as events come: prom-client shows its series in the order first counted.
const increments: ReadonlyArray<readonly [string, string, number | undefined]> = [
  ["aether", "provider_error", undefined],
  ["echo", "generation_timeout", 1],
  ["aether", "provider_error", 3],
  ["aether", "content_policy", 0],
  ["echo", "generation_timeout", 2.5]
]

describe("CountedCounter", () => {
  it("renders the text and JSON prom-client's counter renders, series in the order first counted", async () => {
    const theirs = new Registry()
    const ours = new Registry()
    const counter = new Counter(configuration(theirs))
    const counted = new CountedCounter(configuration(ours))
    for (const [model, code, amount] of increments) {
      counter.labels(model, code).inc(amount)
      counted.series({ model, code }).inc(amount)
    }
    expect(await ours.metrics()).toBe(await theirs.metrics())
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON())
    expect(await ours.metrics()).toContain('lyre_tasks_failed_total{model="aether",code="content_policy"} 0')
  })

  it("shows a series only once counted, and after a reset only once counted again", async () => {
    const theirs = new Registry()
    const ours = new Registry()
    const child = new Counter(configuration(theirs)).labels("aether", "provider_error")
    const kept = new CountedCounter(configuration(ours)).series({ model: "aether", code: "provider_error" })
    expect(await ours.metrics()).toBe(await theirs.metrics())
    child.inc()
    kept.inc()
    theirs.resetMetrics()
    ours.resetMetrics()
    expect(await ours.metrics()).toBe(await theirs.metrics())
    expect(await ours.metrics()).not.toContain("provider_error")
    child.inc(4)
    kept.inc(4)
    expect(await ours.metrics()).toBe(await theirs.metrics())
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON())
  })
})
