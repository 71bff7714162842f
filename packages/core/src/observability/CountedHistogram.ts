/**
 * A histogram counted here and rendered by prom-client's registry as its own histograms are.
 * prom-client's `observe`, even on a child made once for its labels, converts, validates and
 * hashes the label set again on every observation: about 6 thousand instructions of GET /v1/me's
 * 420 (decision 0108), and as much again on each create's provider call. Here a series is a
 * handle the caller keeps for its labels, and an observation is a bucket search and three
 * additions.
 */
import { Histogram } from "prom-client"
import type { HistogramConfiguration } from "prom-client"
import { SeriesByLabels } from "./SeriesByLabels.ts"

/** One label set's counts: `buckets[i]` counts observations in (bounds[i-1], bounds[i]]. */
export class CountedSeries<Label extends string> {
  readonly labels: Readonly<Record<Label, string>>
  readonly buckets: Float64Array
  readonly #bounds: ReadonlyArray<number>
  sum = 0
  count = 0

  constructor(labels: Readonly<Record<Label, string>>, bounds: ReadonlyArray<number>) {
    this.labels = labels
    this.#bounds = bounds
    this.buckets = new Float64Array(bounds.length)
  }

  observe(value: number): void {
    // As prom-client: a value above every bound is counted only in +Inf, the count.
    const bounds = this.#bounds
    let bucket = 0
    while (bucket < bounds.length && value > (bounds[bucket] ?? Infinity)) bucket++
    if (bucket < bounds.length) this.buckets[bucket] = (this.buckets[bucket] ?? 0) + 1
    this.sum += value
    this.count += 1
  }
}

interface RenderedValue<Label extends string> {
  readonly labels: { readonly le?: number | "+Inf" }
  readonly sharedLabels: Readonly<Record<Label, string>>
  readonly value: number
  readonly metricName: string
  /** As prom-client's: none, on a bucket (this histogram keeps no exemplars). */
  readonly exemplar?: null
}

interface RenderedHistogram<Label extends string> {
  readonly name: string
  readonly help: string
  readonly type: "histogram"
  readonly values: ReadonlyArray<RenderedValue<Label>>
  readonly aggregator: "sum"
}

/**
 * prom-client's histogram for its name, help and place in the registry; its own `observe` and
 * `labels` would count where nothing renders, so observations go through `series` only.
 */
export class CountedHistogram<Label extends string> extends Histogram<Label> {
  readonly #name: string
  readonly #help: string
  readonly #bounds: ReadonlyArray<number>
  readonly #series: SeriesByLabels<Label, CountedSeries<Label>>

  constructor(
    configuration: HistogramConfiguration<Label> & {
      readonly labelNames: ReadonlyArray<Label>
      readonly buckets: ReadonlyArray<number>
    }
  ) {
    super(configuration)
    this.#name = configuration.name
    this.#help = configuration.help
    this.#bounds = [...configuration.buckets].sort((a, b) => a - b)
    this.#series = new SeriesByLabels(configuration.labelNames)
  }

  /** The series of `labels`, to keep and observe: found again by its labels if it exists. */
  series(labels: Readonly<Record<Label, string>>): CountedSeries<Label> {
    return this.#series.of(labels, () => new CountedSeries(labels, this.#bounds))
  }

  /**
   * What prom-client's registry renders a metric from, when the metric has it (its histogram
   * does; `get()`, inherited, reads it too): every series' cumulative buckets, +Inf, sum and
   * count, in the shape prom-client's own histogram gives them. A series made but never
   * observed is not shown, as prom-client shows none for labels it never counted.
   */
  getForPromString(): Promise<RenderedHistogram<Label>> {
    const values: Array<RenderedValue<Label>> = []
    for (const series of this.#series.values()) {
      if (series.count === 0) continue
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
    return Promise.resolve({ name: this.#name, help: this.#help, type: "histogram", values, aggregator: "sum" })
  }

  /**
   * Every series starts again from nothing; a handle a caller keeps counts on from zero.
   * prom-client's constructor resets the metric too, before this class's fields exist.
   */
  override reset(): void {
    if (!(#series in this)) return
    for (const series of this.#series.values()) {
      series.buckets.fill(0)
      series.sum = 0
      series.count = 0
    }
  }
}
