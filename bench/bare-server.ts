/**
 * The benchmark's baseline: a bare node:http handler that does the same work per request as
 * Lyre (the same SQL statements on the same driver, the same rate-limit call) with no tRPC, no
 * REST dispatcher and no service layers. The statements are written out here on purpose: the
 * baseline must not share the code it is the baseline for.
 *
 * It answers what Lyre answers (decision 0111): the same status, the same headers (a request
 * id, the rate-limit trio) and the same body, field for field, so that the comparison charges
 * Lyre for its layers and not for the interface's answer. `requireSameAnswers` in service.ts
 * holds the two to that before a benchmark measures them.
 */
import { createHmac } from "node:crypto"
import { Agent, createServer, request } from "node:http"
import type { IncomingMessage, ServerResponse } from "node:http"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Redis } from "ioredis"
import { RateLimiter, randomBase62, RedisGate } from "@lyre/core"
import type { RateLimitDecision } from "@lyre/core"
import { startEmbeddedPostgres } from "../packages/server/src/database.ts"

const env = process.env
const secretKey = env["SECRET_KEY"] ?? ""
const port = Number(env["PORT"] ?? "8090")
/** Where the provider calls back: this server (PUBLIC_URL, as Lyre's site URL). */
const publicUrl = env["PUBLIC_URL"] ?? `http://127.0.0.1:${port}`
const defaultRpm = Number(env["RATE_LIMIT_RPM"] ?? "60")
const defaultConcurrency = 10
/**
 * BARE_EXTRA_MICROS: CPU burnt on every request before its answer, a known extra cost (decision
 * 0116). With BENCH_SELF_CHECK=1 the twin in Lyre's place burns it, and the ratio it should read
 * is known, so how each load's figure departs from it is the measure's own bias.
 */
const extraMicros = Number(env["BARE_EXTRA_MICROS"] ?? "0")
const embedded = env["DATABASE_URL"] === undefined
const pg = embedded ? await startEmbeddedPostgres(env["DATA_DIR"] ?? ".data") : null
const database =
  pg === null
    ? PgClient.layer({ url: Redacted.make(env["DATABASE_URL"] ?? ""), maxConnections: 10, multiplex: true })
    : PgClient.layer({ host: pg.host, port: pg.port, database: "postgres", username: "postgres", maxConnections: 1 })
const redis = env["REDIS_URL"] === undefined ? null : new Redis(env["REDIS_URL"], { enableAutoPipelining: true })
const limiter =
  redis === null ? RateLimiter.layerMemory : RateLimiter.layerRedis(redis).pipe(Layer.provide(RedisGate.layer()))
const runtime = ManagedRuntime.make(Layer.merge(database, limiter))
const sql = await runtime.runPromise(SqlClient.use(Effect.succeed))
// As Lyre does: the writes (charge, record) on connections of their own, one statement at a time each.
const writeRuntime = ManagedRuntime.make(
  pg === null
    ? PgClient.layer({ url: Redacted.make(env["DATABASE_URL"] ?? ""), maxConnections: 8 })
    : Layer.succeed(SqlClient)(sql)
)
const writes = await writeRuntime.runPromise(SqlClient.use(Effect.succeed))
const rateLimiter = await runtime.runPromise(RateLimiter.use(Effect.succeed))

interface KeyRow {
  readonly key_id: string
  readonly key_name: string
  readonly scopes: ReadonlyArray<string>
  readonly expires_at: Date | null
  readonly account_id: string
  readonly plan: string
  readonly subscription_credits: number
  readonly onetime_credits: number
  readonly revoked_at: Date | null
  readonly requests_per_minute: number | null
  readonly concurrency_limit: number | null
}

interface Admitted {
  readonly row: KeyRow
  readonly decision: RateLimitDecision
}

/** burn's running value, kept so that its loop cannot be dropped as dead code. */
let burnt = 0
/**
 * Rounds of `burn` a microsecond of CPU buys, found once at start on this thread's CPU clock, the
 * second of two measures so that the loop is measured as V8 has optimised it. In the service under
 * load a burn of 160 µs took 151 µs of wall time (the median; a thread's CPU clock cannot time so
 * short a stretch in a process that sleeps between requests), and the steady load read 132-141 µs
 * of extra (decision 0116): the bench holds the full speed's figure to the extra the steady load
 * measured, not to this.
 */
const roundsPerMicro = extraMicros > 0 ? calibrateTwice() : 0
/** A fixed amount of work (not a clock's wait, which a descheduled process would spend idle). */
function burn(rounds: number): void {
  let x = burnt
  for (let i = 0; i < rounds; i++) x = (x * 1_103_515_245 + 12_345) % 2_147_483_648
  burnt = x
}
/** The first measure only warms the loop up for V8; the second is the one kept. */
function calibrateTwice(): number {
  calibrate()
  return calibrate()
}
function calibrate(): number {
  let rounds = 1_000
  for (;;) {
    const start = process.threadCpuUsage()
    burn(rounds)
    const spent = process.threadCpuUsage(start)
    const micros = spent.user + spent.system
    if (micros >= 200_000) return rounds / micros
    rounds *= 2
  }
}

/** The interface's headers on every answer: its request id, and for an admitted credential the rate-limit trio. */
const send = (res: ServerResponse, status: number, body: unknown, admitted?: Admitted) => {
  if (roundsPerMicro > 0) burn(Math.round(extraMicros * roundsPerMicro))
  const payload = JSON.stringify(body)
  const requestId = `req_${randomBase62(24)}`
  res.writeHead(
    status,
    admitted === undefined
      ? {
          "x-request-id": requestId,
          "content-type": "application/json; charset=utf-8",
          "content-length": Buffer.byteLength(payload)
        }
      : {
          "x-request-id": requestId,
          "x-ratelimit-limit": String(admitted.decision.limit),
          "x-ratelimit-remaining": String(admitted.decision.remaining),
          "x-ratelimit-reset": String(admitted.decision.resetAtSeconds),
          "content-type": "application/json; charset=utf-8",
          "content-length": Buffer.byteLength(payload)
        }
  )
  res.end(payload)
}

interface TaskRow {
  readonly id: string
  readonly status: string
  readonly model: string
  readonly created_at: Date
  readonly updated_at: Date
  readonly credits_used: number
  readonly credits_refunded: number
  readonly error_code: string | null
  readonly error_message: string | null
  readonly tracks: ReadonlyArray<unknown> | null
  readonly previews: ReadonlyArray<{ readonly index: number; readonly stream_url: string }> | null
}

/** A task as the interface shows it; a stored track is sent as stored. */
const renderTask = (task: TaskRow) => ({
  id: task.id,
  status: task.status,
  model: task.model,
  created_at: task.created_at.toISOString(),
  updated_at: task.updated_at.toISOString(),
  credits_used: task.credits_used,
  credits_refunded: task.credits_refunded,
  error: task.error_code === null ? null : { code: task.error_code, message: task.error_message ?? "" },
  tracks: task.tracks ?? [],
  previews:
    task.status === "pending" && task.previews !== null
      ? task.previews.map((p) => ({ index: p.index, stream_url: p.stream_url }))
      : []
})

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let data = ""
    req.on("data", (chunk: Buffer) => (data += chunk.toString()))
    req.on("end", () => resolve(data))
  })

const authenticate = async (req: IncomingMessage): Promise<Admitted | null> => {
  const key = (req.headers.authorization ?? "").slice("Bearer ".length)
  const hash = createHmac("sha256", secretKey).update(key).digest("hex")
  const [row] = await runtime.runPromise(sql<KeyRow>`
    select k.id as key_id, k.name as key_name, k.key_hash, k.scopes, k.expires_at, k.revoked_at,
           a.id as account_id, a.plan, a.subscription_credits, a.onetime_credits,
           a.concurrency_limit, a.requests_per_minute
    from api_keys k join accounts a on a.id = k.account_id
    where k.key_hash = ${hash}`)
  if (row === undefined || row.revoked_at !== null) return null
  const decision = await runtime.runPromise(rateLimiter.hit(row.key_id, row.requests_per_minute ?? defaultRpm))
  return decision.allowed ? { row, decision } : null
}

// As Lyre's HTTP provider does: node:http with kept-alive connections.
const agent = new Agent({ keepAlive: true, timeout: 5_000, scheduling: "lifo" })
const submit = (body: string) =>
  new Promise<{ data?: { taskId?: string } }>((resolve, reject) => {
    const req = request(
      `${env["PROVIDER_URL"] ?? ""}/api/v1/generate`,
      {
        method: "POST",
        agent,
        headers: {
          authorization: `Bearer ${env["PROVIDER_API_KEY"] ?? ""}`,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body)
        }
      },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () =>
          resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as { data?: { taskId?: string } })
        )
        res.on("error", reject)
      }
    )
    req.on("error", reject)
    req.end(body)
  })

interface CreateBody {
  readonly model?: string
  readonly style?: string
  readonly title?: string
  readonly lyrics?: string
  readonly instrumental?: boolean
}

const create = async (row: KeyRow, body: CreateBody) => {
  const model = body.model ?? "aether"
  const price = 50
  const now = new Date().toISOString()
  const taskId = `gen_${randomBase62(24)}`
  const ledgerId = `led_${randomBase62(24)}`
  const limit = row.concurrency_limit ?? defaultConcurrency
  const deadline = new Date(Date.now() + 15 * 60_000).toISOString()
  const callbackToken = randomBase62(32)
  const lowEventId = `evt_${randomBase62(24)}`
  return runtime
    .runPromise(
      Effect.gen(function* () {
        const [outcome] = yield* writes<{ debited: boolean }>`
      with switch as (
        select coalesce((select available from model_status where model = ${model}), true) as switched_on,
               coalesce((select retry_after_seconds from model_status where model = ${model}), 0) as retry_after_seconds,
               (select open_until from model_circuits where model = ${model} and open_until > ${now}::timestamptz) as open_until
      ),
      model as (
        select switched_on and open_until is null as available,
               case when not switched_on then retry_after_seconds
                    else ceil(extract(epoch from (open_until - ${now}::timestamptz)))::int end as retry_after_seconds
        from switch
      ),
      slot as (
        select subject, pending from credential_inflight where subject = ${row.key_id} for no key update
      ),
      prev as (
        select a.id, a.subscription_credits as s, a.onetime_credits as o, a.credit_alert_threshold as t,
               a.credit_alert_armed as armed, ${price}::int as price
        from accounts a, slot where a.id = ${row.account_id} for no key update of a
      ),
      debit as (
        update accounts a
        set subscription_credits = prev.s - least(prev.s, ${price}),
            onetime_credits = prev.o - (${price} - least(prev.s, ${price})),
            credit_alert_armed = (case when prev.t is null then prev.armed when prev.s + prev.o - prev.price >= prev.t then true
                                       when prev.s + prev.o >= prev.t then false else prev.armed end),
            updated_at = ${now}::timestamptz
        from prev, model, slot
        where a.id = prev.id and model.available and slot.pending < ${limit} and prev.s + prev.o >= ${price}
        returning a.subscription_credits as s_after, a.onetime_credits as o_after,
                  least(prev.s, ${price}) as s_take, ${price} - least(prev.s, ${price}) as o_take, prev.t as threshold,
                  (prev.armed and prev.t is not null and prev.s + prev.o >= prev.t and prev.s + prev.o - prev.price < prev.t) as alert
      ),
      admitted as (
        update credential_inflight c set pending = c.pending + 1 from debit where c.subject = ${row.key_id}
      ),
      low as (
        insert into outbox_events (id, account_id, type, payload, created_at)
        select ${lowEventId}, ${row.account_id}, 'credits.low',
               jsonb_build_object('threshold', threshold, 'balance', s_after + o_after, 'subscription_credits', s_after,
                                  'onetime_credits', o_after), ${now}::timestamptz
        from debit where alert
      ),
      task as (
        insert into generation_tasks (id, account_id, credential_subject, status, model, request, credits_used,
          debit_subscription, debit_onetime, deadline_at, created_at, updated_at, callback_token, submission_state)
        select ${taskId}, ${row.account_id}, ${row.key_id}, 'pending', ${model}, ${JSON.stringify(body)}::jsonb, ${price},
               s_take, o_take, ${deadline}::timestamptz, ${now}::timestamptz, ${now}::timestamptz, ${callbackToken}, 'submitting'
        from debit
        returning id
      ),
      ledger as (
        insert into credit_ledger (id, account_id, kind, task_id, subscription_delta, onetime_delta,
          subscription_after, onetime_after, created_at)
        select ${ledgerId}, ${row.account_id}, 'debit', task.id, -s_take, -o_take, s_after, o_after, ${now}::timestamptz
        from debit, task
      )
      select model.available, model.retry_after_seconds, (select pending from slot) as pending,
             coalesce((select s + o from prev), 0)::int as balance, exists (select 1 from task) as debited
      from model`
        return { taskId, debited: outcome?.debited === true, now, model, price, callbackToken }
      })
    )
    .then(async (result) => {
      if (!result.debited) return result
      // As Lyre does after its transaction: hand the task to the upstream, record its id.
      // The request's own words, as Lyre sends them: the upstream writes them back into its tracks.
      const answer = await submit(
        JSON.stringify({
          customMode: true,
          instrumental: body.instrumental ?? false,
          model: "V4_5",
          style: body.style,
          title: body.title,
          prompt: body.lyrics,
          callBackUrl: `${publicUrl}/internal/provider/callback/${result.taskId}?token=${result.callbackToken}`
        })
      )
      await runtime.runPromise(writes`
      with relaxed as (select set_config('synchronous_commit', 'off', true))
      update generation_tasks set provider_task_id = ${answer.data?.taskId ?? ""}, submission_state = 'accepted',
             next_poll_at = ${new Date(Date.now() + 5_000).toISOString()}::timestamptz
      where id = ${result.taskId} and status not in ('ready', 'failed') and submission_state <> 'accepted' and exists (select 1 from relaxed)`)
      return result
    })
}

/**
 * The provider's callbacks (the worker benchmark's bare run), as Lyre's intake: progress stages
 * answered at once, a final one makes its task due in one statement that checks the token and
 * wakes the workers by NOTIFY at its commit (this process has no worker of its own).
 */
const callback = async (taskId: string, token: string, body: string) => {
  let stage: unknown
  let providerTaskId: string | null = null
  try {
    const data = (JSON.parse(body) as { data?: { callbackType?: unknown; task_id?: unknown } }).data
    stage = data?.callbackType
    if (typeof data?.task_id === "string") providerTaskId = data.task_id
  } catch {
    return 200
  }
  if (stage === "text" || stage === "first") return 200
  const [task] = await runtime.runPromise(sql<{ changed: number }>`
    with task as (
      select id, provider_task_id from generation_tasks
      where id = ${taskId} and callback_token is not null
        and sha256(convert_to(callback_token, 'UTF8')) = sha256(convert_to(${token}::text, 'UTF8'))
    ),
    relaxed as (
      select set_config('synchronous_commit', case when provider_task_id is null then 'on' else 'off' end, true)
      from task
    ),
    changed as (
      update generation_tasks t
      set provider_task_id = coalesce(t.provider_task_id, ${providerTaskId}::text),
          submission_state = 'accepted', next_poll_at = ${new Date().toISOString()}::timestamptz, hints = t.hints + 1
      from task
      where t.id = task.id and t.status not in ('ready', 'failed')
        and coalesce(t.provider_task_id, ${providerTaskId}::text) is not null
        and exists (select 1 from relaxed)
      returning t.id
    )
    select (select count(*) from changed, lateral (select pg_notify('lyre_worker', 'bare')) sent)::int as changed
    from task`)
  return task === undefined ? 404 : 200
}

const server = createServer((req, res) => {
  void (async () => {
    const [path = "/", query = ""] = (req.url ?? "/").split("?")
    const body = req.method === "POST" ? await readBody(req) : ""
    if (path.startsWith("/internal/provider/callback/")) {
      const status = await callback(
        path.slice("/internal/provider/callback/".length),
        new URLSearchParams(query).get("token") ?? "",
        body
      )
      return send(res, status, status === 200 ? { code: 200, msg: "success" } : { code: 404, msg: "Not found" })
    }
    const admitted = await authenticate(req).catch(() => null)
    if (admitted === null)
      return send(res, 401, { error: { type: "authentication_error", code: "invalid_credential" } })
    const { row } = admitted
    if (path === "/api/v1/me") {
      return send(
        res,
        200,
        {
          id: row.account_id,
          plan: row.plan,
          credits: {
            subscription: row.subscription_credits,
            onetime: row.onetime_credits,
            total: row.subscription_credits + row.onetime_credits
          },
          rate_limits: {
            requests_per_minute: row.requests_per_minute ?? defaultRpm,
            concurrent_generations: row.concurrency_limit ?? defaultConcurrency
          },
          auth: {
            kind: "api_key",
            scopes: [...row.scopes],
            key: { id: row.key_id, name: row.key_name, expires_at: row.expires_at?.toISOString() ?? null }
          }
        },
        admitted
      )
    }
    if (path === "/api/v1/music/generations" && req.method === "POST") {
      const result = await create(row, JSON.parse(body) as CreateBody)
      if (!result.debited)
        return send(res, 402, { error: { type: "insufficient_credits", code: "insufficient_credits" } }, admitted)
      return send(
        res,
        202,
        {
          id: result.taskId,
          status: "pending",
          model: result.model,
          created_at: result.now,
          updated_at: result.now,
          credits_used: result.price,
          credits_refunded: 0,
          error: null,
          tracks: [],
          previews: []
        },
        admitted
      )
    }
    const id = path.slice("/api/v1/music/generations/".length)
    const [task] = await runtime.runPromise(sql<TaskRow>`
      select id, status, model, credits_used, credits_refunded, error_code, error_message, tracks, previews, created_at, updated_at
      from generation_tasks where id = ${id} and account_id = ${row.account_id}`)
    return task === undefined
      ? send(res, 404, { error: { code: "task_not_found" } }, admitted)
      : send(res, 200, renderTask(task), admitted)
  })().catch(() => res.destroy())
})
server.listen(port, "127.0.0.1", () => process.stdout.write(`{"msg":"listening","port":${port}}\n`))
process.once("SIGTERM", () => {
  server.close()
  server.closeAllConnections()
  void Promise.all([runtime.dispose(), writeRuntime.dispose()]).then(async () => {
    await redis?.quit()
    await pg?.stop()
    process.exit(0)
  })
})
