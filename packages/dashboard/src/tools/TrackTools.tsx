/**
 * The song tools under a ready track or upload: Extend, Cover, Add vocals, Add accompaniment,
 * Edit a section, Export, Karaoke, the stems mixer and the file's content credentials, each
 * opened on demand (nothing is fetched or decoded for a tool nobody opened). The export tools
 * share one view of the track's exports, so a stems export made in Export is the mixer's too.
 */
import { useState } from "preact/hooks"
import type { ComponentChildren } from "preact"
import { Credentials } from "./Credentials.tsx"
import { ExportPanel } from "./ExportPanel.tsx"
import { useTrackExports } from "./exports.ts"
import { ExtendForm } from "./ExtendForm.tsx"
import { Karaoke } from "./Karaoke.tsx"
import { Mixer } from "./Mixer.tsx"
import type { SourceTrack } from "./source.ts"
import { AccompanimentForm, CoverForm, EditForm, VocalsForm } from "./TrackTaskForms.tsx"
import type { Derived } from "./TrackTaskForms.tsx"

type ToolName = "extend" | "cover" | "vocals" | "instrumental" | "edit" | "export" | "karaoke" | "mixer" | "credentials"

const Tool = (props: {
  readonly label: string
  readonly what: string
  readonly open: boolean
  readonly onToggle: (open: boolean) => void
  readonly children: () => ComponentChildren
}) => (
  <details class="tool" open={props.open} onToggle={(event) => props.onToggle(event.currentTarget.open)}>
    <summary>
      {props.label}
      <span class="sr-only"> {props.what}</span>
    </summary>
    {props.open && <div class="tool-body">{props.children()}</div>}
  </details>
)

export const TrackTools = (props: { readonly source: SourceTrack; readonly onCreated: (made: Derived) => void }) => {
  const [open, setOpen] = useState<Readonly<Partial<Record<ToolName, boolean>>>>({})
  const needsExports = open.export === true || open.karaoke === true || open.mixer === true
  const { source } = props
  const exports = useTrackExports(source.track.id, needsExports)
  const what = source.name
  const toggle = (name: ToolName) => (value: boolean) => setOpen((now) => ({ ...now, [name]: value }))
  const tool = (name: ToolName, label: string, body: () => ComponentChildren) => (
    <Tool label={label} what={what} open={open[name] === true} onToggle={toggle(name)}>
      {body}
    </Tool>
  )
  return (
    <div class="track-tools">
      {tool("extend", "Extend", () => (
        <ExtendForm source={source} onCreated={(task) => props.onCreated({ task, source, kind: "extend" })} />
      ))}
      {tool("cover", "Cover", () => (
        <CoverForm source={source} onCreated={props.onCreated} />
      ))}
      {tool("vocals", "Add vocals", () => (
        <VocalsForm source={source} onCreated={props.onCreated} />
      ))}
      {tool("instrumental", "Add accompaniment", () => (
        <AccompanimentForm source={source} onCreated={props.onCreated} />
      ))}
      {tool("edit", "Edit a section", () => (
        <EditForm source={source} onCreated={props.onCreated} />
      ))}
      {tool("export", "Export", () => (
        <ExportPanel trackTitle={what} hasLyrics={source.hasLyrics} exports={exports} />
      ))}
      {source.hasLyrics && tool("karaoke", "Karaoke", () => <Karaoke track={source.track} exports={exports} />)}
      {tool("mixer", "Stems mixer", () => (
        <Mixer title={what} exports={exports} />
      ))}
      {tool("credentials", "Content credentials", () => (
        <Credentials track={source.track} />
      ))}
    </div>
  )
}
