/**
 * OAuth's cost on the hot path: `GET /api/v1/me` with an access token (ES256 verification, the
 * deny-list, one SQL row) beside the same with an API key, on the same service in the same run,
 * and the ratio. Goal: tokens at least 90% of keys' throughput.
 *
 * OAUTH_BENCH_MODES=pglite,postgres (default postgres: PostgreSQL + Redis, the production shape);
 * BENCH_SECONDS (default 8) per run; BENCH_CONNECTIONS (default 32).
 */
import { createHash, randomBytes } from "node:crypto"
import { cpuMillisOf, loadPerConnection } from "./support.ts"
import { parseBenchMode, startBenchService } from "./service.ts"
import type { BenchRequest } from "./support.ts"
import type { BenchMode } from "./service.ts"

const seconds = Number(process.env["BENCH_SECONDS"] ?? "8")
const connections = Number(process.env["BENCH_CONNECTIONS"] ?? "32")
const modes = (process.env["OAUTH_BENCH_MODES"] ?? "postgres").split(",").map(parseBenchMode)
const accounts = 16
const password = "bench password 1"
const callback = "http://127.0.0.1:9/callback"

const cookieOf = (response: Response, name: string) =>
  response.headers
    .getSetCookie()
    .map((c) => c.split(";")[0] ?? "")
    .find((c) => c.startsWith(`${name}=`)) ?? ""
const field = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? ""

/** Sign in, consent and exchange over plain HTTP, as the tests' flow does. */
const accessTokenFor = async (url: string, email: string): Promise<string> => {
  const form = await fetch(`${url}/signin`)
  const signedIn = await fetch(`${url}/signin`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: cookieOf(form, "lyre_csrf") },
    body: new URLSearchParams({ csrf_token: field(await form.text(), "csrf_token"), email, password })
  })
  const session = cookieOf(signedIn, "lyre_session")
  const verifier = randomBytes(32).toString("base64url")
  const params = new URLSearchParams({
    response_type: "code",
    client_id: "bench",
    redirect_uri: callback,
    scope: "profile music:generate",
    state: "s",
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256"
  })
  const consent = await (await fetch(`${url}/oauth/authorize?${params}`, { headers: { cookie: session } })).text()
  params.set("csrf_token", field(consent, "csrf_token"))
  params.set("decision", "allow")
  const allowed = await fetch(`${url}/oauth/authorize`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: session },
    body: params
  })
  const code = new URL(allowed.headers.get("location") ?? "").searchParams.get("code") ?? ""
  const tokens = await fetch(`${url}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      client_id: "bench",
      code,
      redirect_uri: callback,
      code_verifier: verifier
    })
  })
  return ((await tokens.json()) as { access_token: string }).access_token
}

const benchMode = async (mode: BenchMode) => {
  const profileDir = process.env["OAUTH_BENCH_PROFILE_DIR"]
  const service = await startBenchService({
    mode,
    env: { WORKER: "off" },
    nodeArgs: profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []
  })
  const { url, child, admin } = service
  try {
    await admin("/oauth-clients", {
      client_id: "bench",
      name: "Bench",
      redirect_uris: [callback],
      refresh_tokens: false
    })
    const keys: Array<string> = []
    const tokens: Array<string> = []
    for (let i = 0; i < accounts; i++) {
      const email = `oauth-bench-${i}@example.test`
      const account = await admin("/accounts", { email, plan: "ultra", password })
      keys.push(
        (await admin(`/accounts/${account["id"]}/keys`, { name: "bench", scopes: ["profile", "music:generate"] }))[
          "key"
        ] ?? ""
      )
      tokens.push(await accessTokenFor(url, email))
    }
    const run = async (credentials: ReadonlyArray<string>) => {
      const requestFor = (i: number): BenchRequest => ({
        method: "GET",
        path: "/api/v1/me",
        headers: { authorization: `Bearer ${credentials[i % credentials.length] ?? ""}` }
      })
      await loadPerConnection(url, { connections, duration: 2 }, requestFor)
      const cpuBefore = cpuMillisOf(child.pid)
      const result = await loadPerConnection(url, { connections, duration: seconds }, requestFor)
      const cpuPerRequest = (cpuMillisOf(child.pid) - cpuBefore) / Math.max(1, result.requests.total)
      return {
        rps: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        errors: result.non2xx + result.errors,
        cpuPerRequest
      }
    }
    // Keys, tokens, then keys again: the baseline brackets the measured side.
    const keysFirst = await run(keys)
    const withTokens = await run(tokens)
    const keysAgain = await run(keys)
    return { keys: { ...keysAgain, rps: (keysFirst.rps + keysAgain.rps) / 2 }, tokens: withTokens }
  } finally {
    await service.close()
  }
}

const fmt = (n: number, digits = 0) => n.toFixed(digits).padStart(8)
process.stdout.write(
  `OAuth benchmark: GET /api/v1/me, ${connections} connections, ${seconds} s per run, ${accounts} accounts\n`
)
for (const mode of modes) {
  const { keys, tokens } = await benchMode(mode)
  process.stdout.write(`\n${mode === "postgres" ? "PostgreSQL + Redis" : "PGlite + memory"}\n`)
  process.stdout.write("credential      req/s   p50 ms   p99 ms  service CPU ms/req  errors\n")
  process.stdout.write(
    `API key      ${fmt(keys.rps)} ${fmt(keys.p50, 1)} ${fmt(keys.p99, 1)}  ${fmt(keys.cpuPerRequest, 3)}            ${keys.errors}\n`
  )
  process.stdout.write(
    `access token ${fmt(tokens.rps)} ${fmt(tokens.p50, 1)} ${fmt(tokens.p99, 1)}  ${fmt(tokens.cpuPerRequest, 3)}            ${tokens.errors}\n`
  )
  const ratio = tokens.rps / keys.rps
  process.stdout.write(
    `ratio tokens/keys: ${(ratio * 100).toFixed(0)}% (goal >= 90%: ${ratio >= 0.9 ? "met" : "NOT met"})\n`
  )
}
