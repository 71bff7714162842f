import { describe, expect, it } from "vitest"
import { type LyricsBrief, writeLyrics } from "../../src/index.ts"

const brief: LyricsBrief = {
  prompt: "a summer night drive by the sea, missing someone",
  style: "synthwave, 100 bpm",
  title: null,
  language: null,
  sections: null,
  fit: null,
  revise: null,
  seed: "lyt_test"
}

describe("the built-in lyricist", () => {
  it("writes two drafts, the same for the same brief", () => {
    const drafts = writeLyrics(brief)
    expect(drafts).toHaveLength(2)
    expect(writeLyrics(brief)).toEqual(drafts)
    for (const d of drafts) {
      expect(d.title.length).toBeGreaterThan(0)
      expect(d.text).toMatch(/^\[/)
      expect(d.text.length).toBeLessThanOrEqual(5000)
    }
  })
})
