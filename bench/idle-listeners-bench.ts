/**
 * Thousands of listeners on a pending stream (issue 54): IDLE_LISTENERS (default 2000) players
 * open the preview stream of one take of a long song (up to 5 minutes) on the embedded default
 * while it renders, each on its own connection, and follow it, waiting between its pieces. A listener waiting for the next piece is a callback
 * in the folder's watch and an open file (record 0126), no thread: the bench reads the service's
 * threads, resident memory and its main thread's CPU a second (where the HTTP answers run) before
 * the listeners come (the baseline, same process, same render) and while they follow.
 */
import { readdirSync, readFileSync } from "node:fs"
import { request } from "node:http"
import type { ClientRequest } from "node:http"
import { startBenchService } from "./service.ts"
import { cpuMillisOf, sleep } from "./support.ts"

const listeners = Number(process.env["IDLE_LISTENERS"] ?? "2000")

const threadsOf = (pid: number): number => readdirSync(`/proc/${pid}/task`).length
const rssMegabytesOf = (pid: number): number =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "0") / 1024
/** The main thread's CPU, in ms a second, over `seconds`. */
const mainCpuPerSecond = async (pid: number, seconds: number): Promise<number> => {
  const before = cpuMillisOf(pid, { mainThread: true })
  await sleep(seconds * 1000)
  return (cpuMillisOf(pid, { mainThread: true }) - before) / seconds
}

const service = await startBenchService({ mode: "pglite", env: { ENGINE_MAX_SECONDS: "300" }, ready: "/healthz" })
const opened: ClientRequest[] = []
try {
  const pid = service.child.pid ?? 0
  const account = await service.admin("/accounts", {
    email: `idle-${Math.random().toString(36).slice(2, 10)}@example.test`,
    plan: "ultra",
    subscription_credits: 1_000_000,
    concurrency_limit: 100
  })
  const key = (
    await service.admin(`/accounts/${account["id"] ?? ""}/keys`, { name: "bench", scopes: ["music:generate"] })
  )["key"]
  const auth = { authorization: `Bearer ${key ?? ""}` }
  const verse = "Neon on the water, lights across the bay\nEvery little signal calling me away\n"
  const created = (await fetch(`${service.url}/api/v1/music/generations`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({
      style: "ambient, 60 bpm, pads, strings, female vocals",
      title: "Many Ears",
      lyrics: `[Verse]\n${verse.repeat(12)}[Chorus]\n${verse.repeat(12)}[Verse]\n${verse.repeat(12)}[Chorus]\n${verse.repeat(12)}`
    })
  }).then((r) => r.json())) as { id: string }
  type Task = { status: string; previews: Array<{ stream_url: string }> }
  let task: Task = { status: "pending", previews: [] }
  while (task.status === "pending" && task.previews.length === 0) {
    await sleep(20)
    task = (await fetch(`${service.url}/api/v1/music/generations/${created.id}`, { headers: auth }).then((r) =>
      r.json()
    )) as Task
  }
  const url = new URL(task.previews[0]?.stream_url ?? "")
  const threadsBefore = threadsOf(pid)
  const rssBefore = rssMegabytesOf(pid)
  const cpuBefore = await mainCpuPerSecond(pid, 1)
  let answered = 0
  let ended = 0
  let bytes = 0
  for (let i = 0; i < listeners; i++) {
    const req = request(url, { agent: false }, (res) => {
      answered++
      res.on("data", (chunk: Buffer) => {
        bytes += chunk.length
      })
      res.on("end", () => {
        ended++
      })
    })
    req.on("error", () => undefined)
    req.end()
    opened.push(req)
    // A few hundred at a time, as players arriving.
    if (i % 200 === 199) await sleep(50)
  }
  const deadline = Date.now() + 30_000
  while (answered < listeners && Date.now() < deadline) await sleep(20)
  const threadsWith = threadsOf(pid)
  const rssWith = rssMegabytesOf(pid)
  const cpuWith = await mainCpuPerSecond(pid, 2)
  const state = (await fetch(`${service.url}/api/v1/music/generations/${created.id}`, { headers: auth }).then((r) =>
    r.json()
  )) as Task
  process.stdout.write(
    `${listeners} listeners on one pending take's stream (embedded default; ${answered} answered, ${ended} ended, ` +
      `${(bytes / 1024 / 1024).toFixed(1)} MB followed; the task still ${state.status}):\n` +
      `  service threads: ${threadsBefore} before, ${threadsWith} with them (no thread per listener: ${threadsWith - threadsBefore <= 2 ? "met" : "NOT met"})\n` +
      `  resident memory: ${rssBefore.toFixed(0)} MB before, ${rssWith.toFixed(0)} MB with them ` +
      `(${(((rssWith - rssBefore) * 1024) / listeners).toFixed(0)} KB a listener)\n` +
      `  main thread CPU: ${cpuBefore.toFixed(0)} ms/s before (baseline), ${cpuWith.toFixed(0)} ms/s while they follow ` +
      `(ratio ${(cpuWith / Math.max(1, cpuBefore)).toFixed(1)}; ${((cpuWith - cpuBefore) / listeners).toFixed(3)} ms/s a listener)\n`
  )
} finally {
  for (const req of opened) req.destroy()
  await service.close()
}
