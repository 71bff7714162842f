/**
 * Content credentials against the work they sign, in the same run: the built-in engine renders
 * one take (its CPU time is the baseline), then that take's MP3 is signed as re-hosting signs it
 * (disclosure tag, manifest, COSE signature: `ContentCredentials.sign`), and a WAV export of the
 * same length too; each signing's CPU time and wall time beside the render's, and beside a plain
 * write of the same bytes to a file (the re-hosting it adds to).
 *
 * Goals (issue 52): signing under 5% of a render's CPU; under 50 ms added to re-hosting a file.
 * Run: node bench/content-credentials-bench.ts
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { cpuUsage } from "node:process"
import { Effect } from "effect"
import { ContentCredentials } from "../packages/core/src/index.ts"
import type { FileOrigin } from "../packages/core/src/index.ts"
import { runJob } from "../packages/engine/src/jobs.ts"
import type { EngineRequest } from "../packages/engine/src/types.ts"
import { pcmWav } from "../packages/provenance/test/support/audio.ts"

const song: EngineRequest = {
  style: "pop, 100 bpm, in C major, piano, synth, drums",
  title: "Credentials Bench",
  lyrics: "[Verse]\nNeon lights are calling me tonight\n[Chorus]\nHold on, hold on to the night",
  instrumental: false,
  model: "aether"
}

const measure = async <T>(work: () => Promise<T>) => {
  const before = cpuUsage()
  const started = performance.now()
  const value = await work()
  const used = cpuUsage(before)
  return { value, cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - started }
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? 0
}

const origin: FileOrigin = { work: "song", model: "aether", maker: "engine", userAudio: false, source: null }

const credentials = await Effect.runPromise(
  ContentCredentials.pipe(Effect.provide(ContentCredentials.layerEphemeral({ name: "Lyre", version: "bench" })))
)
const render = (taskId: string, maxSeconds?: number) =>
  runJob({
    kind: "render",
    request: song,
    taskId,
    index: 0,
    id: 1,
    options: maxSeconds === undefined ? {} : { maxSeconds },
    cache: null
  })
await render("credentials-warm", 5)
const rendered = await measure(() => render("credentials-bench", 60))
if (rendered.value.kind !== "track") throw new Error("the render answered no track")
const mp3 = rendered.value.track.mp3
const seconds = rendered.value.track.duration
console.log(
  `render (one take, ${seconds.toFixed(1)} s): ${rendered.cpuMs.toFixed(0)} ms CPU (${rendered.wallMs.toFixed(0)} ms wall), MP3 ${(mp3.length / 1e6).toFixed(2)} MB`
)

// A WAV of the same length (16-bit stereo, 44.1 kHz), as an export is.
const wav = pcmWav(Math.round(seconds * 44_100), { channels: 2, rate: 44_100 })

const directory = mkdtempSync(join(tmpdir(), "lyre-c2pa-bench-"))
try {
  for (const [name, bytes, contentType] of [
    ["MP3 track", mp3, "audio/mpeg"],
    ["WAV export", wav, "audio/wav"]
  ] as const) {
    const sign = () => Effect.runPromise(credentials.sign({ bytes, contentType, title: name }, origin, null))
    await sign()
    const signings = []
    const writes = []
    for (let i = 0; i < 7; i++) {
      signings.push(await measure(sign))
      writes.push(await measure(async () => writeFileSync(join(directory, `plain-${i}`), bytes)))
    }
    const cpu = median(signings.map((run) => run.cpuMs))
    const wall = median(signings.map((run) => run.wallMs))
    const write = median(writes.map((run) => run.wallMs))
    console.log(
      `signing the ${name} (${(bytes.length / 1e6).toFixed(2)} MB): ${cpu.toFixed(1)} ms CPU = ${((cpu / rendered.cpuMs) * 100).toFixed(2)}% of the render's (goal < 5%: ${cpu / rendered.cpuMs < 0.05 ? "met" : "NOT met"}); ${wall.toFixed(1)} ms wall added to re-hosting (goal < 50 ms: ${wall < 50 ? "met" : "NOT met"}), ${(wall / Math.max(write, 0.001)).toFixed(1)}x a plain write of the file (${write.toFixed(1)} ms)`
    )
  }
} finally {
  rmSync(directory, { recursive: true, force: true })
}
process.exit(0)
