/**
 * The order the suite's files start in: longest first, across every lane, from the durations
 * of a recorded run (`test/durations.json`, written by `scripts/test-durations.ts`).
 *
 * Vitest's own order sorts by lane name first and, in a fresh clone with no cache of earlier
 * runs, by file size within a lane: the sound lane's long renders then start last, and the run
 * ends with one of them working alone on one core. Starting the longest files first (the
 * classic longest-processing-time rule) leaves the short ones to fill both workers at the end.
 * A file the record does not know yet (new since it was written) starts first, as Vitest's own
 * order does, so that a long new file is never the last to start.
 */
import { readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { BaseSequencer } from "vitest/node"
import type { TestSpecification } from "vitest/node"

const root = join(import.meta.dirname, "..")

/** Seconds each file took in the recorded run, by its path from the repository's root. */
const recorded = JSON.parse(readFileSync(join(import.meta.dirname, "durations.json"), "utf8")) as Record<string, number>

export default class LongestFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const seconds = (spec: TestSpecification): number =>
      recorded[relative(root, spec.moduleId).split("\\").join("/")] ?? Number.POSITIVE_INFINITY
    return [...files].sort((a, b) => seconds(b) - seconds(a))
  }
}
