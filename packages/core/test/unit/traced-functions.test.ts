import { describe, expect, it } from "vitest"
import { Effect, Option } from "effect"
import { fnTracedWhen } from "../../src/index.ts"

/** The name of the span a function's body runs in, if any. */
const spanNameInside = Effect.map(Effect.option(Effect.currentSpan), (span) =>
  Option.isSome(span) ? span.value.name : null
)

describe("functions traced only when traces are exported", () => {
  it("opens its named span when traced", async () => {
    const call = fnTracedWhen(
      true,
      "Generations.create"
    )(function* (n: number) {
      return { n, span: yield* spanNameInside }
    })
    expect(await Effect.runPromise(call(2))).toEqual({ n: 2, span: "Generations.create" })
  })

  it("opens no span, and runs the same body, when not traced", async () => {
    const call = fnTracedWhen(
      false,
      "Generations.create"
    )(function* (n: number) {
      return { n, span: yield* spanNameInside }
    })
    expect(await Effect.runPromise(call(2))).toEqual({ n: 2, span: null })
  })
})
