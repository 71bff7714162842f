/**
 * The webhook figures, on PostgreSQL + Redis (DATABASE_URL / REDIS_URL, defaulting to the
 * machine's local servers). The service is `pnpm start` (API, inline worker and deliverer) in a
 * child process with WEBHOOK_ALLOW_PRIVATE=true; the receiver, which checks every signature with
 * `verifyWebhook`, and the fake upstream run here.
 *
 * 1. throughput: WEBHOOKS_BENCH_EVENTS (default 5000) events written to the outbox at once, each
 *    fanned out, claimed, signed, POSTed and recorded: deliveries per second until the receiver
 *    has them all. Target: at least 1,000 per second.
 * 2. lag: from a task's `ready` (its `updated_at`) to its signed `job.completed` at the
 *    receiver, for WEBHOOKS_BENCH_LAG_TASKS (default 200) tasks finished by callbacks at about
 *    20 per second. Target: p99 under 200 ms.
 */
import { createServer as createHttpServer } from "node:http"
import { cpus, loadavg } from "node:os"
import { randomBase62 } from "@lyre/core"
import { percentile, query, sleep } from "./support.ts"
import { startBenchService } from "./service.ts"
import type { BenchService } from "./service.ts"
import { startFakeUpstream } from "@lyre/fake-upstream"
import type { FakeUpstream } from "@lyre/fake-upstream"
import { verifyWebhook } from "@lyre/webhooks"

const throughputEvents = Number(process.env["WEBHOOKS_BENCH_EVENTS"] ?? "5000")
const lagTasks = Number(process.env["WEBHOOKS_BENCH_LAG_TASKS"] ?? "200")
const upstreamKey = "webhooks-bench-key"

interface Arrival {
  readonly eventId: string
  readonly type: string
  readonly data: Record<string, unknown>
  readonly at: number
}

/** A receiver that verifies every signature and keeps what arrived; a bad signature is a 400 and counted. */
const startReceiver = async () => {
  const arrivals: Array<Arrival> = []
  const secrets: Array<string> = []
  let rejected = 0
  const server = createHttpServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const at = Date.now()
      try {
        const header = req.headers["x-service-signature"]
        const event = verifyWebhook(Buffer.concat(chunks), Array.isArray(header) ? header[0] : header, secrets)
        arrivals.push({ eventId: event.id, type: event.type, data: event.data, at })
        res.writeHead(200).end()
      } catch {
        rejected++
        res.writeHead(400).end()
      }
    })
  })
  const port = await new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resolve(typeof address === "object" && address !== null ? address.port : 0)
    })
  )
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    arrivals,
    secrets,
    rejected: () => rejected,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

interface Service extends BenchService {
  readonly databaseUrl: string
}

const startService = async (upstream: FakeUpstream, pollSeconds: number): Promise<Service> => {
  const service = await startBenchService({
    mode: "postgres",
    env: {
      PROVIDER: "http",
      PROVIDER_URL: upstream.url,
      PROVIDER_API_KEY: upstreamKey,
      PROVIDER_POLL_SECONDS: String(pollSeconds),
      WORKER: "inline",
      WEBHOOK_ALLOW_PRIVATE: "true"
    }
  })
  return { ...service, databaseUrl: service.databaseUrl ?? "" }
}

/** An Ultra account with a key and an endpoint at the receiver; answers the account id and key. */
const subscribe = async (
  service: Service,
  receiver: Awaited<ReturnType<typeof startReceiver>>,
  events: ReadonlyArray<string>
) => {
  const account = await service.admin("/accounts", {
    email: `webhooks-bench-${randomBase62(6).toLowerCase()}@example.test`,
    plan: "ultra",
    subscription_credits: 2_000_000_000,
    concurrency_limit: 1_000_000
  })
  const accountId = account["id"] ?? ""
  const key =
    (await service.admin(`/accounts/${accountId}/keys`, { name: "bench", scopes: ["music:generate"] }))["key"] ?? ""
  const endpoint = await service.admin(`/accounts/${accountId}/webhook-endpoints`, { url: receiver.url, events })
  receiver.secrets.push(endpoint["secret"] ?? "")
  return { accountId, key }
}

const throughput = async () => {
  const upstream = await startFakeUpstream({ apiKey: upstreamKey })
  const service = await startService(upstream, 5)
  const receiver = await startReceiver()
  try {
    const { accountId } = await subscribe(service, receiver, ["credits.low"])
    const started = performance.now()
    await query(
      service.databaseUrl,
      `insert into outbox_events (id, account_id, type, payload, created_at)
       select 'evt_' || lpad(i::text, 24, '0'), $1, 'credits.low',
              jsonb_build_object('threshold', 100, 'balance', 99, 'subscription_credits', 99, 'onetime_credits', 0), now()
       from generate_series(1, $2::int) as i`,
      accountId,
      throughputEvents
    )
    const deadline = Date.now() + 120_000
    while (new Set(receiver.arrivals.map((a) => a.eventId)).size < throughputEvents && Date.now() < deadline)
      await sleep(10)
    const seconds = (performance.now() - started) / 1000
    const distinct = new Set(receiver.arrivals.map((a) => a.eventId)).size
    return {
      distinct,
      received: receiver.arrivals.length,
      rejected: receiver.rejected(),
      seconds,
      perSecond: distinct / seconds
    }
  } finally {
    await service.close()
    await receiver.close()
    await upstream.close()
  }
}

const lag = async () => {
  const upstream = await startFakeUpstream({ apiKey: upstreamKey })
  // Done at the first poll, but polls are a minute away: the callbacks pace the `ready`s.
  upstream.control.setDefault({ callbacks: "none", pollsBeforeDone: 0 })
  const service = await startService(upstream, 60)
  const receiver = await startReceiver()
  try {
    const { key } = await subscribe(service, receiver, ["job.completed"])
    const ids: Array<string> = []
    for (let i = 0; i < lagTasks; i++) {
      const response = await fetch(`${service.url}/api/v1/music/generations`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ style: "synthwave", title: `Lag ${i}`, lyrics: "[Verse]\nla la la" })
      })
      const body = (await response.json()) as { id?: string }
      if (response.status !== 202 || body.id === undefined) throw new Error(`create answered ${response.status}`)
      ids.push(body.id)
    }
    const rows = await query<{ id: string; provider_task_id: string }>(
      service.databaseUrl,
      "select id, provider_task_id from generation_tasks"
    )
    const providerOf = new Map(rows.map((row) => [row.id, row.provider_task_id]))
    for (const id of ids) {
      void upstream.control.sendCallback(providerOf.get(id) ?? "", "complete")
      await sleep(50)
    }
    const deadline = Date.now() + 60_000
    while (receiver.arrivals.length < ids.length && Date.now() < deadline) await sleep(50)
    const readyAt = new Map(
      (
        await query<{ id: string; ready_at: number }>(
          service.databaseUrl,
          "select id, (extract(epoch from updated_at) * 1000)::float8 as ready_at from generation_tasks where status = 'ready'"
        )
      ).map((row) => [row.id, row.ready_at])
    )
    const lags = receiver.arrivals
      .filter((a) => a.type === "job.completed")
      .map((a) => a.at - (readyAt.get(String(a.data["task_id"])) ?? Number.NaN))
      .filter((n) => Number.isFinite(n))
    return { samples: lags.length, p50: percentile(lags, 50), p99: percentile(lags, 99), max: Math.max(...lags) }
  } finally {
    await service.close()
    await receiver.close()
    await upstream.close()
  }
}

process.stdout.write(
  `webhooks bench on ${cpus().length} cores, load average ${loadavg()
    .map((n) => n.toFixed(1))
    .join(" ")} before the runs\n`
)
const t = await throughput()
process.stdout.write(
  `webhook deliveries (postgres, pnpm start with its inline deliverer, local receiver verifying signatures): ` +
    `${t.distinct} events delivered (${t.received} requests, ${t.rejected} rejected) in ${t.seconds.toFixed(2)} s: ` +
    `${t.perSecond.toFixed(0)} deliveries/s (target >= 1000, ratio ${(t.perSecond / 1000).toFixed(2)})\n`
)
const l = await lag()
process.stdout.write(
  `ready->job.completed at the receiver (postgres, signed, verified): ${l.samples} samples, p50 ${l.p50.toFixed(0)} ms, ` +
    `p99 ${l.p99.toFixed(0)} ms, max ${l.max.toFixed(0)} ms (target p99 < 200 ms, ratio ${(l.p99 / 200).toFixed(2)})\n`
)
