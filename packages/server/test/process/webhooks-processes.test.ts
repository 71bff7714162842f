/**
 * Deliveries across processes: two `pnpm worker` processes share one PostgreSQL, one of them is
 * killed (-9) with attempts in flight, and every event still reaches the receiver; no attempt is
 * logged twice, and the only events received twice are those the dead worker had in flight.
 *
 * Separate processes need a database they can all reach, so without DATABASE_URL the test says
 * why and runs the embedded variant: one process, PGlite, the inline deliverer, every event
 * received exactly once.
 */
import { startFakeUpstream } from "@lyre/fake-upstream"
import type { FakeUpstream } from "@lyre/fake-upstream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backend, createAccount, startTestServer } from "../support/harness.ts"
import type { TestServer } from "../support/harness.ts"
import { spawnEntry } from "../support/processes.ts"
import type { Spawned } from "../support/processes.ts"
import { startReceiver } from "../support/receiver.ts"
import type { Receiver } from "../support/receiver.ts"
import { signingEnv } from "../support/signing.ts"

const apiKey = "webhooks-processes-key"
const EVENTS = 200
let upstream: FakeUpstream
let receiver: Receiver

beforeAll(async () => {
  upstream = await startFakeUpstream({ apiKey })
  receiver = await startReceiver()
  // Slow enough that a worker killed mid-run has attempts in flight.
  receiver.answer = () => ({ kind: "status", status: 200, delayMs: 500 })
})
afterAll(async () => {
  await receiver?.close()
  await upstream?.close()
})

/** An endpoint at the receiver and `EVENTS` pings to it; answers the event ids. */
const pingAll = async (server: TestServer) => {
  const account = await createAccount(server)
  const endpoint = await server.admin("POST", `/accounts/${account.id}/webhook-endpoints`, { url: receiver.url })
  expect(endpoint.status).toBe(201)
  const ids: Array<string> = []
  for (let batch = 0; batch < EVENTS / 25; batch++) {
    const sent = await Promise.all(
      Array.from({ length: 25 }, () => server.admin("POST", `/webhook-endpoints/${String(endpoint.body.id)}/ping`))
    )
    ids.push(...sent.map((res) => String(res.body.event_id)))
  }
  return { endpointId: String(endpoint.body.id), ids }
}

const attemptLog = (server: TestServer, endpointId: string) =>
  server.query<{ delivery_id: string; attempts: number; status: string; logged: number; max: number }>(
    `select d.id as delivery_id, d.attempts, d.status, count(a.attempt)::int as logged, coalesce(max(a.attempt), 0)::int as max
     from webhook_deliveries d left join webhook_attempts a on a.delivery_id = d.id
     where d.endpoint_id = $1 group by d.id`,
    endpointId
  )

/** The log once every delivery has succeeded (or 30 s have passed). */
const settledLog = async (server: TestServer, endpointId: string) => {
  const until = Date.now() + 30_000
  let log = await attemptLog(server, endpointId)
  while ((log.length < EVENTS || log.some((row) => row.status !== "succeeded")) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    log = await attemptLog(server, endpointId)
  }
  return log
}

const onPostgres = async () => {
  const setup = await startTestServer({ worker: "off", webhookAllowPrivate: true })
  const workers: Array<Spawned> = []
  try {
    const common = {
      DATABASE_URL: String(setup.config.databaseUrl),
      ...(setup.config.redisUrl === null ? {} : { REDIS_URL: setup.config.redisUrl }),
      SECRET_KEY: String(setup.config.secretKey),
      ...(await signingEnv()),
      DATA_DIR: setup.config.dataDir,
      PUBLIC_URL: setup.url,
      PROVIDER: "http",
      PROVIDER_URL: upstream.url,
      PROVIDER_API_KEY: apiKey,
      WORKER_LEASE_SECONDS: "2",
      WEBHOOK_ALLOW_PRIVATE: "true",
      LOG_LEVEL: "info"
    }
    workers.push(spawnEntry("worker-main", common), spawnEntry("worker-main", common))
    // Both must be running before the events come, or the first up takes them all.
    await Promise.all(workers.map((worker) => worker.waitFor("worker starting")))
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    const { endpointId, ids } = await pingAll(setup)
    // Kill a worker while the receiver holds requests it sent and has not answered yet: a lease
    // alone is not enough, since a loaded machine can leave a leased attempt unsent for longer
    // than any fixed wait. An idle worker rests up to a second between looks, and a signal wakes
    // only its own process, so either one may take the first events.
    let victim: Spawned | undefined
    const deadline = Date.now() + 30_000
    while (victim === undefined && Date.now() < deadline) {
      // The receiver answers 500 ms after arrival; what came in the last 300 ms is unanswered.
      const unanswered = new Set(receiver.received.filter((r) => Date.now() - r.arrivedAt < 300).map((r) => r.eventId))
      for (const worker of workers) {
        const held = await setup.query<{ event_id: string }>(
          "select event_id from webhook_deliveries where status = 'pending' and lease_owner like $1",
          `%:${String(worker.child.pid)}:%`
        )
        if (victim === undefined && held.some((row) => unanswered.has(row.event_id))) victim = worker
      }
      if (victim === undefined) await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect(victim).toBeDefined()
    await victim?.crash()
    // The survivor takes the dead worker's deliveries over when their leases end (2 s).
    const log = await settledLog(setup, endpointId)
    expect(log.filter((row) => row.status !== "succeeded")).toEqual([])
    const distinct = new Set(receiver.received.map((r) => r.eventId)).size
    const twice = receiver.received.length - distinct
    process.stdout.write(`webhooks processes test: ${EVENTS} events, ${twice} received twice after the kill\n`)
    expect(ids.filter((id) => !receiver.received.some((r) => r.eventId === id))).toEqual([])
    // The dead worker's attempts came again, and nothing else did: at most what one worker can
    // have in flight (128).
    expect(twice).toBeGreaterThan(0)
    expect(twice).toBeLessThanOrEqual(128)
    // Every attempt logged once, numbered 1..n without gaps or repeats.
    expect(log.filter((row) => row.logged !== row.attempts || row.max !== row.attempts)).toEqual([])
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()))
    await setup.close()
  }
}

const onPglite = async () => {
  process.stdout.write(
    "webhooks processes test: DATABASE_URL is not set, and separate worker processes need a database they can all " +
      "reach (PGlite belongs to one process); running the embedded variant instead\n"
  )
  const server = await startTestServer({ worker: "inline", webhookAllowPrivate: true })
  try {
    const { endpointId, ids } = await pingAll(server)
    const log = await settledLog(server, endpointId)
    expect(log.filter((row) => row.status !== "succeeded" || row.logged !== 1 || row.max !== 1)).toEqual([])
    expect(new Set(receiver.received.map((r) => r.eventId))).toEqual(new Set(ids))
    expect(receiver.received).toHaveLength(EVENTS)
  } finally {
    await server.close()
  }
}

describe("webhook deliverers in several processes", () => {
  it(
    backend.database === "postgres"
      ? "2 worker processes, one killed mid-run: every event delivered, no attempt logged twice"
      : "embedded variant (no DATABASE_URL): the inline deliverer, every event exactly once",
    () => (backend.database === "postgres" ? onPostgres() : onPglite()),
    90_000
  )
})
