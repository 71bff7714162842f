/**
 * The histogram of HTTP request durations (CountedHistogram): a request's series is found by its
 * route, method and status in nested maps, without a key made for it.
 */
import { CountedHistogram } from "./CountedHistogram.ts"
import type { CountedSeries } from "./CountedHistogram.ts"

type Label = "surface" | "route" | "method" | "status"

export class RequestDurations extends CountedHistogram<Label> {
  readonly #byRoute = new Map<string, Map<string, Map<number, CountedSeries<Label>>>>()

  /** Counts one request of `seconds`; its surface follows from its route, so the series are found by route. */
  record(surface: string, route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.#byRoute.get(route)
    if (byMethod === undefined) this.#byRoute.set(route, (byMethod = new Map()))
    let byStatus = byMethod.get(method)
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()))
    let series = byStatus.get(status)
    if (series === undefined)
      byStatus.set(status, (series = this.series({ surface, route, method, status: String(status) })))
    series.observe(seconds)
  }
}
