/** Saves a ready task's songs: each track's MP3 and cover, named from its title and index. */
import { createWriteStream, mkdirSync, renameSync, rmSync } from "node:fs"
import { join } from "node:path"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import type { Export, ExportFile, LyreClient, Track } from "@lyre/client"
import type { Display } from "./display.ts"
import { formatBytes } from "./format.ts"

/**
 * A file name safe on every common file system: letters and digits of any script kept, every
 * other run of characters one `-`, at most 80 characters, never empty, never hidden.
 */
export const fileBase = (title: string | null, index: number, fallback: string): string => {
  const slug = (title ?? "")
    .normalize("NFKC")
    .replace(/[^\p{L}\p{N}]+/gu, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 80)
    .replace(/-+$/, "")
  return `${slug === "" ? fallback : slug}-${index + 1}`
}

const extensionOf = (url: string, fallback: string): string => {
  const match = /\.([a-z0-9]{2,4})$/i.exec(new URL(url).pathname)
  return match?.[1]?.toLowerCase() ?? fallback
}

export interface SavedFile {
  readonly track: number
  readonly kind: "audio" | "image"
  readonly path: string
  readonly bytes: number
}

export interface SavedExportFile {
  readonly name: string
  readonly stem: string | null
  readonly path: string
  readonly bytes: number
}

/** Downloads one file to `path` with progress; answers the bytes written. */
const save = async (
  client: LyreClient,
  source: Track | ExportFile,
  part: "audio" | "image",
  path: string,
  display: Display
): Promise<number> => {
  const name = path.split(/[\\/]/).at(-1) ?? path
  let bytes = 0
  const { stream } = await client.downloadStream(source, {
    part,
    onProgress: (received, total) => {
      bytes = received
      const share = total === null || total === 0 ? "" : ` (${Math.floor((received / total) * 100)}%)`
      display.progress(
        `Downloading ${name}  ${formatBytes(received)}${total === null ? "" : ` of ${formatBytes(total)}`}${share}`,
        name
      )
    }
  })
  // Written beside the target and renamed at the end: an interrupted download leaves no half file under the real name.
  const partial = `${path}.part`
  try {
    await pipeline(Readable.fromWeb(stream), createWriteStream(partial))
    renameSync(partial, path)
  } catch (cause) {
    rmSync(partial, { force: true })
    throw cause
  }
  display.note(`Saved ${path} (${formatBytes(bytes)})`)
  return bytes
}

export const saveTracks = async (
  client: LyreClient,
  taskId: string,
  tracks: ReadonlyArray<Track>,
  directory: string,
  display: Display
): Promise<ReadonlyArray<SavedFile>> => {
  mkdirSync(directory, { recursive: true })
  const saved: Array<SavedFile> = []
  for (const track of tracks) {
    const base = join(directory, fileBase(track.title, track.index, taskId))
    const audio = `${base}.${extensionOf(track.audio_url, "mp3")}`
    saved.push({
      track: track.index,
      kind: "audio",
      path: audio,
      bytes: await save(client, track, "audio", audio, display)
    })
    if (track.image_url !== null) {
      const image = `${base}.${extensionOf(track.image_url, "png")}`
      saved.push({
        track: track.index,
        kind: "image",
        path: image,
        bytes: await save(client, track, "image", image, display)
      })
    }
  }
  return saved
}

/**
 * Saves a ready export's files, named from the track's title and index and the file's own name
 * (`Home-1-vocals.wav`), so the exports of several tracks can share a directory.
 */
export const saveExportFiles = async (
  client: LyreClient,
  found: Export,
  track: Track | undefined,
  directory: string,
  display: Display
): Promise<ReadonlyArray<SavedExportFile>> => {
  mkdirSync(directory, { recursive: true })
  const prefix = track === undefined ? found.track_id : fileBase(track.title, track.index, found.task_id)
  const saved: Array<SavedExportFile> = []
  for (const file of found.files) {
    const name = file.name
      .normalize("NFKC")
      .replace(/[^\p{L}\p{N}._-]+/gu, "-")
      .replace(/^[.-]+/, "")
    const path = join(directory, `${prefix}-${name === "" ? "file" : name}`)
    saved.push({ name: file.name, stem: file.stem, path, bytes: await save(client, file, "audio", path, display) })
  }
  return saved
}
