// A song generated from the built-in lyricist's words sings every word, in order: the timed
// lyrics of the track (the voice's own syllable schedule) list them all. One take is rendered,
// cut short, to show the words make a song as they stand.

import { describe, expect, it } from "vitest"
import { type EngineRequest, exportTrack, renderTrack, type TrackSource, writeLyrics } from "../../src/index.ts"

const words = (text: string): string[] =>
  text
    .split("\n")
    .filter((l) => !/^\s*\[/.test(l))
    .flatMap((l) => l.split(/[\s\-–—/]+/))
    .map((w) => w.toLowerCase().replace(/[^a-z']/g, ""))
    .filter((w) => w !== "")

describe("a song from the lyricist's words", () => {
  it("sings every word of both drafts in order, and renders", async () => {
    const style = "pop, female vocals"
    const drafts = writeLyrics({
      prompt: "dancing alone in the kitchen at midnight, happy again",
      style,
      title: null,
      language: null,
      sections: null,
      fit: null,
      revise: null,
      seed: "lyt_sound"
    })
    for (const [i, draft] of drafts.entries()) {
      const request: EngineRequest = {
        style,
        title: draft.title,
        lyrics: draft.text,
        instrumental: false,
        model: "echo"
      }
      const source: TrackSource = { request, taskId: `gen_lyricist_${i}`, index: 0 }
      const timed = await exportTrack(source, "timed_lyrics", {}, null)
      expect((timed.timedLyrics ?? []).map((w) => w.text.toLowerCase().replace(/[^a-z']/g, ""))).toEqual(
        words(draft.text)
      )
      if (i === 0) {
        const track = await renderTrack(request, source.taskId, 0, { maxSeconds: 6 })
        expect(track.mp3.length).toBeGreaterThan(10_000)
        expect(track.lyrics).toBe(draft.text)
        expect(track.title).toBe(draft.title)
      }
    }
  })
})
