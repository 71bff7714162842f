/**
 * Content credentials against the work they sign, in the same run: the built-in engine renders
 * one take (its CPU time is the baseline), then that take's MP3 is signed as re-hosting signs it
 * (disclosure tag, manifest, COSE signature: `ContentCredentials.sign`), and a WAV export of the
 * same length too; each signing's CPU time and wall time beside the render's, and beside a plain
 * write of the same bytes to a file (the re-hosting it adds to).
 *
 * Then the WAV's signing taken apart, in the same run (c2pa-rs called through `@lyre/provenance`
 * as `ContentCredentials` calls it): its cost by the file's size (WAVs of 15, 30 and 60 s: a
 * fixed part and a part per megabyte), the manifest's hash SHA-256 (c2pa-rs's default) against
 * SHA-512 (Lyre's) taking turns, and beside them Node's own SHA-256 and SHA-512 of the same bytes
 * (OpenSSL: what hashing costs outside WebAssembly) and the disclosure tag's copy of the file.
 *
 * Goals (issue 52): signing under 5% of a render's CPU; under 50 ms added to re-hosting a file.
 * Run: node bench/content-credentials-bench.ts
 */
import { createHash } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { cpuUsage } from "node:process"
import { Effect } from "effect"
import { ContentCredentials } from "../packages/core/src/index.ts"
import type { FileOrigin } from "../packages/core/src/index.ts"
import { runJob } from "../packages/engine/src/jobs.ts"
import type { EngineRequest } from "../packages/engine/src/types.ts"
import {
  discloseInWav,
  loadSigningCredentials,
  makeLocalCredentials,
  signAsset
} from "../packages/provenance/src/index.ts"
import type { HashAlgorithm, ManifestDefinition } from "../packages/provenance/src/index.ts"
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
    const leastCpu = Math.min(...signings.map((run) => run.cpuMs))
    const leastWall = Math.min(...signings.map((run) => run.wallMs))
    const write = median(writes.map((run) => run.wallMs))
    console.log(
      `signing the ${name} (${(bytes.length / 1e6).toFixed(2)} MB): ${cpu.toFixed(1)} ms CPU = ${((cpu / rendered.cpuMs) * 100).toFixed(2)}% of the render's (goal < 5%: ${cpu / rendered.cpuMs < 0.05 ? "met" : "NOT met"}; least ${leastCpu.toFixed(1)} ms); ${wall.toFixed(1)} ms wall added to re-hosting (goal < 50 ms: ${wall < 50 ? "met" : "NOT met"}; least ${leastWall.toFixed(1)} ms), ${(wall / Math.max(write, 0.001)).toFixed(1)}x a plain write of the file (${write.toFixed(1)} ms)`
    )
  }
} finally {
  rmSync(directory, { recursive: true, force: true })
}

// The WAV's signing taken apart.
const local = await makeLocalCredentials()
const signer = await loadSigningCredentials(local.chainPem, local.keyPem)
const disclosure = {
  text: "Made with AI by Lyre (Lyre built-in engine); content credentials (C2PA) inside.",
  software: "Lyre bench",
  digitalSourceType: "http://cv.iptc.org/newscodes/digitalsourcetype/algorithmicMedia"
}
const definition = (hashAlgorithm: HashAlgorithm): ManifestDefinition => ({
  title: "bench.wav",
  format: "audio/wav",
  claimGenerator: { name: "Lyre", version: "bench" },
  actions: [{ action: "c2pa.created", digitalSourceType: "algorithmicMedia", softwareAgent: { name: "engine" } }],
  hashAlgorithm
})
const signWav = (bytes: Uint8Array, hashAlgorithm: HashAlgorithm) => () =>
  signAsset(definition(hashAlgorithm), discloseInWav(bytes, disclosure), signer)
const megabytes = (bytes: Uint8Array) => bytes.length / 1e6

// Every variant once a round, eleven rounds, so the host's swings (a shared machine) fall on all
// alike; each printed as its least CPU (the cost with the least interference) and its median.
const [quarter, half] = [15, 30].map((length) => pcmWav(Math.round(length * 44_100), { channels: 2, rate: 44_100 }))
if (quarter === undefined || half === undefined) throw new Error("no WAVs made")
const variants = {
  "15 s, SHA-512": signWav(quarter, "sha512"),
  "30 s, SHA-512": signWav(half, "sha512"),
  "60 s, SHA-512": signWav(wav, "sha512"),
  "60 s, SHA-256": signWav(wav, "sha256"),
  "Node SHA-256": async () => createHash("sha256").update(wav).digest(),
  "Node SHA-512": async () => createHash("sha512").update(wav).digest(),
  "tag copy": async () => discloseInWav(wav, disclosure)
} as const
type Variant = keyof typeof variants
const runs = Object.fromEntries(Object.keys(variants).map((name) => [name, [] as Array<number>])) as Record<
  Variant,
  Array<number>
>
for (const work of Object.values(variants)) await work()
for (let round = 0; round < 11; round++) {
  for (const [name, work] of Object.entries(variants) as Array<[Variant, () => Promise<unknown>]>) {
    runs[name].push((await measure(work)).cpuMs)
  }
}
const least = (name: Variant) => Math.min(...runs[name])
const shown = (name: Variant) => `${least(name).toFixed(1)} ms (median ${median(runs[name]).toFixed(1)})`
const perMegabyte = (least("60 s, SHA-512") - least("15 s, SHA-512")) / (megabytes(wav) - megabytes(quarter))
const fixed = least("15 s, SHA-512") - perMegabyte * megabytes(quarter)
console.log(
  `WAV signing taken apart (CPU, least of 11 rounds): 15 s (${megabytes(quarter).toFixed(2)} MB) ${shown("15 s, SHA-512")}, 30 s ${shown("30 s, SHA-512")}, 60 s ${shown("60 s, SHA-512")}: ${perMegabyte.toFixed(2)} ms a megabyte and ${fixed.toFixed(1)} ms fixed; a 3-minute song's WAV (31.75 MB) about ${(fixed + perMegabyte * 31.75).toFixed(0)} ms`
)
console.log(
  `the manifest's hash in c2pa-rs, 60 s WAV: SHA-256 (c2pa-rs's default) ${shown("60 s, SHA-256")}, SHA-512 (Lyre's) ${shown("60 s, SHA-512")}: ${(least("60 s, SHA-512") / least("60 s, SHA-256")).toFixed(2)}x (medians ${(median(runs["60 s, SHA-512"]) / median(runs["60 s, SHA-256"])).toFixed(2)}x)`
)
console.log(
  `beside it, the same 10.58 MB in Node (OpenSSL): SHA-256 ${shown("Node SHA-256")}, SHA-512 ${shown("Node SHA-512")}; the disclosure tag's copy of the file ${shown("tag copy")}`
)
process.exit(0)
