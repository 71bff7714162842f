/** Webhook endpoints: events, secrets (reveal, rotate with grace), test events, the delivery log. */
import { useState } from "preact/hooks"
import { webhookEventTypes } from "@lyre/core/domain/admin"
import type { WebhookEventType } from "@lyre/core/domain/admin"
import { api, formatDate } from "../api.ts"
import type { ApiProblem, Outputs } from "../api.ts"
import { attempt, Confirm, CopyButton, Problem, Show, useQuery } from "../ui.tsx"

type Endpoint = Outputs["account"]["webhooks"]["list"][number]
type Delivery = Outputs["account"]["webhooks"]["deliveries"][number]

const graceChoices = [
  { seconds: 0, label: "none (the old secret stops at once)" },
  { seconds: 3_600, label: "1 hour" },
  { seconds: 86_400, label: "24 hours" },
  { seconds: 604_800, label: "7 days" }
] as const

const EventChoices = (props: {
  readonly name: string
  readonly chosen: ReadonlyArray<WebhookEventType>
  readonly onChange: (events: ReadonlyArray<WebhookEventType>) => void
}) => (
  <fieldset>
    <legend>Events</legend>
    {webhookEventTypes.map((type) => (
      <label class="check" key={type}>
        <input
          type="checkbox"
          name={props.name}
          value={type}
          checked={props.chosen.includes(type)}
          onChange={(e) =>
            props.onChange(e.currentTarget.checked ? [...props.chosen, type] : props.chosen.filter((t) => t !== type))
          }
        />
        {type}
      </label>
    ))}
  </fieldset>
)

const Attempts = (props: { readonly delivery: Delivery }) => {
  const [attempts] = useQuery(() => api.account.webhooks.attempts.query({ id: props.delivery.id }), [props.delivery])
  return (
    <Show loaded={attempts}>
      {(list) =>
        list.length === 0 ? (
          <p class="muted">Not attempted yet.</p>
        ) : (
          <table class="attempts">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">When</th>
                <th scope="col">Status</th>
                <th scope="col">Latency</th>
                <th scope="col">Response</th>
              </tr>
            </thead>
            <tbody>
              {list.map((row) => (
                <tr key={row.attempt}>
                  <td>{row.attempt}</td>
                  <td>{formatDate(row.attempted_at)}</td>
                  <td>{row.status_code ?? row.error ?? "—"}</td>
                  <td class="num">{row.latency_ms} ms</td>
                  <td>
                    <code class="snippet">{row.response_snippet}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )
      }
    </Show>
  )
}

const Deliveries = (props: { readonly endpoint: Endpoint; readonly version: number }) => {
  const [deliveries, reload] = useQuery(
    () => api.account.webhooks.deliveries.query({ id: props.endpoint.id }),
    [props.endpoint.id, props.version]
  )
  const [problem, setProblem] = useState<ApiProblem | null>(null)
  const redeliver = async (delivery: Delivery) => {
    const result = await attempt(() => api.account.webhooks.redeliver.mutate({ id: delivery.id }))
    setProblem(result.ok ? null : result.problem)
    reload()
  }
  return (
    <section aria-label={`Deliveries to ${props.endpoint.url}`}>
      <div class="row">
        <h3>Delivery log</h3>
        <button type="button" onClick={reload}>
          Refresh log
        </button>
      </div>
      <Problem problem={problem} />
      <Show loaded={deliveries}>
        {(list) =>
          list.length === 0 ? (
            <p class="muted">No deliveries yet.</p>
          ) : (
            <ul class="plain deliveries">
              {list.map((delivery) => (
                <li key={delivery.id} data-delivery-id={delivery.id}>
                  <details>
                    <summary>
                      <code>{delivery.event_type}</code>{" "}
                      <span class={`status ${delivery.status}`}>{delivery.status}</span> {delivery.attempts} attempt
                      {delivery.attempts === 1 ? "" : "s"}
                      {delivery.last_status_code !== null && `, last HTTP ${delivery.last_status_code}`}
                    </summary>
                    <Attempts delivery={delivery} />
                    <button type="button" onClick={() => void redeliver(delivery)}>
                      Redeliver
                    </button>
                  </details>
                </li>
              ))}
            </ul>
          )
        }
      </Show>
    </section>
  )
}

const EndpointCard = (props: { readonly endpoint: Endpoint; readonly onChange: () => void }) => {
  const { endpoint } = props
  const [secret, setSecret] = useState<string | null>(null)
  const [note, setNote] = useState("")
  const [grace, setGrace] = useState(86_400)
  const [problem, setProblem] = useState<ApiProblem | null>(null)
  const [deleting, setDeleting] = useState(false)
  const [version, setVersion] = useState(0)
  const run = async <T,>(call: () => Promise<T>, after: (value: T) => void) => {
    const result = await attempt(call)
    setProblem(result.ok ? null : result.problem)
    if (result.ok) after(result.value)
  }
  return (
    <article class="card" aria-labelledby={`endpoint-${endpoint.id}`} data-endpoint-id={endpoint.id}>
      <h2 id={`endpoint-${endpoint.id}`} class="url">
        {endpoint.url}
      </h2>
      <p>
        <span class={`status ${endpoint.enabled ? "ready" : "failed"}`}>
          {endpoint.enabled ? "enabled" : "disabled"}
        </span>{" "}
        {endpoint.events.join(", ")}
      </p>
      <div class="row wrap">
        <button
          type="button"
          onClick={() =>
            void run(
              () => api.account.webhooks.ping.mutate({ id: endpoint.id }),
              () => {
                setNote("Test event sent.")
                setVersion(version + 1)
              }
            )
          }
        >
          Send test event
        </button>
        <button
          type="button"
          onClick={() =>
            void run(
              () => api.account.webhooks.update.mutate({ id: endpoint.id, enabled: !endpoint.enabled }),
              props.onChange
            )
          }
        >
          {endpoint.enabled ? "Disable" : "Enable"}
        </button>
        <button
          type="button"
          onClick={() =>
            void run(
              () => api.account.webhooks.revealSecret.mutate({ id: endpoint.id }),
              (v) => setSecret(v.secret)
            )
          }
        >
          Reveal signing secret
        </button>
        <button type="button" class="danger" onClick={() => setDeleting(true)}>
          Delete
        </button>
      </div>
      <form
        class="row wrap"
        onSubmit={(event) => {
          event.preventDefault()
          void run(
            () => api.account.webhooks.rotateSecret.mutate({ id: endpoint.id, grace_period_seconds: grace }),
            (rotated) => {
              setSecret(rotated.secret)
              setNote(
                rotated.previous_secret_expires_at === null
                  ? "Secret rotated; the old one no longer signs."
                  : `Secret rotated; the old one also signs until ${formatDate(rotated.previous_secret_expires_at)}.`
              )
            }
          )
        }}
      >
        <label>
          Grace period for the old secret
          <select value={grace} onChange={(e) => setGrace(Number(e.currentTarget.value))}>
            {graceChoices.map((choice) => (
              <option key={choice.seconds} value={choice.seconds}>
                {choice.label}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Rotate secret</button>
      </form>
      {secret !== null && (
        <p class="row">
          <code class="secret" data-testid="endpoint-secret">
            {secret}
          </code>
          <CopyButton text={secret} label="Copy secret" />
        </p>
      )}
      <p role="status">{note}</p>
      <Problem problem={problem} />
      <Deliveries endpoint={endpoint} version={version} />
      <Confirm
        open={deleting}
        title="Delete this endpoint?"
        confirmLabel="Delete endpoint"
        onCancel={() => setDeleting(false)}
        onConfirm={() => {
          setDeleting(false)
          void run(() => api.account.webhooks.delete.mutate({ id: endpoint.id }), props.onChange)
        }}
      >
        <p>{endpoint.url} stops receiving events, and its delivery log is deleted.</p>
      </Confirm>
    </article>
  )
}

export const Webhooks = () => {
  const [endpoints, reload] = useQuery(() => api.account.webhooks.list.query())
  const [url, setUrl] = useState("")
  const [events, setEvents] = useState<ReadonlyArray<WebhookEventType>>([...webhookEventTypes])
  const [created, setCreated] = useState<string | null>(null)
  const [problem, setProblem] = useState<ApiProblem | null>(null)
  const create = async (event: Event) => {
    event.preventDefault()
    const result = await attempt(() => api.account.webhooks.create.mutate({ url, events: [...events] }))
    setProblem(result.ok ? null : result.problem)
    if (result.ok) {
      setUrl("")
      setCreated(result.value.secret)
      reload()
    }
  }
  return (
    <>
      <form class="card" onSubmit={create} aria-labelledby="add-endpoint-title">
        <h2 id="add-endpoint-title">Add an endpoint</h2>
        <label>
          URL
          <input name="url" type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        </label>
        <EventChoices name="events" chosen={events} onChange={setEvents} />
        <button type="submit" class="primary">
          Add endpoint
        </button>
        <Problem problem={problem} />
        {created !== null && (
          <p class="row">
            Signing secret: <code class="secret">{created}</code> <CopyButton text={created} label="Copy secret" />
          </p>
        )}
      </form>
      <Show loaded={endpoints}>
        {(list) =>
          list.length === 0 ? (
            <p class="muted">No endpoints yet.</p>
          ) : (
            list.map((endpoint) => <EndpointCard key={endpoint.id} endpoint={endpoint} onChange={reload} />)
          )
        }
      </Show>
    </>
  )
}
