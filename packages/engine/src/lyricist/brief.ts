// What the lyrics task asks the built-in lyricist for, and what it gives back.

import type { TrackSource } from "../types.ts"

/** The section names a brief may ask for, as the generate `lyrics` field tags them. */
export const LYRICS_SECTIONS = ["Intro", "Verse", "Pre-Chorus", "Chorus", "Bridge", "Outro", "Hook", "Break"] as const
export type LyricsSection = (typeof LYRICS_SECTIONS)[number]

export interface LyricsBrief {
  /** Theme, mood, story (1-1000 characters). */
  readonly prompt: string
  readonly style: string | null
  readonly title: string | null
  readonly language: string | null
  /** Section names from LYRICS_SECTIONS, in order; null for the style's own form. */
  readonly sections: ReadonlyArray<string> | null
  /** Write to this track's melody (its phrases, their notes). */
  readonly fit: TrackSource | null
  /** Revise these words by the instruction. */
  readonly revise: { readonly lyrics: string; readonly instruction: string } | null
  /** The task id: the same brief and seed give the same words. */
  readonly seed: string
}

export interface LyricsDraft {
  /** 1-200 characters. */
  readonly title: string
  /** In the form the generate `lyrics` field takes (`[Verse]`, `[Chorus]` headers), at most 5000 characters. */
  readonly text: string
}
