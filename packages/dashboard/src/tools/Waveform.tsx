/**
 * A track's waveform, decoded in the browser (tools/audio.ts), drawn on a canvas with what a
 * tool marks on it: the point an extension continues from, the span an edit makes again, or the
 * chords listening heard. The canvas is an image with a text alternative; whatever is picked on
 * it with the pointer can be picked with the keyboard in the form beside it.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { decodeUrl, peaksOf } from "./audio.ts"

const bars = 160

export type Mark =
  | { readonly kind: "point"; readonly at: number }
  | { readonly kind: "span"; readonly start: number; readonly end: number }
  | {
      readonly kind: "chords"
      readonly chords: ReadonlyArray<{ readonly start: number; readonly end: number; readonly chord: string }>
    }

const colour = (element: Element, name: string, fallback: string): string =>
  getComputedStyle(element).getPropertyValue(name).trim() || fallback

const draw = (element: HTMLCanvasElement, peaks: ReadonlyArray<number> | null, duration: number, mark: Mark) => {
  const context = element.getContext("2d")
  if (context === null) return
  const width = element.clientWidth
  const height = element.clientHeight
  const scale = devicePixelRatio
  element.width = Math.round(width * scale)
  element.height = Math.round(height * scale)
  context.scale(scale, scale)
  context.clearRect(0, 0, width, height)
  const accent = colour(element, "--accent", "#3446c9")
  const line = colour(element, "--line", "#d5d8de")
  const ink = colour(element, "--ink", "#1b1d23")
  const x = (seconds: number) => (duration > 0 ? (seconds / duration) * width : 0)
  const lit = (at: number): boolean =>
    mark.kind === "point" ? at < x(mark.at) : mark.kind === "span" ? at >= x(mark.start) && at <= x(mark.end) : true
  const step = width / bars
  const chordBand = mark.kind === "chords" ? 18 : 0
  const waveHeight = height - chordBand
  for (const [i, peak] of (peaks ?? Array.from({ length: bars }, () => 0.04)).entries()) {
    const h = Math.max(1, peak * (waveHeight - 4))
    context.fillStyle = lit(i * step) ? accent : line
    context.fillRect(i * step, chordBand + (waveHeight - h) / 2, Math.max(1, step - 1), h)
  }
  context.fillStyle = "#b3261e"
  if (mark.kind === "point") context.fillRect(Math.min(width - 2, Math.max(0, x(mark.at) - 1)), 0, 2, height)
  if (mark.kind === "span") {
    for (const edge of [mark.start, mark.end])
      context.fillRect(Math.min(width - 2, Math.max(0, x(edge) - 1)), 0, 2, height)
  }
  if (mark.kind === "chords") {
    context.font = "12px system-ui, sans-serif"
    context.textBaseline = "top"
    let lastLabelEnd = -Infinity
    for (const span of mark.chords) {
      const left = x(span.start)
      context.fillStyle = line
      context.fillRect(left, 0, 1, height)
      // A label that would overlap the one before is left out; the list beside the canvas has them all.
      const label = span.chord === "N" ? "" : span.chord
      const labelWidth = context.measureText(label).width
      if (label !== "" && left + 2 > lastLabelEnd && left + 2 + labelWidth < width) {
        context.fillStyle = ink
        context.fillText(label, left + 2, 2)
        lastLabelEnd = left + 2 + labelWidth + 4
      }
    }
  }
}

export const Waveform = (props: {
  readonly audioUrl: string
  readonly duration: number
  readonly mark: Mark
  readonly label: string
  /** A click on the waveform, in seconds of the track (to the half second). */
  readonly onPick?: (seconds: number) => void
}) => {
  const canvas = useRef<HTMLCanvasElement>(null)
  const [peaks, setPeaks] = useState<ReadonlyArray<number> | null>(null)
  const [failed, setFailed] = useState(false)
  useEffect(() => {
    const controller = new AbortController()
    decodeUrl(props.audioUrl, controller.signal).then(
      (buffer) => setPeaks(peaksOf(buffer, bars)),
      () => {
        if (!controller.signal.aborted) setFailed(true)
      }
    )
    return () => controller.abort()
  }, [props.audioUrl])
  useEffect(() => {
    if (canvas.current !== null) draw(canvas.current, peaks, props.duration, props.mark)
  }, [peaks, props.duration, props.mark])
  const pick = props.onPick
  return (
    <canvas
      ref={canvas}
      class={props.mark.kind === "chords" ? "waveform chords" : "waveform"}
      role="img"
      data-testid="waveform"
      data-loaded={peaks !== null ? "true" : failed ? "failed" : "false"}
      aria-label={props.label}
      onClick={
        pick === undefined
          ? undefined
          : (event) => {
              const box = event.currentTarget.getBoundingClientRect()
              const share = Math.min(1, Math.max(0, (event.clientX - box.left) / box.width))
              pick(Math.round(share * props.duration * 2) / 2)
            }
      }
    />
  )
}
