/**
 * Tasks on a track (DESIGN.md section 11): Cover, Add vocals, Add accompaniment and Edit a
 * section, each a generation priced at its model (the source's unless one is chosen), the price
 * on its button. The rules (required fields, the span's length, a track with no sung melody)
 * are core's: the form sends what was typed, leaving empty optional boxes out, and shows the
 * API's own answer when it refuses, with nothing charged.
 */
import type { ComponentChildren } from "preact"
import { useState } from "preact/hooks"
import { modelNames } from "@lyre/core/domain/models"
import type { ModelName } from "@lyre/core/domain/models"
import { priceOf } from "@lyre/core/domain/pricing"
import { api } from "../api.ts"
import type { ApiProblem, Outputs } from "../api.ts"
import { attempt, Problem } from "../ui.tsx"
import type { SourceTrack } from "./source.ts"
import { Waveform } from "./Waveform.tsx"

type Task = Outputs["generations"]["get"]
export type TrackTaskKind = "cover" | "vocals" | "instrumental" | "edit"

/** A task made from a track: the tools tell the page what it was made from, for the A/B player. */
export interface Derived {
  readonly task: Task
  readonly source: SourceTrack
  readonly kind: TrackTaskKind | "extend"
}

/** An optional box is left out when empty, so the source's value stands. */
const given = (value: string): boolean => value.trim() !== ""

/** The form every task on a track shares: fields, a model, the price, and the API's answer. */
const TaskForm = (props: {
  readonly kind: TrackTaskKind
  readonly verb: string
  readonly source: SourceTrack
  /** Sends the task with the model chosen, if one was. */
  readonly send: (model: { model?: ModelName }) => Promise<Task>
  readonly onCreated: (made: Derived) => void
  readonly children: (invalid: (param: string) => Record<string, unknown>) => ComponentChildren
}) => {
  const [model, setModel] = useState<"" | ModelName>("")
  const [problem, setProblem] = useState<ApiProblem | null>(null)
  const [busy, setBusy] = useState(false)
  const idBase = `${props.kind}-${props.source.track.id}`
  const price = priceOf[model === "" ? props.source.model : model]
  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    const result = await attempt(() => props.send(model === "" ? {} : { model }))
    setBusy(false)
    setProblem(result.ok ? null : result.problem)
    if (result.ok) props.onCreated({ task: result.value, source: props.source, kind: props.kind })
  }
  const invalid = (param: string) =>
    problem?.param === param ? { "aria-invalid": true, "aria-describedby": `${idBase}-problem` } : {}
  return (
    <form class="track-task" onSubmit={submit} noValidate aria-label={`${props.verb} ${props.source.name}`}>
      {props.children(invalid)}
      <label>
        Model
        <select name="model" value={model} onChange={(e) => setModel(e.currentTarget.value as "" | ModelName)}>
          <option value="">the track's ({props.source.model})</option>
          {modelNames.map((name) => (
            <option key={name} value={name}>
              {name} — {priceOf[name]} credits
            </option>
          ))}
        </select>
      </label>
      <button type="submit" class="primary" disabled={busy}>
        {props.verb} for {price} credits
      </button>
      <Problem problem={problem} id={`${idBase}-problem`} />
    </form>
  )
}

interface FormProps {
  readonly source: SourceTrack
  readonly onCreated: (made: Derived) => void
}

export const CoverForm = (props: FormProps) => {
  const [style, setStyle] = useState("")
  const [title, setTitle] = useState("")
  const [weight, setWeight] = useState("")
  return (
    <TaskForm
      kind="cover"
      verb="Cover"
      source={props.source}
      onCreated={props.onCreated}
      send={(model) =>
        api.tracks.cover.mutate({
          track_id: props.source.track.id,
          style,
          ...(given(title) ? { title } : {}),
          ...(weight === "" ? {} : { audio_weight: Number(weight) }),
          ...model
        })
      }
    >
      {(invalid) => (
        <>
          <label>
            New style
            <input name="style" value={style} onInput={(e) => setStyle(e.currentTarget.value)} {...invalid("style")} />
          </label>
          <div class="row">
            <label class="grow">
              Title (empty: the track's)
              <input
                name="title"
                value={title}
                onInput={(e) => setTitle(e.currentTarget.value)}
                {...invalid("title")}
              />
            </label>
            <label>
              Follow the source's rhythm (0 to 1, empty: default)
              <input
                type="number"
                name="audio_weight"
                min={0}
                max={1}
                step={0.1}
                value={weight}
                onInput={(e) => setWeight(e.currentTarget.value)}
                {...invalid("audio_weight")}
              />
            </label>
          </div>
        </>
      )}
    </TaskForm>
  )
}

export const VocalsForm = (props: FormProps) => {
  const [lyrics, setLyrics] = useState("")
  const [style, setStyle] = useState("")
  const [gender, setGender] = useState<"" | "m" | "f">("")
  return (
    <TaskForm
      kind="vocals"
      verb="Add vocals"
      source={props.source}
      onCreated={props.onCreated}
      send={(model) =>
        api.tracks.vocals.mutate({
          track_id: props.source.track.id,
          lyrics,
          ...(given(style) ? { style } : {}),
          ...(gender === "" ? {} : { vocal_gender: gender }),
          ...model
        })
      }
    >
      {(invalid) => (
        <>
          <label>
            Lyrics to sing
            <textarea
              name="lyrics"
              rows={3}
              value={lyrics}
              onInput={(e) => setLyrics(e.currentTarget.value)}
              {...invalid("lyrics")}
            />
          </label>
          <div class="row">
            <label class="grow">
              Style (empty: the track's)
              <input
                name="style"
                value={style}
                onInput={(e) => setStyle(e.currentTarget.value)}
                {...invalid("style")}
              />
            </label>
            <label>
              Vocal gender
              <select
                name="vocal_gender"
                value={gender}
                onChange={(e) => setGender(e.currentTarget.value as "" | "m" | "f")}
                {...invalid("vocal_gender")}
              >
                <option value="">any</option>
                <option value="f">f</option>
                <option value="m">m</option>
              </select>
            </label>
          </div>
        </>
      )}
    </TaskForm>
  )
}

export const AccompanimentForm = (props: FormProps) => {
  const [style, setStyle] = useState("")
  return (
    <TaskForm
      kind="instrumental"
      verb="Add accompaniment"
      source={props.source}
      onCreated={props.onCreated}
      send={(model) => api.tracks.instrumental.mutate({ track_id: props.source.track.id, style, ...model })}
    >
      {(invalid) => (
        <label>
          Style of the accompaniment
          <input name="style" value={style} onInput={(e) => setStyle(e.currentTarget.value)} {...invalid("style")} />
        </label>
      )}
    </TaskForm>
  )
}

/**
 * Edit a section: the span is picked on the waveform (a click moves the nearer edge) or with
 * the two sliders and boxes beside it (the keyboard); new words for it are optional.
 */
export const EditForm = (props: FormProps) => {
  const { track } = props.source
  const duration = track.duration ?? 0
  const [span, setSpan] = useState(() => {
    const start = Math.floor(duration * 0.25 * 2) / 2
    return { start, end: Math.min(duration, start + Math.max(2, Math.floor(duration * 0.25 * 2) / 2)) }
  })
  const [lyrics, setLyrics] = useState("")
  const [style, setStyle] = useState("")
  const pick = (seconds: number) =>
    setSpan((now) =>
      Math.abs(seconds - now.start) <= Math.abs(seconds - now.end)
        ? { ...now, start: seconds }
        : { ...now, end: seconds }
    )
  const edge = (name: "start" | "end", label: string, invalid: (param: string) => Record<string, unknown>) => (
    <div class="row">
      <label class="grow">
        {label} (seconds)
        <input
          type="range"
          name={`${name}_slider`}
          min={0}
          max={duration}
          step={0.5}
          value={span[name]}
          onInput={(e) => setSpan({ ...span, [name]: Number(e.currentTarget.value) })}
        />
      </label>
      <label>
        {label}
        <input
          type="number"
          name={name}
          min={0}
          max={duration}
          step={0.5}
          value={span[name]}
          onInput={(e) => setSpan({ ...span, [name]: Number(e.currentTarget.value) })}
          {...invalid(name)}
        />
      </label>
    </div>
  )
  return (
    <TaskForm
      kind="edit"
      verb="Edit the section"
      source={props.source}
      onCreated={props.onCreated}
      send={(model) =>
        api.tracks.edit.mutate({
          track_id: track.id,
          start: span.start,
          end: span.end,
          ...(given(lyrics) ? { lyrics } : {}),
          ...(given(style) ? { style } : {}),
          ...model
        })
      }
    >
      {(invalid) => (
        <>
          <Waveform
            audioUrl={track.audio_url}
            duration={duration}
            mark={{ kind: "span", start: span.start, end: span.end }}
            label={`Waveform of ${track.title ?? "the track"}: the section from ${span.start.toFixed(1)} s to ${span.end.toFixed(1)} s of ${Math.round(duration)} s is made again.`}
            onPick={pick}
          />
          {edge("start", "Start", invalid)}
          {edge("end", "End", invalid)}
          <label>
            New words for the section (empty: the track's)
            <textarea
              name="lyrics"
              rows={2}
              value={lyrics}
              onInput={(e) => setLyrics(e.currentTarget.value)}
              {...invalid("lyrics")}
            />
          </label>
          <label>
            Style (empty: the track's)
            <input name="style" value={style} onInput={(e) => setStyle(e.currentTarget.value)} {...invalid("style")} />
          </label>
        </>
      )}
    </TaskForm>
  )
}
