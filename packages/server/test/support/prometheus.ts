/**
 * Scraping for tests: `/metrics` read over HTTP and parsed by `parse-prometheus-text-format` (a
 * registry parser that follows prom2json's output), so a malformed exposition fails the test.
 */
import { createRequire } from "node:module"

export interface Sample {
  readonly labels?: Readonly<Record<string, string>>
  /** Counters and gauges. */
  readonly value?: string
  /** Histograms. */
  readonly buckets?: Readonly<Record<string, string>>
  readonly count?: string
  readonly sum?: string
}

export interface Family {
  readonly name: string
  readonly help: string
  readonly type: string
  readonly metrics: ReadonlyArray<Sample>
}

// The package ships CommonJS without types; its one export is the parser.
const parsePrometheusTextFormat = createRequire(import.meta.url)("parse-prometheus-text-format") as (
  text: string
) => ReadonlyArray<Family>

/**
 * Families by name. The parser folds a histogram's series into one sample and drops their labels
 * (it expects unlabelled histograms), so a histogram's samples are read from its `_count` series
 * and `_sum` series parsed as plain samples: one sample per label set, with `count` and `sum`.
 */
export const parseMetrics = (text: string): ReadonlyMap<string, Family> => {
  const typed = parsePrometheusTextFormat(text)
  // Untyped, a histogram's series come as one family per run of lines: gather them by name.
  const plain = new Map<string, Array<Sample>>()
  for (const family of parsePrometheusTextFormat(
    text
      .split("\n")
      .filter((line) => !/^# TYPE \S+ histogram$/.test(line))
      .join("\n")
  )) {
    plain.set(family.name, [...(plain.get(family.name) ?? []), ...family.metrics])
  }
  const key = (sample: Sample) => JSON.stringify(sample.labels ?? {})
  return new Map(
    typed.map((family) => {
      if (family.type !== "HISTOGRAM") return [family.name, family]
      const sums = new Map((plain.get(`${family.name}_sum`) ?? []).map((sample) => [key(sample), sample.value ?? "0"]))
      const metrics = (plain.get(`${family.name}_count`) ?? []).map((sample) => ({
        ...(sample.labels === undefined ? {} : { labels: sample.labels }),
        count: sample.value ?? "0",
        sum: sums.get(key(sample)) ?? "0"
      }))
      return [family.name, { ...family, metrics }]
    })
  )
}

export const scrape = async (url: string, headers: Record<string, string> = {}) => {
  const response = await fetch(`${url}/metrics`, { headers })
  const text = await response.text()
  return { status: response.status, contentType: response.headers.get("content-type"), text }
}

const matches = (sample: Sample, labels: Readonly<Record<string, string>>) =>
  Object.entries(labels).every(([name, value]) => sample.labels?.[name] === value)

/** The sum of a family's values (a histogram's counts) over the samples with these labels; 0 when none. */
export const sumOf = (
  families: ReadonlyMap<string, Family>,
  name: string,
  labels: Readonly<Record<string, string>> = {}
): number =>
  (families.get(name)?.metrics ?? [])
    .filter((sample) => matches(sample, labels))
    .reduce((sum, sample) => sum + Number(sample.count ?? sample.value ?? 0), 0)
