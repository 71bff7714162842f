import { describe, expect, it } from "vitest"
import { defaultMaxIdleMillis, makeIdleRest } from "../../src/platform/IdleRest.ts"

describe("the rest of an idle polling loop", () => {
  it("doubles after each empty look up to its bound, and starts again after work", () => {
    const rest = makeIdleRest(100, 1_000)
    expect([rest.next(), rest.next(), rest.next(), rest.next(), rest.next(), rest.next()]).toEqual([
      100, 200, 400, 800, 1_000, 1_000
    ])
    rest.reset()
    expect([rest.next(), rest.next()]).toEqual([100, 200])
  })

  it("rests at most defaultMaxIdleMillis when no bound is given", () => {
    const rest = makeIdleRest(400)
    expect([rest.next(), rest.next(), rest.next()]).toEqual([400, 800, defaultMaxIdleMillis])
  })

  it("never rests less than its first rest, whatever bound it is given", () => {
    const rest = makeIdleRest(250, 100)
    expect([rest.next(), rest.next()]).toEqual([250, 250])
  })
})
