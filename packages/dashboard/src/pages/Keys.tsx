/** API keys: create (Pro and above), the full key shown once, the list, revocation. */
import { useState } from "preact/hooks"
import { scopeNames } from "@lyre/core/domain/models"
import { api, formatDate } from "../api.ts"
import type { ApiProblem, Outputs } from "../api.ts"
import { Confirm, CopyButton, Problem, ScrollRegion, Show, attempt, useQuery } from "../ui.tsx"

type Created = Outputs["account"]["keys"]["create"]
type KeyRow = Outputs["account"]["keys"]["list"][number]

const CreateKey = (props: { readonly onCreated: (created: Created) => void }) => {
  const [name, setName] = useState("")
  const [scopes, setScopes] = useState<ReadonlyArray<string>>(["profile", "music:generate"])
  const [expiry, setExpiry] = useState("")
  const [problem, setProblem] = useState<ApiProblem | null>(null)
  const submit = async (event: Event) => {
    event.preventDefault()
    const result = await attempt(() =>
      api.account.keys.create.mutate({
        name,
        scopes: scopes.filter((scope): scope is (typeof scopeNames)[number] => scopeNames.some((s) => s === scope)),
        expires_at: expiry === "" ? null : new Date(expiry).toISOString()
      })
    )
    setProblem(result.ok ? null : result.problem)
    if (result.ok) {
      setName("")
      props.onCreated(result.value)
    }
  }
  return (
    <form onSubmit={submit} class="card" aria-labelledby="create-key-title">
      <h2 id="create-key-title">Create a key</h2>
      <label>
        Name
        <input name="name" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <fieldset>
        <legend>Scopes</legend>
        {scopeNames.map((scope) => (
          <label class="check" key={scope}>
            <input
              type="checkbox"
              name="scopes"
              value={scope}
              checked={scopes.includes(scope)}
              onChange={(e) =>
                setScopes(e.currentTarget.checked ? [...scopes, scope] : scopes.filter((s) => s !== scope))
              }
            />
            {scope}
          </label>
        ))}
      </fieldset>
      <label>
        Expires (optional)
        <input
          name="expires_at"
          type="datetime-local"
          value={expiry}
          onInput={(e) => setExpiry(e.currentTarget.value)}
        />
      </label>
      <button type="submit" class="primary">
        Create key
      </button>
      <Problem problem={problem} />
    </form>
  )
}

const statusOf = (key: KeyRow): string =>
  key.revoked_at !== null
    ? "revoked"
    : key.expires_at !== null && new Date(key.expires_at).getTime() <= Date.now()
      ? "expired"
      : "active"

export const Keys = () => {
  const [overview] = useQuery(() => api.account.overview.query())
  const [keys, reload] = useQuery(() => api.account.keys.list.query())
  const [created, setCreated] = useState<Created | null>(null)
  const [revoking, setRevoking] = useState<KeyRow | null>(null)
  const [problem, setProblem] = useState<ApiProblem | null>(null)
  const revoke = async () => {
    const key = revoking
    setRevoking(null)
    if (key === null) return
    const result = await attempt(() => api.account.keys.revoke.mutate({ id: key.id }))
    setProblem(result.ok ? null : result.problem)
    reload()
  }
  return (
    <>
      <Show loaded={overview}>
        {(data) =>
          data.api_access_refusal !== null ? (
            <p class="notice" role="note" data-testid="keys-refused">
              {data.api_access_refusal} Upgrade to Pro to create API keys.
            </p>
          ) : (
            <CreateKey
              onCreated={(made) => {
                setCreated(made)
                reload()
              }}
            />
          )
        }
      </Show>
      {created !== null && (
        <section class="card reveal" aria-labelledby="new-key-title">
          <h2 id="new-key-title">Your new key “{created.name}”</h2>
          <p>Copy it now: it is shown only once.</p>
          <p class="row">
            <code data-testid="new-key" class="secret">
              {created.key}
            </code>
            <CopyButton text={created.key} label="Copy key" />
          </p>
          <button type="button" onClick={() => setCreated(null)}>
            Done
          </button>
        </section>
      )}
      <Problem problem={problem} />
      <section aria-labelledby="keys-title" class="card">
        <h2 id="keys-title">Your keys</h2>
        <Show loaded={keys}>
          {(list) =>
            list.length === 0 ? (
              <p class="muted">No keys yet.</p>
            ) : (
              <ScrollRegion label="Your keys">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Key</th>
                      <th scope="col">Scopes</th>
                      <th scope="col">Created</th>
                      <th scope="col">Last used</th>
                      <th scope="col">Expires</th>
                      <th scope="col">Status</th>
                      <th scope="col">
                        <span class="sr-only">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.map((key) => (
                      <tr key={key.id} data-key-id={key.id}>
                        <td>{key.name}</td>
                        <td>
                          <code>{key.prefix}…</code>
                        </td>
                        <td>{key.scopes.join(", ")}</td>
                        <td>{formatDate(key.created_at)}</td>
                        <td>{formatDate(key.last_used_at)}</td>
                        <td>{key.expires_at === null ? "never" : formatDate(key.expires_at)}</td>
                        <td>{statusOf(key)}</td>
                        <td>
                          {key.revoked_at === null && (
                            <button type="button" class="danger" onClick={() => setRevoking(key)}>
                              Revoke<span class="sr-only"> {key.name}</span>
                            </button>
                          )}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </ScrollRegion>
            )
          }
        </Show>
      </section>
      <Confirm
        open={revoking !== null}
        title="Revoke this key?"
        confirmLabel="Revoke key"
        onConfirm={() => void revoke()}
        onCancel={() => setRevoking(null)}
      >
        <p>
          Every request made with <code>{revoking?.prefix}…</code> ({revoking?.name}) is refused from now on. This
          cannot be undone.
        </p>
      </Confirm>
    </>
  )
}
