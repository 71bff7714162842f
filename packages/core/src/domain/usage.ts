/**
 * The dashboard's usage chart: credits spent per day, split by model (generations) and by song
 * tool (extensions and each export format), and generations that ended ready or failed, over the
 * last days in UTC. Spending is net of refunds and counted on the day the work was asked for,
 * so a refunded failure leaves nothing behind instead of a negative bar on a later day.
 */
import { exportFormats, modelNames } from "./models.ts"

export const usageDays = 30

/** Every series in the order the chart stacks them: the models, then the song tools. */
export const usageSeries = [...modelNames, "extend", ...exportFormats] as const
export type UsageSeries = (typeof usageSeries)[number]

export interface SpentRow {
  readonly day: string
  readonly series: string
  readonly credits: number
}

export interface OutcomeRow {
  readonly day: string
  readonly status: string
  readonly count: number
}

export interface Usage {
  /** `YYYY-MM-DD`, oldest first, ending today (UTC). */
  readonly days: ReadonlyArray<string>
  /** Only the series with some spending in the window; `credits` is aligned with `days`. */
  readonly spent: ReadonlyArray<{
    readonly series: UsageSeries
    readonly kind: "model" | "tool"
    readonly credits: ReadonlyArray<number>
  }>
  readonly generations: { readonly ready: ReadonlyArray<number>; readonly failed: ReadonlyArray<number> }
}

const dayMillis = 86_400_000

/** The `count` UTC days ending with the day of `nowMillis`, oldest first. */
export const daysEnding = (nowMillis: number, count: number = usageDays): ReadonlyArray<string> => {
  const today = Math.floor(nowMillis / dayMillis) * dayMillis
  return Array.from({ length: count }, (_, i) =>
    new Date(today - (count - 1 - i) * dayMillis).toISOString().slice(0, 10)
  )
}

const isSeries = (name: string): name is UsageSeries => (usageSeries as ReadonlyArray<string>).includes(name)

export const foldUsage = (
  days: ReadonlyArray<string>,
  spent: ReadonlyArray<SpentRow>,
  outcomes: ReadonlyArray<OutcomeRow>
): Usage => {
  const index = new Map(days.map((day, i) => [day, i]))
  const perSeries = new Map<UsageSeries, Array<number>>()
  for (const row of spent) {
    const i = index.get(row.day)
    if (i === undefined || !isSeries(row.series)) continue
    const credits = perSeries.get(row.series) ?? days.map(() => 0)
    credits[i] = (credits[i] ?? 0) + row.credits
    perSeries.set(row.series, credits)
  }
  const ready = days.map(() => 0)
  const failed = days.map(() => 0)
  for (const row of outcomes) {
    const i = index.get(row.day)
    if (i === undefined) continue
    if (row.status === "ready") ready[i] = (ready[i] ?? 0) + row.count
    if (row.status === "failed") failed[i] = (failed[i] ?? 0) + row.count
  }
  return {
    days,
    spent: usageSeries.flatMap((series) => {
      const credits = perSeries.get(series)
      if (credits === undefined || credits.every((c) => c === 0)) return []
      return [
        {
          series,
          kind: (modelNames as ReadonlyArray<string>).includes(series) ? ("model" as const) : ("tool" as const),
          credits
        }
      ]
    }),
    generations: { ready, failed }
  }
}
