/**
 * The series of a metric Lyre counts itself (`CountedCounter`, `CountedHistogram`), found by
 * their label values. They are kept in the order first made. Callers make a series as they first
 * count it, which is the order prom-client keeps its own in. After a reset prom-client starts its
 * order again, and this keeps the one it had.
 */
export class SeriesByLabels<Label extends string, Series> {
  readonly #labelNames: ReadonlyArray<Label>
  readonly #series = new Map<string, Series>()

  constructor(labelNames: ReadonlyArray<Label>) {
    this.#labelNames = labelNames
  }

  /** The series of `labels`: found again by its label values, else made by `make`. */
  of(labels: Readonly<Record<Label, string>>, make: () => Series): Series {
    const key = this.#labelNames.map((name) => labels[name]).join("\u0000")
    let series = this.#series.get(key)
    if (series === undefined) this.#series.set(key, (series = make()))
    return series
  }

  values(): IterableIterator<Series> {
    return this.#series.values()
  }
}
