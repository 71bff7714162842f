/**
 * Personas: make one from a ready track of the account (a generated song's or an upload's),
 * name and describe it; the list links each to the generate form with it chosen, and deletes
 * one after a confirmation. Making one is free; the rules are core's, shown in its words.
 */
import { useState } from "preact/hooks"
import { api, formatDate } from "../api.ts"
import type { ApiProblem, Outputs } from "../api.ts"
import { attempt, Confirm, Problem, Show, useQuery } from "../ui.tsx"

type Persona = Outputs["personas"]["get"]

interface TrackChoice {
  readonly id: string
  readonly label: string
}

/** The account's ready tracks to choose from: its songs' and its uploads'. */
const loadTracks = async (): Promise<ReadonlyArray<TrackChoice>> => {
  const [songs, uploads] = await Promise.all([
    api.generations.list.query({ limit: 50 }),
    api.uploads.list.query({ limit: 50 })
  ])
  return [
    ...songs.data
      .filter((task) => task.status === "ready")
      .flatMap((task) =>
        task.tracks.map((track) => ({ id: track.id, label: `${track.title ?? "Untitled"} ${track.index + 1}` }))
      ),
    ...uploads.data.flatMap((upload) =>
      upload.status === "ready" && upload.track_id !== null
        ? [{ id: upload.track_id, label: `${upload.title ?? "Upload"} (upload)` }]
        : []
    )
  ]
}

const PersonaForm = (props: { readonly onCreated: () => void }) => {
  const [tracks] = useQuery(loadTracks)
  const [draft, setDraft] = useState({ track_id: "", name: "", description: "" })
  const [problem, setProblem] = useState<ApiProblem | null>(null)
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    const result = await attempt(() => api.personas.create.mutate(draft))
    setBusy(false)
    setProblem(result.ok ? null : result.problem)
    if (result.ok) {
      setDraft({ track_id: "", name: "", description: "" })
      props.onCreated()
    }
  }
  const invalid = (param: string) =>
    problem?.param === param ? { "aria-invalid": true, "aria-describedby": "persona-problem" } : {}
  return (
    <form class="card" onSubmit={submit} aria-labelledby="persona-form-title" noValidate>
      <h2 id="persona-form-title">Make a persona</h2>
      <p class="muted">Keeps a track's voice and its palette of instruments, to sing new songs with (aether). Free.</p>
      <Show loaded={tracks}>
        {(choices) => (
          <label>
            From the track
            <select
              name="track_id"
              value={draft.track_id}
              onChange={(e) => setDraft({ ...draft, track_id: e.currentTarget.value })}
              {...invalid("track_id")}
            >
              <option value="">choose a track</option>
              {choices.map((choice) => (
                <option key={choice.id} value={choice.id}>
                  {choice.label}
                </option>
              ))}
            </select>
          </label>
        )}
      </Show>
      <label>
        Name
        <input
          name="name"
          value={draft.name}
          onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })}
          {...invalid("name")}
        />
      </label>
      <label>
        Description
        <textarea
          name="description"
          rows={2}
          value={draft.description}
          onInput={(e) => setDraft({ ...draft, description: e.currentTarget.value })}
          {...invalid("description")}
        />
      </label>
      <button type="submit" class="primary" disabled={busy}>
        Make the persona
      </button>
      <Problem problem={problem} id="persona-problem" />
    </form>
  )
}

export const Personas = () => {
  const [list, reload] = useQuery(() => api.personas.list.query({ limit: 100 }))
  const [deleting, setDeleting] = useState<Persona | null>(null)
  const [problem, setProblem] = useState<ApiProblem | null>(null)
  const remove = async () => {
    if (deleting === null) return
    const result = await attempt(() => api.personas.delete.mutate({ id: deleting.id }))
    setDeleting(null)
    setProblem(result.ok ? null : result.problem)
    reload()
  }
  return (
    <>
      <PersonaForm onCreated={reload} />
      <section class="card" aria-labelledby="personas-title">
        <h2 id="personas-title">Your personas</h2>
        <Problem problem={problem} />
        <Show loaded={list}>
          {(found) =>
            found.data.length === 0 ? (
              <p class="muted">No personas yet.</p>
            ) : (
              <ul class="plain">
                {found.data.map((persona) => (
                  <li key={persona.id} class="persona" data-persona-id={persona.id}>
                    <p>
                      <strong>{persona.name}</strong>{" "}
                      <span class="muted">
                        {persona.vocal_gender === null
                          ? "no voice"
                          : persona.vocal_gender === "f"
                            ? "female voice"
                            : "male voice"}{" "}
                        · from <code>{persona.track_id}</code> · {formatDate(persona.created_at)}
                      </span>
                    </p>
                    <p>{persona.description}</p>
                    <div class="row">
                      <a href={`/dashboard/songs?persona=${encodeURIComponent(persona.id)}`}>
                        Generate with {persona.name}
                      </a>
                      <button type="button" class="danger" onClick={() => setDeleting(persona)}>
                        Delete<span class="sr-only"> {persona.name}</span>
                      </button>
                    </div>
                  </li>
                ))}
              </ul>
            )
          }
        </Show>
      </section>
      <Confirm
        open={deleting !== null}
        title={`Delete ${deleting?.name ?? "the persona"}?`}
        confirmLabel="Delete"
        onConfirm={() => void remove()}
        onCancel={() => setDeleting(null)}
      >
        <p>New songs can no longer name it; the songs made with it stay as they are.</p>
      </Confirm>
    </>
  )
}
