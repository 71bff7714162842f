/**
 * A2A sends per second beside REST create, on one service and one database: the same generation
 * request (aether, 50 credits) over REST, A2A 0.3 (`message/send`, through the SDK's
 * compatibility layer) and A2A 1.0 (`SendMessage` with `A2A-Version: 1.0`, answered at once),
 * each connection with its own key. The ratio is the adapter's cost: JSON-RPC parsing, the SDK's
 * dispatch (and, for 0.3, its translation), and the Task rendering. Goal: each A2A version at
 * least 70% of REST.
 *
 * A2A_BENCH_MODE=postgres (default; DATABASE_URL / REDIS_URL default to the local servers) or
 * pglite; BENCH_SECONDS (default 8) and BENCH_CONNECTIONS (default 32) as in run.ts.
 */
import { createAccountKeys, parseBenchMode, startApiOnlyProvider, startBenchService } from "./service.ts"
import { loadPerConnection } from "./support.ts"
import type { BenchRequest } from "./support.ts"
import type { BenchService } from "./service.ts"

const seconds = Number(process.env["BENCH_SECONDS"] ?? "8")
const connections = Number(process.env["BENCH_CONNECTIONS"] ?? "32")
const mode = parseBenchMode(process.env["A2A_BENCH_MODE"] ?? "postgres")
const keyCount = 32

const song = { style: "synthwave, 110 bpm", title: "Bench", lyrics: "[Verse]\nla la la" }

interface Figures {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  /** Non-2xx answers, transport errors, and (A2A) JSON-RPC error bodies. */
  readonly errors: number
}

/** `loadPerConnection`, also counting 200 answers whose body is a JSON-RPC error. */
const load = async (
  url: string,
  duration: number,
  requestFor: (connection: number) => BenchRequest
): Promise<Figures> => {
  let errorBodies = 0
  const result = await loadPerConnection(
    url,
    {
      connections,
      duration,
      // A JSON-RPC error object; a task's own `"error":null` is not one.
      onBody: (body) => {
        if (body.includes('"error":{"code"')) errorBodies++
      }
    },
    requestFor
  )
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors + result.timeouts + errorBodies
  }
}

const provider = await startApiOnlyProvider()
let service: BenchService | undefined
try {
  service = await startBenchService({ mode, env: provider.env, ready: "/healthz" })
  const url = service.url
  const keys = await createAccountKeys(service.admin, keyCount, ["music:generate"])
  const auth = (connection: number) => ({
    authorization: `Bearer ${keys[connection % keys.length] ?? ""}`,
    "content-type": "application/json"
  })
  const rest = (connection: number): BenchRequest => ({
    method: "POST",
    path: "/api/v1/music/generations",
    headers: auth(connection),
    body: JSON.stringify(song)
  })
  // Every message its own messageId: a repeated one is a retry, answered without a new task.
  let sent = 0
  const legacyBody = (connection: number) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id: connection,
      method: "message/send",
      params: {
        message: {
          kind: "message",
          role: "user",
          messageId: `bench-${connection}-${sent++}`,
          parts: [{ kind: "data", data: song }]
        }
      }
    })
  const v1Body = (connection: number) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id: connection,
      method: "SendMessage",
      params: {
        message: { role: "ROLE_USER", messageId: `bench-${connection}-${sent++}`, parts: [{ data: song }] },
        configuration: { returnImmediately: true }
      }
    })
  const a2a =
    (body: (connection: number) => string, headers: Record<string, string>) =>
    (connection: number): BenchRequest => ({
      method: "POST",
      path: "/a2a",
      headers: { ...auth(connection), ...headers },
      body: body(connection),
      freshBody: () => body(connection)
    })
  const legacy = a2a(legacyBody, {})
  const v1 = a2a(v1Body, { "a2a-version": "1.0" })
  // Warm every path, then measure them in turns (REST, 0.3, 1.0, 1.0, 0.3, REST), so none is
  // always the one that runs on the larger table or the busier machine.
  await load(url, 2, rest)
  await load(url, 2, legacy)
  await load(url, 2, v1)
  const half = Math.max(1, Math.round(seconds / 2))
  const restFirst = await load(url, half, rest)
  const legacyFirst = await load(url, half, legacy)
  const v1First = await load(url, half, v1)
  const v1Second = await load(url, half, v1)
  const legacySecond = await load(url, half, legacy)
  const restSecond = await load(url, half, rest)
  const mean = (a: Figures, b: Figures): Figures => ({
    rps: (a.rps + b.rps) / 2,
    p50: (a.p50 + b.p50) / 2,
    p99: Math.max(a.p99, b.p99),
    errors: a.errors + b.errors
  })
  const restFigures = mean(restFirst, restSecond)
  const surfaces = [
    ["A2A 0.3 message/send", mean(legacyFirst, legacySecond)],
    ["A2A 1.0 SendMessage", mean(v1First, v1Second)]
  ] as const
  const fmt = (n: number, digits = 0) => n.toFixed(digits).padStart(8)
  process.stdout.write(
    `A2A sends beside REST create: ${mode === "postgres" ? "PostgreSQL + Redis" : "PGlite + memory limits"}, ` +
      `${connections} connections, ${seconds} s per run, ${keyCount} keys\n`
  )
  process.stdout.write("surface                     req/s   p50 ms   p99 ms  errors\n")
  for (const [name, f] of [["REST create", restFigures], ...surfaces] as const) {
    process.stdout.write(`${name.padEnd(22)} ${fmt(f.rps)} ${fmt(f.p50, 1)} ${fmt(f.p99, 1)}  ${f.errors}\n`)
  }
  for (const [name, f] of surfaces) {
    const ratio = f.rps / restFigures.rps
    process.stdout.write(
      `ratio ${name} / REST: ${(ratio * 100).toFixed(0)}% (goal >= 70%: ${ratio >= 0.7 ? "met" : "NOT met"})\n`
    )
  }
} finally {
  await service?.close()
  await provider.close()
}
