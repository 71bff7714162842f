// CPU of the voice alone (composition excluded) for the sound bench's 2-minute song: a base
// engine's against this tree's, alternated in one run. BASE_DIR: a base commit's engine sources
// as the sound bench writes them (packages/engine/.bench-base/<commit>). A base from before
// Flite (decision 0102) sings with voice.ts's renderVoice; this tree with a take's singer, whose
// words Flite speaks once per take and keeps for a few takes: the first round is printed apart
// (Flite speaking), the others are the singing alone.
// Run: BASE_DIR=$PWD/packages/engine/.bench-base/<commit> pnpm exec node packages/engine/bench/voice-cpu.ts
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
const base = process.env["BASE_DIR"] as string
type Note = { readonly start: number }
type Score = { readonly vocal: ReadonlyArray<Note>; readonly voice: "m" | "f" }
type Mod = { composeTake: (r: unknown, t: string, i: number) => { score: Score } }
type Sing = (score: Score, out: Float32Array) => void
/** How an engine's tree sings a score's vocal: through a singer where it has one, else voice.ts's renderVoice. */
const singingOf = async (dir: string): Promise<Sing> => {
  const singer = [join(dir, "synth/voice/singer.ts"), join(dir, "synth/singer.ts")].find(existsSync) ?? ""
  if (existsSync(singer) && readFileSync(singer, "utf8").includes("export function singerFor")) {
    const m = (await import(singer)) as {
      singerFor: (
        n: ReadonlyArray<Note>,
        r: "m" | "f"
      ) => { sing: (n: ReadonlyArray<Note>, out: Float32Array, seed: number) => void }
    }
    return (score, out) =>
      m.singerFor(score.vocal, score.voice).sing(
        score.vocal.filter((v) => v.start < 120),
        out,
        42
      )
  }
  const m = (await import(join(dir, "synth/voice.ts"))) as {
    renderVoice: (n: ReadonlyArray<Note>, out: Float32Array, r: "m" | "f", seed: number) => void
  }
  return (score, out) =>
    m.renderVoice(
      score.vocal.filter((v) => v.start < 120),
      out,
      score.voice,
      42
    )
}
const engines: Array<{ name: string; r: Mod; sing: Sing }> = [
  { name: "base", r: (await import(join(base, "src/render.ts"))) as Mod, sing: await singingOf(join(base, "src")) },
  {
    name: "this",
    r: (await import("../src/render.ts")) as unknown as Mod,
    sing: await singingOf(join(import.meta.dirname, "../src"))
  }
]
const { PROMPTS } = await import("./sound-bench.ts")
const request = {
  style: "pop, 100 bpm, in C major, piano, synth, drums, female vocals",
  title: "Two Minutes",
  model: "aether",
  instrumental: false,
  lyrics: [0, 1, 2].map(() => `${PROMPTS[0]?.lyrics ?? ""}\n${PROMPTS[3]?.lyrics ?? ""}`).join("\n")
}
const totals = new Map<string, number>()
const first = new Map<string, number>()
const takes = engines.map((e) => e.r.composeTake(request, "sound-bench-2min", 0))
for (let round = 0; round < 6; round++) {
  for (const [i, e] of engines.entries()) {
    const score = (takes[i] as ReturnType<Mod["composeTake"]>).score
    const out = new Float32Array(44100 * 120)
    const c0 = process.threadCpuUsage()
    e.sing(score, out)
    const c = process.threadCpuUsage(c0)
    const cpu = (c.user + c.system) / 1e6
    if (round > 0) totals.set(e.name, (totals.get(e.name) ?? 0) + cpu)
    else first.set(e.name, cpu)
  }
}
const m = (totals.get("base") ?? 0) / 5,
  t = (totals.get("this") ?? 0) / 5
console.log(
  `voice alone, 2-minute song (${takes[1]?.score.vocal.length} notes now, ${takes[0]?.score.vocal.length} in the base): base ${m.toFixed(3)} s CPU, this tree ${t.toFixed(3)} s CPU, ratio ${(t / m).toFixed(2)} (mean of 5 alternated rounds after the first); ` +
    `first round (modules loading; Flite speaking the take's words, where it sings): base ${(first.get("base") ?? 0).toFixed(3)} s, this tree ${(first.get("this") ?? 0).toFixed(3)} s`
)
