/** Export: each format with its price; a pending export is followed, a ready one is downloaded. */
import { useState } from "preact/hooks"
import { exportFormats } from "@lyre/core/domain/models"
import type { ExportFormat } from "@lyre/core/domain/models"
import { exportPriceOf } from "@lyre/core/domain/pricing"
import { Problem } from "../ui.tsx"
import type { TrackExports } from "./exports.ts"

export const formatLabel: Readonly<Record<ExportFormat, string>> = {
  wav: "WAV",
  midi: "MIDI",
  stems: "Stems",
  timed_lyrics: "Timed lyrics"
}

const sizeOf = (bytes: number): string =>
  bytes < 1024 * 1024 ? `${Math.max(1, Math.round(bytes / 1024))} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`

export const ExportPanel = (props: {
  readonly trackTitle: string
  readonly hasLyrics: boolean
  readonly exports: TrackExports
}) => {
  const [busy, setBusy] = useState<ExportFormat | null>(null)
  const formats = exportFormats.filter((format) => format !== "timed_lyrics" || props.hasLyrics)
  return (
    <div class="exports">
      <ul class="plain">
        {formats.map((format) => {
          const found = props.exports.latest(format)
          const failed = props.exports.exports?.find((e) => e.format === format)
          return (
            <li key={format} class="export" data-format={format} data-status={found?.status ?? "none"}>
              <div class="row">
                <strong>{formatLabel[format]}</strong>
                {found === undefined ? (
                  <button
                    type="button"
                    disabled={busy !== null || props.exports.exports === undefined}
                    onClick={async () => {
                      setBusy(format)
                      await props.exports.create(format)
                      setBusy(null)
                    }}
                  >
                    Export {formatLabel[format]}
                    <span class="sr-only"> of {props.trackTitle}</span> for {exportPriceOf[format]} credits
                  </button>
                ) : (
                  <span class={`status ${found.status}`}>{found.status}</span>
                )}
                {found === undefined && failed?.status === "failed" && (
                  <span class="problem">
                    The last one failed: {failed.error?.message} ({failed.credits_refunded} credits refunded)
                  </span>
                )}
              </div>
              {found?.status === "ready" && found.files.length > 0 && (
                <ul class="files">
                  {found.files.map((file) => (
                    <li key={file.url}>
                      <a href={file.url} download={file.name}>
                        {file.stem ?? file.name}
                        <span class="sr-only">
                          {" "}
                          ({formatLabel[format]} of {props.trackTitle})
                        </span>
                      </a>{" "}
                      <span class="muted">{sizeOf(file.bytes)}</span>
                    </li>
                  ))}
                </ul>
              )}
            </li>
          )
        })}
      </ul>
      <Problem problem={props.exports.problem} />
    </div>
  )
}
