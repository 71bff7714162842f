// CPU of the voice alone (composition excluded) for the sound bench's 2-minute song: a base
// engine's against this tree's, alternated in one run. BASE_DIR: a base commit's engine sources
// as the sound bench writes them (packages/engine/.bench-base/<commit>).
// Run: BASE_DIR=$PWD/packages/engine/.bench-base/<commit> pnpm exec node packages/engine/bench/voice-cpu.ts
import { join } from "node:path"
const base = process.env["BASE_DIR"] as string
type Mod = { composeTake: (r: unknown, t: string, i: number) => { score: { vocal: ReadonlyArray<{ start: number }>; voice: "m" | "f" } } }
type VoiceMod = { renderVoice: (n: ReadonlyArray<unknown>, out: Float32Array, r: "m" | "f", seed: number) => void }
const engines: Array<{ name: string; r: Mod; v: VoiceMod }> = [
  { name: "base", r: await import(join(base, "src/render.ts")) as Mod, v: await import(join(base, "src/synth/voice.ts")) as VoiceMod },
  { name: "this", r: await import("../src/render.ts") as unknown as Mod, v: await import("../src/synth/voice.ts") as unknown as VoiceMod }
]
const { PROMPTS } = await import("./sound-bench.ts")
const request = { style: "pop, 100 bpm, in C major, piano, synth, drums, female vocals", title: "Two Minutes", model: "aether", instrumental: false,
  lyrics: [0, 1, 2].map(() => (PROMPTS[0]?.lyrics ?? "") + "\n" + (PROMPTS[3]?.lyrics ?? "")).join("\n") }
const totals = new Map<string, number>()
const takes = engines.map((e) => e.r.composeTake(request, "sound-bench-2min", 0))
for (let round = 0; round < 6; round++) {
  for (const [i, e] of engines.entries()) {
    const score = (takes[i] as ReturnType<Mod["composeTake"]>).score
    const out = new Float32Array(44100 * 120)
    const c0 = process.threadCpuUsage()
    e.v.renderVoice(score.vocal.filter((v) => v.start < 120), out, score.voice, 42)
    const c = process.threadCpuUsage(c0)
    if (round > 0) totals.set(e.name, (totals.get(e.name) ?? 0) + (c.user + c.system) / 1e6)
  }
}
const m = (totals.get("base") ?? 0) / 5, t = (totals.get("this") ?? 0) / 5
console.log(`voice alone, 2-minute song (${takes[1]?.score.vocal.length} notes now, ${takes[0]?.score.vocal.length} in the base): base ${m.toFixed(3)} s CPU, this tree ${t.toFixed(3)} s CPU, ratio ${(t / m).toFixed(2)} (mean of 5 alternated rounds after a warm-up)`)
