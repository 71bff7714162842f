/**
 * The song tools under a ready track: Extend, Export, Karaoke and the stems mixer, each opened
 * on demand (nothing is fetched or decoded for a tool nobody opened). They share one view of
 * the track's exports, so a stems export made in Export is the mixer's too.
 */
import { useState } from "preact/hooks"
import type { ComponentChildren } from "preact"
import type { Outputs } from "../api.ts"
import { ExportPanel } from "./ExportPanel.tsx"
import { useTrackExports } from "./exports.ts"
import { ExtendForm } from "./ExtendForm.tsx"
import { Karaoke } from "./Karaoke.tsx"
import { Mixer } from "./Mixer.tsx"

type Task = Outputs["generations"]["get"]
type Track = Task["tracks"][number]
type ToolName = "extend" | "export" | "karaoke" | "mixer"

const Tool = (props: {
  readonly label: string
  readonly what: string
  readonly open: boolean
  readonly onToggle: (open: boolean) => void
  readonly children: () => ComponentChildren
}) => (
  <details class="tool" open={props.open} onToggle={(event) => props.onToggle(event.currentTarget.open)}>
    <summary>{props.label}<span class="sr-only"> {props.what}</span></summary>
    {props.open && <div class="tool-body">{props.children()}</div>}
  </details>
)

export const TrackTools = (props: { readonly task: Task; readonly track: Track; readonly onExtended: (task: Task) => void }) => {
  const [open, setOpen] = useState<Readonly<Partial<Record<ToolName, boolean>>>>({})
  const needsExports = open.export === true || open.karaoke === true || open.mixer === true
  const exports = useTrackExports(props.track.id, needsExports)
  const title = props.track.title ?? "Untitled"
  const what = `${title} ${props.track.index + 1}`
  const toggle = (name: ToolName) => (value: boolean) => setOpen((now) => ({ ...now, [name]: value }))
  const hasLyrics = props.track.lyrics !== null && props.track.lyrics.trim() !== ""
  return (
    <div class="track-tools">
      <Tool label="Extend" what={what} open={open.extend === true} onToggle={toggle("extend")}>
        {() => <ExtendForm task={props.task} track={props.track} onCreated={props.onExtended} />}
      </Tool>
      <Tool label="Export" what={what} open={open.export === true} onToggle={toggle("export")}>
        {() => <ExportPanel trackTitle={what} hasLyrics={hasLyrics} exports={exports} />}
      </Tool>
      {hasLyrics && (
        <Tool label="Karaoke" what={what} open={open.karaoke === true} onToggle={toggle("karaoke")}>
          {() => <Karaoke track={props.track} exports={exports} />}
        </Tool>
      )}
      <Tool label="Stems mixer" what={what} open={open.mixer === true} onToggle={toggle("mixer")}>
        {() => <Mixer title={what} exports={exports} />}
      </Tool>
    </div>
  )
}
