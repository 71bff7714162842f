/**
 * A generation task as the pages show it, its takes heard while they are made (their streams,
 * in the players that then play the final files), its tracks with players and, once ready, the
 * song tools; and the box that follows a new task until it settles, the same for a generation and
 * for every task made from a track. A cover or an edit followed to ready is heard against its
 * source in the A/B player.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { api, formatDate } from "./api.ts"
import type { ApiProblem, Outputs } from "./api.ts"
import { TakePlayer } from "./TakePlayer.tsx"
import { ABPlayer } from "./tools/ABPlayer.tsx"
import { sourceOfTaskTrack } from "./tools/source.ts"
import type { Derived } from "./tools/TrackTaskForms.tsx"
import { TrackTools } from "./tools/TrackTools.tsx"
import { attempt, Problem } from "./ui.tsx"

export type Task = Outputs["generations"]["get"]

/** What the box follows: a task, and what it was made from when it was made from a track. */
export type Followed = Pick<Derived, "task"> & Partial<Omit<Derived, "task">>

const followEveryMillis = 1_500

export const TaskView = (props: { readonly task: Task; readonly onCreated?: (made: Derived) => void }) => {
  const { task } = props
  return (
    <article class="task" data-task-id={task.id} data-status={task.status}>
      <p>
        <span class={`status ${task.status}`}>{task.status}</span> <code>{task.id}</code>{" "}
        <span class="muted">
          {task.model} · {task.credits_used} credits
          {task.credits_refunded > 0 ? `, ${task.credits_refunded} refunded` : ""} · {formatDate(task.created_at)}
        </span>
      </p>
      {task.error !== null && (
        <p class="problem">
          {task.error.message} <code>{task.error.code}</code>
        </p>
      )}
      {/* One list for both, keyed by the take: the player stays when a take's final file comes. */}
      <ul class="plain tracks">
        {[
          ...(task.status === "pending" ? task.previews : []).map((preview) => (
            <li key={`take-${preview.index}`} class="track" data-preview-index={preview.index}>
              <span class="cover placeholder" aria-hidden="true" />
              <div>
                <p>
                  <strong>Take {preview.index + 1}</strong> <span class="muted">being made, heard as it is made</span>
                </p>
                <TakePlayer src={preview.stream_url} label={`Play take ${preview.index + 1} while it is made`} />
              </div>
            </li>
          )),
          ...task.tracks.map((track) => (
            <li key={`take-${track.index}`} class="track" data-track-id={track.id}>
              {track.image_url === null ? (
                <span class="cover placeholder" aria-hidden="true" />
              ) : (
                <img
                  class="cover"
                  src={track.image_url}
                  width={96}
                  height={96}
                  alt={`Cover of ${track.title ?? "track"}`}
                />
              )}
              <div>
                <p>
                  <strong>{track.title ?? "Untitled"}</strong>{" "}
                  {track.duration !== null && <span class="muted">{Math.round(track.duration)} s</span>}
                </p>
                <TakePlayer src={track.audio_url} label={`Play ${track.title ?? "track"} ${track.index + 1}`} />
                <p>
                  <a href={track.audio_url} download>
                    Download
                    <span class="sr-only">
                      {" "}
                      {track.title ?? "track"} {track.index + 1}
                    </span>
                  </a>
                </p>
                {task.status === "ready" && props.onCreated !== undefined && (
                  <TrackTools source={sourceOfTaskTrack(task, track)} onCreated={props.onCreated} />
                )}
              </div>
            </li>
          ))
        ]}
      </ul>
    </article>
  )
}

const kindLabel = { cover: "cover", edit: "edit" } as const

/** Polls a pending task until it settles; the box keeps its size so nothing around it moves. */
export const Following = (props: { readonly followed: Followed; readonly onSettled: () => void }) => {
  const [task, setTask] = useState(props.followed.task)
  const box = useRef<HTMLElement>(null)
  // A task made from a track is started from the list below: bring the task being followed into view.
  useEffect(() => box.current?.scrollIntoView({ block: "nearest" }), [props.followed.task.id])
  const [problem, setProblem] = useState<ApiProblem | null>(null)
  useEffect(() => {
    setTask(props.followed.task)
    if (props.followed.task.status !== "pending") return
    let stopped = false
    const tick = async () => {
      if (stopped) return
      const result = await attempt(() => api.generations.get.query({ id: props.followed.task.id }))
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
  }, [props.followed.task.id])
  const { source, kind } = props.followed
  const made = task.tracks[0]
  const compared =
    task.status === "ready" && source !== undefined && made !== undefined && (kind === "cover" || kind === "edit")
  return (
    <section class="card following" aria-labelledby="following-title" aria-live="polite" ref={box}>
      <h2 id="following-title">
        {task.status === "pending" ? "Generating…" : task.status === "ready" ? "Ready" : "Failed"}
      </h2>
      {compared && (
        <section aria-labelledby="ab-title" class="compare">
          <h3 id="ab-title">Compare with the source</h3>
          <ABPlayer
            a={{ name: "A", label: `source (${source.name})`, url: source.track.audio_url }}
            b={{ name: "B", label: `${kindLabel[kind]} (${made.title ?? "Untitled"} 1)`, url: made.audio_url }}
          />
        </section>
      )}
      <TaskView task={task} />
      <Problem problem={problem} />
    </section>
  )
}
