import { describe, expect, it } from "vitest"
import { Effect, Logger, References } from "effect"
import { handBackWithin, makeLeaseBook, reportUnreturned, unreturnedMessage } from "../../src/index.ts"

/** Runs `effect` with a logger that keeps each line's message and annotations. */
const withLines = async <A>(effect: Effect.Effect<A>) => {
  const lines: Array<{ readonly message: unknown; readonly annotations: Readonly<Record<string, unknown>> }> = []
  const keep = Logger.make<unknown, void>(({ message, fiber }) => {
    lines.push({ message, annotations: fiber.getRef(References.CurrentLogAnnotations) })
  })
  const result = await Effect.runPromise(effect.pipe(Effect.provide(Logger.layer([keep]))))
  return { result, lines }
}

describe("the book of leases a process holds", () => {
  it("holds what claims took until it is freed, by kind", () => {
    const book = makeLeaseBook()
    book.hold("task", ["t1", "t2"])
    book.hold("delivery", ["d1"])
    book.free("task", ["t1"])
    expect(book.held("task")).toEqual(["t2"])
    expect(book.unreturned()).toEqual({ tasks: ["t2"], deliveries: ["d1"] })
    book.free("task", ["t2"])
    book.free("delivery", ["d1"])
    expect(book.unreturned()).toBeNull()
  })

  it("the drain's deadline is the first one set", () => {
    const book = makeLeaseBook()
    expect(book.deadline()).toBeNull()
    book.drainBy(1_000)
    book.drainBy(5_000)
    expect(book.deadline()).toBe(1_000)
  })
})

describe("a hand-back within the drain's time", () => {
  it("answers true when it completes, false when it fails", async () => {
    const book = makeLeaseBook()
    expect(await Effect.runPromise(handBackWithin(book, Effect.void))).toBe(true)
    expect(await Effect.runPromise(handBackWithin(book, Effect.die("refused")))).toBe(false)
    expect(await Effect.runPromise(handBackWithin(book, Effect.fail("refused")))).toBe(false)
  })

  it("is cut when the drain's time runs out, and not tried once it has", async () => {
    const book = makeLeaseBook()
    book.drainBy(Date.now() + 100)
    const started = performance.now()
    expect(await Effect.runPromise(handBackWithin(book, Effect.never))).toBe(false)
    expect(performance.now() - started).toBeLessThan(2_000)
    let tried = false
    expect(
      await Effect.runPromise(
        handBackWithin(
          book,
          Effect.sync(() => (tried = true))
        )
      )
    ).toBe(false)
    expect(tried).toBe(false)
  })
})

describe("the drain's one line", () => {
  it("names every lease still held, by kind, once", async () => {
    const book = makeLeaseBook()
    book.hold("task", ["t1", "t2"])
    book.hold("export", ["x1"])
    const first = await withLines(reportUnreturned(book))
    expect(first.result).toBe(false)
    expect(first.lines.map((line) => line.message)).toEqual([[unreturnedMessage]])
    expect(first.lines[0]?.annotations).toEqual({ tasks: ["t1", "t2"], exports: ["x1"] })
    const second = await withLines(reportUnreturned(book))
    expect(second.result).toBe(false)
    expect(second.lines).toEqual([])
  })

  it("says nothing when everything was handed back", async () => {
    const { result, lines } = await withLines(reportUnreturned(makeLeaseBook()))
    expect(result).toBe(true)
    expect(lines).toEqual([])
  })
})
