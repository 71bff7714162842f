/**
 * The agent surfaces beside REST: one Lyre service, one database, the same 32 keys, and for each
 * surface the request that creates a generation task: REST `POST /v1/music/generations`, MCP
 * `tools/call generate_music`, plain and task-augmented (MCP tasks: the answer is the task). Prints requests per second, p50/p99, service CPU per request and
 * the ratio to REST (goal: at least 70%). REST runs first and again last, and its figure is the
 * mean of the two, so a drift of the machine or the growing tables does not favour either side.
 *
 * Another surface is one more entry in `surfaces`. BENCH_SECONDS (default 8), BENCH_CONNECTIONS
 * (32), BENCH_MODES (`postgres`, the production setting, and/or `pglite`), DATABASE_URL and
 * REDIS_URL (default: the machine's local servers).
 */
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js"
import { cpuMillisOf, loadPerConnection } from "./support.ts"
import { createAccountKeys, parseBenchMode, startApiOnlyProvider, startBenchService } from "./service.ts"
import type { BenchRequest } from "./support.ts"
import type { BenchMode } from "./service.ts"

const seconds = Number(process.env["BENCH_SECONDS"] ?? "8")
const connections = Number(process.env["BENCH_CONNECTIONS"] ?? "32")
const modes = (process.env["BENCH_MODES"] ?? "postgres").split(",").map(parseBenchMode)
const keyCount = 32

const song = { style: "synthwave, 110 bpm", title: "Bench", lyrics: "[Verse]\nla la la" }

interface Surface {
  readonly name: string
  readonly request: (key: string) => BenchRequest
  /** A sample answer that is not a created task means the figures would measure an error path. */
  readonly created: (status: number, body: string) => boolean
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}`, "content-type": "application/json" })

const rest: Surface = {
  name: "REST POST create",
  request: (key) => ({
    method: "POST",
    path: "/api/v1/music/generations",
    headers: bearer(key),
    body: JSON.stringify(song)
  }),
  created: (status) => status === 202
}

const mcp: Surface = {
  name: "MCP tools/call generate_music",
  request: (key) => ({
    method: "POST",
    path: "/mcp",
    headers: {
      ...bearer(key),
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": LATEST_PROTOCOL_VERSION
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "generate_music", arguments: song }
    })
  }),
  created: (status, body) => status === 200 && body.includes('"structuredContent"') && !body.includes('"isError":true')
}

const mcpTask: Surface = {
  name: "MCP generate_music as a task",
  request: (key) => ({
    ...mcp.request(key),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "generate_music", arguments: song, task: {} }
    })
  }),
  created: (status, body) => status === 200 && body.includes('"taskId":"gen_')
}

/** REST first: the baseline every other surface is compared with. */
const surfaces: ReadonlyArray<Surface> = [rest, mcp, mcpTask]

interface Figures {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly cpuMsPerRequest: number
  readonly errors: number
}

const benchMode = async (mode: BenchMode): Promise<ReadonlyArray<readonly [string, Figures]>> => {
  const provider = await startApiOnlyProvider()
  const service = await startBenchService({ mode, env: provider.env })
  const { url, child } = service
  try {
    const keys = await createAccountKeys(service.admin, keyCount, ["music:generate"])
    const measure = async (surface: Surface): Promise<Figures> => {
      const sample = surface.request(keys[0] ?? "")
      const answer = await fetch(`${url}${sample.path}`, {
        method: sample.method,
        headers: sample.headers,
        body: sample.body ?? null
      })
      const text = await answer.text()
      if (!surface.created(answer.status, text)) throw new Error(`${surface.name}: ${answer.status} ${text}`)
      const run = (duration: number) =>
        loadPerConnection(url, { connections, duration }, (i) => surface.request(keys[i % keys.length] ?? ""))
      await run(2)
      const before = cpuMillisOf(child.pid)
      const result = await run(seconds)
      return {
        rps: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        cpuMsPerRequest: (cpuMillisOf(child.pid) - before) / Math.max(1, result.requests.total),
        errors: result.non2xx + result.errors + result.timeouts
      }
    }
    const first = await measure(rest)
    const others: Array<readonly [string, Figures]> = []
    for (const surface of surfaces.slice(1)) others.push([surface.name, await measure(surface)])
    const last = await measure(rest)
    const mean = (a: number, b: number) => (a + b) / 2
    const baseline: Figures = {
      rps: mean(first.rps, last.rps),
      p50: mean(first.p50, last.p50),
      p99: mean(first.p99, last.p99),
      cpuMsPerRequest: mean(first.cpuMsPerRequest, last.cpuMsPerRequest),
      errors: first.errors + last.errors
    }
    return [[rest.name, baseline], ...others]
  } finally {
    await service.close()
    await provider.close()
  }
}

const fmt = (n: number, digits = 0) => n.toFixed(digits).padStart(8)

process.stdout.write(
  `Agent surfaces beside REST create: ${connections} connections, ${seconds} s per run, ${keyCount} keys\n`
)
for (const mode of modes) {
  const rows = await benchMode(mode)
  const baseline = rows[0]?.[1].rps ?? Number.NaN
  process.stdout.write(
    `\n${mode === "postgres" ? "PostgreSQL + Redis" : "PGlite (embedded default) + memory limits"}\n`
  )
  process.stdout.write(`${"surface".padEnd(30)}    req/s   p50 ms   p99 ms  CPU ms/req  of REST  errors\n`)
  for (const [name, figures] of rows) {
    const ratio = figures.rps / baseline
    process.stdout.write(
      `${name.padEnd(30)} ${fmt(figures.rps)} ${fmt(figures.p50, 1)} ${fmt(figures.p99, 1)}    ${fmt(figures.cpuMsPerRequest, 3)} ` +
        `${(ratio * 100).toFixed(0).padStart(7)}%  ${figures.errors}` +
        (name === rest.name ? "\n" : `  (goal >= 70%: ${ratio >= 0.7 ? "met" : "NOT met"})\n`)
    )
  }
}
