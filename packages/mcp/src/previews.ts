/**
 * Audio before `ready` (DESIGN.md section 14, decision 0126) as MCP tells it: a pending
 * generation's `previews` become a sentence with their stream addresses (in a wait's progress
 * and a working task's status message) and resource links (in a progress notification's
 * `_meta` and a pending result's content), so an agent can hand a person the song while it is
 * made. Exports, uploads and lyrics tasks have no previews.
 */
import type { ResourceLink } from "@modelcontextprotocol/sdk/types.js"
import type { Preview } from "@lyre/core"

/** Where a progress notification carries the previews' resource links (its params hold no content). */
export const previewsMetaKey = "lyre/previews"

/** One link per take being made: Lyre's own stream address, growing MP3 until the take is done. */
export const previewLinks = (taskId: string, previews: ReadonlyArray<Preview>): Array<ResourceLink> =>
  previews.map((preview) => ({
    type: "resource_link",
    uri: preview.stream_url,
    name: `${taskId}-${preview.index}-stream.mp3`,
    title: `Take ${preview.index + 1} of ${taskId}, while it is made`,
    mimeType: "audio/mpeg",
    description:
      "Chunked MP3 that grows until the take is done; not the final file, which the address redirects to once ready."
  }))

/** The sentence a pending message ends with once there is audio to hear (empty before). */
export const listenSentence = (previews: ReadonlyArray<Preview>): string =>
  previews.length === 0 ? "" : ` Hear it while it is made: ${previews.map((preview) => preview.stream_url).join(" ")}`
