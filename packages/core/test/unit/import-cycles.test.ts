import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { importCycles } from "../../../../scripts/import-cycles.ts"

describe("module layout", () => {
  it("has no import circle among the packages' sources", () => {
    expect(importCycles(fileURLToPath(new URL("../../../..", import.meta.url)))).toEqual([])
  })
})
