/**
 * The built-in engine's song tools against the render of the song they come from: for one
 * 2-minute sung song, the time of its original render (one take, as a worker runs it: synthesis,
 * mix, MP3, cover, PCM kept in the cache), then of each export (`wav` from the cache and, for
 * comparison, with no cache; `midi`, `timed_lyrics`, `stems`) and of one extension take, each
 * with its ratio to the original. Each job runs on this thread, one at a time, exactly as a
 * worker thread runs it; the figure is the thread's CPU time (steady on a shared machine), the
 * wall time beside it.
 *
 * Goals (issue 17): wav, midi and timed_lyrics under 10% of the original, stems under 150%.
 * The tasks on a track (issue 24: cover, vocals, instrumental, edit, a persona's song) are one
 * take each, beside the same original.
 * Run: node bench/engine-tools-bench.ts
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { runJob, type JobBody } from "../packages/engine/src/jobs.ts"
import type { PcmCacheOptions } from "../packages/engine/src/pcm-cache.ts"
import type { EngineRequest, TrackSource } from "../packages/engine/src/types.ts"

const LYRICS = `[Verse]
Neon lights are calling me tonight
Running through the city burning bright
Every window flickers like a star
Telling me how far we are
[Chorus]
Hold on, hold on to the night
We are young and we are alive
Hold on, hold on to the light
Never let it go tonight
[Verse]
Static on the radio again
Driving to the edge of where we end
Every shadow whispers out your name
Nothing ever stays the same
[Chorus]
[Bridge]
If the morning never comes
We will still be running
[Chorus]
[Outro]
Hold on to the night`

const song: EngineRequest = {
  style: "pop, 100 bpm, in C major, piano, synth, drums",
  title: "Two Minutes",
  lyrics: LYRICS,
  instrumental: false,
  model: "aether"
}
const dir = mkdtempSync(join(tmpdir(), "lyre-engine-tools-bench-"))
const cache: PcmCacheOptions = { dir, maxBytes: 2 * 1024 ** 3 }

interface Timing {
  readonly cpu: number
  readonly wall: number
}

let nextId = 1
async function time(
  body: JobBody,
  withCache: PcmCacheOptions | null,
  options: { readonly maxSeconds?: number } = {}
): Promise<Timing> {
  const c = process.threadCpuUsage()
  const t = performance.now()
  await runJob({ ...body, id: nextId++, options, cache: withCache })
  const d = process.threadCpuUsage(c)
  return { cpu: (d.user + d.system) / 1e6, wall: (performance.now() - t) / 1000 }
}

export async function engineToolsBench(log: (line: string) => void = console.log): Promise<Record<string, number>> {
  try {
    // Warm-up (JIT, the WASM encoder) on a short song, through every kind of job.
    const warm: TrackSource = { request: { ...song, title: "warm" }, taskId: "warm", index: 0 }
    await time({ kind: "render", request: warm.request, taskId: warm.taskId, index: 0 }, cache, { maxSeconds: 10 })
    for (const format of ["wav", "midi", "timed_lyrics", "stems"] as const)
      await time({ kind: "export", source: warm, format }, cache, { maxSeconds: 10 })
    await time(
      {
        kind: "extend",
        source: { request: warm.request, taskId: "warm-ext", index: 0, extends: { source: warm, continueAt: 5 } }
      },
      cache,
      { maxSeconds: 10 }
    )

    const source: TrackSource = { request: song, taskId: "bench-tools", index: 0 }
    const original = await time({ kind: "render", request: song, taskId: source.taskId, index: 0 }, cache)
    log(
      `original render (one take, ~2-minute song): ${original.cpu.toFixed(2)} s CPU (${original.wall.toFixed(2)} s wall)`
    )
    const figures: Record<string, number> = { original: original.cpu }
    const rows: ReadonlyArray<readonly [string, JobBody, PcmCacheOptions | null, number | null]> = [
      ["wav (PCM cache hit)", { kind: "export", source, format: "wav" }, cache, 0.1],
      ["wav (no cache: rendered again)", { kind: "export", source, format: "wav" }, null, null],
      ["midi", { kind: "export", source, format: "midi" }, cache, 0.1],
      ["timed_lyrics", { kind: "export", source, format: "timed_lyrics" }, cache, 0.1],
      ["stems", { kind: "export", source, format: "stems" }, cache, 1.5],
      [
        "extension take (continue_at 60 s)",
        {
          kind: "extend",
          source: { request: song, taskId: "bench-tools-ext", index: 0, extends: { source, continueAt: 60 } }
        },
        cache,
        null
      ],
      // Tasks on a track (src/arrange/): one take each, as the worker renders it.
      [
        "cover take (bossa nova, 130 bpm)",
        {
          kind: "arrange",
          source: {
            request: { ...song, style: "bossa nova, acoustic guitar, 130 bpm" },
            taskId: "bench-cover",
            index: 0,
            derives: { kind: "cover", source }
          }
        },
        cache,
        null
      ],
      [
        "vocals take (new words)",
        {
          kind: "arrange",
          source: {
            request: { ...song, lyrics: "[Verse]\nMorning comes in silver light\nWe were dancing through the night" },
            taskId: "bench-vocals",
            index: 0,
            derives: { kind: "vocals", source }
          }
        },
        cache,
        null
      ],
      [
        "instrumental take (jazz trio)",
        {
          kind: "arrange",
          source: {
            request: { ...song, style: "jazz trio, piano, upright bass" },
            taskId: "bench-instrumental",
            index: 0,
            derives: { kind: "instrumental", source }
          }
        },
        cache,
        null
      ],
      [
        "edit take (20 s span, new words)",
        {
          kind: "arrange",
          source: {
            request: { ...song, lyrics: "Glass and fire" },
            taskId: "bench-edit",
            index: 0,
            derives: { kind: "edit", source, start: 30, end: 50 }
          }
        },
        cache,
        null
      ],
      [
        "persona song take",
        {
          kind: "arrange",
          source: {
            request: { ...song, style: "folk, acoustic guitar", title: "Other" },
            taskId: "bench-persona",
            index: 0,
            persona: source
          }
        },
        cache,
        null
      ]
    ]
    for (const [name, body, withCache, goal] of rows) {
      const t = await time(body, withCache)
      const ratio = t.cpu / original.cpu
      const verdict = goal === null ? "" : ` (goal < ${(goal * 100).toFixed(0)}%: ${ratio < goal ? "met" : "NOT met"})`
      log(
        `  ${name.padEnd(34)} ${t.cpu.toFixed(3).padStart(7)} s CPU (${t.wall.toFixed(3)} s wall) = ${(ratio * 100).toFixed(1).padStart(5)}% of the original${verdict}`
      )
      figures[name] = t.cpu
    }
    return figures
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.main) await engineToolsBench()
