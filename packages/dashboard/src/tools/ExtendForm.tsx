/**
 * Extend: the point to continue from, chosen on the track's waveform (a click) or with the
 * slider beside it (the keyboard), optional new lyrics, title, style and model, and the price.
 * Checked with core's own schema before it is sent, as the generate form is.
 */
import { useState } from "preact/hooks"
import { ExtendRequest, modelNames } from "@lyre/core/domain/models"
import type { ModelName } from "@lyre/core/domain/models"
import { priceOf } from "@lyre/core/domain/pricing"
import { api } from "../api.ts"
import type { ApiProblem, Outputs } from "../api.ts"
import { attempt, checkBody, Problem } from "../ui.tsx"
import type { SourceTrack } from "./source.ts"
import { Waveform } from "./Waveform.tsx"

type Task = Outputs["generations"]["get"]

interface Draft {
  continueAt: number
  lyrics: string
  title: string
  style: string
  model: "" | ModelName
}

export const ExtendForm = (props: { readonly source: SourceTrack; readonly onCreated: (task: Task) => void }) => {
  const { track } = props.source
  const duration = track.duration ?? 0
  const idBase = `extend-${track.id}`
  const [draft, setDraft] = useState<Draft>({
    continueAt: Math.max(0.5, Math.floor(duration * 0.75 * 2) / 2),
    lyrics: "",
    title: "",
    style: "",
    model: ""
  })
  const [problem, setProblem] = useState<ApiProblem | null>(null)
  const [busy, setBusy] = useState(false)
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setDraft({ ...draft, [key]: value })
  const model: ModelName = draft.model === "" ? props.source.model : draft.model
  const submit = async (event: Event) => {
    event.preventDefault()
    const body = {
      track_id: track.id,
      continue_at: draft.continueAt,
      ...(draft.lyrics === "" ? {} : { lyrics: draft.lyrics }),
      ...(draft.title === "" ? {} : { title: draft.title }),
      ...(draft.style === "" ? {} : { style: draft.style }),
      ...(draft.model === "" ? {} : { model: draft.model })
    }
    const checked = checkBody(ExtendRequest, body)
    if (!checked.ok) {
      setProblem(checked.problem)
      return
    }
    setBusy(true)
    const result = await attempt(() => api.tracks.extend.mutate(checked.value))
    setBusy(false)
    setProblem(result.ok ? null : result.problem)
    if (result.ok) props.onCreated(result.value)
  }
  const invalid = (param: string) =>
    problem?.param === param ? { "aria-invalid": true, "aria-describedby": `${idBase}-problem` } : {}
  return (
    <form class="extend" onSubmit={submit} noValidate aria-label={`Extend ${props.source.name}`}>
      <Waveform
        audioUrl={track.audio_url}
        duration={duration}
        mark={{ kind: "point", at: draft.continueAt }}
        label={`Waveform of ${track.title ?? "the track"}: kept up to ${draft.continueAt.toFixed(1)} s of ${Math.round(duration)} s, continued from there.`}
        onPick={(seconds) => set("continueAt", seconds)}
      />
      <div class="row">
        <label class="grow">
          Continue from (seconds)
          <input
            type="range"
            name="continue_at"
            min={0.5}
            max={Math.max(0.5, duration - 0.5)}
            step={0.5}
            value={draft.continueAt}
            onInput={(e) => set("continueAt", Number(e.currentTarget.value))}
          />
        </label>
        <label>
          Seconds
          <input
            type="number"
            name="continue_at_seconds"
            min={0}
            step={0.5}
            value={draft.continueAt}
            onInput={(e) => set("continueAt", Number(e.currentTarget.value))}
            {...invalid("continue_at")}
          />
        </label>
      </div>
      <label>
        New lyrics for the continuation (empty: the track's)
        <textarea
          name="lyrics"
          rows={3}
          value={draft.lyrics}
          onInput={(e) => set("lyrics", e.currentTarget.value)}
          {...invalid("lyrics")}
        />
      </label>
      <div class="row">
        <label class="grow">
          Title (empty: the track's)
          <input
            name="title"
            value={draft.title}
            onInput={(e) => set("title", e.currentTarget.value)}
            {...invalid("title")}
          />
        </label>
        <label class="grow">
          Style (empty: the track's)
          <input
            name="style"
            value={draft.style}
            onInput={(e) => set("style", e.currentTarget.value)}
            {...invalid("style")}
          />
        </label>
        <label>
          Model
          <select
            name="model"
            value={draft.model}
            onChange={(e) => set("model", e.currentTarget.value as Draft["model"])}
          >
            <option value="">the track's ({props.source.model})</option>
            {modelNames.map((name) => (
              <option key={name} value={name}>
                {name} — {priceOf[name]} credits
              </option>
            ))}
          </select>
        </label>
      </div>
      <button type="submit" class="primary" disabled={busy}>
        Extend for {priceOf[model]} credits
      </button>
      <Problem problem={problem} id={`${idBase}-problem`} />
    </form>
  )
}
