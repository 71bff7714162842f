/**
 * Runs the fake upstream alone, for manual runs and benchmarks:
 *   FAKE_UPSTREAM_PORT=4010 FAKE_UPSTREAM_API_KEY=dev-key FAKE_UPSTREAM_AUDIO_BYTES=1000000 node src/main.ts
 * Then point the service at it with PROVIDER=http PROVIDER_URL=<printed url> PROVIDER_API_KEY=<key>.
 */
import { startFakeUpstream } from "./server.ts"

const integer = (name: string, fallback: number): number => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const value = Number(raw)
  if (!Number.isSafeInteger(value) || value < 0) {
    console.error(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`)
    process.exit(1)
  }
  return value
}

const apiKey = process.env.FAKE_UPSTREAM_API_KEY ?? "fake-upstream-key"
const upstream = await startFakeUpstream({
  apiKey,
  port: integer("FAKE_UPSTREAM_PORT", 4010),
  audioBytes: integer("FAKE_UPSTREAM_AUDIO_BYTES", 1_000_000)
})
const pollsBeforeDone = integer("FAKE_UPSTREAM_POLLS_BEFORE_DONE", 0)
upstream.control.setDefault({ pollsBeforeDone })
console.log(JSON.stringify({ msg: "fake upstream listening", url: upstream.url, apiKey, pollsBeforeDone }))

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => void upstream.close().then(() => process.exit(0)))
}
