/**
 * Uploads: drop a file or pick one, watch it send, and once listened to see what was heard
 * (tempo, key, metre, loudness, the chords over the waveform). Every ready upload has the song
 * tools of a track; a task made from one is followed at the top, as on the Songs page. Kept
 * uploads count against the plan's allowance, so each can be deleted (its file goes; tracks made
 * from it stay), after a confirmation.
 */
import { useEffect, useState } from "preact/hooks"
import { api, formatDate } from "../api.ts"
import type { ApiProblem } from "../api.ts"
import { Following } from "../tasks.tsx"
import type { Followed } from "../tasks.tsx"
import { sourceOfUpload } from "../tools/source.ts"
import type { Upload } from "../tools/source.ts"
import { TrackTools } from "../tools/TrackTools.tsx"
import { sendUpload } from "../tools/upload.ts"
import { Waveform } from "../tools/Waveform.tsx"
import { attempt, Confirm, Problem, Show, useQuery } from "../ui.tsx"

const followEveryMillis = 1_000

const sizeOf = (bytes: number): string =>
  bytes < 1024 * 1024 ? `${Math.max(1, Math.round(bytes / 1024))} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`

const UploadForm = (props: { readonly onSent: () => void }) => {
  const [title, setTitle] = useState("")
  const [sending, setSending] = useState<{
    readonly name: string
    readonly sent: number
    readonly total: number
  } | null>(null)
  const [problem, setProblem] = useState<ApiProblem | null>(null)
  // A pick whose sending failed on the way (no answer, or the server's own fault): sent again, it
  // carries the same Idempotency-Key, so an upload that was made after all is answered, not made twice.
  const [unsent, setUnsent] = useState<File | null>(null)
  const [over, setOver] = useState(false)
  const send = async (file: File | undefined) => {
    if (file === undefined || sending !== null) return
    setProblem(null)
    setUnsent(null)
    setSending({ name: file.name, sent: 0, total: file.size })
    const result = await sendUpload(file, title, (sent, total) => setSending({ name: file.name, sent, total }))
    setSending(null)
    if (result.ok) {
      setTitle("")
      props.onSent()
    } else {
      setProblem(result.problem)
      if (result.problem.type === "api_error") setUnsent(file)
    }
  }
  const percent = sending === null || sending.total === 0 ? 0 : Math.round((sending.sent / sending.total) * 100)
  return (
    <section class="card" aria-labelledby="upload-title">
      <h2 id="upload-title">Upload audio</h2>
      <p class="muted">MP3, WAV, FLAC or Ogg, 5 seconds to 8 minutes, at most 50 MB. Free of credits.</p>
      <label>
        Title (optional)
        <input
          name="title"
          value={title}
          onInput={(e) => setTitle(e.currentTarget.value)}
          {...(problem?.param === "title" ? { "aria-invalid": true } : {})}
        />
      </label>
      {/* biome-ignore lint/a11y/noStaticElementInteractions: dropping a file is a pointer's shortcut; the file input inside is the way for a keyboard or a screen reader, so no role announces a control they could not work. */}
      <div
        class={over ? "dropzone over" : "dropzone"}
        data-testid="dropzone"
        onDragOver={(event) => {
          event.preventDefault()
          setOver(true)
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(event) => {
          event.preventDefault()
          setOver(false)
          void send(event.dataTransfer?.files[0])
        }}
      >
        <label>
          Drop an audio file here, or choose one
          <input
            type="file"
            name="file"
            accept="audio/*"
            disabled={sending !== null}
            onChange={(e) => {
              const input = e.currentTarget
              void send(input.files?.[0]).then(() => (input.value = ""))
            }}
          />
        </label>
      </div>
      <div aria-live="polite">
        {sending !== null && (
          <p class="sending">
            <label>
              Sending {sending.name}: {percent}%
              <progress max={100} value={percent} data-testid="upload-progress" />
            </label>
          </p>
        )}
      </div>
      <Problem problem={problem} />
      {unsent !== null && sending === null && (
        <button type="button" onClick={() => void send(unsent)}>
          Send {unsent.name} again
        </button>
      )}
    </section>
  )
}

const Analysis = (props: { readonly upload: Upload; readonly trackId: string }) => {
  const { upload } = props
  const analysis = upload.analysis
  if (analysis === null) return null
  const source = sourceOfUpload(upload, props.trackId)
  const chords = analysis.chords.filter((span) => span.chord !== "N")
  return (
    <>
      <dl class="analysis" data-testid="analysis">
        <dt>Tempo</dt>
        <dd data-testid="tempo">{Math.round(analysis.bpm)} bpm</dd>
        <dt>Key</dt>
        <dd data-testid="key">{analysis.key}</dd>
        <dt>Time signature</dt>
        <dd>{analysis.time_signature}</dd>
        <dt>Loudness</dt>
        <dd>{analysis.loudness_lufs.toFixed(1)} LUFS</dd>
      </dl>
      <Waveform
        audioUrl={source.track.audio_url}
        duration={upload.duration}
        mark={{ kind: "chords", chords: analysis.chords }}
        label={`Waveform of ${source.name} with its chords: ${chords.map((span) => span.chord).join(", ") || "none heard"}.`}
      />
      <details class="chord-list">
        <summary>Chords, with their times</summary>
        <ol class="plain" data-testid="chords">
          {chords.map((span) => (
            <li key={span.start}>
              <strong>{span.chord}</strong>{" "}
              <span class="muted">
                {span.start.toFixed(1)}–{span.end.toFixed(1)} s
              </span>
            </li>
          ))}
        </ol>
      </details>
      {/* biome-ignore lint/a11y/useMediaCaption: an upload is the user's own recording, of which the service holds no words to caption (its source has no lyrics: tools/source.ts). */}
      <audio controls preload="none" src={source.track.audio_url} aria-label={`Play ${source.name}`} />
    </>
  )
}

const UploadView = (props: {
  readonly upload: Upload
  readonly onCreated: (made: Followed) => void
  readonly onDelete: (upload: Upload) => void
}) => {
  const { upload } = props
  return (
    <article
      class="upload"
      data-upload-id={upload.id}
      data-status={upload.status}
      aria-labelledby={`${upload.id}-title`}
    >
      <p>
        <strong id={`${upload.id}-title`}>{upload.title ?? "Upload"}</strong>{" "}
        <span class={`status ${upload.status}`}>{upload.status}</span>{" "}
        <span class="muted">
          {upload.duration.toFixed(1)} s · {sizeOf(upload.bytes)} · {formatDate(upload.created_at)}
        </span>
      </p>
      {upload.status === "pending" && (
        <p class="muted" aria-busy="true">
          Listening: tempo, key, chords…
        </p>
      )}
      {upload.error !== null && (
        <p class="problem">
          {upload.error.message} <code>{upload.error.code}</code>
        </p>
      )}
      {upload.status === "ready" && upload.track_id !== null && (
        <>
          <Analysis upload={upload} trackId={upload.track_id} />
          <TrackTools source={sourceOfUpload(upload, upload.track_id)} onCreated={props.onCreated} />
        </>
      )}
      <p>
        <button type="button" class="danger" onClick={() => props.onDelete(upload)}>
          Delete<span class="sr-only"> {upload.title ?? "upload"}</span>
        </button>
      </p>
    </article>
  )
}

export const Uploads = () => {
  const [list, reload] = useQuery(() => api.uploads.list.query({ limit: 20 }))
  const [following, setFollowing] = useState<Followed | null>(null)
  const [deleting, setDeleting] = useState<Upload | null>(null)
  const [problem, setProblem] = useState<ApiProblem | null>(null)
  const remove = async () => {
    if (deleting === null) return
    const result = await attempt(() => api.uploads.delete.mutate({ id: deleting.id }))
    setDeleting(null)
    setProblem(result.ok ? null : result.problem)
    reload()
  }
  // An upload is listened to after it is kept: the list is asked again while any is pending.
  const pending = list.state === "ok" && list.value.data.some((upload) => upload.status === "pending")
  useEffect(() => {
    if (!pending) return
    const timer = setInterval(reload, followEveryMillis)
    return () => clearInterval(timer)
  }, [pending, reload])
  return (
    <>
      <UploadForm onSent={reload} />
      {following !== null && <Following followed={following} onSettled={() => undefined} />}
      <section class="card" aria-labelledby="uploads-title">
        <h2 id="uploads-title">Your uploads</h2>
        <Problem problem={problem} />
        <Show loaded={list}>
          {(found) =>
            found.data.length === 0 ? (
              <p class="muted">No uploads yet.</p>
            ) : (
              <ul class="plain">
                {found.data.map((upload) => (
                  <li key={upload.id}>
                    <UploadView upload={upload} onCreated={setFollowing} onDelete={setDeleting} />
                  </li>
                ))}
              </ul>
            )
          }
        </Show>
      </section>
      <Confirm
        open={deleting !== null}
        title={`Delete ${deleting?.title ?? "the upload"}?`}
        confirmLabel="Delete"
        onConfirm={() => void remove()}
        onCancel={() => setDeleting(null)}
      >
        <p>Its file goes and it no longer counts against your plan's uploads; the songs made from it stay.</p>
      </Confirm>
    </>
  )
}
