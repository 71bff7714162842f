/**
 * Hear it while it is made (issue 54, record 0129): how soon a listener hears a song.
 *
 * 1. The embedded default (PGlite, inline worker, built-in engine), a 2-minute song with lyrics:
 *    from the create request to the first whole MP3 frame read from the task's preview stream,
 *    against create to `ready` in the same task (the baseline): goal within 1 s and under a
 *    quarter of it. The first task after start pays the worker threads' start (their modules,
 *    the SoundFont, LAME and each instrument's measured note); it is printed apart, then
 *    FIRST_AUDIO_RUNS (default 3) tasks one after another.
 * 2. The fake upstream: from the moment it sends its `first` callback to the first byte of the
 *    preview stream through Lyre (the client polling the task every 10 ms, as a player would
 *    wait on it), against the first byte of the upstream's own stream fetched at the same moment
 *    (the baseline): goal within 300 ms.
 */
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { startFakeUpstream } from "@lyre/fake-upstream"
import { startBenchService } from "./service.ts"
import type { BenchService } from "./service.ts"
import { percentile, sleep } from "./support.ts"

const runs = Number(process.env["FIRST_AUDIO_RUNS"] ?? "3")
const upstreamRuns = Number(process.env["FIRST_AUDIO_UPSTREAM_RUNS"] ?? "10")

interface Task {
  readonly status: string
  readonly previews: ReadonlyArray<{ readonly index: number; readonly stream_url: string }>
  readonly tracks: ReadonlyArray<{ readonly duration: number | null }>
}

/** An Ultra account's key on the service. */
const keyOn = async (service: BenchService): Promise<string> => {
  const account = await service.admin("/accounts", {
    email: `first-audio-${Math.random().toString(36).slice(2, 10)}@example.test`,
    plan: "ultra",
    subscription_credits: 1_000_000,
    concurrency_limit: 100
  })
  const key = await service.admin(`/accounts/${account["id"] ?? ""}/keys`, {
    name: "bench",
    scopes: ["music:generate"]
  })
  return key["key"] ?? ""
}

const create = async (service: BenchService, key: string, body: unknown): Promise<string> => {
  const res = await fetch(`${service.url}/api/v1/music/generations`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  const created = (await res.json()) as { id?: string }
  if (res.status !== 202 || created.id === undefined) throw new Error(`create answered ${res.status}`)
  return created.id
}

const look = async (service: BenchService, key: string, id: string): Promise<Task> =>
  (await fetch(`${service.url}/api/v1/music/generations/${id}`, { headers: { authorization: `Bearer ${key}` } }).then(
    (r) => r.json()
  )) as Task

/** Polls the task every `every` ms until `done` holds; answers it and when it was seen. */
const until = async (
  service: BenchService,
  key: string,
  id: string,
  done: (task: Task) => boolean,
  every: number
): Promise<{ readonly task: Task; readonly at: number }> => {
  const deadline = performance.now() + 600_000
  for (;;) {
    const task = await look(service, key, id)
    if (done(task) || performance.now() > deadline) return { task, at: performance.now() }
    await sleep(every)
  }
}

/** The length of the MPEG-1 Layer III frame whose header starts at `o`, or 0 when none does. */
const frameLength = (bytes: Uint8Array, o: number): number => {
  if (bytes[o] !== 0xff || ((bytes[o + 1] ?? 0) & 0xfe) !== 0xfa) return 0
  const kbps = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320][(bytes[o + 2] ?? 0) >> 4] ?? 0
  const rate = [44100, 48000, 32000][((bytes[o + 2] ?? 0) >> 2) & 3] ?? 0
  if (kbps === 0 || rate === 0) return 0
  return Math.floor((144000 * kbps) / rate) + (((bytes[o + 2] ?? 0) >> 1) & 1)
}

/** Reads the stream until `enough` says its bytes hold what is waited for; answers when, then lets the rest go. */
const readUntil = async (url: string, enough: (bytes: Uint8Array) => boolean): Promise<number> => {
  const res = await fetch(url)
  const reader = res.body?.getReader()
  if (res.status !== 200 || reader === undefined) throw new Error(`the stream answered ${res.status}`)
  let bytes = new Uint8Array(0)
  for (;;) {
    const { done, value } = await reader.read()
    if (value !== undefined) {
      const joined = new Uint8Array(bytes.length + value.length)
      joined.set(bytes)
      joined.set(value, bytes.length)
      bytes = joined
    }
    if (enough(bytes) || done) {
      const at = performance.now()
      await reader.cancel()
      return at
    }
  }
}

/** Whether the bytes begin with one whole MP3 frame. */
const wholeFrame = (bytes: Uint8Array): boolean => {
  const length = frameLength(bytes, 0)
  return length > 0 && bytes.length >= length
}

const verse = "Neon on the water, lights across the bay\nEvery little signal calling me away\n"
const chorus = "Drive, drive into the night\nHold on, hold on, hold on tight\n"
const song = (title: string) => ({
  style: "synthwave, 110 bpm, dreamy, female vocals",
  title,
  lyrics: `[Intro]\n[Verse]\n${verse}${verse}[Chorus]\n${chorus}${chorus}[Verse]\n${verse}${verse}[Chorus]\n${chorus}${chorus}[Bridge]\n${verse}[Chorus]\n${chorus}${chorus}[Outro]\n${chorus}`
})

const engine = async () => {
  const service = await startBenchService({
    mode: "pglite",
    env: { ENGINE_MAX_SECONDS: "120", PROVIDER_POLL_SECONDS: "5" },
    ready: "/healthz"
  })
  try {
    const key = await keyOn(service)
    const staging = join(service.env["DATA_DIR"] ?? "", "engine")
    const one = async (title: string) => {
      const before = new Set(existsSync(staging) ? readdirSync(staging) : [])
      const started = performance.now()
      // When the render's folder appears and its first piece of MP3 is written (the worker's side).
      let begun = Number.NaN
      let written = Number.NaN
      const watching = setInterval(() => {
        if (!existsSync(staging)) return
        for (const folder of readdirSync(staging)) {
          if (before.has(folder)) continue
          if (Number.isNaN(begun)) begun = performance.now()
          for (const part of ["0.mp3.part", "1.mp3.part"]) {
            const size = statSync(join(staging, folder, part), { throwIfNoEntry: false })?.size ?? 0
            if (size > 0 && Number.isNaN(written)) written = performance.now()
          }
        }
      }, 5)
      const id = await create(service, key, song(title))
      const streaming = until(service, key, id, (t) => t.previews.length > 0 || t.status !== "pending", 10)
      const ready = until(service, key, id, (t) => t.status !== "pending", 50)
      const { task, at: shown } = await streaming
      const preview = task.previews[0]
      const heard = preview === undefined ? Number.NaN : await readUntil(preview.stream_url, wholeFrame)
      const done = await ready
      clearInterval(watching)
      return {
        begun: (begun - started) / 1000,
        written: (written - started) / 1000,
        first: (heard - started) / 1000,
        shown: (shown - started) / 1000,
        ready: (done.at - started) / 1000,
        seconds: done.task.tracks[0]?.duration ?? 0,
        status: done.task.status
      }
    }
    const row = (label: string, r: Awaited<ReturnType<typeof one>>) =>
      `${label.padEnd(22)} first frame ${r.first.toFixed(2).padStart(5)} s  ready ${r.ready.toFixed(2).padStart(6)} s  ` +
      `ratio ${(r.first / r.ready).toFixed(3)}  (render began ${r.begun.toFixed(2)} s, first piece written ${r.written.toFixed(2)} s, previews shown ${r.shown.toFixed(2)} s; ${r.status}, ${r.seconds.toFixed(0)} s take)`
    process.stdout.write(
      "Embedded default, a 2-minute song: create -> first whole MP3 frame on the preview stream, against create -> ready\n" +
        "(goal: within 1 s and a ratio under 0.25)\n"
    )
    process.stdout.write(`${row("first after start", await one("First Light"))}\n`)
    const warm: Array<Awaited<ReturnType<typeof one>>> = []
    for (let i = 0; i < runs; i++) {
      const r = await one(`Night Drive ${i}`)
      warm.push(r)
      process.stdout.write(`${row(`run ${i + 1}`, r)}\n`)
    }
    const firsts = warm.map((r) => r.first)
    const ratios = warm.map((r) => r.first / r.ready)
    process.stdout.write(
      `median of ${runs}: first frame ${percentile(firsts, 50).toFixed(2)} s (${percentile(firsts, 50) <= 1 ? "met" : "NOT met"}), ` +
        `ratio ${percentile(ratios, 50).toFixed(3)} (${percentile(ratios, 50) < 0.25 ? "met" : "NOT met"})\n`
    )
  } finally {
    await service.close()
  }
}

const upstream = async () => {
  const apiKey = "first-audio-bench"
  const fake = await startFakeUpstream({ apiKey })
  const service = await startBenchService({
    mode: "pglite",
    env: { PROVIDER: "http", PROVIDER_URL: fake.url, PROVIDER_API_KEY: apiKey, PROVIDER_POLL_SECONDS: "30" },
    ready: "/healthz"
  })
  try {
    const key = await keyOn(service)
    const lyre: number[] = []
    const seen: number[] = []
    const direct: number[] = []
    for (let i = 0; i < upstreamRuns + 1; i++) {
      const title = `Upstream ${i} ${Math.random().toString(36).slice(2, 8)}`
      fake.control.onTitle(title, { callbacks: "none", pollsBeforeDone: Number.POSITIVE_INFINITY })
      const id = await create(service, key, song(title))
      let providerTaskId = ""
      while (providerTaskId === "") {
        await sleep(20)
        providerTaskId = fake.control.submissionsFor(title)[0]?.taskId ?? ""
      }
      await sleep(200)
      const sent = performance.now()
      void fake.control.sendCallback(providerTaskId, "first", { advance: true })
      const trackId = fake.control.task(providerTaskId)?.trackIds[0] ?? ""
      const upstreamFirst = readUntil(`${fake.url}/stream/${trackId}.mp3`, (b) => b.length > 0)
      const { task, at } = await until(service, key, id, (t) => t.previews.length > 0, 10)
      const heard = await readUntil(task.previews[0]?.stream_url ?? "", (b) => b.length > 0)
      // The first task warms the connections and the code paths; it is not counted.
      if (i > 0) {
        lyre.push(heard - sent)
        seen.push(at - sent)
        direct.push((await upstreamFirst) - sent)
      }
      void fake.control.sendCallback(providerTaskId, "complete", { advance: true })
    }
    const median = (values: ReadonlyArray<number>) => percentile(values, 50)
    process.stdout.write(
      `\nFake upstream, ${upstreamRuns} songs: its first callback -> first byte of Lyre's preview stream ` +
        `(client polling every 10 ms), against the upstream's own stream fetched at the callback\n` +
        `Lyre: median ${median(lyre).toFixed(0)} ms, p90 ${percentile(lyre, 90).toFixed(0)} ms, max ${Math.max(...lyre).toFixed(0)} ms ` +
        `(goal <= 300 ms, ${percentile(lyre, 90) <= 300 ? "met" : "NOT met"} at p90); of which the task showing its previews: ` +
        `median ${median(seen).toFixed(0)} ms\n` +
        `baseline, the upstream's own first byte: median ${median(direct).toFixed(1)} ms; ` +
        `ratio of medians ${(median(lyre) / median(direct)).toFixed(1)}\n`
    )
  } finally {
    await service.close()
    await fake.close()
  }
}

await engine()
await upstream()
