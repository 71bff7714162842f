// What song.ts and src/arrange/ share without importing each other: how a track's takes are
// laid out in time (Segment), how two renders are spliced, and the reader of tracks that
// song.ts hands the arrangers (a track is read through its own chain of takes, whatever made it).

import type { PcmCacheOptions } from "./pcm-cache.ts"
import type { Take } from "./render.ts"
import { SR } from "./synth/dsp.ts"
import type { RenderOptions, TrackSource } from "./types.ts"

/** Seconds over which the source hands over to its continuation, just after `continueAt`. */
export const CROSSFADE_SECONDS = 0.08

export interface Segment {
  readonly take: Take
  /** Track time (s) of the take's own time 0. */
  readonly offset: number
  /** Track time (s) from which this take is heard. */
  readonly from: number
  /** Track time (s) up to which it is heard (the next take's `from`, or the end of its render). */
  readonly until: number
  /** The render options of this take: the original take is cut by maxSeconds, continuations never are. */
  readonly options: RenderOptions
}

/** How a track is read: its takes in order, and its 16-bit PCM as a WAV file. */
export interface TrackReader {
  readonly segmentsOf: (source: TrackSource, options: RenderOptions) => ReadonlyArray<Segment>
  readonly trackWav: (source: TrackSource, options: RenderOptions, cache: PcmCacheOptions | null) => Promise<Uint8Array>
}

export interface Stereo {
  readonly left: Float32Array
  readonly right: Float32Array
}

/**
 * `head` up to `at` seconds, then `tail` (whose time 0 sits at `offset` seconds), crossfading
 * linearly over CROSSFADE_SECONDS just after `at`: the head is exact up to `at`, and being linear
 * the splice of stems adds up to the splice of their mix.
 */
function splice(head: Float32Array, tail: Float32Array, at: number, offset: number): Float32Array {
  const a = Math.round(at * SR)
  const o = Math.round(offset * SR)
  const n = o + tail.length
  const x = Math.round(CROSSFADE_SECONDS * SR)
  const out = new Float32Array(n)
  out.set(head.subarray(0, Math.min(a, head.length)))
  for (let i = a; i < n; i++) {
    const w = i - a >= x ? 1 : (i - a) / x
    const h = i < head.length ? (head[i] as number) : 0
    const t = i >= o ? (tail[i - o] as number) : 0
    out[i] = h + (t - h) * w
  }
  return out
}

export function spliceStereo(head: Stereo, tail: Stereo, at: number, offset: number): Stereo {
  return { left: splice(head.left, tail.left, at, offset), right: splice(head.right, tail.right, at, offset) }
}

export interface NamedStereo extends Stereo {
  readonly name: string
}

/**
 * Two tracks' stems spliced name by name as their mixes are (`join` is the mix's splice); a part
 * one side lacks is silent on that side. The splice being linear, the stems still add up.
 */
export function spliceStems(
  head: ReadonlyArray<NamedStereo>,
  tail: ReadonlyArray<NamedStereo>,
  join: (head: Stereo, tail: Stereo) => Stereo
): ReadonlyArray<NamedStereo> {
  const silentLike = (side: ReadonlyArray<NamedStereo>): Stereo => {
    const n = side[0]?.left.length ?? 0
    return { left: new Float32Array(n), right: new Float32Array(n) }
  }
  const names = [...new Set([...head, ...tail].map((s) => s.name))]
  return names.map((name) => ({
    name,
    ...join(
      head.find((s) => s.name === name) ?? silentLike(head),
      tail.find((s) => s.name === name) ?? silentLike(tail)
    )
  }))
}
