import { describe, expect, it } from "vitest"
import { titleFromStyle } from "../../src/title.ts"

describe("the title of a text-only message", () => {
  it("is the first five words of the style, capitalised", () => {
    expect(titleFromStyle("synthwave, 110 bpm, dreamy, neon")).toBe("Synthwave 110 Bpm Dreamy Neon")
    expect(titleFromStyle("a melancholic piano ballad about rain on glass")).toBe("A Melancholic Piano Ballad About")
  })

  it("stops at the first sentence or line", () => {
    expect(titleFromStyle("Lofi hip hop. Slow, with rain")).toBe("Lofi Hip Hop")
    expect(titleFromStyle("\n\n  dark techno\nwith a long description")).toBe("Dark Techno")
  })

  it("keeps letters of any script, apostrophes and hyphens", () => {
    expect(titleFromStyle("chanson française, rock'n'roll, lo-fi")).toBe("Chanson Française Rock'n'roll Lo-fi")
    expect(titleFromStyle("日本の ポップ")).toBe("日本の ポップ")
  })

  it("is never longer than 80 characters", () => {
    expect(titleFromStyle("supercalifragilistic".repeat(10)).length).toBe(80)
  })

  it("is Untitled when the style has no words", () => {
    expect(titleFromStyle("!!! ...")).toBe("Untitled")
    expect(titleFromStyle("")).toBe("Untitled")
  })
})
