/**
 * Write lyrics: the step before a song. A prompt (and the form's style, when it has one) asks
 * the lyrics agent for two variations (2 credits, checked with core's own schema first); the
 * task is followed until it is ready or failed, and "Use these words" fills the generate form's
 * lyrics (and its title, when empty) with a variation as it stands.
 */
import { useEffect, useState } from "preact/hooks"
import { lyricsPrice } from "@lyre/core/domain/pricing"
import { LyricsRequest } from "@lyre/core/lyrics/model"
import type { LyricsVariation } from "@lyre/core/lyrics/model"
import { api } from "../api.ts"
import type { ApiProblem, Outputs } from "../api.ts"
import { attempt, checkBody, Problem } from "../ui.tsx"

type LyricsTask = Outputs["lyrics"]["get"]

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export const LyricsStep = (props: { readonly style: string; readonly onUse: (variation: LyricsVariation) => void }) => {
  const [prompt, setPrompt] = useState("")
  const [task, setTask] = useState<LyricsTask | null>(null)
  const [problem, setProblem] = useState<ApiProblem | null>(null)
  const [busy, setBusy] = useState(false)

  // Follows a pending task, a poll a second, until it settles or the step goes away.
  useEffect(() => {
    if (task === null || task.status !== "pending") return
    let live = true
    void (async () => {
      await sleep(1_000)
      if (!live) return
      const polled = await attempt(() => api.lyrics.get.query({ id: task.id }))
      if (!live) return
      if (polled.ok) setTask(polled.value)
      else setProblem(polled.problem)
    })()
    return () => {
      live = false
    }
  }, [task])

  const submit = async (event: Event) => {
    event.preventDefault()
    const body = { prompt, ...(props.style.trim() === "" ? {} : { style: props.style }) }
    const checked = checkBody(LyricsRequest, body)
    if (!checked.ok) {
      setProblem(checked.problem)
      return
    }
    setBusy(true)
    const result = await attempt(() => api.lyrics.create.mutate(checked.value))
    setBusy(false)
    setProblem(result.ok ? null : result.problem)
    if (result.ok) setTask(result.value)
  }

  return (
    <section class="lyrics-step" aria-labelledby="lyrics-step-title">
      <h3 id="lyrics-step-title">Write lyrics</h3>
      <label>
        What is the song about?
        <textarea
          name="lyrics_prompt"
          rows={2}
          value={prompt}
          onInput={(e) => setPrompt(e.currentTarget.value)}
          {...(problem?.param === "prompt" ? { "aria-invalid": true, "aria-describedby": "lyrics-problem" } : {})}
        />
      </label>
      <button type="button" onClick={submit} disabled={busy || task?.status === "pending"}>
        Write lyrics for {lyricsPrice} credits
      </button>
      <Problem problem={problem} id="lyrics-problem" />
      {task?.status === "pending" && (
        <p role="status" class="muted">
          Writing…
        </p>
      )}
      {task?.status === "failed" && (
        <p role="alert">
          {task.error?.message ?? "The lyrics could not be written."} ({task.error?.code ?? "internal_error"})
        </p>
      )}
      {task?.status === "ready" && (
        <ul class="plain" aria-label="Variations">
          {task.variations.map((variation, index) => (
            <li key={`${task.id}-${index}`}>
              <h4>{variation.title}</h4>
              <pre class="lyrics">{variation.text}</pre>
              <button type="button" onClick={() => props.onUse(variation)}>
                Use these words
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}
