/**
 * Effect's log lines (the worker's, outages', leases') in the server's JSON shape: one shape for
 * an operator's log pipeline, whichever part of the service wrote the line.
 */
import { Cause, Effect, Logger, References } from "effect"
import { describe, expect, it } from "vitest"
import { effectLinesOf, makeLogger } from "../../src/log.ts"
import type { LogLevel } from "../../src/log.ts"

const linesOf = async (minimum: LogLevel, program: Effect.Effect<void>) => {
  const lines: Array<Record<string, unknown>> = []
  const logger = makeLogger(minimum, (line) => lines.push(JSON.parse(line) as Record<string, unknown>))
  await Effect.runPromise(
    program.pipe(
      Effect.provide(Logger.layer([effectLinesOf(logger)])),
      Effect.provideService(References.MinimumLogLevel, "Debug")
    )
  )
  return lines
}

describe("Effect's log lines", () => {
  it("have the server's fields: time, a lower-case level, msg, then the annotations", async () => {
    const [line, ...rest] = await linesOf(
      "info",
      Effect.logInfo("worker started").pipe(Effect.annotateLogs({ worker_id: "vm:1:abc", concurrency: 64 }))
    )
    expect(rest).toEqual([])
    expect(line).toEqual({
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      level: "info",
      msg: "worker started",
      worker_id: "vm:1:abc",
      concurrency: 64
    })
    expect(Object.keys(line ?? {}).slice(0, 3)).toEqual(["time", "level", "msg"])
  })

  it("join a message's strings, take an object's fields, and write a failure as its cause", async () => {
    const lines = await linesOf(
      "debug",
      Effect.gen(function* () {
        yield* Effect.logWarning("persona refused by the provider", { detail: "too short" })
        yield* Effect.logError("webhooks: delivery failed", Cause.fail("connection refused"))
        yield* Effect.logFatal("stopping", 3)
        yield* Effect.logDebug("a detail")
      })
    )
    expect(lines.map((line) => [line["level"], line["msg"]])).toEqual([
      ["warn", "persona refused by the provider"],
      ["error", "webhooks: delivery failed"],
      ["error", "stopping"],
      ["debug", "a detail"]
    ])
    expect(lines[0]?.["detail"]).toBe("too short")
    expect(lines[1]?.["cause"]).toContain("connection refused")
    expect(lines[2]?.["details"]).toEqual([3])
  })

  it("keep to the operator's LOG_LEVEL", async () => {
    const lines = await linesOf(
      "warn",
      Effect.gen(function* () {
        yield* Effect.logInfo("worker started")
        yield* Effect.logWarning("redis unavailable")
      })
    )
    expect(lines.map((line) => line["msg"])).toEqual(["redis unavailable"])
  })
})
