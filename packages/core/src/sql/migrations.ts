/**
 * The schema, as migrations applied at start by the Effect SQL migrator. Plain PostgreSQL 15 that
 * PGlite runs too. Money-like values are integers; the ledger is append-only.
 */
import { Effect } from "effect"
import { Migrator } from "effect/sql"
import { SqlClient } from "effect/sql/SqlClient"

const m0001_foundation = Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`
    create table accounts (
      id text primary key,
      email text not null unique,
      password_hash text,
      plan text not null check (plan in ('free', 'basic', 'pro', 'ultra')),
      subscription_credits integer not null default 0 check (subscription_credits >= 0),
      onetime_credits integer not null default 0 check (onetime_credits >= 0),
      credit_alert_threshold integer check (credit_alert_threshold >= 0),
      concurrency_limit integer check (concurrency_limit >= 0),
      requests_per_minute integer check (requests_per_minute >= 1),
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`
  yield* sql`
    create table api_keys (
      id text primary key,
      account_id text not null references accounts (id),
      name text not null,
      prefix text not null,
      key_hash text not null unique,
      scopes jsonb not null,
      expires_at timestamptz,
      revoked_at timestamptz,
      created_at timestamptz not null
    )`
  yield* sql`create index api_keys_account on api_keys (account_id)`
  yield* sql`
    create table generation_tasks (
      id text primary key,
      account_id text not null references accounts (id),
      credential_subject text not null,
      status text not null check (status in ('pending', 'ready', 'failed')),
      model text,
      request jsonb not null,
      credits_used integer not null,
      credits_refunded integer not null default 0,
      debit_subscription integer not null,
      debit_onetime integer not null,
      error_code text,
      error_message text,
      tracks jsonb not null default '[]',
      deadline_at timestamptz not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`
  yield* sql`create index generation_tasks_account_recent on generation_tasks (account_id, created_at desc, id desc)`
  yield* sql`
    create index generation_tasks_pending_by_subject on generation_tasks (credential_subject)
    where status = 'pending'`
  yield* sql`
    create table credit_ledger (
      id text primary key,
      account_id text not null references accounts (id),
      kind text not null check (kind in ('grant', 'debit', 'refund', 'adjustment')),
      task_id text references generation_tasks (id),
      subscription_delta integer not null,
      onetime_delta integer not null,
      subscription_after integer not null,
      onetime_after integer not null,
      reason text,
      seq bigint generated always as identity,
      created_at timestamptz not null
    )`
  yield* sql`create index credit_ledger_account on credit_ledger (account_id, seq)`
  // A task is debited once and refunded at most once, whatever retries or races happen.
  yield* sql`create unique index credit_ledger_once_per_task on credit_ledger (task_id, kind) where task_id is not null`
  yield* sql`
    create table idempotency_keys (
      account_id text not null references accounts (id),
      key text not null,
      request_hash text not null,
      response_status integer,
      response_body jsonb,
      created_at timestamptz not null,
      primary key (account_id, key)
    )`
  yield* sql`
    create table model_status (
      model text primary key,
      available boolean not null,
      retry_after_seconds integer not null default 60
    )`
})

/**
 * Worker state on the task (what was submitted, how to reach it, who holds it and when to look
 * again), the outbox of task events, and the provider circuit per model.
 */
const m0002_worker = Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`
    alter table generation_tasks
      add column provider_task_id text,
      add column callback_token text,
      add column submission_state text not null default 'submitting'
        check (submission_state in ('submitting', 'accepted', 'unknown')),
      add column attempts integer not null default 0,
      add column hints integer not null default 0,
      add column lease_owner text,
      add column lease_expires_at timestamptz,
      add column next_poll_at timestamptz,
      add column last_error text`
  // The poller's queue: accepted pending tasks by when they are next due.
  yield* sql`
    create index generation_tasks_due on generation_tasks (next_poll_at)
    where status = 'pending' and submission_state = 'accepted'`
  yield* sql`create index generation_tasks_deadline on generation_tasks (deadline_at) where status = 'pending'`
  yield* sql`
    create table outbox_events (
      id text primary key,
      account_id text not null references accounts (id),
      type text not null,
      payload jsonb not null,
      seq bigint generated always as identity,
      created_at timestamptz not null
    )`
  yield* sql`create index outbox_events_seq on outbox_events (seq)`
  // A task has one terminal transition, so at most one job event of each kind.
  yield* sql`
    create unique index outbox_events_once_per_task on outbox_events ((payload ->> 'task_id'), type)
    where type in ('job.completed', 'job.failed')`
  // Recent provider failures per model (a sliding minute) and until when the circuit is open.
  yield* sql`
    create table model_circuits (
      model text primary key,
      failures timestamptz[] not null default '{}',
      open_until timestamptz
    )`
  yield* sql`insert into model_circuits (model) values ('aether'), ('echo'), ('nocturne')`
})

/**
 * Webhooks: endpoints per account (two secrets during a rotation), one delivery per event and
 * endpoint claimed with leases, and every attempt kept for the delivery log. The outbox row
 * says whether it was fanned out; accounts carry the `credits.low` arming flag, and keys
 * remember their `key.expiring` event.
 */
const m0003_webhooks = Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`alter table accounts add column credit_alert_armed boolean not null default true`
  yield* sql`alter table api_keys add column expiring_notified_at timestamptz`
  yield* sql`
    create index api_keys_expiring on api_keys (expires_at)
    where expiring_notified_at is null and revoked_at is null and expires_at is not null`
  yield* sql`alter table outbox_events add column fanned_out boolean not null default false`
  yield* sql`update outbox_events set fanned_out = true`
  yield* sql`create index outbox_events_unfanned on outbox_events (seq) where not fanned_out`
  yield* sql`
    create table webhook_endpoints (
      id text primary key,
      account_id text not null references accounts (id),
      url text not null,
      secret text not null,
      previous_secret text,
      previous_secret_expires_at timestamptz,
      events jsonb not null,
      enabled boolean not null default true,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`
  yield* sql`create index webhook_endpoints_account on webhook_endpoints (account_id)`
  yield* sql`
    create table webhook_deliveries (
      id text primary key,
      event_id text not null references outbox_events (id),
      endpoint_id text not null references webhook_endpoints (id) on delete cascade,
      redelivery boolean not null default false,
      status text not null check (status in ('pending', 'succeeded', 'dead')),
      attempts integer not null default 0,
      next_attempt_at timestamptz,
      lease_owner text,
      lease_expires_at timestamptz,
      last_status_code integer,
      last_error text,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`
  // Fan-out makes one delivery per event and endpoint; a manual redelivery is a further row.
  yield* sql`
    create unique index webhook_deliveries_once on webhook_deliveries (event_id, endpoint_id) where not redelivery`
  yield* sql`create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending'`
  yield* sql`create index webhook_deliveries_endpoint on webhook_deliveries (endpoint_id, created_at desc, id desc)`
  yield* sql`
    create table webhook_attempts (
      delivery_id text not null references webhook_deliveries (id) on delete cascade,
      attempt integer not null,
      attempted_at timestamptz not null,
      status_code integer,
      latency_ms integer not null,
      response_snippet text not null,
      error text,
      primary key (delivery_id, attempt)
    )`
})

/**
 * Concurrency as a counter per credential, changed only in the statements that create a task
 * (+1) and move it out of `pending` (-1), so a create needs no transaction or lock of its own
 * (docs/decisions/0006-concurrency-counter.md). Existing pending tasks seed the counters.
 */
const m0004_inflight_counter = Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`
    create table credential_inflight (
      subject text primary key,
      pending integer not null default 0 check (pending >= 0)
    )`
  yield* sql`
    insert into credential_inflight (subject, pending)
    select subject, sum(n)::int from (
      select id as subject, 0 as n from api_keys
      union all
      select credential_subject, count(*) from generation_tasks where status = 'pending' group by credential_subject
    ) counted
    group by subject`
  yield* sql`drop index generation_tasks_pending_by_subject`
})

/**
 * OAuth and browser sessions (docs/decisions/0039-oauth-lifetimes-audience-revocation-sessions.md). Secrets (session tokens, codes,
 * refresh tokens) are kept only as keyed hashes; a grant is the family of tokens one code began,
 * revoked as a whole; signing keys keep their private half encrypted with SECRET_KEY.
 */
const m0005_oauth = Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`
    create table oauth_clients (
      client_id text primary key,
      name text not null,
      redirect_uris jsonb not null,
      refresh_tokens boolean not null,
      created_at timestamptz not null
    )`
  yield* sql`
    create table sessions (
      id text primary key,
      token_hash text not null unique,
      account_id text not null references accounts (id) on delete cascade,
      csrf_token text not null,
      expires_at timestamptz not null,
      created_at timestamptz not null
    )`
  yield* sql`create index sessions_expiry on sessions (expires_at)`
  yield* sql`
    create table signin_throttle (
      key text primary key,
      failures integer not null,
      last_failure_at timestamptz not null
    )`
  yield* sql`
    create table signing_keys (
      kid text primary key,
      public_jwk jsonb not null,
      private_key text not null,
      created_at timestamptz not null,
      retired_at timestamptz
    )`
  yield* sql`
    create table oauth_grants (
      id text primary key,
      client_id text not null references oauth_clients (client_id) on delete cascade,
      account_id text not null references accounts (id) on delete cascade,
      scopes jsonb not null,
      resource text not null,
      created_at timestamptz not null,
      last_used_at timestamptz not null,
      revoked_at timestamptz
    )`
  yield* sql`create index oauth_grants_client on oauth_grants (client_id)`
  yield* sql`
    create table oauth_codes (
      code_hash text primary key,
      client_id text not null references oauth_clients (client_id) on delete cascade,
      account_id text not null references accounts (id) on delete cascade,
      redirect_uri text not null,
      code_challenge text not null,
      scopes jsonb not null,
      resource text not null,
      expires_at timestamptz not null,
      used_at timestamptz,
      grant_id text references oauth_grants (id) on delete cascade,
      created_at timestamptz not null
    )`
  yield* sql`
    create table oauth_refresh_tokens (
      token_hash text primary key,
      grant_id text not null references oauth_grants (id) on delete cascade,
      expires_at timestamptz not null,
      rotated_at timestamptz,
      created_at timestamptz not null
    )`
  yield* sql`create index oauth_refresh_tokens_grant on oauth_refresh_tokens (grant_id)`
  yield* sql`create index oauth_refresh_tokens_expiry on oauth_refresh_tokens (expires_at)`
  yield* sql`create index signin_throttle_age on signin_throttle (last_failure_at)`
})

/** The dashboard's key list shows when each key was last used (written at most once a minute). */
const m0006_dashboard = Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`alter table api_keys add column last_used_at timestamptz`
})

/** The trace a task was created in, when traces are exported (see observability/TaskTraces.ts). */
const m0007_task_trace = Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`alter table generation_tasks add column trace_context text`
})

/**
 * Song tools (DESIGN.md section 9, docs/decisions/0053-song-tools-the-service.md). Tracks get a row each beside
 * the task's `tracks` json (which stays the interface's shape): found by id, owned by the task's
 * account, and keeping the provider's id of the track (the upstream's `audioId`). An extension is
 * a generation task naming its source track. An export is a task of its own, charged, leased,
 * polled and refunded as a generation task is, in the same in-flight counter; its ledger rows
 * and events are once per export as a task's are once per task.
 */
const m0008_song_tools = Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`
    create table tracks (
      id text primary key,
      task_id text not null references generation_tasks (id),
      account_id text not null references accounts (id),
      track_index integer not null,
      provider_track_id text,
      duration double precision,
      created_at timestamptz not null,
      unique (task_id, track_index)
    )`
  // Tracks of tasks finished before this migration; their provider ids were never kept.
  yield* sql`
    insert into tracks (id, task_id, account_id, track_index, provider_track_id, duration, created_at)
    select t.id, g.id, g.account_id, t.index, null, t.duration, g.updated_at
    from generation_tasks g, jsonb_to_recordset(g.tracks) as t(id text, index integer, duration double precision)
    where g.status = 'ready'`
  yield* sql`
    alter table generation_tasks
      add column source_track_id text references tracks (id),
      add column continue_at double precision`
  yield* sql`
    create table exports (
      id text primary key,
      account_id text not null references accounts (id),
      credential_subject text not null,
      track_id text not null references tracks (id),
      task_id text not null references generation_tasks (id),
      format text not null check (format in ('wav', 'midi', 'stems', 'timed_lyrics')),
      model text not null,
      status text not null check (status in ('pending', 'ready', 'failed')),
      credits_used integer not null,
      credits_refunded integer not null default 0,
      debit_subscription integer not null,
      debit_onetime integer not null,
      error_code text,
      error_message text,
      files jsonb not null default '[]',
      timed_lyrics jsonb,
      deadline_at timestamptz not null,
      provider_export_id text,
      callback_token text,
      submission_state text not null default 'submitting'
        check (submission_state in ('submitting', 'accepted', 'unknown')),
      attempts integer not null default 0,
      hints integer not null default 0,
      lease_owner text,
      lease_expires_at timestamptz,
      next_poll_at timestamptz,
      last_error text,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`
  yield* sql`create index exports_account_recent on exports (account_id, created_at desc, id desc)`
  yield* sql`create index exports_ready_by_track on exports (account_id, track_id, format) where status = 'ready'`
  yield* sql`
    create index exports_due on exports (next_poll_at)
    where status = 'pending' and submission_state = 'accepted'`
  yield* sql`create index exports_deadline on exports (deadline_at) where status = 'pending'`
  yield* sql`alter table credit_ledger add column export_id text references exports (id)`
  yield* sql`
    create unique index credit_ledger_once_per_export on credit_ledger (export_id, kind) where export_id is not null`
  yield* sql`
    create unique index outbox_events_once_per_export on outbox_events ((payload ->> 'id'), type)
    where type in ('export.completed', 'export.failed')`
})

/**
 * Uploads (DESIGN.md section 11): an account's own audio, listened to once by a worker that
 * leases it as tasks and exports are leased (the same claim, release and sweep columns). Its
 * track is a row of `tracks` whose root is the upload rather than a task. A deleted upload keeps
 * its row (tracks made from it point at it) without its file.
 */
const m0009_uploads = Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`
    create table uploads (
      id text primary key,
      account_id text not null references accounts (id),
      credential_subject text not null,
      status text not null check (status in ('pending', 'ready', 'failed')),
      title text,
      content_type text not null,
      bytes integer not null,
      duration double precision not null,
      storage_key text not null,
      track_id text,
      analysis jsonb,
      transcription jsonb,
      error_code text,
      error_message text,
      submission_state text not null default 'accepted' check (submission_state = 'accepted'),
      attempts integer not null default 0,
      hints integer not null default 0,
      lease_owner text,
      lease_expires_at timestamptz,
      next_poll_at timestamptz,
      deadline_at timestamptz,
      last_error text,
      deleted_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`
  yield* sql`create index uploads_account_recent on uploads (account_id, created_at desc, id desc) where deleted_at is null`
  yield* sql`create index uploads_due on uploads (next_poll_at) where status = 'pending'`
  yield* sql`create index uploads_deadline on uploads (deadline_at) where status = 'pending'`
  yield* sql`
    alter table tracks
      alter column task_id drop not null,
      add column upload_id text references uploads (id),
      add constraint tracks_root check ((task_id is null) <> (upload_id is null))`
  // An export of an upload's track is made from the upload, not from a task.
  yield* sql`
    alter table exports
      alter column task_id drop not null,
      add column upload_id text references uploads (id),
      add constraint exports_root check ((task_id is null) <> (upload_id is null))`
  yield* sql`
    create unique index outbox_events_once_per_upload on outbox_events ((payload ->> 'id'), type)
    where type in ('upload.ready', 'upload.failed')`
})

/**
 * Tasks on a track beyond extension (DESIGN.md section 11): a cover, vocals, an instrumental or
 * an edit is a generation task naming its source track (`source_track_id`, as an extension
 * does) and what it derives (`derivation`, with the edited span). Personas are a voice kept from
 * a track; one deleted is only marked so, since the tracks made with it are rendered again from it.
 */
const m0010_track_tasks = Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`
    create table personas (
      id text primary key,
      account_id text not null references accounts (id),
      track_id text not null references tracks (id),
      name text not null,
      description text not null,
      vocal_gender text check (vocal_gender in ('m', 'f')),
      provider_persona_id text,
      created_at timestamptz not null,
      deleted_at timestamptz
    )`
  yield* sql`create index personas_account_recent on personas (account_id, created_at desc, id desc)`
  yield* sql`
    alter table generation_tasks
      add column derivation text check (derivation in ('cover', 'vocals', 'instrumental', 'edit')),
      add column span_start double precision,
      add column span_end double precision,
      add column persona_id text references personas (id)`
})

/**
 * A replayed answer is the first answer as it was sent: `json` keeps the text and so its keys'
 * order, where `jsonb` reorders them (shortest first). Answers go out as rendered, unparsed
 * (decision 0109), so the stored one must keep the order it was rendered in.
 */
const m0011_replays_as_sent = Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`alter table idempotency_keys alter column response_body type json using response_body::json`
})

/**
 * The lyrics agent (DESIGN.md section 12): a task of its own, charged as the others are (its
 * ledger rows and events once per task) but outside the in-flight counter, leased by the lyrics
 * worker with the same claim, release and sweep columns as exports and uploads.
 */
const m0012_lyrics = Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`
    create table lyrics_tasks (
      id text primary key,
      account_id text not null references accounts (id),
      credential_subject text not null,
      status text not null check (status in ('pending', 'ready', 'failed')),
      prompt text not null,
      request jsonb not null,
      track_id text references tracks (id),
      variations jsonb not null default '[]',
      credits_used integer not null,
      credits_refunded integer not null default 0,
      debit_subscription integer not null,
      debit_onetime integer not null,
      error_code text,
      error_message text,
      provider_task_id text,
      callback_token text not null,
      submission_state text not null default 'accepted' check (submission_state = 'accepted'),
      attempts integer not null default 0,
      hints integer not null default 0,
      lease_owner text,
      lease_expires_at timestamptz,
      next_poll_at timestamptz,
      deadline_at timestamptz not null,
      last_error text,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`
  yield* sql`create index lyrics_tasks_account_recent on lyrics_tasks (account_id, created_at desc, id desc)`
  yield* sql`create index lyrics_tasks_due on lyrics_tasks (next_poll_at) where status = 'pending'`
  yield* sql`create index lyrics_tasks_deadline on lyrics_tasks (deadline_at) where status = 'pending'`
  yield* sql`alter table credit_ledger add column lyrics_id text references lyrics_tasks (id)`
  yield* sql`
    create unique index credit_ledger_once_per_lyrics on credit_ledger (lyrics_id, kind) where lyrics_id is not null`
  yield* sql`
    create unique index outbox_events_once_per_lyrics on outbox_events ((payload ->> 'id'), type)
    where type in ('lyrics.completed', 'lyrics.failed')`
})

/**
 * Audio before `ready` (DESIGN.md section 14, decision 0126): a pending task's previews, set once
 * when its audio starts (`[{index, stream_url, source}]`, `source` the provider's address, never
 * shown), and `job.streaming` at most once per task.
 */
const m0013_previews = Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`alter table generation_tasks add column previews jsonb`
  yield* sql`
    create unique index outbox_events_streaming_once on outbox_events ((payload ->> 'task_id'))
    where type = 'job.streaming'`
})

export const migrations = Migrator.fromRecord({
  "0001_foundation": m0001_foundation,
  "0002_worker": m0002_worker,
  "0003_webhooks": m0003_webhooks,
  "0004_inflight_counter": m0004_inflight_counter,
  "0005_oauth": m0005_oauth,
  "0006_dashboard": m0006_dashboard,
  "0007_task_trace": m0007_task_trace,
  "0008_song_tools": m0008_song_tools,
  "0009_uploads": m0009_uploads,
  "0010_track_tasks": m0010_track_tasks,
  "0011_replays_as_sent": m0011_replays_as_sent,
  "0012_lyrics": m0012_lyrics,
  "0013_previews": m0013_previews
})

export const runMigrations = Migrator.make({})({ loader: migrations })
