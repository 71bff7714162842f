/**
 * One take's player: its stream while the task is pending (heard while it is made, DESIGN.md
 * section 14), its final file once ready. The element stays when the address changes, so a
 * listener who started early goes on from where they were, playing if they were playing: the
 * final file holds the same audio as the stream, byte for byte from the engine.
 */
import { useEffect, useRef } from "preact/hooks"

export const TakePlayer = (props: { readonly src: string; readonly label: string }) => {
  const audio = useRef<HTMLAudioElement>(null)
  useEffect(() => {
    const element = audio.current
    if (element === null || element.getAttribute("src") === props.src) return
    const at = element.currentTime
    const playing = !element.paused
    element.src = props.src
    if (at === 0 && !playing) return
    element.addEventListener(
      "loadedmetadata",
      () => {
        element.currentTime = at
        if (playing) element.play().catch(() => undefined)
      },
      { once: true }
    )
    if (playing) element.play().catch(() => undefined)
  }, [props.src])
  // biome-ignore lint/a11y/useMediaCaption: a track's words are captioned by its Karaoke tool, which shows the timed lyrics as text beside its own player; a take being made has no words to caption yet.
  return <audio ref={audio} controls preload="none" aria-label={props.label} />
}
