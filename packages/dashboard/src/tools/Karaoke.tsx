/**
 * Karaoke: the track plays and the word being sung is highlighted, from the timed-lyrics export
 * (the singer's own schedule on the built-in engine). The words are grouped into phrases by
 * core's own rule, the one the `.lrc` and WebVTT files use.
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks"
import { lyricLines } from "@lyre/core/domain/exports"
import type { TimedWord } from "@lyre/core/domain/models"
import { exportPriceOf } from "@lyre/core/domain/pricing"
import type { Outputs } from "../api.ts"
import { Awaited } from "../ui.tsx"
import type { TrackExports } from "./exports.ts"

type Track = Outputs["generations"]["get"]["tracks"][number]

/** How long a word stays lit after its end when the next has not begun (a held note, a breath). */
const holdSeconds = 0.75

/** The index of the last word started by `time` (-1 before the first). */
const lastStarted = (words: ReadonlyArray<TimedWord>, time: number): number => {
  let low = 0
  let high = words.length - 1
  let found = -1
  while (low <= high) {
    const mid = (low + high) >> 1
    if ((words[mid]?.start ?? Infinity) <= time) {
      found = mid
      low = mid + 1
    } else high = mid - 1
  }
  return found
}

/**
 * The words sung by `time` and the one being sung now: the last one started, until the next
 * begins or, in an instrumental passage, a little after its end (then none is lit).
 */
export const wordAt = (
  words: ReadonlyArray<TimedWord>,
  time: number
): { readonly reached: number; readonly now: number } => {
  const reached = lastStarted(words, time)
  const word = words[reached]
  return { reached, now: word !== undefined && time <= word.end + holdSeconds ? reached : -1 }
}

const Lyrics = (props: { readonly track: Track; readonly words: ReadonlyArray<TimedWord> }) => {
  const audio = useRef<HTMLAudioElement>(null)
  const box = useRef<HTMLElement>(null)
  const [position, setPosition] = useState({ reached: -1, now: -1 })
  const lines = useMemo(() => {
    let n = 0
    return lyricLines(props.words).map((line) => line.map((word) => ({ word, index: n++ })))
  }, [props.words])
  useEffect(() => {
    const element = audio.current
    if (element === null) return
    let frame = 0
    const update = () => {
      const next = wordAt(props.words, element.currentTime)
      setPosition((last) => (last.reached === next.reached && last.now === next.now ? last : next))
    }
    // timeupdate comes four times a second; while playing, every frame keeps the highlight on the beat.
    const tick = () => {
      update()
      frame = requestAnimationFrame(tick)
    }
    const play = () => {
      cancelAnimationFrame(frame)
      frame = requestAnimationFrame(tick)
    }
    const stop = () => {
      cancelAnimationFrame(frame)
      update()
    }
    element.addEventListener("timeupdate", update)
    element.addEventListener("seeked", update)
    element.addEventListener("play", play)
    element.addEventListener("pause", stop)
    element.addEventListener("ended", stop)
    return () => {
      cancelAnimationFrame(frame)
      element.removeEventListener("timeupdate", update)
      element.removeEventListener("seeked", update)
      element.removeEventListener("play", play)
      element.removeEventListener("pause", stop)
      element.removeEventListener("ended", stop)
    }
  }, [props.words])
  useEffect(() => {
    const line = box.current?.querySelector<HTMLElement>("[aria-current='true']")?.parentElement
    const container = box.current
    if (line === null || line === undefined || container === null) return
    // Scrolls the lyrics box only, never the page.
    container.scrollTop = line.offsetTop - container.offsetTop - container.clientHeight / 3
  }, [position.now])
  return (
    <div class="karaoke">
      {/* biome-ignore lint/a11y/useMediaCaption: the lyrics are the captions, shown as text beside the player and lit word by word as it plays. */}
      <audio
        ref={audio}
        controls
        preload="metadata"
        src={props.track.audio_url}
        aria-label={`Play ${props.track.title ?? "the track"} with its lyrics`}
      />
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a region that scrolls takes focus, else keyboard users could not scroll it (axe's scrollable-region-focusable). */}
      <section class="lyrics" ref={box} data-testid="karaoke-lyrics" aria-label="Lyrics" tabIndex={0}>
        {lines.map((line) => (
          <p key={line[0]?.index}>
            {line.map(({ word, index }) => (
              <span
                key={index}
                class={index === position.now ? "word now" : index <= position.reached ? "word sung" : "word"}
                aria-current={index === position.now ? "true" : undefined}
                data-start={word.start}
                data-end={word.end}
              >
                {word.text}{" "}
              </span>
            ))}
          </p>
        ))}
      </section>
    </div>
  )
}

export const Karaoke = (props: { readonly track: Track; readonly exports: TrackExports }) => {
  const found = props.exports.latest("timed_lyrics")
  if (props.exports.exports === undefined) return <Awaited problem={props.exports.problem} />
  if (found === undefined) {
    return (
      <p>
        The karaoke view needs the track's timed lyrics.{" "}
        <button type="button" onClick={() => void props.exports.create("timed_lyrics")}>
          Make the timed lyrics for {exportPriceOf.timed_lyrics} credits
        </button>
      </p>
    )
  }
  if (found.status === "pending")
    return (
      <p class="muted" aria-busy="true">
        Timing the lyrics…
      </p>
    )
  return <Lyrics track={props.track} words={found.timed_lyrics ?? []} />
}
