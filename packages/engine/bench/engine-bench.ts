// Engine benchmark: (1) seconds of audio rendered + encoded per wall second on one core
// (in-process, sequential), (2) wall time to render both takes of a 2-minute song with the
// worker pool (what a task's create-to-ready costs in the engine).
// Run: pnpm exec node packages/engine/bench/engine-bench.ts (or import { engineBench }).

import { availableParallelism } from "node:os"
import { makeEngine, renderTrack, type EngineRequest } from "../src/index.ts"

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

const requests: ReadonlyArray<EngineRequest> = [
  { style: "synthwave, 118 bpm, in A minor, synth, drums, female vocals", title: "Neon Nights", lyrics: LYRICS, instrumental: false, model: "aether" },
  { style: "lofi hip hop, chill, piano", title: "Study Rain", lyrics: null, instrumental: true, model: "echo" },
  { style: "rock, energetic, electric guitar", title: "Run", lyrics: LYRICS, instrumental: false, model: "aether", vocal_gender: "m" },
  { style: "ambient, calm, pads, strings", title: "Drift", lyrics: null, instrumental: true, model: "nocturne" }
]

export interface EngineBenchResult {
  /** Seconds of audio rendered and encoded per wall-clock second, one core, sequential. */
  readonly realtimeFactor: number
  /** The same per CPU-second of this process (less sensitive to other load on the machine). */
  readonly cpuRealtimeFactor: number
  /** Wall seconds for both takes of a 2-minute song through the worker pool. */
  readonly twoMinuteSongSeconds: number
  /** The same on a freshly created pool (includes worker start-up). */
  readonly twoMinuteSongColdSeconds: number
  /** CPU seconds of each take of the 2-minute song rendered on one thread. */
  readonly twoMinuteSongCpuPerTake: ReadonlyArray<number>
}

/** Runs the benchmark, printing one line per figure; the root `pnpm bench` can call this. */
export async function engineBench(log: (line: string) => void = console.log): Promise<EngineBenchResult> {
  // Warm-up: JIT and the WASM encoder.
  await renderTrack(requests[0] as EngineRequest, "warmup", 0, { maxSeconds: 10 })

  let audio = 0
  const t0 = performance.now()
  const c0 = process.cpuUsage()
  for (const [i, r] of requests.entries()) {
    for (let take = 0; take < 2; take++) {
      const t = await renderTrack(r, `bench-${i}`, take)
      audio += t.duration
    }
  }
  const wall = (performance.now() - t0) / 1000
  const cu = process.cpuUsage(c0)
  const cpu = (cu.user + cu.system) / 1e6
  log(`one core: ${audio.toFixed(1)} s of audio rendered+encoded in ${wall.toFixed(2)} s wall = ${(audio / wall).toFixed(1)}x real time (target >= 30x); ` +
    `${cpu.toFixed(2)} s CPU = ${(audio / cpu).toFixed(1)}x per CPU-second`)

  // A 2-minute song: at 100 bpm these lyrics make a ~126 s song, cut at exactly 120 s.
  const song: EngineRequest = { style: "pop, 100 bpm, in C major, piano, synth, drums", title: "Two Minutes", lyrics: LYRICS, instrumental: false, model: "aether" }
  const engine = makeEngine({ render: { maxSeconds: 120 } })
  // Cold: the first task on a fresh pool also pays for starting the workers.
  const tc = performance.now()
  await engine.render({ ...song, title: "warm" }, "warm-pool")
  const cold = (performance.now() - tc) / 1000
  const t1 = performance.now()
  const tracks = await engine.render(song, "bench-2min")
  const t2 = (performance.now() - t1) / 1000
  await engine.close()
  // What each take costs in CPU on this thread: with two idle cores the pool's wall time is
  // about the larger of the two (the figure to trust when the machine is shared and busy).
  const cpuPerTake: number[] = []
  for (let take = 0; take < 2; take++) {
    const c = process.threadCpuUsage()
    await renderTrack(song, "bench-2min", take, { maxSeconds: 120 })
    const d = process.threadCpuUsage(c)
    cpuPerTake.push((d.user + d.system) / 1e6)
  }
  log(`2-minute song, CPU per take on one thread: ${cpuPerTake.map((x) => x.toFixed(2)).join(" s, ")} s (pool wall time on idle cores is about the larger)`)
  log(`2-minute song, both takes, pool of ${availableParallelism()} workers: ${t2.toFixed(2)} s (durations ${tracks.map((t) => t.duration.toFixed(1)).join(" + ")} s; target < 10 s); cold pool: ${cold.toFixed(2)} s`)
  return { realtimeFactor: audio / wall, cpuRealtimeFactor: audio / cpu, twoMinuteSongSeconds: t2, twoMinuteSongColdSeconds: cold, twoMinuteSongCpuPerTake: cpuPerTake }
}

if (import.meta.main) await engineBench()
