/**
 * A/B: a cover or an edit against its source. Both are decoded and started together on one
 * AudioContext, each through its own gain; A and B only swap which gain is open, so a switch
 * lands at the same moment of the song, with no seek and no gap. A meter per side reads what
 * its gain lets through, so the switch is seen on the graph itself, not only on the buttons.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { decodeUrl } from "./audio.ts"
import { meterLevel, stopSources } from "./meter.ts"

interface Side {
  readonly name: "A" | "B"
  readonly label: string
  readonly url: string
}

type Heard = "A" | "B"

export const ABPlayer = (props: { readonly a: Side; readonly b: Side }) => {
  const [buffers, setBuffers] = useState<{ readonly A: AudioBuffer; readonly B: AudioBuffer } | null>(null)
  const [failed, setFailed] = useState<string | null>(null)
  const [heard, setHeard] = useState<Heard>("B")
  const [playing, setPlaying] = useState(false)
  const [position, setPosition] = useState(0)
  const [levels, setLevels] = useState<Readonly<Record<Heard, number>>>({ A: 0, B: 0 })
  const context = useRef<AudioContext | null>(null)
  const nodes = useRef<Partial<Record<Heard, { readonly gain: GainNode; readonly analyser: AnalyserNode }>>>({})
  const sources = useRef<Array<AudioBufferSourceNode>>([])
  const started = useRef({ offset: 0, at: 0 })

  useEffect(() => {
    const controller = new AbortController()
    Promise.all([decodeUrl(props.a.url, controller.signal), decodeUrl(props.b.url, controller.signal)]).then(
      ([A, B]) => setBuffers({ A, B }),
      (error: unknown) => {
        if (!controller.signal.aborted) setFailed(String(error))
      }
    )
    return () => {
      controller.abort()
      stopSources(sources.current)
      void context.current?.close()
    }
  }, [props.a.url, props.b.url])

  const length = buffers === null ? 0 : Math.max(buffers.A.duration, buffers.B.duration)
  const now = (): number => {
    const ctx = context.current
    return ctx === null
      ? started.current.offset
      : Math.min(length, started.current.offset + ctx.currentTime - started.current.at)
  }

  useEffect(() => {
    if (!playing) return
    const samples = new Float32Array(2048)
    const timer = setInterval(() => {
      setPosition(now())
      const next = { A: 0, B: 0 }
      for (const side of ["A", "B"] as const) {
        const node = nodes.current[side]
        if (node === undefined) continue
        next[side] = meterLevel(node.analyser, samples)
      }
      setLevels(next)
    }, 200)
    return () => clearInterval(timer)
  }, [playing, length])

  const stop = () => {
    stopSources(sources.current)
  }

  const play = async () => {
    if (buffers === null) return
    context.current ??= new AudioContext()
    const ctx = context.current
    await ctx.resume()
    const offset = position >= length ? 0 : position
    const at = ctx.currentTime + 0.1
    sources.current = (["A", "B"] as const).map((side) => {
      let node = nodes.current[side]
      if (node === undefined) {
        node = { gain: ctx.createGain(), analyser: ctx.createAnalyser() }
        node.analyser.fftSize = 2048
        node.gain.connect(node.analyser).connect(ctx.destination)
        nodes.current[side] = node
      }
      node.gain.gain.value = side === heard ? 1 : 0
      const source = ctx.createBufferSource()
      source.buffer = buffers[side]
      source.connect(node.gain)
      source.start(at, Math.min(offset, buffers[side].duration))
      return source
    })
    const longest = buffers.A.duration >= buffers.B.duration ? sources.current[0] : sources.current[1]
    if (longest !== undefined) {
      longest.onended = () => {
        setPlaying(false)
        setPosition(length)
      }
    }
    started.current = { offset, at }
    setPlaying(true)
  }

  const choose = (side: Heard) => {
    setHeard(side)
    const ctx = context.current
    if (ctx === null) return
    // A short ramp, so the switch makes no click; both keep running, so the moment is the same.
    for (const other of ["A", "B"] as const)
      nodes.current[other]?.gain.gain.setTargetAtTime(other === side ? 1 : 0, ctx.currentTime, 0.005)
  }

  if (failed !== null) return <p class="problem">The two versions could not be loaded: {failed}</p>
  if (buffers === null)
    return (
      <p class="muted" aria-busy="true">
        Loading both versions…
      </p>
    )
  return (
    <div class="ab" data-testid="ab-player" data-heard={heard} data-position={position.toFixed(2)}>
      <div class="row">
        <button
          type="button"
          class="primary"
          onClick={() => {
            if (playing) {
              setPosition(now())
              stop()
              setPlaying(false)
            } else void play()
          }}
        >
          {playing ? "Pause" : "Play"}
          <span class="sr-only"> both versions</span>
        </button>
        {/* biome-ignore lint/a11y/useSemanticElements: two toggle buttons, not a form's fields: a fieldset would draw the forms' border (styles.css). */}
        <div role="group" aria-label="Hear" class="row">
          {[props.a, props.b].map((side) => (
            <button key={side.name} type="button" aria-pressed={heard === side.name} onClick={() => choose(side.name)}>
              {side.name}: {side.label}
            </button>
          ))}
        </div>
        <span class="muted" data-testid="ab-position">
          {position.toFixed(1)} s of {length.toFixed(1)} s
        </span>
      </div>
      <div class="row">
        {[props.a, props.b].map((side) => (
          <span key={side.name} class="row" data-side={side.name} data-level={levels[side.name]}>
            <meter min={0} max={1} value={levels[side.name]} aria-label={`Level of ${side.name}`} /> {side.name}
          </span>
        ))}
      </div>
    </div>
  )
}
