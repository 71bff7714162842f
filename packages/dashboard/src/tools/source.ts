/**
 * What the tools on a track need to know of it, whether it is a track of a ready task or an
 * upload's track: the track itself (its id, audio and words), the model its tasks default to
 * (the price on their buttons), and a name for labels. An upload's file is addressed by core's
 * own storage key, as the service serves it under /files.
 */
import type { ModelName } from "@lyre/core/domain/models"
import { uploadExtensionOf } from "@lyre/core/uploads/model"
import { uploadKeyOf } from "@lyre/core/uploads/rows"
import type { Outputs } from "../api.ts"

type Task = Outputs["generations"]["get"]
export type Track = Task["tracks"][number]
export type Upload = Outputs["uploads"]["get"]

export interface SourceTrack {
  readonly track: Track
  /** The model a task on the track is priced at when none is chosen: the source's. */
  readonly model: ModelName
  /** The track's title and number, for labels that must tell one track's tools from another's. */
  readonly name: string
  readonly hasLyrics: boolean
}

export const sourceOfTaskTrack = (task: Task, track: Track): SourceTrack => ({
  track,
  model: task.model ?? "aether",
  name: `${track.title ?? "Untitled"} ${track.index + 1}`,
  hasLyrics: track.lyrics !== null && track.lyrics.trim() !== ""
})

export const uploadFileUrl = (upload: Upload): string =>
  `/files/${uploadKeyOf(upload.id, uploadExtensionOf[upload.content_type])}`

/** A ready upload's track (its `track_id` is set once listened to); tasks on it are priced as aether's. */
export const sourceOfUpload = (upload: Upload, trackId: string): SourceTrack => ({
  track: {
    id: trackId,
    audio_url: uploadFileUrl(upload),
    duration: upload.duration,
    title: upload.title ?? "Upload",
    lyrics: null,
    image_url: null,
    tags: null,
    index: 0
  },
  model: "aether",
  name: upload.title ?? "Upload",
  hasLyrics: false
})
