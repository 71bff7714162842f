/**
 * The stems in a small mixer: each part decoded, then played from one start time on one
 * AudioContext, so they stay in sync; a volume and a mute per stem, each its own GainNode.
 * Stopping and starting again makes new sources at the position reached (a source plays once).
 * A meter per stem reads what its gain lets through, so muting is seen, not only asked for.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { exportPriceOf } from "@lyre/core/domain/pricing"
import { decodeUrl } from "./audio.ts"
import { Awaited } from "../ui.tsx"
import type { Export, TrackExports } from "./exports.ts"
import { meterLevel, stopSources } from "./meter.ts"

interface Channel {
  readonly name: string
  readonly buffer: AudioBuffer
}

interface Level {
  readonly volume: number
  readonly muted: boolean
}

const gainOf = (level: Level): number => (level.muted ? 0 : level.volume / 100)

const Desk = (props: { readonly stems: Export; readonly title: string }) => {
  const [channels, setChannels] = useState<ReadonlyArray<Channel> | null>(null)
  const [failed, setFailed] = useState<string | null>(null)
  const [levels, setLevels] = useState<Readonly<Record<string, Level>>>({})
  const [playing, setPlaying] = useState(false)
  const [position, setPosition] = useState(0)
  const context = useRef<AudioContext | null>(null)
  const gains = useRef(new Map<string, { readonly gain: GainNode; readonly analyser: AnalyserNode }>())
  const [meters, setMeters] = useState<Readonly<Record<string, number>>>({})
  const sources = useRef<Array<AudioBufferSourceNode>>([])
  // Where the playhead was when the sources started, and the context's clock at that moment.
  const started = useRef({ offset: 0, at: 0 })

  useEffect(() => {
    const controller = new AbortController()
    Promise.all(
      props.stems.files.map(async (file) => ({
        name: file.stem ?? file.name,
        buffer: await decodeUrl(file.url, controller.signal)
      }))
    ).then(
      (decoded) => {
        setChannels(decoded)
        setLevels(Object.fromEntries(decoded.map((c) => [c.name, { volume: 80, muted: false }])))
      },
      (error: unknown) => {
        if (!controller.signal.aborted) setFailed(String(error))
      }
    )
    return () => {
      controller.abort()
      stopSources(sources.current)
      void context.current?.close()
    }
  }, [props.stems.id])

  const length = Math.max(0, ...(channels ?? []).map((c) => c.buffer.duration))

  useEffect(() => {
    if (!playing) return
    const samples = new Float32Array(2048)
    const timer = setInterval(() => {
      const ctx = context.current
      if (ctx !== null) setPosition(Math.min(length, started.current.offset + ctx.currentTime - started.current.at))
      const next: Record<string, number> = {}
      for (const [name, node] of gains.current) {
        next[name] = meterLevel(node.analyser, samples)
      }
      setMeters(next)
    }, 250)
    return () => clearInterval(timer)
  }, [playing, length])

  const stop = (): number => {
    const ctx = context.current
    const reached =
      ctx === null ? started.current.offset : started.current.offset + ctx.currentTime - started.current.at
    stopSources(sources.current)
    setMeters({})
    return Math.min(length, reached)
  }

  const play = async () => {
    if (channels === null) return
    context.current ??= new AudioContext()
    const ctx = context.current
    await ctx.resume()
    const offset = position >= length ? 0 : position
    // A little ahead, so every stem is scheduled before the first one sounds.
    const at = ctx.currentTime + 0.1
    sources.current = channels.map((channel) => {
      let node = gains.current.get(channel.name)
      if (node === undefined) {
        node = { gain: ctx.createGain(), analyser: ctx.createAnalyser() }
        node.analyser.fftSize = 2048
        node.gain.connect(node.analyser).connect(ctx.destination)
        gains.current.set(channel.name, node)
      }
      node.gain.gain.value = gainOf(levels[channel.name] ?? { volume: 80, muted: false })
      const source = ctx.createBufferSource()
      source.buffer = channel.buffer
      source.connect(node.gain)
      source.start(at, offset)
      return source
    })
    const first = sources.current[0]
    if (first !== undefined) {
      first.onended = () => {
        setPlaying(false)
        setPosition(length)
      }
    }
    started.current = { offset, at }
    setPlaying(true)
  }

  const setLevel = (name: string, level: Level) => {
    setLevels({ ...levels, [name]: level })
    const node = gains.current.get(name)
    if (node !== undefined && context.current !== null)
      node.gain.gain.setTargetAtTime(gainOf(level), context.current.currentTime, 0.01)
  }

  if (failed !== null) return <p class="problem">The stems could not be loaded: {failed}</p>
  if (channels === null)
    return (
      <p class="muted" aria-busy="true">
        Loading the stems…
      </p>
    )
  return (
    <div class="mixer" data-testid="mixer">
      <div class="row">
        <button
          type="button"
          class="primary"
          onClick={() => {
            if (playing) {
              setPosition(stop())
              setPlaying(false)
            } else void play()
          }}
        >
          {playing ? "Pause" : "Play"}
          <span class="sr-only"> the stems of {props.title}</span>
        </button>
        <span class="muted" role="timer" data-testid="mixer-position">
          {position.toFixed(1)} s of {length.toFixed(1)} s
        </span>
      </div>
      <ul class="plain">
        {channels.map((channel) => {
          const level = levels[channel.name] ?? { volume: 80, muted: false }
          return (
            <li key={channel.name} class="stem row" data-stem={channel.name} data-level={meters[channel.name] ?? 0}>
              <span class="stem-name">{channel.name}</span>
              <meter min={0} max={1} value={meters[channel.name] ?? 0} aria-label={`Level of ${channel.name}`} />
              <label class="grow">
                <span class="sr-only">Volume of {channel.name}</span>
                <input
                  type="range"
                  min={0}
                  max={100}
                  value={level.volume}
                  onInput={(e) => setLevel(channel.name, { ...level, volume: Number(e.currentTarget.value) })}
                />
              </label>
              <button
                type="button"
                aria-pressed={level.muted}
                onClick={() => setLevel(channel.name, { ...level, muted: !level.muted })}
              >
                Mute<span class="sr-only"> {channel.name}</span>
              </button>
            </li>
          )
        })}
      </ul>
    </div>
  )
}

export const Mixer = (props: { readonly title: string; readonly exports: TrackExports }) => {
  const found = props.exports.latest("stems")
  if (props.exports.exports === undefined) return <Awaited problem={props.exports.problem} />
  if (found === undefined) {
    return (
      <p>
        The mixer needs the track's stems.{" "}
        <button type="button" onClick={() => void props.exports.create("stems")}>
          Make the stems for {exportPriceOf.stems} credits
        </button>
      </p>
    )
  }
  if (found.status === "pending")
    return (
      <p class="muted" aria-busy="true">
        Rendering the stems…
      </p>
    )
  return <Desk stems={found} title={props.title} />
}
