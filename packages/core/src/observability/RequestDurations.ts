/**
 * The histogram of HTTP request durations, counted here and rendered by prom-client's registry
 * as its own histograms are. prom-client's `observe`, even on a child made once for its labels,
 * converts, validates and hashes the label set again on every observation: about 6 thousand
 * instructions of GET /v1/me's 420 (decision 0108). Here a series is found by its route, method
 * and status in nested maps, and an observation is a bucket search and three additions.
 */
import { Histogram } from "prom-client"
import type { HistogramConfiguration } from "prom-client"

type Label = "surface" | "route" | "method" | "status" | "le"

/** One label set's counts: `buckets[i]` counts observations in (bounds[i-1], bounds[i]]. */
interface DurationSeries {
  readonly labels: Readonly<Record<"surface" | "route" | "method" | "status", string>>
  readonly buckets: Float64Array
  sum: number
  count: number
}

interface RenderedValue {
  readonly labels: { readonly le?: number | "+Inf" }
  readonly sharedLabels: DurationSeries["labels"]
  readonly value: number
  readonly metricName: string
  /** As prom-client's: none, on a bucket (this histogram keeps no exemplars). */
  readonly exemplar?: null
}

interface RenderedHistogram {
  readonly name: string
  readonly help: string
  readonly type: "histogram"
  readonly values: ReadonlyArray<RenderedValue>
  readonly aggregator: "sum"
}

/**
 * prom-client's histogram for its name, help and place in the registry; its own `observe` and
 * `labels` would count where nothing renders, so observations go through `record` only.
 */
export class RequestDurations extends Histogram<Label> {
  readonly #name: string
  readonly #help: string
  readonly #bounds: ReadonlyArray<number>
  readonly #series = new Map<string, Map<string, Map<number, DurationSeries>>>()

  constructor(configuration: HistogramConfiguration<Label> & { readonly buckets: ReadonlyArray<number> }) {
    super(configuration)
    this.#name = configuration.name
    this.#help = configuration.help
    this.#bounds = [...configuration.buckets].sort((a, b) => a - b)
  }

  /** Counts one request of `seconds`; its surface follows from its route, so the series are found by route. */
  record(surface: string, route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.#series.get(route)
    if (byMethod === undefined) this.#series.set(route, byMethod = new Map())
    let byStatus = byMethod.get(method)
    if (byStatus === undefined) byMethod.set(method, byStatus = new Map())
    let series = byStatus.get(status)
    if (series === undefined) {
      series = {
        labels: { surface, route, method, status: String(status) },
        buckets: new Float64Array(this.#bounds.length),
        sum: 0,
        count: 0
      }
      byStatus.set(status, series)
    }
    // As prom-client: a value above every bound is counted only in +Inf, the count.
    const bounds = this.#bounds
    let bucket = 0
    while (bucket < bounds.length && seconds > (bounds[bucket] ?? Infinity)) bucket++
    if (bucket < bounds.length) series.buckets[bucket] = (series.buckets[bucket] ?? 0) + 1
    series.sum += seconds
    series.count += 1
  }

  /**
   * What prom-client's registry renders a metric from, when the metric has it (its histogram
   * does; `get()`, inherited, reads it too): every series' cumulative buckets, +Inf, sum and
   * count, in the shape prom-client's own histogram gives them.
   */
  getForPromString(): Promise<RenderedHistogram> {
    const values: Array<RenderedValue> = []
    for (const byMethod of this.#series.values()) {
      for (const byStatus of byMethod.values()) {
        for (const series of byStatus.values()) {
          let cumulative = 0
          this.#bounds.forEach((bound, i) => {
            cumulative += series.buckets[i] ?? 0
            values.push({
              labels: { le: bound },
              sharedLabels: series.labels,
              value: cumulative,
              metricName: `${this.#name}_bucket`,
              exemplar: null
            })
          })
          values.push(
            {
              labels: { le: "+Inf" },
              sharedLabels: series.labels,
              value: series.count,
              metricName: `${this.#name}_bucket`,
              exemplar: null
            },
            { labels: {}, sharedLabels: series.labels, value: series.sum, metricName: `${this.#name}_sum` },
            { labels: {}, sharedLabels: series.labels, value: series.count, metricName: `${this.#name}_count` }
          )
        }
      }
    }
    return Promise.resolve({ name: this.#name, help: this.#help, type: "histogram", values, aggregator: "sum" })
  }

  /** prom-client's constructor resets the metric too, before this class's fields exist. */
  override reset(): void {
    if (#series in this) this.#series.clear()
  }
}
