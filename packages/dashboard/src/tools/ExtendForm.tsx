/**
 * Extend: the point to continue from, chosen on the track's waveform (a click) or with the
 * slider beside it (the keyboard), optional new lyrics, title, style and model, and the price.
 * Checked with core's own schema before it is sent, as the generate form is.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { ExtendRequest, modelNames } from "@lyre/core/domain/models"
import type { ModelName } from "@lyre/core/domain/models"
import { priceOf } from "@lyre/core/domain/pricing"
import { api } from "../api.ts"
import type { ApiProblem, Outputs } from "../api.ts"
import { attempt, checkBody, Problem } from "../ui.tsx"
import { decodeUrl, peaksOf } from "./audio.ts"

type Task = Outputs["generations"]["get"]
type Track = Task["tracks"][number]

const bars = 160

const Waveform = (props: {
  readonly track: Track
  readonly duration: number
  readonly at: number
  readonly onPick: (seconds: number) => void
}) => {
  const canvas = useRef<HTMLCanvasElement>(null)
  const [peaks, setPeaks] = useState<ReadonlyArray<number> | null>(null)
  const [failed, setFailed] = useState(false)
  useEffect(() => {
    const controller = new AbortController()
    decodeUrl(props.track.audio_url, controller.signal).then(
      (buffer) => setPeaks(peaksOf(buffer, bars)),
      () => {
        if (!controller.signal.aborted) setFailed(true)
      }
    )
    return () => controller.abort()
  }, [props.track.audio_url])
  useEffect(() => {
    const element = canvas.current
    const context = element?.getContext("2d")
    if (element === null || element === undefined || context === null || context === undefined) return
    const width = element.clientWidth
    const height = element.clientHeight
    const scale = devicePixelRatio
    element.width = Math.round(width * scale)
    element.height = Math.round(height * scale)
    context.scale(scale, scale)
    context.clearRect(0, 0, width, height)
    const style = getComputedStyle(element)
    const kept = style.getPropertyValue("--accent").trim() || "#3446c9"
    const after = style.getPropertyValue("--line").trim() || "#d5d8de"
    const cut = (props.at / props.duration) * width
    const step = width / bars
    for (const [i, peak] of (peaks ?? Array.from({ length: bars }, () => 0.04)).entries()) {
      const h = Math.max(1, peak * (height - 4))
      context.fillStyle = i * step < cut ? kept : after
      context.fillRect(i * step, (height - h) / 2, Math.max(1, step - 1), h)
    }
    context.fillStyle = "#b3261e"
    context.fillRect(Math.min(width - 2, Math.max(0, cut - 1)), 0, 2, height)
  }, [peaks, props.at, props.duration])
  return (
    <canvas
      ref={canvas}
      class="waveform"
      role="img"
      data-testid="waveform"
      data-loaded={peaks !== null ? "true" : failed ? "failed" : "false"}
      aria-label={`Waveform of ${props.track.title ?? "the track"}: kept up to ${props.at.toFixed(1)} s of ${Math.round(props.duration)} s, continued from there.`}
      onClick={(event) => {
        const box = event.currentTarget.getBoundingClientRect()
        const share = Math.min(1, Math.max(0, (event.clientX - box.left) / box.width))
        props.onPick(Math.round(share * props.duration * 2) / 2)
      }}
    />
  )
}

interface Draft {
  continueAt: number
  lyrics: string
  title: string
  style: string
  model: "" | ModelName
}

export const ExtendForm = (props: { readonly task: Task; readonly track: Track; readonly onCreated: (task: Task) => void }) => {
  const duration = props.track.duration ?? 0
  const idBase = `extend-${props.track.id}`
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
  const model: ModelName = draft.model === "" ? props.task.model ?? "aether" : draft.model
  const submit = async (event: Event) => {
    event.preventDefault()
    const body = {
      track_id: props.track.id,
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
  const invalid = (param: string) => (problem?.param === param ? { "aria-invalid": true, "aria-describedby": `${idBase}-problem` } : {})
  return (
    <form class="extend" onSubmit={submit} noValidate aria-label={`Extend ${props.track.title ?? "track"} ${props.track.index + 1}`}>
      <Waveform track={props.track} duration={duration} at={draft.continueAt} onPick={(seconds) => set("continueAt", seconds)} />
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
        <textarea name="lyrics" rows={3} value={draft.lyrics} onInput={(e) => set("lyrics", e.currentTarget.value)} {...invalid("lyrics")} />
      </label>
      <div class="row">
        <label class="grow">
          Title (empty: the track's)
          <input name="title" value={draft.title} onInput={(e) => set("title", e.currentTarget.value)} {...invalid("title")} />
        </label>
        <label class="grow">
          Style (empty: the track's)
          <input name="style" value={draft.style} onInput={(e) => set("style", e.currentTarget.value)} {...invalid("style")} />
        </label>
        <label>
          Model
          <select name="model" value={draft.model} onChange={(e) => set("model", e.currentTarget.value as Draft["model"])}>
            <option value="">the track's ({props.task.model ?? "aether"})</option>
            {modelNames.map((name) => <option key={name} value={name}>{name} — {priceOf[name]} credits</option>)}
          </select>
        </label>
      </div>
      <button type="submit" class="primary" disabled={busy}>Extend for {priceOf[model]} credits</button>
      <Problem problem={problem} id={`${idBase}-problem`} />
    </form>
  )
}
