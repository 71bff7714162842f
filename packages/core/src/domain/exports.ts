/**
 * Exports as stored and as the API shows them, and the timed-lyrics files written from the
 * words: one formatter for every provider, so `.lrc`, WebVTT and JSON always agree.
 */
import type { Export, ExportFile, ExportFormat, TaskStatus, TimedWord } from "./models.ts"

/** An export as stored. */
export interface ExportRow {
  readonly id: string
  readonly track_id: string
  readonly task_id: string
  readonly format: ExportFormat
  readonly status: TaskStatus
  readonly credits_used: number
  readonly credits_refunded: number
  readonly error_code: string | null
  readonly error_message: string | null
  readonly files: ReadonlyArray<ExportFile>
  readonly timed_lyrics: ReadonlyArray<TimedWord> | null
  readonly created_at: Date
  readonly updated_at: Date
}

/** `task_id` is the upload's id for an export of an upload's track (DESIGN.md section 11). */
export const exportColumns = `id, track_id, coalesce(task_id, upload_id) as task_id, format, status, credits_used, credits_refunded, error_code,
  error_message, files, timed_lyrics, created_at, updated_at`

/**
 * Files and words are kept as jsonb, which orders an object's keys its own way (shortest
 * first): each is rendered field by field, in the schema's order, as answers go out unparsed
 * (decision 0109).
 */
const renderExportFile = (file: ExportFile): ExportFile => ({
  name: file.name,
  url: file.url,
  content_type: file.content_type,
  bytes: file.bytes,
  stem: file.stem
})

const renderTimedWord = (word: TimedWord): TimedWord => ({ text: word.text, start: word.start, end: word.end })

export const renderExport = (row: ExportRow): Export => ({
  id: row.id,
  track_id: row.track_id,
  task_id: row.task_id,
  format: row.format,
  status: row.status,
  credits_used: row.credits_used,
  credits_refunded: row.credits_refunded,
  error: row.error_code === null ? null : { code: row.error_code, message: row.error_message ?? "" },
  files: row.files.map(renderExportFile),
  timed_lyrics: row.timed_lyrics === null ? null : row.timed_lyrics.map(renderTimedWord),
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString()
})

const pad = (n: number, width: number): string => String(n).padStart(width, "0")

/** `mm:ss.xx`, LRC's time tag (minutes may pass 99 for very long tracks; players accept it). */
const lrcTime = (seconds: number): string => {
  const centis = Math.max(0, Math.round(seconds * 100))
  return `${pad(Math.floor(centis / 6000), 2)}:${pad(Math.floor(centis / 100) % 60, 2)}.${pad(centis % 100, 2)}`
}

/** `hh:mm:ss.ttt`, WebVTT's timestamp. */
const vttTime = (seconds: number): string => {
  const millis = Math.max(0, Math.round(seconds * 1000))
  return (
    `${pad(Math.floor(millis / 3_600_000), 2)}:${pad(Math.floor(millis / 60_000) % 60, 2)}:` +
    `${pad(Math.floor(millis / 1000) % 60, 2)}.${pad(millis % 1000, 3)}`
  )
}

/**
 * Words grouped into lines for display: a new line after a pause longer than a second, or
 * after 8 words, so a karaoke view shows phrases rather than a wall of text or one word a line.
 */
export const lyricLines = (words: ReadonlyArray<TimedWord>): ReadonlyArray<ReadonlyArray<TimedWord>> => {
  const lines: Array<Array<TimedWord>> = []
  let line: Array<TimedWord> = []
  for (const word of words) {
    const last = line[line.length - 1]
    if (last !== undefined && (word.start - last.end > 1 || line.length >= 8)) {
      lines.push(line)
      line = []
    }
    line.push(word)
  }
  if (line.length > 0) lines.push(line)
  return lines
}

/** One line of enhanced LRC: the line's tag, then a `<mm:ss.xx>` tag before each word. */
const lrcLine = (line: ReadonlyArray<TimedWord>): string =>
  `[${lrcTime(line[0]?.start ?? 0)}]${line.map((w) => `<${lrcTime(w.start)}>${w.text}`).join(" ")}`

/** Enhanced LRC: a line tag per line, and a `<mm:ss.xx>` tag before each word. */
export const toLrc = (words: ReadonlyArray<TimedWord>): string => `${lyricLines(words).map(lrcLine).join("\n")}\n`

/** WebVTT: one cue per line, from its first word's start to its last word's end. */
export const toWebVtt = (words: ReadonlyArray<TimedWord>): string =>
  "WEBVTT\n\n" +
  lyricLines(words)
    .map(
      (line, index) =>
        `${index + 1}\n${vttTime(line[0]?.start ?? 0)} --> ${vttTime(line[line.length - 1]?.end ?? 0)}\n` +
        line.map((w) => w.text).join(" ")
    )
    .join("\n\n") +
  "\n"

/** The files of a `timed_lyrics` export, written by the service from the words. */
export const timedLyricsFiles = (
  words: ReadonlyArray<TimedWord>
): ReadonlyArray<{ readonly name: string; readonly contentType: string; readonly text: string }> => [
  { name: "lyrics.lrc", contentType: "text/plain; charset=utf-8", text: toLrc(words) },
  { name: "lyrics.vtt", contentType: "text/vtt; charset=utf-8", text: toWebVtt(words) },
  { name: "lyrics.json", contentType: "application/json", text: JSON.stringify(words) }
]
