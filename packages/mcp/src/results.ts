/** Tool results: the structured value and its JSON text, or the REST envelope as an error result. */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { isExport, renderError } from "@lyre/core"
import type { ApiError, Export, GenerationTask, LyricsTask, Upload } from "@lyre/core"
import { isLyrics, isUpload } from "./jobs.ts"
import type { McpJob } from "./jobs.ts"
import { previewLinks } from "./previews.ts"

type Content = CallToolResult["content"][number]

export const valueResult = (
  value: { readonly [key: string]: unknown },
  extra: ReadonlyArray<Content> = []
): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value) }, ...extra],
  structuredContent: value
})

const imageTypes: Readonly<Record<string, string>> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  webp: "image/webp"
}

const imageTypeOf = (url: string): string | undefined => {
  const extension = /\.([a-z0-9]+)$/i.exec(new URL(url).pathname)?.[1]?.toLowerCase()
  return extension === undefined ? undefined : imageTypes[extension]
}

/** A ready song is also content an agent can hand to a person: a link per audio file and cover. */
const trackLinks = (task: GenerationTask): ReadonlyArray<Content> =>
  task.status !== "ready"
    ? []
    : task.tracks.flatMap((track): Array<Content> => {
        const label = `${track.title ?? task.id} (take ${track.index + 1})`
        const audio: Content = {
          type: "resource_link",
          uri: track.audio_url,
          name: `${task.id}-${track.index}.mp3`,
          title: label,
          mimeType: "audio/mpeg",
          ...(track.duration === null ? {} : { description: `${Math.round(track.duration)} s of audio` })
        }
        if (track.image_url === null) return [audio]
        const mimeType = imageTypeOf(track.image_url)
        return [
          audio,
          {
            type: "resource_link",
            uri: track.image_url,
            name: `${task.id}-${track.index}-cover`,
            title: `Cover of ${label}`,
            ...(mimeType === undefined ? {} : { mimeType })
          }
        ]
      })

/** A ready song links its files; a pending one its takes' streams, once there is audio to hear. */
export const taskResult = (task: GenerationTask): CallToolResult =>
  valueResult(task, task.status === "pending" ? previewLinks(task.id, task.previews) : trackLinks(task))

/** A ready export's files, each a link with the media type the service serves it with. */
const fileLinks = (exported: Export): ReadonlyArray<Content> =>
  exported.status !== "ready"
    ? []
    : exported.files.map(
        (file): Content => ({
          type: "resource_link",
          uri: file.url,
          name: file.name,
          title:
            file.stem === null
              ? `${file.name} (${exported.format} of ${exported.track_id})`
              : `The ${file.stem} stem of ${exported.track_id}`,
          mimeType: file.content_type,
          description: `${file.bytes} bytes`
        })
      )

export const exportResult = (exported: Export): CallToolResult => valueResult(exported, fileLinks(exported))

/** An upload: its fields (once ready, the track_id every track tool takes and what listening heard). */
export const uploadResult = (upload: Upload): CallToolResult => valueResult(upload)

/** A lyrics task: once ready, its two variations, each `text` ready to pass as generate_music's lyrics. */
export const lyricsResult = (task: LyricsTask): CallToolResult => valueResult(task)

export const jobResult = (job: McpJob): CallToolResult =>
  isUpload(job)
    ? uploadResult(job)
    : isLyrics(job)
      ? lyricsResult(job)
      : isExport(job)
        ? exportResult(job)
        : taskResult(job)

/**
 * A domain failure: the REST envelope as JSON text. No `structuredContent`, which would have to
 * match the tool's output schema (the SDK client validates it even on errors).
 */
export const errorResult = (error: ApiError): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(renderError(error).body) }],
  isError: true
})
