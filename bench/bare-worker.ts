/**
 * The worker benchmark's baseline (`worker-bench.ts`, its `bare` run): a bare process doing the
 * work DESIGN.md section 6 and the outbox leave to a worker for each task, with no Effect fibers,
 * layers, schemas, metrics or logging in the task's path. As `bare-server.ts` is for the API, the
 * statements are written out here on purpose, copied from Lyre's: the baseline must not share the
 * code it is the baseline for.
 *
 * For each task, as Lyre's worker does:
 * - claim: the lease queue's statement, up to 64 tasks in flight, claims at least 10 ms apart
 *   under load, woken by the API's `NOTIFY lyre_worker` (or a free slot), else every 250 ms;
 * - record-info (node:http, a kept-alive agent of at most 64 connections), its JSON parsed;
 * - the four files (each track's audio and cover) downloaded, a directory per task: a cover
 *   written chunk by chunk with synchronous calls to a temporary name and renamed into place; a
 *   track's audio read whole, its content credentials added as Lyre's re-hosting adds them (the
 *   disclosure in its ID3v2 tag, a C2PA manifest signed by c2pa-rs with a local certificate:
 *   `@lyre/provenance`, called directly), then written and renamed the same way;
 * - `ready`: the same statement (tracks, the credential's slot, the track rows, the outbox event),
 *   on a pool of writes of its own;
 * - the deliverer's look (fan-out of new events, then a claim of due deliveries) at most every
 *   10 ms while tasks finish, and the deadline sweep every second.
 *
 * PostgreSQL only (the worker benchmark's store). Environment: DATABASE_URL, DATA_DIR,
 * PUBLIC_URL, PROVIDER_URL, PROVIDER_API_KEY, PROVIDER_POLL_SECONDS.
 */
import { closeSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs"
import { Agent, request } from "node:http"
import type { IncomingMessage } from "node:http"
import { join } from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Effect, ManagedRuntime, Queue, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { randomBase62 } from "@lyre/core"
import {
  discloseInMp3,
  loadC2pa,
  loadSigningCredentials,
  makeLocalCredentials,
  signAsset
} from "../packages/provenance/src/index.ts"
import type { ManifestDefinition } from "../packages/provenance/src/index.ts"

const env = process.env
const databaseUrl = Redacted.make(env["DATABASE_URL"] ?? "")
const filesRoot = join(env["DATA_DIR"] ?? ".data", "files")
const publicUrl = env["PUBLIC_URL"] ?? ""
const providerUrl = env["PROVIDER_URL"] ?? ""
const providerKey = env["PROVIDER_API_KEY"] ?? ""
const pollSeconds = Number(env["PROVIDER_POLL_SECONDS"] ?? "5")
const workerId = `bare-${process.pid}-${randomBase62(8)}`
const concurrency = 64
const leaseSeconds = 300
const idleMillis = 250
const gapMillis = 10

const runtime = ManagedRuntime.make(PgClient.layer({ url: databaseUrl, maxConnections: 10 }))
const sql = await runtime.runPromise(SqlClient.use(Effect.succeed))
const pg = await runtime.runPromise(PgClient.PgClient.use(Effect.succeed))
// As Lyre's WriteSql: the final statements on connections of their own.
const writeRuntime = ManagedRuntime.make(PgClient.layer({ url: databaseUrl, maxConnections: 8 }))
const writes = await writeRuntime.runPromise(SqlClient.use(Effect.succeed))
const run = <A>(effect: Effect.Effect<A, unknown>): Promise<A> => runtime.runPromise(effect)

const iso = (millis: number) => new Date(millis).toISOString()
const randomId = (prefix: string) => `${prefix}_${randomBase62(24)}`

/** Wakes the claim loop: a NOTIFY from the API, or a slot freed while every slot was busy. */
let wake: (() => void) | null = null
let woken = false
const notify = () => {
  woken = true
  const resume = wake
  wake = null
  resume?.()
}
const waitForNews = (millis: number) =>
  new Promise<void>((resolve) => {
    if (woken) {
      woken = false
      return resolve()
    }
    const timer = setTimeout(() => {
      wake = null
      resolve()
    }, millis)
    wake = () => {
      clearTimeout(timer)
      woken = false
      resolve()
    }
  })
const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

runtime.runFork(
  Effect.scoped(
    Effect.gen(function* () {
      const notifications = yield* pg.listen("lyre_worker")
      return yield* Effect.forever(Effect.andThen(Queue.take(notifications), Effect.sync(notify)))
    })
  )
)

interface Claimed {
  readonly id: string
  readonly attempts: number
  readonly hints: number
  readonly provider_task_id: string
}

const claim = (limit: number) => {
  const now = Date.now()
  return run(sql<Claimed>`
    with relaxed as (select set_config('synchronous_commit', 'off', true))
    update generation_tasks q
    set lease_owner = ${workerId}, lease_expires_at = ${iso(now + leaseSeconds * 1000)}::timestamptz,
        attempts = q.attempts + 1
    from (
      select id from generation_tasks
      where status = 'pending' and submission_state = 'accepted' and next_poll_at <= ${iso(now)}::timestamptz
        and (lease_expires_at is null or lease_expires_at < ${iso(now)}::timestamptz)
      order by next_poll_at
      limit ${limit}
      for update skip locked
    ) due
    where q.id = due.id and exists (select 1 from relaxed)
    returning q.id, q.attempts, q.hints, q.provider_task_id, q.trace_context`)
}

const release = (task: Claimed, reason: string) => {
  const now = Date.now()
  const delay = Math.min(pollSeconds * 2 ** Math.max(0, task.attempts - 1), 60)
  return run(sql`
    with relaxed as (select set_config('synchronous_commit', 'off', true))
    update generation_tasks
    set lease_owner = null, lease_expires_at = null, last_error = ${reason},
        next_poll_at = case when hints = ${task.hints} then ${iso(now + delay * 1000)}::timestamptz
                            else ${iso(now)}::timestamptz end
    where id = ${task.id} and status not in ('ready', 'failed') and lease_owner = ${workerId}
      and exists (select 1 from relaxed)`)
}

interface UpstreamTrack {
  readonly id: string
  readonly audioUrl: string
  readonly imageUrl: string | null
  readonly prompt: string
  readonly title: string
  readonly tags: string
  readonly duration: number | null
}

interface RecordInfo {
  readonly data?: {
    readonly status?: string
    readonly response?: { readonly sunoData?: ReadonlyArray<UpstreamTrack> } | null
  }
}

// As Lyre's upstream agents: kept alive, at most 64 connections to one origin, warmest first.
const agent = new Agent({ keepAlive: true, timeout: 5_000, scheduling: "lifo", maxSockets: 64 })
const provider = new URL(providerUrl)

/** A GET; once more on a kept-alive connection the upstream closed meanwhile, as node's documentation advises. */
const get = (url: URL, headers: Record<string, string>, retry = true): Promise<IncomingMessage> =>
  new Promise((resolve, reject) => {
    const req = request(
      {
        protocol: url.protocol,
        hostname: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: "GET",
        agent,
        headers
      },
      resolve
    )
    req.on("error", (error: NodeJS.ErrnoException) => {
      if (retry && req.reusedSocket && (error.code === "ECONNRESET" || error.code === "EPIPE"))
        resolve(get(url, headers, false))
      else reject(error)
    })
    req.end()
  })

const recordInfo = async (providerTaskId: string): Promise<RecordInfo> => {
  const url = new URL(`/api/v1/generate/record-info?taskId=${encodeURIComponent(providerTaskId)}`, provider)
  const response = await get(url, { authorization: `Bearer ${providerKey}` })
  return new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    response.on("data", (chunk: Buffer) => chunks.push(chunk))
    response.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as RecordInfo))
    response.on("error", reject)
  })
}

// As Lyre's signer: a local pair in place of the operator's, c2pa-rs compiled before any task.
const local = await makeLocalCredentials()
const signer = await loadSigningCredentials(local.chainPem, local.keyPem)
await loadC2pa()

/** What Lyre's manifest says of an upstream's new song (core's `provenance/origin.ts`, written out). */
const manifestOf = (title: string): ManifestDefinition => ({
  title,
  format: "audio/mpeg",
  claimGenerator: { name: "Lyre", version: "0.0.0" },
  actions: [
    { action: "c2pa.created", digitalSourceType: "trainedAlgorithmicMedia", softwareAgent: { name: "suno model V4_5" } }
  ]
})
const disclosure = {
  text: "Made with AI by Lyre (suno model V4_5); content credentials (C2PA) inside.",
  software: "Lyre 0.0.0",
  digitalSourceType: "http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia"
}

/** A track's audio: read whole, signed as Lyre signs it, written to a temporary name and renamed into place. */
const downloadSigned = async (url: string, path: string, title: string): Promise<void> => {
  const response = await get(new URL(url), {})
  if ((response.statusCode ?? 0) !== 200) {
    response.resume()
    throw new Error(`downloading ${url} answered ${response.statusCode}`)
  }
  const chunks: Array<Buffer> = []
  for await (const chunk of response) chunks.push(chunk as Buffer)
  const signed = await signAsset(manifestOf(title), discloseInMp3(Buffer.concat(chunks), disclosure), signer)
  const temporary = `${path}.tmp`
  const fd = openSync(temporary, "w")
  try {
    writeSync(fd, signed)
  } finally {
    closeSync(fd)
  }
  renameSync(temporary, path)
}

/** One file, streamed to a temporary name with synchronous writes and renamed into place. */
const download = async (url: string, path: string): Promise<void> => {
  const response = await get(new URL(url), {})
  if ((response.statusCode ?? 0) !== 200) {
    response.resume()
    throw new Error(`downloading ${url} answered ${response.statusCode}`)
  }
  const temporary = `${path}.tmp`
  const fd = openSync(temporary, "w")
  return new Promise((resolve, reject) => {
    const fail = (cause: unknown) => {
      response.destroy()
      closeSync(fd)
      rmSync(temporary, { force: true })
      reject(cause)
    }
    response.on("data", (chunk: Buffer) => writeSync(fd, chunk))
    response.on("end", () => {
      closeSync(fd)
      renameSync(temporary, path)
      resolve()
    })
    response.on("error", fail)
  })
}

const rehost = async (taskId: string, tracks: ReadonlyArray<UpstreamTrack>) => {
  mkdirSync(join(filesRoot, taskId), { recursive: true })
  return Promise.all(
    tracks.map(async (track, index) => {
      const audioKey = `${taskId}/${index}.mp3`
      const imageKey = `${taskId}/${index}-cover.png`
      await Promise.all([
        downloadSigned(track.audioUrl, join(filesRoot, audioKey), track.title),
        track.imageUrl === null ? null : download(track.imageUrl, join(filesRoot, imageKey))
      ])
      return {
        track: {
          id: randomId("trk"),
          audio_url: `${publicUrl}/files/${audioKey}`,
          duration: track.duration,
          title: track.title,
          lyrics: track.prompt,
          image_url: track.imageUrl === null ? null : `${publicUrl}/files/${imageKey}`,
          tags: track.tags,
          index
        },
        providerTrackId: track.id
      }
    })
  )
}

const markReady = (taskId: string, finished: Awaited<ReturnType<typeof rehost>>) => {
  const now = iso(Date.now())
  const tracks = finished.map((f) => f.track)
  const trackRows = finished.map((f) => ({
    id: f.track.id,
    index: f.track.index,
    duration: f.track.duration,
    provider_track_id: f.providerTrackId
  }))
  return writeRuntime.runPromise(writes`
    with done as (
      update generation_tasks
      set status = 'ready', tracks = ${JSON.stringify(tracks)}::jsonb, updated_at = ${now}::timestamptz,
          lease_owner = null, lease_expires_at = null, next_poll_at = null
      where id = ${taskId} and status not in ('ready', 'failed')
      returning id, account_id, credential_subject, credits_used, tracks, created_at, model
    ),
    freed as (
      update credential_inflight c set pending = c.pending - 1
      from done where c.subject = done.credential_subject
    ),
    kept as (
      insert into tracks (id, task_id, account_id, track_index, provider_track_id, duration, created_at)
      select t.id, done.id, done.account_id, t.index, t.provider_track_id, t.duration, ${now}::timestamptz
      from done, jsonb_to_recordset(${JSON.stringify(trackRows)}::jsonb)
        as t(id text, index integer, provider_track_id text, duration double precision)
    ),
    event as (
      insert into outbox_events (id, account_id, type, payload, created_at)
      select ${randomId("evt")}, account_id, 'job.completed',
             jsonb_build_object('task_id', id, 'status', 'ready', 'tracks', tracks, 'credits_used', credits_used,
                                'created_at', to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
             ${now}::timestamptz
      from done
    )
    select model from done`)
}

const processTask = async (task: Claimed) => {
  const answer = await recordInfo(task.provider_task_id)
  const tracks = answer.data?.response?.sunoData ?? []
  if (answer.data?.status !== "SUCCESS" || tracks.length === 0) return release(task, "pending")
  await markReady(task.id, await rehost(task.id, tracks))
  lookForDeliveries()
}

/** The deliverer's look, as Lyre's: new events fanned out, then due deliveries claimed (none here). */
let lookPending = false
let lastLook = 0
const lookForDeliveries = () => {
  if (lookPending) return
  lookPending = true
  setTimeout(
    () => {
      lookPending = false
      lastLook = Date.now()
      const now = iso(lastLook)
      void run(
        sql`
      with events as (
        select id, account_id, type from outbox_events
        where not fanned_out order by seq limit 500
        for update skip locked
      ),
      marked as (
        update outbox_events o set fanned_out = true from events where o.id = events.id returning o.id
      ),
      made as (
        insert into webhook_deliveries (id, event_id, endpoint_id, status, attempts, next_attempt_at, created_at,
          updated_at)
        select 'dlv_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 24), events.id, w.id, 'pending', 0,
               ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
        from events join webhook_endpoints w
          on w.account_id = events.account_id and w.enabled and w.events @> jsonb_build_array(events.type)
        on conflict do nothing
      )
      select count(*)::int as events from marked`.pipe(
          Effect.andThen(sql`
      update webhook_deliveries d
      set lease_owner = ${workerId}, lease_expires_at = ${iso(lastLook + leaseSeconds * 1000)}::timestamptz
      from (
        select due.id from webhook_deliveries due join webhook_endpoints w on w.id = due.endpoint_id
        where due.status = 'pending' and due.next_attempt_at <= ${now}::timestamptz
          and (due.lease_expires_at is null or due.lease_expires_at < ${now}::timestamptz) and w.enabled
        order by due.next_attempt_at
        limit 128
        for update of due skip locked
      ) due, outbox_events e, webhook_endpoints w
      where d.id = due.id and e.id = d.event_id and w.id = d.endpoint_id
      returning d.id`)
        )
      )
    },
    Math.max(0, gapMillis - (Date.now() - lastLook))
  )
}

const sweep = () =>
  run(sql<{ id: string }>`
    select id from generation_tasks
    where status = 'pending' and deadline_at <= ${iso(Date.now())}::timestamptz
    order by deadline_at limit 100`)

// Launched beside the API, which applies the migrations: the tables come when it has.
for (;;) {
  const ready = await run(sql`select to_regclass('public.webhook_deliveries') is not null as ready`).then(
    (rows) => rows[0]?.["ready"] === true,
    () => false
  )
  if (ready) break
  await sleep(100)
}

let inFlight = 0
let full = false
let lastSweep = 0
let lastClaim = 0
process.once("SIGTERM", () => process.exit(0))
for (;;) {
  const now = Date.now()
  if (now - lastSweep >= 1_000) {
    lastSweep = now
    await sweep()
  }
  const free = concurrency - inFlight
  if (free === 0) {
    full = true
    await waitForNews(idleMillis)
    continue
  }
  if (now - lastClaim < gapMillis) await sleep(gapMillis - (now - lastClaim))
  lastClaim = Date.now()
  const claimed = await claim(free)
  for (const task of claimed) {
    inFlight++
    processTask(task)
      .catch((cause: unknown) => {
        console.error(`bare worker: task ${task.id}: ${String(cause)}`)
        return release(task, "internal error")
      })
      .finally(() => {
        inFlight--
        if (full) {
          full = false
          notify()
        }
      })
  }
  if (claimed.length < free) await waitForNews(idleMillis)
}
