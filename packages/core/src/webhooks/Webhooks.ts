/**
 * Webhooks: the account's endpoints, the deliveries of its events and the log of every attempt.
 *
 * Events are outbox rows written in the statement that causes them (Generations, Accounts,
 * ApiKeys, the key sweep here). `fanOut` turns each unfanned event into one delivery per enabled
 * endpoint of its account that wants its type; deliveries are claimed with leases
 * (`update ... from (select ... for update skip locked)`) by any worker, attempted outside any
 * transaction, and `record`ed with their attempt row in one statement that holds only if the
 * lease is still ours, so no attempt is counted twice.
 */
import { lookup } from "node:dns/promises"
import { isIP } from "node:net"
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { generateWebhookSecret, isPrivateAddress } from "@lyre/webhooks"
import type { DeliveryResult } from "@lyre/webhooks"
import { defaultWebhookEventTypes } from "../domain/admin.ts"
import type { WebhookEventType } from "../domain/admin.ts"
import { InvalidParameter, ResourceNotFound } from "../domain/errors.ts"
import { hasIdShape, Ids } from "../domain/ids.ts"
import { keyExpiringPayload } from "../domain/keyExpiring.ts"
import { Metrics } from "../observability/Metrics.ts"
import { Settings } from "../platform/Settings.ts"
import { WebhookSignal } from "./WebhookSignal.ts"

export interface WebhookEndpointView {
  readonly id: string
  readonly url: string
  readonly events: ReadonlyArray<WebhookEventType>
  readonly enabled: boolean
}

/** The answer of a creation or a rotation: the only times a secret is shown. */
export interface WebhookEndpointWithSecret extends WebhookEndpointView {
  readonly secret: string
}

export interface RotatedWebhookSecret extends WebhookEndpointWithSecret {
  /** Until when the replaced secret also signs; null without a grace period. */
  readonly previous_secret_expires_at: string | null
}

export interface DeliveryView {
  readonly id: string
  readonly event_id: string
  readonly event_type: string
  readonly status: "pending" | "succeeded" | "dead"
  readonly attempts: number
  readonly last_status_code: number | null
  readonly next_attempt_at: string | null
}

export interface AttemptView {
  readonly attempt: number
  readonly attempted_at: string
  readonly status_code: number | null
  readonly latency_ms: number
  readonly response_snippet: string
  readonly error: string | null
}

export interface EndpointPatch {
  readonly url?: string | undefined
  readonly events?: ReadonlyArray<WebhookEventType> | undefined
  readonly enabled?: boolean | undefined
}

/** A delivery leased to a worker, with what it needs to send: the event and the endpoint. */
export interface ClaimedDelivery {
  readonly id: string
  readonly attempts: number
  readonly event_id: string
  readonly event_type: string
  readonly event_created: number
  readonly payload: Record<string, unknown>
  readonly url: string
  /** The current secret first, then the previous one while its grace period lasts. */
  readonly secrets: ReadonlyArray<string>
}

/** What one attempt of a claimed delivery gave. */
export interface AttemptOutcome {
  readonly delivery: ClaimedDelivery
  readonly attemptedAt: number
  readonly result: DeliveryResult
}

interface EndpointRow {
  readonly id: string
  readonly url: string
  readonly events: ReadonlyArray<WebhookEventType>
  readonly enabled: boolean
}

interface DeliveryRow {
  readonly id: string
  readonly event_id: string
  readonly event_type: string
  readonly status: "pending" | "succeeded" | "dead"
  readonly attempts: number
  readonly last_status_code: number | null
  readonly next_attempt_at: Date | null
}

interface ClaimRow {
  readonly id: string
  readonly attempts: number
  readonly event_id: string
  readonly event_type: string
  readonly event_created: number
  readonly payload: Record<string, unknown>
  readonly url: string
  readonly secret: string
  readonly previous_secret: string | null
}

/** What a delivery id made in SQL looks like: the prefix and 24 random hexadecimal characters. */
const sqlDeliveryId = "'dlv_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 24)"

const endpointView = (row: EndpointRow): WebhookEndpointView => ({
  id: row.id,
  url: row.url,
  events: row.events,
  enabled: row.enabled
})

const deliveryView = (row: DeliveryRow): DeliveryView => ({
  id: row.id,
  event_id: row.event_id,
  event_type: row.event_type,
  status: row.status,
  attempts: row.attempts,
  last_status_code: row.last_status_code,
  next_attempt_at: row.next_attempt_at === null ? null : row.next_attempt_at.toISOString()
})

const dayMillis = 24 * 60 * 60 * 1000
const lookupTimeoutMillis = 2_000

/** Names resolved with a time limit; an unresolvable name is judged again at each delivery. */
const resolve = (hostname: string): Promise<ReadonlyArray<string>> =>
  Promise.race([
    lookup(hostname, { all: true }).then(
      (found) => found.map((entry) => entry.address),
      () => []
    ),
    new Promise<ReadonlyArray<string>>((done) => setTimeout(() => done([]), lookupTimeoutMillis).unref())
  ])

export class Webhooks extends Context.Service<
  Webhooks,
  {
    readonly createEndpoint: (
      accountId: string,
      input: { readonly url: string; readonly events?: ReadonlyArray<WebhookEventType> | undefined }
    ) => Effect.Effect<WebhookEndpointWithSecret, ResourceNotFound | InvalidParameter>
    readonly listEndpoints: (accountId: string) => Effect.Effect<ReadonlyArray<WebhookEndpointView>, ResourceNotFound>
    readonly updateEndpoint: (
      id: string,
      patch: EndpointPatch
    ) => Effect.Effect<WebhookEndpointView, ResourceNotFound | InvalidParameter>
    readonly deleteEndpoint: (id: string) => Effect.Effect<void, ResourceNotFound>
    /** A new secret; the old one keeps signing (next to it) for `graceSeconds`. */
    readonly rotateSecret: (id: string, graceSeconds: number) => Effect.Effect<RotatedWebhookSecret, ResourceNotFound>
    /** The endpoint's deliveries, newest first (at most 100). */
    readonly deliveries: (endpointId: string) => Effect.Effect<ReadonlyArray<DeliveryView>, ResourceNotFound>
    readonly attempts: (deliveryId: string) => Effect.Effect<ReadonlyArray<AttemptView>, ResourceNotFound>
    /** A new delivery of the delivery's event to its endpoint, due now, on a fresh retry schedule. */
    readonly redeliver: (deliveryId: string) => Effect.Effect<DeliveryView, ResourceNotFound>
    /** A new delivery of any of the account's events to this endpoint. */
    readonly redeliverEvent: (endpointId: string, eventId: string) => Effect.Effect<DeliveryView, ResourceNotFound>
    /** A `ping` event delivered to this endpoint only. */
    readonly ping: (endpointId: string) => Effect.Effect<DeliveryView, ResourceNotFound>
    /** Makes the deliveries of up to `limit` new events; answers how many events it took. */
    readonly fanOut: (limit: number) => Effect.Effect<number>
    readonly claim: (
      workerId: string,
      leaseSeconds: number,
      limit: number
    ) => Effect.Effect<ReadonlyArray<ClaimedDelivery>>
    /**
     * Logs attempts and moves their deliveries on (succeeded, retry later, dead), all in one
     * statement; an attempt whose lease was lost is not recorded.
     */
    readonly record: (workerId: string, attempts: ReadonlyArray<AttemptOutcome>) => Effect.Effect<void>
    /** Hands claimed deliveries back untried (a worker stopping), those still leased to `workerId`. */
    readonly release: (workerId: string, deliveryIds: ReadonlyArray<string>) => Effect.Effect<void>
    /** `key.expiring` for every live key that came within 24 hours of its expiry; answers how many. */
    readonly sweepExpiringKeys: Effect.Effect<number>
  }
>()("lyre/core/webhooks/Webhooks") {
  static readonly layer = Layer.effect(
    Webhooks,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const ids = yield* Ids
      const settings = yield* Settings
      const metrics = yield* Metrics
      const signal = yield* WebhookSignal
      const delays = settings.webhookRetryDelaysSeconds
      const nowIso = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis).toISOString())

      const endpointNotFound = (id: string) => new ResourceNotFound({ message: `No webhook endpoint ${id}.` })
      const deliveryNotFound = (id: string) => new ResourceNotFound({ message: `No webhook delivery ${id}.` })

      /** Refuses URLs that name or resolve to non-public addresses, unless the operator allows them. */
      const checkUrl = Effect.fnUntraced(function* (url: string) {
        if (settings.webhookAllowPrivate) return
        const hostname = new URL(url).hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase()
        const refuse = () =>
          new InvalidParameter({
            message: `url: ${hostname} is a private, loopback or link-local address; webhooks go to public addresses.`,
            param: "url"
          })
        if (isIP(hostname) !== 0) {
          if (isPrivateAddress(hostname)) return yield* refuse()
          return
        }
        if (hostname === "localhost" || hostname.endsWith(".localhost")) return yield* refuse()
        const addresses = yield* Effect.promise(() => resolve(hostname))
        if (addresses.length > 0 && addresses.every(isPrivateAddress)) return yield* refuse()
      })

      const findEndpoint = Effect.fnUntraced(function* (id: string) {
        if (!hasIdShape("webhookEndpoint", id)) return yield* endpointNotFound(id)
        const [row] = yield* sql<EndpointRow & { account_id: string }>`
          select id, account_id, url, events, enabled from webhook_endpoints where id = ${id}`.pipe(Effect.orDie)
        if (row === undefined) return yield* endpointNotFound(id)
        return row
      })

      const deliveryById = (id: string) =>
        sql<DeliveryRow>`
          select d.id, d.event_id, e.type as event_type, d.status, d.attempts, d.last_status_code, d.next_attempt_at
          from webhook_deliveries d join outbox_events e on e.id = d.event_id
          where d.id = ${id}`.pipe(Effect.orDie)

      const createEndpoint = Effect.fn("Webhooks.createEndpoint")(function* (
        accountId: string,
        input: { readonly url: string; readonly events?: ReadonlyArray<WebhookEventType> | undefined }
      ) {
        if (!hasIdShape("account", accountId))
          return yield* new ResourceNotFound({ message: `No account ${accountId}.` })
        yield* checkUrl(input.url)
        const id = yield* ids.make("webhookEndpoint")
        const secret = generateWebhookSecret()
        const events = [...new Set(input.events ?? defaultWebhookEventTypes)]
        const now = yield* nowIso
        const rows = yield* sql<EndpointRow>`
          insert into webhook_endpoints (id, account_id, url, secret, events, enabled, created_at, updated_at)
          select ${id}, a.id, ${input.url}, ${secret}, ${JSON.stringify(events)}::jsonb, true,
                 ${now}::timestamptz, ${now}::timestamptz
          from accounts a where a.id = ${accountId}
          returning id, url, events, enabled`.pipe(Effect.orDie)
        const [row] = rows
        if (row === undefined) return yield* new ResourceNotFound({ message: `No account ${accountId}.` })
        return { ...endpointView(row), secret }
      })

      const listEndpoints = Effect.fn("Webhooks.listEndpoints")(function* (accountId: string) {
        const [account] = hasIdShape("account", accountId)
          ? yield* sql`select 1 from accounts where id = ${accountId}`.pipe(Effect.orDie)
          : []
        if (account === undefined) return yield* new ResourceNotFound({ message: `No account ${accountId}.` })
        const rows = yield* sql<EndpointRow>`
          select id, url, events, enabled from webhook_endpoints where account_id = ${accountId}
          order by created_at, id`.pipe(Effect.orDie)
        return rows.map(endpointView)
      })

      const updateEndpoint = Effect.fn("Webhooks.updateEndpoint")(function* (id: string, patch: EndpointPatch) {
        yield* findEndpoint(id)
        if (patch.url !== undefined) yield* checkUrl(patch.url)
        const now = yield* nowIso
        const events = patch.events === undefined ? undefined : [...new Set(patch.events)]
        const [row] = yield* sql<EndpointRow>`
          update webhook_endpoints set
            url = ${patch.url === undefined ? sql`url` : sql`${patch.url}`},
            events = ${events === undefined ? sql`events` : sql`${JSON.stringify(events)}::jsonb`},
            enabled = ${patch.enabled === undefined ? sql`enabled` : sql`${patch.enabled}`},
            updated_at = ${now}::timestamptz
          where id = ${id}
          returning id, url, events, enabled`.pipe(Effect.orDie)
        if (row === undefined) return yield* endpointNotFound(id)
        return endpointView(row)
      })

      const deleteEndpoint = Effect.fn("Webhooks.deleteEndpoint")(function* (id: string) {
        if (!hasIdShape("webhookEndpoint", id)) return yield* endpointNotFound(id)
        const rows = yield* sql`delete from webhook_endpoints where id = ${id} returning id`.pipe(Effect.orDie)
        if (rows.length === 0) return yield* endpointNotFound(id)
      })

      const rotateSecret = Effect.fn("Webhooks.rotateSecret")(function* (id: string, graceSeconds: number) {
        yield* findEndpoint(id)
        const now = yield* Clock.currentTimeMillis
        const secret = generateWebhookSecret()
        const graceUntil = graceSeconds > 0 ? new Date(now + graceSeconds * 1000).toISOString() : null
        const [row] = yield* sql<EndpointRow>`
          update webhook_endpoints
          set previous_secret = ${graceUntil === null ? null : sql`secret`},
              previous_secret_expires_at = ${graceUntil}::timestamptz,
              secret = ${secret}, updated_at = ${new Date(now).toISOString()}::timestamptz
          where id = ${id}
          returning id, url, events, enabled`.pipe(Effect.orDie)
        if (row === undefined) return yield* endpointNotFound(id)
        return { ...endpointView(row), secret, previous_secret_expires_at: graceUntil }
      })

      const deliveries = Effect.fn("Webhooks.deliveries")(function* (endpointId: string) {
        yield* findEndpoint(endpointId)
        const rows = yield* sql<DeliveryRow>`
          select d.id, d.event_id, e.type as event_type, d.status, d.attempts, d.last_status_code, d.next_attempt_at
          from webhook_deliveries d join outbox_events e on e.id = d.event_id
          where d.endpoint_id = ${endpointId}
          order by d.created_at desc, d.id desc
          limit 100`.pipe(Effect.orDie)
        return rows.map(deliveryView)
      })

      const attempts = Effect.fn("Webhooks.attempts")(function* (deliveryId: string) {
        if (!hasIdShape("delivery", deliveryId)) return yield* deliveryNotFound(deliveryId)
        const [found] = yield* sql`select 1 from webhook_deliveries where id = ${deliveryId}`.pipe(Effect.orDie)
        if (found === undefined) return yield* deliveryNotFound(deliveryId)
        const rows = yield* sql<Omit<AttemptView, "attempted_at"> & { attempted_at: Date }>`
          select attempt, attempted_at, status_code, latency_ms, response_snippet, error
          from webhook_attempts where delivery_id = ${deliveryId} order by attempt`.pipe(Effect.orDie)
        return rows.map((row) => ({ ...row, attempted_at: row.attempted_at.toISOString() }))
      })

      /** One more delivery of an event of the endpoint's account, due now. */
      const deliverAgain = Effect.fnUntraced(function* (endpointId: string, eventId: string) {
        const id = yield* ids.make("delivery")
        const now = yield* nowIso
        const made = yield* sql`
          insert into webhook_deliveries (id, event_id, endpoint_id, redelivery, status, attempts, next_attempt_at,
            created_at, updated_at)
          select ${id}, e.id, w.id, true, 'pending', 0, ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
          from webhook_endpoints w join outbox_events e on e.account_id = w.account_id
          where w.id = ${endpointId} and e.id = ${eventId}
          returning id`.pipe(Effect.orDie)
        if (made.length === 0) return yield* new ResourceNotFound({ message: `No event ${eventId} for this endpoint.` })
        yield* signal.notify
        const [row] = yield* deliveryById(id)
        if (row === undefined) return yield* deliveryNotFound(id)
        return deliveryView(row)
      })

      const redeliver = Effect.fn("Webhooks.redeliver")(function* (deliveryId: string) {
        if (!hasIdShape("delivery", deliveryId)) return yield* deliveryNotFound(deliveryId)
        const [row] = yield* sql<{ event_id: string; endpoint_id: string }>`
          select event_id, endpoint_id from webhook_deliveries where id = ${deliveryId}`.pipe(Effect.orDie)
        if (row === undefined) return yield* deliveryNotFound(deliveryId)
        return yield* deliverAgain(row.endpoint_id, row.event_id)
      })

      const redeliverEvent = Effect.fn("Webhooks.redeliverEvent")(function* (endpointId: string, eventId: string) {
        yield* findEndpoint(endpointId)
        if (!hasIdShape("event", eventId)) return yield* new ResourceNotFound({ message: `No event ${eventId}.` })
        return yield* deliverAgain(endpointId, eventId)
      })

      const ping = Effect.fn("Webhooks.ping")(function* (endpointId: string) {
        const endpoint = yield* findEndpoint(endpointId)
        const eventId = yield* ids.make("event")
        const deliveryId = yield* ids.make("delivery")
        const now = yield* nowIso
        yield* sql`
          with event as (
            insert into outbox_events (id, account_id, type, payload, created_at, fanned_out)
            values (${eventId}, ${endpoint.account_id}, 'ping',
                    jsonb_build_object('webhook_endpoint_id', ${endpointId}::text), ${now}::timestamptz, true)
            returning id
          )
          insert into webhook_deliveries (id, event_id, endpoint_id, status, attempts, next_attempt_at, created_at,
            updated_at)
          select ${deliveryId}, event.id, ${endpointId}, 'pending', 0, ${now}::timestamptz, ${now}::timestamptz,
                 ${now}::timestamptz
          from event`.pipe(Effect.orDie)
        yield* signal.notify
        const [row] = yield* deliveryById(deliveryId)
        if (row === undefined) return yield* deliveryNotFound(deliveryId)
        return deliveryView(row)
      })

      const fanOut = Effect.fn("Webhooks.fanOut")(function* (limit: number) {
        const now = yield* nowIso
        const [counted] = yield* sql<{ events: number }>`
          with events as (
            select id, account_id, type from outbox_events
            where not fanned_out order by seq limit ${limit}
            for update skip locked
          ),
          marked as (
            update outbox_events o set fanned_out = true from events where o.id = events.id returning o.id
          ),
          made as (
            insert into webhook_deliveries (id, event_id, endpoint_id, status, attempts, next_attempt_at, created_at,
              updated_at)
            select ${sql.literal(sqlDeliveryId)}, events.id, w.id, 'pending', 0, ${now}::timestamptz,
                   ${now}::timestamptz, ${now}::timestamptz
            from events join webhook_endpoints w
              on w.account_id = events.account_id and w.enabled and w.events @> jsonb_build_array(events.type)
            on conflict do nothing
          )
          select count(*)::int as events from marked`.pipe(Effect.orDie)
        return counted?.events ?? 0
      })

      const claim = Effect.fn("Webhooks.claim")(function* (workerId: string, leaseSeconds: number, limit: number) {
        const now = yield* Clock.currentTimeMillis
        const rows = yield* sql<ClaimRow>`
          update webhook_deliveries d
          set lease_owner = ${workerId}, lease_expires_at = ${new Date(now + leaseSeconds * 1000).toISOString()}::timestamptz
          from (
            select due.id from webhook_deliveries due join webhook_endpoints w on w.id = due.endpoint_id
            where due.status = 'pending' and due.next_attempt_at <= ${new Date(now).toISOString()}::timestamptz
              and (due.lease_expires_at is null or due.lease_expires_at < ${new Date(now).toISOString()}::timestamptz) and w.enabled
            order by due.next_attempt_at
            limit ${limit}
            for update of due skip locked
          ) due, outbox_events e, webhook_endpoints w
          where d.id = due.id and e.id = d.event_id and w.id = d.endpoint_id
          returning d.id, d.attempts, e.id as event_id, e.type as event_type,
                    floor(extract(epoch from e.created_at))::int as event_created, e.payload, w.url, w.secret,
                    case when w.previous_secret_expires_at > ${new Date(now).toISOString()}::timestamptz then w.previous_secret end
                      as previous_secret`.pipe(Effect.orDie)
        return rows.map(
          (row): ClaimedDelivery => ({
            id: row.id,
            attempts: row.attempts,
            event_id: row.event_id,
            event_type: row.event_type,
            event_created: row.event_created,
            payload: row.payload,
            url: row.url,
            secrets: row.previous_secret === null ? [row.secret] : [row.secret, row.previous_secret]
          })
        )
      })

      const record = Effect.fn("Webhooks.record")(function* (
        workerId: string,
        outcomes: ReadonlyArray<AttemptOutcome>
      ) {
        if (outcomes.length === 0) return
        const now = yield* Clock.currentTimeMillis
        const rows = outcomes.map(({ attemptedAt, delivery, result }) => {
          const retryDelay = delays[delivery.attempts]
          const status = result.ok ? "succeeded" : retryDelay === undefined ? "dead" : "pending"
          metrics.webhookAttempt(status === "pending" ? "retrying" : status, result.latencyMs / 1000)
          return {
            id: delivery.id,
            attempts: delivery.attempts,
            status,
            next_attempt_at:
              status === "pending" && retryDelay !== undefined ? new Date(now + retryDelay * 1000).toISOString() : null,
            status_code: result.statusCode,
            error: result.error?.message ?? null,
            attempted_at: new Date(attemptedAt).toISOString(),
            latency_ms: result.latencyMs,
            // jsonb (and text) cannot hold NUL.
            response_snippet: result.responseSnippet.replaceAll("\u0000", "")
          }
        })
        yield* sql`
          with input as (
            select * from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as t(
              id text, attempts int, status text, next_attempt_at timestamptz, status_code int, error text,
              attempted_at timestamptz, latency_ms int, response_snippet text)
          ),
          moved as (
            update webhook_deliveries d
            set status = input.status, attempts = input.attempts + 1, next_attempt_at = input.next_attempt_at,
                last_status_code = input.status_code, last_error = input.error,
                lease_owner = null, lease_expires_at = null, updated_at = ${new Date(now).toISOString()}::timestamptz
            from input
            where d.id = input.id and d.lease_owner = ${workerId} and d.attempts = input.attempts
            returning d.id, input.attempts + 1 as attempt, input.attempted_at, input.status_code, input.latency_ms,
                      input.response_snippet, input.error
          )
          insert into webhook_attempts (delivery_id, attempt, attempted_at, status_code, latency_ms, response_snippet,
            error)
          select id, attempt, attempted_at, status_code, latency_ms, response_snippet, error from moved`.pipe(
          Effect.orDie
        )
      })

      const release = Effect.fn("Webhooks.release")(function* (workerId: string, deliveryIds: ReadonlyArray<string>) {
        if (deliveryIds.length === 0) return
        yield* sql`
          update webhook_deliveries set lease_owner = null, lease_expires_at = null
          where id in ${sql.in(deliveryIds)} and lease_owner = ${workerId}`.pipe(Effect.orDie)
      })

      const sweepExpiringKeys = Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const due = yield* sql<{ id: string }>`
          select id from api_keys
          where expiring_notified_at is null and revoked_at is null and expires_at is not null
            and expires_at > ${new Date(now).toISOString()}::timestamptz and expires_at <= ${new Date(now + dayMillis).toISOString()}::timestamptz
          order by expires_at limit 100`.pipe(Effect.orDie)
        let sent = 0
        for (const key of due) {
          const eventId = yield* ids.make("event")
          const rows = yield* sql`
            with noted as (
              update api_keys set expiring_notified_at = ${new Date(now).toISOString()}::timestamptz
              where id = ${key.id} and expiring_notified_at is null and revoked_at is null
                and expires_at > ${new Date(now).toISOString()}::timestamptz
              returning id, account_id, prefix, name, expires_at
            )
            insert into outbox_events (id, account_id, type, payload, created_at)
            select ${eventId}, account_id, 'key.expiring', ${sql.literal(keyExpiringPayload("noted", new Date(now).toISOString()))},
                   ${new Date(now).toISOString()}::timestamptz
            from noted
            returning id`.pipe(Effect.orDie)
          sent += rows.length
        }
        return sent
      }).pipe(Effect.withSpan("Webhooks.sweepExpiringKeys"))

      return Webhooks.of({
        createEndpoint,
        listEndpoints,
        updateEndpoint,
        deleteEndpoint,
        rotateSecret,
        deliveries,
        attempts,
        redeliver,
        redeliverEvent,
        ping,
        fanOut,
        claim,
        record,
        release,
        sweepExpiringKeys
      })
    })
  )
}
