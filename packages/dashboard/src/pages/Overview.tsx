/** Plan, balances, limits, the credit alert, the latest songs, the usage chart and the ledger beneath it. */
import { useState } from "preact/hooks"
import { api, formatDate } from "../api.ts"
import type { ApiProblem, Outputs } from "../api.ts"
import { Problem, ScrollRegion, Show, attempt, useQuery } from "../ui.tsx"
import { UsageChart } from "../UsageChart.tsx"

type OverviewData = Outputs["account"]["overview"]

const CreditAlert = (props: { readonly overview: OverviewData; readonly onChange: () => void }) => {
  const alert = props.overview.credit_alert
  const [value, setValue] = useState(alert.threshold === null ? "" : String(alert.threshold))
  const [problem, setProblem] = useState<ApiProblem | null>(null)
  const [saved, setSaved] = useState(false)
  const save = async (event: Event) => {
    event.preventDefault()
    setSaved(false)
    const threshold = value.trim() === "" ? null : Number(value)
    const result = await attempt(() => api.account.setCreditAlert.mutate({ credit_alert_threshold: threshold }))
    setProblem(result.ok ? null : result.problem)
    if (result.ok) {
      setSaved(true)
      props.onChange()
    }
  }
  return (
    <section aria-labelledby="alert-title" class="card">
      <h2 id="alert-title">Credit alert</h2>
      <p>
        A <code>credits.low</code> event goes to your webhooks when your balance falls below the threshold.{" "}
        <span data-testid="alert-state">
          {alert.threshold === null
            ? "No threshold is set."
            : alert.armed
              ? `Armed: it fires when the balance drops below ${alert.threshold}.`
              : `Fired: it re-arms once the balance is back at ${alert.threshold} or more.`}
        </span>
      </p>
      <form onSubmit={save} class="row">
        <label>
          Threshold (credits; empty for none)
          <input
            name="threshold"
            type="number"
            min={0}
            step={1}
            inputMode="numeric"
            value={value}
            onInput={(event) => setValue(event.currentTarget.value)}
          />
        </label>
        <button type="submit">Save threshold</button>
        <span role="status">{saved ? "Saved." : ""}</span>
      </form>
      <Problem problem={problem} />
    </section>
  )
}

const RecentSongs = () => {
  const [songs] = useQuery(() => api.generations.list.query({ limit: 5 }))
  return (
    <section aria-labelledby="recent-title" class="card">
      <h2 id="recent-title">Recent generations</h2>
      <Show loaded={songs}>
        {(list) =>
          list.data.length === 0 ? (
            <p class="muted">No songs yet.</p>
          ) : (
            <ul class="plain">
              {list.data.map((task) => (
                <li key={task.id}>
                  <span class={`status ${task.status}`}>{task.status}</span> {task.tracks[0]?.title ?? task.id}{" "}
                  <span class="muted">{formatDate(task.created_at)}</span>
                </li>
              ))}
            </ul>
          )
        }
      </Show>
    </section>
  )
}

const Ledger = () => {
  const [ledger] = useQuery(() => api.account.ledger.query())
  return (
    <section aria-labelledby="ledger-title" class="card">
      <h2 id="ledger-title">Credit ledger</h2>
      <Show loaded={ledger}>
        {(entries) => (
          <ScrollRegion label="Credit ledger">
            <table>
              <caption class="sr-only">Every grant, debit, refund and adjustment, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Subscription</th>
                  <th scope="col">One-time</th>
                  <th scope="col">Balance after</th>
                  <th scope="col">Task, export or reason</th>
                </tr>
              </thead>
              <tbody>
                {entries.map((entry) => (
                  <tr key={entry.id}>
                    <td>{formatDate(entry.created_at)}</td>
                    <td>{entry.kind}</td>
                    <td class="num">{entry.subscription_delta}</td>
                    <td class="num">{entry.onetime_delta}</td>
                    <td class="num">{entry.subscription_after + entry.onetime_after}</td>
                    <td>
                      {(entry.task_id ?? entry.export_id) === null ? (
                        (entry.reason ?? "")
                      ) : (
                        <code>{entry.task_id ?? entry.export_id}</code>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
        )}
      </Show>
    </section>
  )
}

export const Overview = () => {
  const [overview, reload] = useQuery(() => api.account.overview.query())
  return (
    <Show loaded={overview}>
      {(data) => (
        <>
          {data.api_access_refusal !== null && (
            <p class="notice" role="note">
              {data.api_access_refusal} You can see your account here, but API keys and generating songs need an
              upgrade.
            </p>
          )}
          <div class="grid">
            <section aria-labelledby="plan-title" class="card">
              <h2 id="plan-title">Plan</h2>
              <p class="big" data-testid="plan">
                {data.plan}
              </p>
              <p class="muted">{data.email}</p>
            </section>
            <section aria-labelledby="credits-title" class="card">
              <h2 id="credits-title">Credits</h2>
              <dl>
                <dt>Subscription</dt>
                <dd data-testid="credits-subscription">{data.credits.subscription}</dd>
                <dt>One-time</dt>
                <dd data-testid="credits-onetime">{data.credits.onetime}</dd>
                <dt>Total</dt>
                <dd data-testid="credits-total">{data.credits.total}</dd>
              </dl>
            </section>
            <section aria-labelledby="limits-title" class="card">
              <h2 id="limits-title">Rate limits</h2>
              <dl>
                <dt>Requests per minute</dt>
                <dd>{data.rate_limits.requests_per_minute}</dd>
                <dt>Concurrent generations</dt>
                <dd>{data.rate_limits.concurrent_generations}</dd>
              </dl>
            </section>
          </div>
          <CreditAlert overview={data} onChange={reload} />
          <RecentSongs />
          <UsageChart />
          <Ledger />
        </>
      )}
    </Show>
  )
}
