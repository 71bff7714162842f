/**
 * Songs: generate (validated here with core's own schema, so the messages are the API's), follow
 * the task until it is ready or failed in a box of fixed size, and the history with players and,
 * under each ready track, the song tools (extend, export, karaoke, stems mixer).
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { deprecatedModels, GenerateRequest, modelNames } from "@lyre/core/domain/models"
import type { ModelName } from "@lyre/core/domain/models"
import { priceOf } from "@lyre/core/domain/pricing"
import { api, formatDate } from "../api.ts"
import type { ApiProblem, Outputs } from "../api.ts"
import { attempt, checkBody, Problem, Show, useQuery } from "../ui.tsx"
import { TrackTools } from "../tools/TrackTools.tsx"

type Task = Outputs["generations"]["get"]

const followEveryMillis = 1_500

const TaskView = (props: { readonly task: Task; readonly onExtended?: (task: Task) => void }) => {
  const { task } = props
  return (
    <article class="task" data-task-id={task.id} data-status={task.status}>
      <p>
        <span class={`status ${task.status}`}>{task.status}</span> <code>{task.id}</code>{" "}
        <span class="muted">
          {task.model} · {task.credits_used} credits{task.credits_refunded > 0 ? `, ${task.credits_refunded} refunded` : ""} ·
          {" "}
          {formatDate(task.created_at)}
        </span>
      </p>
      {task.error !== null && <p class="problem">{task.error.message} <code>{task.error.code}</code></p>}
      <ul class="plain tracks">
        {task.tracks.map((track) => (
          <li key={track.id} class="track" data-track-id={track.id}>
            {track.image_url === null
              ? <span class="cover placeholder" aria-hidden="true" />
              : <img class="cover" src={track.image_url} width={96} height={96} alt={`Cover of ${track.title ?? "track"}`} />}
            <div>
              <p><strong>{track.title ?? "Untitled"}</strong> {track.duration !== null && <span class="muted">{Math.round(track.duration)} s</span>}</p>
              <audio controls preload="none" src={track.audio_url} aria-label={`Play ${track.title ?? "track"} ${track.index + 1}`} />
              <p><a href={track.audio_url} download>Download<span class="sr-only"> {track.title ?? "track"} {track.index + 1}</span></a></p>
              {task.status === "ready" && props.onExtended !== undefined && (
                <TrackTools task={task} track={track} onExtended={props.onExtended} />
              )}
            </div>
          </li>
        ))}
      </ul>
    </article>
  )
}

/** Polls a pending task until it settles; the box keeps its size so nothing around it moves. */
const Following = (props: { readonly task: Task; readonly onSettled: () => void }) => {
  const [task, setTask] = useState(props.task)
  const box = useRef<HTMLElement>(null)
  // An extension is started from the history below: bring the task being followed into view.
  useEffect(() => box.current?.scrollIntoView({ block: "nearest" }), [props.task.id])
  const [problem, setProblem] = useState<ApiProblem | null>(null)
  useEffect(() => {
    setTask(props.task)
    if (props.task.status !== "pending") return
    let stopped = false
    const tick = async () => {
      if (stopped) return
      const result = await attempt(() => api.generations.get.query({ id: props.task.id }))
      if (stopped) return
      if (!result.ok) setProblem(result.problem)
      else {
        setTask(result.value)
        if (result.value.status !== "pending") {
          props.onSettled()
          return
        }
      }
      setTimeout(() => void tick(), followEveryMillis)
    }
    const timer = setTimeout(() => void tick(), followEveryMillis)
    return () => {
      stopped = true
      clearTimeout(timer)
    }
  }, [props.task.id])
  return (
    <section class="card following" aria-labelledby="following-title" aria-live="polite" ref={box}>
      <h2 id="following-title">{task.status === "pending" ? "Generating…" : task.status === "ready" ? "Ready" : "Failed"}</h2>
      <TaskView task={task} />
      <Problem problem={problem} />
    </section>
  )
}

interface Draft {
  style: string
  title: string
  lyrics: string
  instrumental: boolean
  model: ModelName
  vocal_gender: "" | "m" | "f"
}

const requestOf = (draft: Draft): Record<string, unknown> => ({
  style: draft.style,
  title: draft.title,
  // An empty box is a field not given (the API then names it missing); whitespace is sent as typed.
  ...(draft.lyrics === "" ? {} : { lyrics: draft.lyrics }),
  instrumental: draft.instrumental,
  model: draft.model,
  ...(draft.vocal_gender === "" ? {} : { vocal_gender: draft.vocal_gender })
})

const GenerateForm = (props: { readonly onCreated: (task: Task) => void }) => {
  const [draft, setDraft] = useState<Draft>({
    style: "",
    title: "",
    lyrics: "",
    instrumental: false,
    model: "aether",
    vocal_gender: ""
  })
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
  const invalid = (param: string) => (problem?.param === param ? { "aria-invalid": true, "aria-describedby": "generate-problem" } : {})
  return (
    <form class="card" onSubmit={submit} aria-labelledby="generate-title" noValidate>
      <h2 id="generate-title">Generate a song</h2>
      <label>
        Style
        <textarea name="style" rows={2} value={draft.style} onInput={(e) => set("style", e.currentTarget.value)} {...invalid("style")} />
      </label>
      <label>
        Title
        <input name="title" value={draft.title} onInput={(e) => set("title", e.currentTarget.value)} {...invalid("title")} />
      </label>
      <label class="check">
        <input type="checkbox" name="instrumental" checked={draft.instrumental} onChange={(e) => set("instrumental", e.currentTarget.checked)} />
        Instrumental
      </label>
      <label>
        Lyrics
        <textarea name="lyrics" rows={5} value={draft.lyrics} onInput={(e) => set("lyrics", e.currentTarget.value)} {...invalid("lyrics")} />
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
        <p class="notice" role="note">{draft.model} is deprecated: it stays for backward compatibility and is not recommended.</p>
      )}
      <label>
        Vocal gender (aether only)
        <select name="vocal_gender" value={draft.vocal_gender} onChange={(e) => set("vocal_gender", e.currentTarget.value as Draft["vocal_gender"])} {...invalid("vocal_gender")}>
          <option value="">any</option>
          <option value="f">f</option>
          <option value="m">m</option>
        </select>
      </label>
      <button type="submit" class="primary" disabled={busy}>Generate for {priceOf[draft.model]} credits</button>
      <Problem problem={problem} id="generate-problem" />
    </form>
  )
}

export const Songs = () => {
  const [history, reload] = useQuery(() => api.generations.list.query({ limit: 20 }))
  const [following, setFollowing] = useState<Task | null>(null)
  // A new generation and an extension are followed alike, in the box at the top.
  const onCreated = (task: Task) => {
    setFollowing(task)
    reload()
  }
  return (
    <>
      <GenerateForm onCreated={onCreated} />
      {following !== null && <Following task={following} onSettled={reload} />}
      <section aria-labelledby="history-title" class="card">
        <h2 id="history-title">History</h2>
        <Show loaded={history}>
          {(list) =>
            list.data.length === 0
              ? <p class="muted">No songs yet.</p>
              : (
                <ul class="plain">
                  {list.data.map((task) => <li key={task.id}><TaskView task={task} onExtended={onCreated} /></li>)}
                </ul>
              )}
        </Show>
      </section>
    </>
  )
}
