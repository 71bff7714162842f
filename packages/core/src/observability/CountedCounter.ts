/**
 * A counter counted here and rendered by prom-client's registry as its own counters are, as
 * `CountedHistogram` is for histograms. prom-client's `inc`, even on a child made once for its
 * labels, hashes and validates the label set again on every call: about 5 thousand instructions
 * each, and a task made five of them in the worker and five more in the API (decision 0119).
 * Here a series is a handle the caller keeps for its labels, and an increment is an addition.
 */
import { Counter } from "prom-client"
import type { CounterConfiguration } from "prom-client"
import { SeriesByLabels } from "./SeriesByLabels.ts"

/** One label set's count. */
export class CountedCounterSeries<Label extends string> {
  readonly labels: Readonly<Record<Label, string>>
  value = 0
  /** Whether it was counted since it was made or reset: prom-client shows only those. */
  counted = false

  constructor(labels: Readonly<Record<Label, string>>) {
    this.labels = labels
  }

  /** Adds `amount` (1 unless told); callers count what cannot be negative (files, bytes, credits). */
  inc(amount = 1): void {
    this.value += amount
    this.counted = true
  }
}

interface RenderedCounter<Label extends string> {
  readonly name: string
  readonly help: string
  readonly type: "counter"
  readonly values: ReadonlyArray<{ readonly value: number; readonly labels: Readonly<Record<Label, string>> }>
  readonly aggregator: "sum"
}

/**
 * prom-client's counter for its name, help and place in the registry; its own `inc` and `labels`
 * would count where nothing renders, so increments go through `series` only.
 */
export class CountedCounter<Label extends string> extends Counter<Label> {
  readonly #name: string
  readonly #help: string
  readonly #series: SeriesByLabels<Label, CountedCounterSeries<Label>>

  constructor(configuration: CounterConfiguration<Label> & { readonly labelNames: ReadonlyArray<Label> }) {
    super(configuration)
    this.#name = configuration.name
    this.#help = configuration.help
    this.#series = new SeriesByLabels(configuration.labelNames)
  }

  /** The series of `labels`, to keep and count: found again by its labels if it exists. */
  series(labels: Readonly<Record<Label, string>>): CountedCounterSeries<Label> {
    return this.#series.of(labels, () => new CountedCounterSeries(labels))
  }

  /**
   * What prom-client's registry renders a metric from, as text and as JSON: the counted series, in
   * the shape prom-client's counter gives them. Its declaration adds a `collect` to that shape,
   * which its own counter's `get` does not give either.
   */
  override get(): ReturnType<Counter<Label>["get"]> {
    const values = [...this.#series.values()]
      .filter((series) => series.counted)
      .map((series) => ({ value: series.value, labels: series.labels }))
    const rendered: RenderedCounter<Label> = {
      name: this.#name,
      help: this.#help,
      type: "counter",
      values,
      aggregator: "sum"
    }
    return Promise.resolve(rendered as unknown as Awaited<ReturnType<Counter<Label>["get"]>>)
  }

  /**
   * Every series starts again from nothing, shown again once counted; a kept handle counts on
   * from zero. prom-client's constructor resets the metric too, before this class's fields exist.
   */
  override reset(): void {
    if (!(#series in this)) return
    for (const series of this.#series.values()) {
      series.value = 0
      series.counted = false
    }
  }
}
