/** How results look: `table` for people (aligned text), `json` for programs (the API's objects as they came). */
import type {
  Account,
  Export,
  GenerationTask,
  GenerationTaskList,
  LyricsTask,
  Persona,
  PersonaList,
  TimedWord,
  Upload,
  UploadList
} from "@lyre/client"

export type OutputFormat = "table" | "json"

export const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`

const pairs = (rows: ReadonlyArray<readonly [string, string]>): string => {
  const width = Math.max(...rows.map(([name]) => name.length))
  return rows.map(([name, value]) => `${name.padEnd(width)}  ${value}\n`).join("")
}

export const columns = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) => {
    const padded = cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
    return `${padded.join("  ").trimEnd()}\n`
  }
  return line(header) + rows.map(line).join("")
}

export const formatAccount = (account: Account): string =>
  pairs([
    ["account", account.id],
    ["plan", account.plan],
    [
      "credits",
      `${account.credits.total} (subscription ${account.credits.subscription}, one-time ${account.credits.onetime})`
    ],
    [
      "rate limits",
      `${account.rate_limits.requests_per_minute} requests/minute, ${account.rate_limits.concurrent_generations} generations at once`
    ],
    [
      "credential",
      account.auth.key === null
        ? account.auth.kind
        : `${account.auth.kind} ${account.auth.key.name} (${account.auth.key.id})`
    ],
    ["scopes", account.auth.scopes.join(" ")],
    ...(account.auth.key?.expires_at ? [["expires", account.auth.key.expires_at] as const] : [])
  ])

const duration = (seconds: number | null): string =>
  seconds === null ? "" : `${Math.floor(seconds / 60)}:${String(Math.round(seconds % 60)).padStart(2, "0")}`

export const formatTask = (task: GenerationTask): string => {
  const rows: Array<readonly [string, string]> = [
    ["id", task.id],
    ["status", task.status],
    ["model", task.model ?? ""],
    ["created", task.created_at],
    ["updated", task.updated_at],
    [
      "credits",
      task.credits_refunded > 0
        ? `${task.credits_used} used, ${task.credits_refunded} refunded`
        : `${task.credits_used} used`
    ]
  ]
  if (task.error !== null) rows.push(["error", `${task.error.message} (${task.error.code})`])
  const tracks =
    task.tracks.length === 0
      ? ""
      : "\n" +
        columns(
          ["#", "TITLE", "LENGTH", "AUDIO"],
          task.tracks.map((t) => [String(t.index), t.title ?? "", duration(t.duration), t.audio_url])
        )
  return pairs(rows) + tracks
}

export const formatList = (list: GenerationTaskList): string =>
  list.data.length === 0
    ? "No generations yet.\n"
    : columns(
        ["ID", "STATUS", "MODEL", "CREATED", "CREDITS", "TITLE"],
        list.data.map((t) => [
          t.id,
          t.status,
          t.model ?? "",
          t.created_at,
          String(t.credits_used - t.credits_refunded),
          t.tracks[0]?.title ?? ""
        ])
      ) + (list.has_more ? `More: lyre list --starting-after ${list.data.at(-1)?.id ?? ""}\n` : "")

export const formatBytes = (n: number): string =>
  n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(0)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`

/** A lyrics task: its fields, then each variation under its title, as a generation's `lyrics` takes it. */
export const formatLyricsTask = (task: LyricsTask): string => {
  const rows: Array<readonly [string, string]> = [
    ["id", task.id],
    ["status", task.status],
    [
      "credits",
      task.credits_refunded > 0
        ? `${task.credits_used} used, ${task.credits_refunded} refunded`
        : `${task.credits_used} used`
    ]
  ]
  if (task.error !== null) rows.push(["error", `${task.error.message} (${task.error.code})`])
  const variations = task.variations.map(
    (variation, index) => `\n# ${index + 1}. ${variation.title}\n\n${variation.text}\n`
  )
  return pairs(rows) + variations.join("")
}

export const formatExport = (found: Export): string => {
  const rows: Array<readonly [string, string]> = [
    ["id", found.id],
    ["status", found.status],
    ["format", found.format],
    ["track", found.track_id],
    ["task", found.task_id],
    ["created", found.created_at],
    [
      "credits",
      found.credits_refunded > 0
        ? `${found.credits_used} used, ${found.credits_refunded} refunded`
        : `${found.credits_used} used`
    ]
  ]
  if (found.error !== null) rows.push(["error", `${found.error.message} (${found.error.code})`])
  if (found.timed_lyrics !== null) rows.push(["words", String(found.timed_lyrics.length)])
  const files =
    found.files.length === 0
      ? ""
      : "\n" +
        columns(
          ["FILE", "STEM", "SIZE", "URL"],
          found.files.map((f) => [f.name, f.stem ?? "", formatBytes(f.bytes), f.url])
        )
  return pairs(rows) + files
}

/** `m:ss.xx`, a time a reader takes in at a glance. */
const clock = (seconds: number): string => {
  const centis = Math.max(0, Math.round(seconds * 100))
  return `${Math.floor(centis / 6000)}:${String(Math.floor(centis / 100) % 60).padStart(2, "0")}.${String(centis % 100).padStart(2, "0")}`
}

/** Timed lyrics for reading: one phrase a line, after the time its first word is sung. */
export const formatLyricLines = (lines: ReadonlyArray<ReadonlyArray<TimedWord>>): string =>
  lines.length === 0
    ? "No sung words.\n"
    : lines.map((line) => `${clock(line[0]?.start ?? 0).padStart(8)}  ${line.map((w) => w.text).join(" ")}\n`).join("")

/** An upload, and once listened to what was heard: tempo, key, metre, loudness, the chords. */
export const formatUpload = (upload: Upload): string => {
  const rows: Array<readonly [string, string]> = [
    ["id", upload.id],
    ["status", upload.status],
    ["title", upload.title ?? ""],
    ["type", upload.content_type],
    ["size", formatBytes(upload.bytes)],
    ["length", duration(upload.duration)],
    ["track", upload.track_id ?? ""],
    ["created", upload.created_at]
  ]
  const heard = upload.analysis
  if (heard !== null) {
    rows.push(
      ["tempo", `${Math.round(heard.bpm)} bpm, ${heard.time_signature}`],
      ["key", heard.key],
      ["loudness", `${heard.loudness_lufs.toFixed(1)} LUFS`],
      ["chords", chordLine(heard.chords)]
    )
  }
  if (upload.error !== null) rows.push(["error", `${upload.error.message} (${upload.error.code})`])
  return pairs(rows)
}

/** The chords as heard, a change at a time (`Am C G ...`), the first twelve. */
const chordLine = (chords: ReadonlyArray<{ readonly chord: string }>): string => {
  const changes = chords.map((c) => c.chord).filter((chord, i, all) => i === 0 || chord !== all[i - 1])
  return changes.length > 12 ? `${changes.slice(0, 12).join(" ")} …` : changes.join(" ")
}

export const formatUploadList = (list: UploadList): string =>
  list.data.length === 0
    ? "No uploads yet.\n"
    : columns(
        ["ID", "STATUS", "TRACK", "LENGTH", "KEY", "BPM", "TITLE"],
        list.data.map((u) => [
          u.id,
          u.status,
          u.track_id ?? "",
          duration(u.duration),
          u.analysis?.key ?? "",
          u.analysis === null ? "" : String(Math.round(u.analysis.bpm)),
          u.title ?? ""
        ])
      ) + (list.has_more ? `More: lyre uploads list --starting-after ${list.data.at(-1)?.id ?? ""}\n` : "")

export const formatPersona = (persona: Persona): string =>
  pairs([
    ["id", persona.id],
    ["name", persona.name],
    ["description", persona.description],
    ["track", persona.track_id],
    ["voice", persona.vocal_gender === null ? "(no vocals)" : persona.vocal_gender],
    ["created", persona.created_at]
  ])

export const formatPersonaList = (list: PersonaList): string =>
  list.data.length === 0
    ? "No personas yet.\n"
    : columns(
        ["ID", "NAME", "TRACK", "VOICE", "CREATED"],
        list.data.map((p) => [p.id, p.name, p.track_id, p.vocal_gender ?? "", p.created_at])
      ) + (list.has_more ? `More: lyre personas list --starting-after ${list.data.at(-1)?.id ?? ""}\n` : "")
