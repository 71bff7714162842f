/**
 * Songs: generate (validated here with core's own schema, so the messages are the API's), follow
 * the task until it is ready or failed in a box of fixed size, and the history with players and,
 * under each ready track, the song tools (extend, cover, vocals, accompaniment, edit, export,
 * karaoke, stems mixer). A persona is chosen here too (the Personas page links here with it).
 */
import { useState } from "preact/hooks"
import { deprecatedModels, GenerateRequest, modelNames } from "@lyre/core/domain/models"
import type { ModelName } from "@lyre/core/domain/models"
import { priceOf } from "@lyre/core/domain/pricing"
import { api } from "../api.ts"
import type { ApiProblem } from "../api.ts"
import { Following, TaskView } from "../tasks.tsx"
import { LyricsStep } from "../tools/LyricsStep.tsx"
import type { Followed, Task } from "../tasks.tsx"
import { attempt, checkBody, Problem, Show, useQuery } from "../ui.tsx"

interface Draft {
  style: string
  title: string
  lyrics: string
  instrumental: boolean
  model: ModelName
  vocal_gender: "" | "m" | "f"
  persona_id: string
}

const requestOf = (draft: Draft): Record<string, unknown> => ({
  style: draft.style,
  title: draft.title,
  // An empty box is a field not given (the API then names it missing); whitespace is sent as typed.
  ...(draft.lyrics === "" ? {} : { lyrics: draft.lyrics }),
  instrumental: draft.instrumental,
  model: draft.model,
  ...(draft.vocal_gender === "" ? {} : { vocal_gender: draft.vocal_gender }),
  ...(draft.persona_id === "" ? {} : { persona_id: draft.persona_id })
})

/** `?persona=per_...`: the Personas page's "Generate with" link. */
const personaAsked = (): string => new URLSearchParams(location.search).get("persona") ?? ""

const GenerateForm = (props: { readonly onCreated: (task: Task) => void }) => {
  const [draft, setDraft] = useState<Draft>({
    style: "",
    title: "",
    lyrics: "",
    instrumental: false,
    model: "aether",
    vocal_gender: "",
    persona_id: personaAsked()
  })
  const [personas] = useQuery(() => api.personas.list.query({ limit: 100 }))
  const [problem, setProblem] = useState<ApiProblem | null>(null)
  const [busy, setBusy] = useState(false)
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setDraft({ ...draft, [key]: value })
  const submit = async (event: Event) => {
    event.preventDefault()
    const body = requestOf(draft)
    const checked = checkBody(GenerateRequest, body)
    if (!checked.ok) {
      setProblem(checked.problem)
      return
    }
    setBusy(true)
    const result = await attempt(() => api.generations.create.mutate(checked.value))
    setBusy(false)
    setProblem(result.ok ? null : result.problem)
    if (result.ok) props.onCreated(result.value)
  }
  const invalid = (param: string) =>
    problem?.param === param ? { "aria-invalid": true, "aria-describedby": "generate-problem" } : {}
  return (
    <form class="card" onSubmit={submit} aria-labelledby="generate-title" noValidate>
      <h2 id="generate-title">Generate a song</h2>
      <label>
        Style
        <textarea
          name="style"
          rows={2}
          value={draft.style}
          onInput={(e) => set("style", e.currentTarget.value)}
          {...invalid("style")}
        />
      </label>
      <label>
        Title
        <input
          name="title"
          value={draft.title}
          onInput={(e) => set("title", e.currentTarget.value)}
          {...invalid("title")}
        />
      </label>
      <label class="check">
        <input
          type="checkbox"
          name="instrumental"
          checked={draft.instrumental}
          onChange={(e) => set("instrumental", e.currentTarget.checked)}
        />
        Instrumental
      </label>
      {!draft.instrumental && (
        <LyricsStep
          style={draft.style}
          onUse={(variation) =>
            setDraft({ ...draft, lyrics: variation.text, title: draft.title === "" ? variation.title : draft.title })
          }
        />
      )}
      <label>
        Lyrics
        <textarea
          name="lyrics"
          rows={5}
          value={draft.lyrics}
          onInput={(e) => set("lyrics", e.currentTarget.value)}
          {...invalid("lyrics")}
        />
      </label>
      <label>
        Model
        <select name="model" value={draft.model} onChange={(e) => set("model", e.currentTarget.value as ModelName)}>
          {modelNames.map((model) => (
            <option key={model} value={model}>
              {model} — {priceOf[model]} credits{deprecatedModels.includes(model) ? " (deprecated)" : ""}
            </option>
          ))}
        </select>
      </label>
      {deprecatedModels.includes(draft.model) && (
        <p class="notice" role="note">
          {draft.model} is deprecated: it stays for backward compatibility and is not recommended.
        </p>
      )}
      <label>
        Vocal gender (aether only)
        <select
          name="vocal_gender"
          value={draft.vocal_gender}
          onChange={(e) => set("vocal_gender", e.currentTarget.value as Draft["vocal_gender"])}
          {...invalid("vocal_gender")}
        >
          <option value="">any</option>
          <option value="f">f</option>
          <option value="m">m</option>
        </select>
      </label>
      <label>
        Persona (aether only)
        <select
          name="persona_id"
          value={draft.persona_id}
          onChange={(e) => set("persona_id", e.currentTarget.value)}
          {...invalid("persona_id")}
        >
          <option value="">none</option>
          {draft.persona_id !== "" && personas.state !== "ok" && (
            <option value={draft.persona_id}>{draft.persona_id}</option>
          )}
          {personas.state === "ok" &&
            personas.value.data.map((persona) => (
              <option key={persona.id} value={persona.id}>
                {persona.name}
              </option>
            ))}
        </select>
      </label>
      <button type="submit" class="primary" disabled={busy}>
        Generate for {priceOf[draft.model]} credits
      </button>
      <Problem problem={problem} id="generate-problem" />
    </form>
  )
}

export const Songs = () => {
  const [history, reload] = useQuery(() => api.generations.list.query({ limit: 20 }))
  const [following, setFollowing] = useState<Followed | null>(null)
  // A new generation and a task made from a track are followed alike, in the box at the top.
  const onCreated = (made: Followed) => {
    setFollowing(made)
    reload()
  }
  return (
    <>
      <GenerateForm onCreated={(task) => onCreated({ task })} />
      {following !== null && <Following followed={following} onSettled={reload} />}
      <section aria-labelledby="history-title" class="card">
        <h2 id="history-title">History</h2>
        <Show loaded={history}>
          {(list) =>
            list.data.length === 0 ? (
              <p class="muted">No songs yet.</p>
            ) : (
              <ul class="plain">
                {list.data.map((task) => (
                  <li key={task.id}>
                    <TaskView task={task} onCreated={onCreated} />
                  </li>
                ))}
              </ul>
            )
          }
        </Show>
      </section>
    </>
  )
}
