/**
 * Writes `test/durations.json` from a Vitest JSON report: each test file's seconds, which
 * `test/sequencer.ts` reads to start the longest files first. Run after a whole run:
 *
 *   pnpm vitest run --reporter=json --outputFile=/tmp/run.json && node scripts/test-durations.ts /tmp/run.json
 *
 * Only the order matters, so a run on a loaded machine serves as well as one on an idle one.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

interface Report {
  readonly testResults: ReadonlyArray<{ readonly name: string; readonly startTime: number; readonly endTime: number }>
}

/** Every test file lives under packages/; the report names it by the path of the run's clone. */
const fromRoot = (path: string): string => path.slice(path.lastIndexOf("/packages/") + 1)

const [reportPath] = process.argv.slice(2)
if (reportPath === undefined) {
  process.stderr.write("usage: node scripts/test-durations.ts <vitest json report>\n")
  process.exit(2)
}
const root = join(import.meta.dirname, "..")
const report = JSON.parse(readFileSync(reportPath, "utf8")) as Report
const durations = Object.fromEntries(
  report.testResults
    // A file that failed before its first test has no time of its own: left out, it starts first.
    .filter((file) => file.endTime > file.startTime)
    .map((file) => [fromRoot(file.name), Math.round((file.endTime - file.startTime) / 100) / 10] as const)
    .sort(([a], [b]) => (a < b ? -1 : 1))
)
writeFileSync(join(root, "test/durations.json"), `${JSON.stringify(durations, null, 2)}\n`)
process.stdout.write(`test/durations.json: ${Object.keys(durations).length} files\n`)
