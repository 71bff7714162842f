/**
 * A developer's aid beside `profile-api.ts`: two CPU profiles of the same load (Lyre's and the
 * bare handler's, `PROFILE_DIR` with the same `PROFILE_RATE`), each cut to its last
 * `--seconds` before the process ended (the measured run; the service stops right after it),
 * and each function's self time per request in both, sorted by the difference. It answers
 * "where do Lyre's extra microseconds go" function by function rather than by package.
 *
 *   node bench/profile-diff.ts <lyre.cpuprofile> <bare.cpuprofile> --requests N --seconds S [--top 40]
 *
 * `--requests` is the requests of the measured run on each side (rate × seconds).
 */
import { readFileSync } from "node:fs"
import { basename } from "node:path"
import { parseArgs } from "node:util"
import { placeOf } from "./on-cpu.ts"
import type { CallFrame } from "./on-cpu.ts"

interface Profile {
  readonly nodes: ReadonlyArray<{ readonly id: number; readonly callFrame: CallFrame }>
  readonly startTime: number
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { requests: { type: "string" }, seconds: { type: "string" }, top: { type: "string", default: "40" } }
})
const [lyreFile, bareFile] = positionals
const requests = Number(values.requests)
const seconds = Number(values.seconds)
if (lyreFile === undefined || bareFile === undefined || !(requests > 0) || !(seconds > 0)) {
  process.stderr.write(
    "usage: node bench/profile-diff.ts <lyre.cpuprofile> <bare.cpuprofile> --requests N --seconds S [--top 40]\n"
  )
  process.exit(2)
}

/** Microseconds of self time per request by function, over the window before the profile's end. */
const selfTimes = (file: string): Map<string, number> => {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile
  const places = new Map(profile.nodes.map((node) => [node.id, placeOf(node.callFrame)]))
  const times: Array<number> = []
  let at = profile.startTime
  for (const delta of profile.timeDeltas) {
    at += delta
    times.push(at)
  }
  // The service is stopped just after the run: its last 0.3 s are the stop, not the load.
  const end = (times.at(-1) ?? 0) - 300_000
  const start = end - seconds * 1_000_000
  const counts = new Map<string, number>()
  let kept = 0
  profile.samples.forEach((id, index) => {
    const time = times[index] ?? 0
    if (time < start || time > end) return
    kept++
    const place = places.get(id) ?? "?"
    counts.set(place, (counts.get(place) ?? 0) + 1)
  })
  const microsPerSample = (seconds * 1_000_000) / Math.max(1, kept)
  return new Map([...counts].map(([place, count]) => [place, (count * microsPerSample) / requests]))
}

const lyre = selfTimes(lyreFile)
const bare = selfTimes(bareFile)
const busy = (times: Map<string, number>) =>
  [...times].reduce((sum, [place, micros]) => (place.startsWith("(idle)") ? sum : sum + micros), 0)
const rows = [...new Set([...lyre.keys(), ...bare.keys()])]
  .filter((place) => !place.startsWith("(idle)"))
  .map((place) => ({ place, lyre: lyre.get(place) ?? 0, bare: bare.get(place) ?? 0 }))
  .sort((a, b) => b.lyre - b.bare - (a.lyre - a.bare))
process.stdout.write(
  `${basename(lyreFile)} against ${basename(bareFile)}: busy ${busy(lyre).toFixed(1)} against ${busy(bare).toFixed(1)} µs/request ` +
    `(main thread, last ${seconds} s)\n  diff   lyre   bare  function\n`
)
for (const row of rows.slice(0, Number(values.top))) {
  process.stdout.write(
    `${(row.lyre - row.bare).toFixed(2).padStart(6)} ${row.lyre.toFixed(2).padStart(6)} ${row.bare.toFixed(2).padStart(6)}  ${row.place}\n`
  )
}
