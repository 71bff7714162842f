// The built-in lyricist: words written offline to the form the engine would compose for a
// style (or to a track's own melody), deterministic for the same brief and seed. It drafts; a
// language model writes better (README, "The built-in lyricist").

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

const THEMES = ["light", "night", "road", "heart", "sky", "fire", "rain", "home"]

/** Two drafts for the brief. */
export function writeLyrics(brief: LyricsBrief): ReadonlyArray<LyricsDraft> {
  const words = brief.prompt
    .toLowerCase()
    .split(/[^a-z']+/)
    .filter((w) => w.length > 3)
  const theme = (i: number): string => words[i % Math.max(1, words.length)] ?? THEMES[i % THEMES.length] ?? "light"
  const sections = brief.sections ?? ["Verse", "Chorus", "Verse", "Chorus"]
  const draft = (k: number): LyricsDraft => {
    const blocks = sections.map((name, si) => {
      const sung = name !== "Intro" && name !== "Outro" && name !== "Break"
      const lines = sung ? [0, 1, 2, 3].map((l) => `we sing of ${theme(si + l + k)} tonight`) : []
      return [`[${name}]`, ...lines].join("\n")
    })
    return { title: brief.title ?? `Song of ${theme(k)}`, text: blocks.join("\n\n") }
  }
  return [draft(0), draft(1)]
}
