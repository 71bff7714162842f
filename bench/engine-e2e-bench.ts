/**
 * Create to `ready` through the API with the built-in engine, as a newcomer meets it: `pnpm
 * start` on the embedded default (PGlite, inline worker, engine), one full song requested with
 * tagged lyrics, polled until ready. Prints the wall time beside the song's length.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort, repositoryRoot, sleep } from "./support.ts"

const dataDir = mkdtempSync(join(tmpdir(), "lyre-engine-e2e-"))
const port = await freePort()
const url = `http://127.0.0.1:${port}`
const env: Record<string, string> = {}
for (const [name, value] of Object.entries(process.env)) {
  if (
    value !== undefined &&
    !["DATABASE_URL", "REDIS_URL", "PROVIDER", "PROVIDER_URL", "PROVIDER_API_KEY"].includes(name)
  )
    env[name] = value
}
const service = spawn(process.execPath, [join(repositoryRoot, "packages/server/src/main.ts")], {
  cwd: repositoryRoot,
  env: {
    ...env,
    PORT: String(port),
    DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
    PROVIDER_POLL_SECONDS: "5",
    RATE_LIMIT_RPM: "100000"
  },
  stdio: ["ignore", "ignore", "ignore"]
})
try {
  for (let i = 0; i < 600; i++) {
    if (
      await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false
      )
    )
      break
    await sleep(100)
  }
  // The bootstrap account is written just after the server starts listening.
  while (!existsSync(join(dataDir, "bootstrap.json"))) await sleep(100)
  await sleep(100)
  const { api_key: key } = JSON.parse(readFileSync(join(dataDir, "bootstrap.json"), "utf8")) as { api_key: string }
  const auth = { authorization: `Bearer ${key}` }
  const verse = "Neon on the water, lights across the bay\nEvery little signal calling me away\n"
  const chorus = "Drive, drive into the night\nHold on, hold on, hold on tight\n"
  const lyrics = `[Intro]\n[Verse]\n${verse}${verse}[Chorus]\n${chorus}${chorus}[Verse]\n${verse}${verse}[Chorus]\n${chorus}${chorus}[Bridge]\n${verse}[Chorus]\n${chorus}${chorus}[Outro]\n${chorus}`
  const started = performance.now()
  const created = await fetch(`${url}/api/v1/music/generations`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ style: "synthwave, 110 bpm, dreamy, female vocals", title: "Night Drive", lyrics })
  }).then((r) => r.json() as Promise<{ id: string }>)
  let task: { status: string; tracks: Array<{ duration: number | null }> } = { status: "pending", tracks: [] }
  while (task.status === "pending" && performance.now() - started < 300_000) {
    await sleep(100)
    task = await fetch(`${url}/api/v1/music/generations/${created.id}`, { headers: auth }).then(
      (r) => r.json() as Promise<typeof task>
    )
  }
  const seconds = (performance.now() - started) / 1000
  const durations = task.tracks.map((t) => (t.duration ?? 0).toFixed(1)).join(" s + ")
  process.stdout.write(
    `engine create->ready through the API (embedded default): ${task.status} in ${seconds.toFixed(2)} s for two takes of ${durations} s (target < 10 s for a 2-minute song)\n`
  )
} finally {
  service.kill("SIGTERM")
  await new Promise((resolve) => service.once("exit", resolve))
  rmSync(dataDir, { recursive: true, force: true })
}
