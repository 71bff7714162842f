/**
 * Listening to an upload against a plain generation, in the same run: the engine renders one
 * ~2-minute take (its CPU time per minute of audio is the baseline), then that take's MP3 is
 * listened to as an upload is (decode, beats, key, chords, loudness, Basic Pitch transcription),
 * each part's CPU time per minute of audio beside the render's. CPU time is the process's (the
 * WebAssembly backends may use threads of their own), the wall time beside it.
 *
 * Goal (issue 24): the whole listening under 5 s of CPU per minute of audio (decision 0093: how).
 * Run: node bench/listen-bench.ts
 */
import { cpuUsage } from "node:process"
import { listen } from "../packages/engine/src/listen/analyse.ts"
import { transcribe } from "../packages/engine/src/listen/transcribe.ts"
import { runJob } from "../packages/engine/src/jobs.ts"
import type { EngineRequest } from "../packages/engine/src/types.ts"

const song: EngineRequest = {
  style: "pop, 100 bpm, in C major, piano, synth, drums",
  title: "Listen Bench",
  lyrics:
    "[Verse]\nNeon lights are calling me tonight\nRunning through the city burning bright\n[Chorus]\nHold on, hold on to the night\n" +
    "We are young and we are alive\n[Verse]\nStatic on the radio again\nDriving to the edge of where we end\n[Chorus]\n[Outro]\nHold on",
  instrumental: false,
  model: "aether"
}

const cpuSeconds = async <T>(
  work: () => Promise<T>
): Promise<{ readonly value: T; readonly cpu: number; readonly wall: number }> => {
  const before = cpuUsage()
  const started = performance.now()
  const value = await work()
  const used = cpuUsage(before)
  return { value, cpu: (used.user + used.system) / 1e6, wall: (performance.now() - started) / 1000 }
}

export async function listenBench(log: (line: string) => void = console.log): Promise<Record<string, number>> {
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
  // Warm-up: the renderer's JIT and encoder, Essentia's and Basic Pitch's WebAssembly and the model.
  const warm = await render("listen-warm", 8)
  if (warm.kind !== "track") throw new Error("the render answered no track")
  await listen(warm.track.mp3, "audio/mpeg", transcribe)

  const rendered = await cpuSeconds(() => render("listen-bench"))
  if (rendered.value.kind !== "track") throw new Error("the render answered no track")
  const minutes = rendered.value.track.duration / 60
  const renderPerMinute = rendered.cpu / minutes
  log(
    `plain generation render (one take, ${(minutes * 60).toFixed(1)} s): ${rendered.cpu.toFixed(2)} s CPU (${rendered.wall.toFixed(2)} s wall) = ${renderPerMinute.toFixed(2)} s CPU per minute of audio`
  )

  const heard = await cpuSeconds(() =>
    listen(rendered.value.kind === "track" ? rendered.value.track.mp3 : new Uint8Array(0), "audio/mpeg", transcribe)
  )
  const total = heard.cpu / minutes
  const figures: Record<string, number> = { render: renderPerMinute, listening: total }
  log(
    `listening to that take as an upload (MP3): ${heard.cpu.toFixed(2)} s CPU (${heard.wall.toFixed(2)} s wall) = ${total.toFixed(2)} s CPU per minute of audio, ${((total / renderPerMinute) * 100).toFixed(0)}% of the render's (goal < 5 s: ${total < 5 ? "met" : "NOT met"})`
  )
  for (const [part, ms] of Object.entries(heard.value.timings)) {
    const perMinute = ms / 1000 / minutes
    figures[part] = perMinute
    log(
      `  ${part.padEnd(14)} ${perMinute.toFixed(3).padStart(7)} s CPU per minute = ${((perMinute / renderPerMinute) * 100).toFixed(1).padStart(5)}% of the render's`
    )
  }
  log(
    `  heard: ${heard.value.analysis.key}, ${heard.value.analysis.bpm} bpm, ${heard.value.analysis.loudness_lufs} LUFS, ${heard.value.transcription.notes.length} notes`
  )
  return figures
}

if (import.meta.main) await listenBench()
