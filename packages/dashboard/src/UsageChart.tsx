/**
 * The overview's chart: credits spent per day over the last 30 days, stacked by model and song
 * tool, with the generations that ended ready and failed as lines on a second axis. Drawn by
 * Chart.js from the dashboard's own bundle; the same figures are in a table for screen readers
 * and for anyone who wants the numbers.
 */
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip
} from "chart.js"
import type { ChartDataset } from "chart.js"
import { useEffect, useRef } from "preact/hooks"
import { api } from "./api.ts"
import type { Outputs } from "./api.ts"
import { ScrollRegion, Show, useQuery } from "./ui.tsx"

Chart.register(
  BarController,
  BarElement,
  CategoryScale,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Legend,
  Tooltip
)

type Usage = Outputs["account"]["usage"]

/** Models in blues and violets, song tools in warm colours: the split is visible at a glance. */
const colours: Readonly<Record<string, string>> = {
  aether: "#3446c9",
  echo: "#6f4fd1",
  nocturne: "#1f7a99",
  extend: "#c2571a",
  wav: "#a8326e",
  midi: "#8a6d00",
  stems: "#d1392b",
  timed_lyrics: "#4d7d1e"
}

const labelOf: Readonly<Record<string, string>> = {
  aether: "aether",
  echo: "echo",
  nocturne: "nocturne",
  extend: "extensions",
  wav: "WAV",
  midi: "MIDI",
  stems: "stems",
  timed_lyrics: "timed lyrics"
}

const shortDay = (day: string): string =>
  new Date(`${day}T12:00:00Z`).toLocaleDateString(undefined, { month: "short", day: "numeric", timeZone: "UTC" })

const sum = (values: ReadonlyArray<number>): number => values.reduce((a, b) => a + b, 0)

const UsageCanvas = (props: { readonly usage: Usage }) => {
  const canvas = useRef<HTMLCanvasElement>(null)
  useEffect(() => {
    if (canvas.current === null) return
    const { usage } = props
    const bars: Array<ChartDataset<"bar" | "line", Array<number>>> = usage.spent.map((series) => ({
      type: "bar",
      label: `${labelOf[series.series] ?? series.series} (credits)`,
      data: [...series.credits],
      backgroundColor: colours[series.series] ?? "#555b66",
      stack: "credits",
      yAxisID: "credits"
    }))
    const lines: Array<ChartDataset<"bar" | "line", Array<number>>> = [
      {
        type: "line",
        label: "generations ready",
        data: [...usage.generations.ready],
        borderColor: "#1e6b3a",
        backgroundColor: "#1e6b3a",
        yAxisID: "count",
        pointRadius: 2
      },
      {
        type: "line",
        label: "generations failed",
        data: [...usage.generations.failed],
        borderColor: "#b3261e",
        backgroundColor: "#b3261e",
        borderDash: [4, 3],
        yAxisID: "count",
        pointRadius: 2
      }
    ]
    const chart = new Chart(canvas.current, {
      type: "bar",
      data: { labels: usage.days.map(shortDay), datasets: [...bars, ...lines] },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        interaction: { mode: "index", intersect: false },
        scales: {
          x: { stacked: true, ticks: { maxRotation: 0, autoSkipPadding: 8 } },
          credits: {
            type: "linear",
            position: "left",
            stacked: true,
            beginAtZero: true,
            title: { display: true, text: "credits" }
          },
          count: {
            type: "linear",
            position: "right",
            beginAtZero: true,
            ticks: { precision: 0 },
            grid: { drawOnChartArea: false },
            title: { display: true, text: "generations" }
          }
        },
        plugins: { legend: { position: "bottom", labels: { boxWidth: 12 } } }
      }
    })
    return () => chart.destroy()
  }, [props.usage])
  const spent = sum(props.usage.spent.flatMap((s) => s.credits))
  const ready = sum(props.usage.generations.ready)
  const failed = sum(props.usage.generations.failed)
  return (
    <div class="chart">
      <canvas
        ref={canvas}
        role="img"
        data-testid="usage-chart"
        aria-label={`Credits spent per day over the last 30 days: ${spent} in all. Generations: ${ready} ready, ${failed} failed.`}
      />
    </div>
  )
}

const UsageTable = (props: { readonly usage: Usage }) => {
  const { usage } = props
  // Days with anything to show, newest first, as the ledger below.
  const rows = usage.days
    .map((day, i) => ({
      day,
      spent: usage.spent.map((s) => s.credits[i] ?? 0),
      ready: usage.generations.ready[i] ?? 0,
      failed: usage.generations.failed[i] ?? 0
    }))
    .filter((row) => sum(row.spent) + row.ready + row.failed > 0)
    .reverse()
  return (
    <details>
      <summary>The figures, day by day</summary>
      {rows.length === 0 ? (
        <p class="muted">Nothing in the last 30 days.</p>
      ) : (
        <ScrollRegion label="Usage by day">
          <table data-testid="usage-table">
            <thead>
              <tr>
                <th scope="col">Day</th>
                {usage.spent.map((s) => (
                  <th scope="col" key={s.series} class="num">
                    {labelOf[s.series] ?? s.series}
                  </th>
                ))}
                <th scope="col" class="num">
                  Ready
                </th>
                <th scope="col" class="num">
                  Failed
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.day}>
                  <th scope="row">{row.day}</th>
                  {row.spent.map((credits, i) => (
                    <td key={usage.spent[i]?.series} class="num">
                      {credits}
                    </td>
                  ))}
                  <td class="num">{row.ready}</td>
                  <td class="num">{row.failed}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}
    </details>
  )
}

export const UsageChart = () => {
  const [usage] = useQuery(() => api.account.usage.query())
  return (
    <section aria-labelledby="usage-title" class="card">
      <h2 id="usage-title">Usage, last 30 days</h2>
      <Show loaded={usage}>
        {(value) => (
          <>
            <p class="muted" data-testid="usage-summary">
              {sum(value.spent.flatMap((s) => s.credits))} credits spent; {sum(value.generations.ready)} generations
              ready, {sum(value.generations.failed)} failed.
            </p>
            <UsageCanvas usage={value} />
            <UsageTable usage={value} />
          </>
        )}
      </Show>
    </section>
  )
}
