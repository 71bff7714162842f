/**
 * `isoTimestamp` writes what `Date.prototype.toISOString` writes, for every time it may be given
 * (decision 0117): its own calendar arithmetic for the years 1970-9999, `toISOString` itself
 * for the rest.
 */
import { describe, expect, it } from "vitest"
import { isoOfDate, isoTimestamp } from "../../src/domain/timestamps.ts"

const dayMillis = 86_400_000
const builtin = (millis: number): string => new Date(millis).toISOString()

/** The first time whose two formats differ, or undefined. */
const firstDifference = (times: Iterable<number>): number | undefined => {
  for (const millis of times) if (isoTimestamp(millis) !== builtin(millis)) return millis
  return undefined
}

describe("isoTimestamp", () => {
  it("writes every day from 1970 to 2500 as toISOString does, at a time of day that moves", () => {
    function* days() {
      // 7,919 ms a day later each day: over the range every hour, minute, second and millisecond turns up.
      for (let day = 0; day < 193_000; day++) yield day * dayMillis + ((day * 7_919) % dayMillis)
    }
    expect(firstDifference(days())).toBeUndefined()
  })

  it("writes times drawn across the years 1970-9999 as toISOString does", () => {
    function* drawn() {
      let seed = 0x2545f491
      for (let i = 0; i < 200_000; i++) {
        // xorshift: the same draws on every run, so a failure names a time that fails again.
        seed ^= seed << 13
        seed ^= seed >>> 17
        seed ^= seed << 5
        yield Math.floor(((seed >>> 0) / 0x1_0000_0000) * 253_402_300_800_000)
      }
    }
    expect(firstDifference(drawn())).toBeUndefined()
  })

  it("gets the edges of months, leap days and centuries right", () => {
    const edges = [
      "1970-01-01T00:00:00.000Z",
      "1972-02-29T23:59:59.999Z",
      "1972-03-01T00:00:00.000Z",
      "1999-12-31T23:59:59.999Z",
      "2000-02-29T12:00:00.000Z",
      "2000-03-01T00:00:00.001Z",
      "2100-02-28T23:59:59.999Z",
      "2100-03-01T00:00:00.000Z",
      "2400-02-29T00:00:00.000Z",
      "2026-11-30T03:41:07.512Z",
      "9999-12-31T23:59:59.999Z"
    ]
    for (const edge of edges) expect(isoTimestamp(Date.parse(edge))).toBe(edge)
    expect(isoOfDate(new Date("2026-11-30T03:41:07.512Z"))).toBe("2026-11-30T03:41:07.512Z")
  })

  it("leaves what it does not write to toISOString: before 1970, from the year 10000, a part of a millisecond", () => {
    for (const millis of [-1, -dayMillis * 365 * 3000 - 17, 253_402_300_800_000, 8.64e15, 1_700_000_000_000.5, -0]) {
      expect(isoTimestamp(millis)).toBe(builtin(millis))
    }
    expect(isoTimestamp(253_402_300_800_000)).toBe("+010000-01-01T00:00:00.000Z")
  })

  it("throws as toISOString does for a time that is not one", () => {
    for (const millis of [Number.NaN, Number.POSITIVE_INFINITY, 8.64e15 + 1]) {
      expect(() => isoTimestamp(millis)).toThrow(RangeError)
    }
  })
})
