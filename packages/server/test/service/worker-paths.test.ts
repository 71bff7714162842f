/**
 * Every path of a task through the worker, against the fake upstream over real HTTP: the
 * server runs with `PROVIDER=http` and its worker inline. Two servers: one whose polls are
 * slow (so only callbacks can finish a task quickly), one that polls fast and has a short
 * deadline (polling alone, failures, time-outs).
 */
import { startFakeUpstream } from "@lyre/fake-upstream"
import type { Behaviour, FakeUpstream } from "@lyre/fake-upstream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectServedWithRanges } from "../support/files.ts"
import { api, balanceOf, createAccount, startTestServer, validSong } from "../support/harness.ts"
import type { Json, TestAccount, TestServer } from "../support/harness.ts"

const apiKey = "worker-paths-key"
let upstream: FakeUpstream
/** Slow polls (30 s): a task finishing within seconds was finished by its callback. */
let callbacks: TestServer
/** Polls every 0.2 s, doubling; a 3 s deadline; provider calls time out after 0.5 s. */
let polling: TestServer

beforeAll(async () => {
  upstream = await startFakeUpstream({ apiKey })
  const provider = { provider: "http", providerUrl: upstream.url, providerApiKey: apiKey, worker: "inline" } as const
  ;[callbacks, polling] = await Promise.all([
    startTestServer({ ...provider, providerPollSeconds: 30, providerTimeoutSeconds: 0.5 }),
    startTestServer({ ...provider, providerPollSeconds: 0.2, providerTimeoutSeconds: 0.5, generationTimeoutSeconds: 3 })
  ])
})
afterAll(async () => {
  await Promise.all([callbacks?.close(), polling?.close()])
  await upstream?.close()
})

/**
 * How long a task on the callbacks server may take to settle: well inside its 30 s poll interval,
 * so a task settled by then was moved by a callback, however loaded the machine.
 */
const beforeThePoll = 20_000

let serial = 0
/** A song whose title is unique to the call, with the fake told how to treat it. */
const songBehaving = (behaviour: Behaviour, extra: Record<string, unknown> = {}) => {
  const title = `Worker path ${++serial} ${Math.random().toString(36).slice(2, 8)}`
  upstream.control.onTitle(title, behaviour)
  return { ...validSong, title, ...extra }
}

const create = (server: TestServer, account: TestAccount, body: unknown, headers: Record<string, string> = {}) =>
  api(server, "POST", "/api/v1/music/generations", { key: account.key, body, headers })

const get = (server: TestServer, account: TestAccount, id: string) =>
  api(server, "GET", `/api/v1/music/generations/${id}`, { key: account.key })

/** Polls the task until it leaves `pending` (or the time is up). */
const settled = async (server: TestServer, account: TestAccount, id: string, withinMs = 10_000): Promise<Json> => {
  const until = Date.now() + withinMs
  while (Date.now() < until) {
    const res = await get(server, account, id)
    if (String(res.body.status) !== "pending") return res.body
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return (await get(server, account, id)).body
}

const eventsOf = (server: TestServer, taskId: string) =>
  server.query<{ id: string; type: string; account_id: string; payload: Record<string, unknown> }>(
    // The events of a task's end: whether a look saw it at the `first` stage (`job.streaming`,
    // record 0126) depends on how its callbacks and looks interleave; previews-upstream tests it.
    "select id, type, account_id, payload from outbox_events where payload->>'task_id' = $1 and type <> 'job.streaming' order by seq",
    taskId
  )

const refundsOf = (server: TestServer, taskId: string) =>
  server.query<{ n: number }>(
    "select count(*)::int as n from credit_ledger where task_id = $1 and kind = 'refund'",
    taskId
  )

const providerTaskOf = async (server: TestServer, taskId: string) =>
  (
    await server.query<{ provider_task_id: string | null }>(
      "select provider_task_id from generation_tasks where id = $1",
      taskId
    )
  )[0]?.provider_task_id ?? null

describe("completion", () => {
  it("by callback only: the complete callback, confirmed by record-info, makes it ready with re-hosted files", async () => {
    const account = await createAccount(callbacks)
    const song = songBehaving({ pollsBeforeDone: Infinity })
    const res = await create(callbacks, account, song)
    expect(res.status).toBe(202)
    const id = String(res.body.id)
    const task = await settled(callbacks, account, id, beforeThePoll)
    expect(task.status).toBe("ready")
    expect(task.credits_used).toBe(50)
    expect(task.credits_refunded).toBe(0)
    expect(task.error).toBeNull()
    const tracks = task.tracks as unknown as ReadonlyArray<Record<string, unknown>>
    expect(tracks).toHaveLength(2)
    tracks.forEach((track, index) => {
      expect(track).toMatchObject({
        index,
        title: song.title,
        lyrics: song.lyrics,
        tags: song.style,
        audio_url: `${callbacks.url}/files/${id}/${index}.mp3`,
        image_url: `${callbacks.url}/files/${id}/${index}-cover.png`
      })
      expect(String(track["id"])).toMatch(/^trk_[0-9A-Za-z]{24}$/)
      expect(typeof track["duration"]).toBe("number")
    })
    const providerTaskId = await providerTaskOf(callbacks, id)
    expect(
      upstream.control.callbacks.some(
        (c) => c.taskId === providerTaskId && c.stage === "complete" && c.statusCode === 200
      )
    ).toBe(true)
    const [event, ...more] = await eventsOf(callbacks, id)
    expect(more).toHaveLength(0)
    expect(event?.type).toBe("job.completed")
    expect(event?.id).toMatch(/^evt_[0-9A-Za-z]{24}$/)
    expect(event?.account_id).toBe(account.id)
    expect(event?.payload).toEqual({
      task_id: id,
      status: "ready",
      tracks: task.tracks,
      credits_used: 50,
      created_at: task.created_at
    })
  })

  it("by polling only: with no callbacks, record-info finishes it", async () => {
    const account = await createAccount(polling)
    const res = await create(polling, account, songBehaving({ callbacks: "none", pollsBeforeDone: 2 }))
    const id = String(res.body.id)
    const task = await settled(polling, account, id)
    expect(task.status).toBe("ready")
    expect(task.tracks).toHaveLength(2)
    const providerTaskId = await providerTaskOf(polling, id)
    expect(upstream.control.callbacks.filter((c) => c.taskId === providerTaskId)).toHaveLength(0)
    expect(upstream.control.polls.filter((p) => p.taskId === providerTaskId).length).toBe(3)
    expect((await eventsOf(polling, id)).map((e) => e.type)).toEqual(["job.completed"])
  })

  it("CALLBACK_EXCEPTION with tracks is done; snake_case record-info is read too", async () => {
    const account = await createAccount(polling)
    const res = await create(
      polling,
      account,
      songBehaving({
        callbacks: "none",
        outcome: "CALLBACK_EXCEPTION",
        recordInfoCasing: "snake"
      })
    )
    const task = await settled(polling, account, String(res.body.id))
    expect(task.status).toBe("ready")
    expect(task.tracks).toHaveLength(2)
  })
})

describe("re-hosted files at /files/...", () => {
  it("serve Content-Type, Content-Length, Accept-Ranges, and 206 for a range", async () => {
    const account = await createAccount(callbacks)
    const res = await create(callbacks, account, songBehaving({}))
    const task = await settled(callbacks, account, String(res.body.id), beforeThePoll)
    const audioUrl = String(task.tracks?.[0]?.audio_url)
    await expectServedWithRanges(audioUrl, 64 * 1024)

    const image = await fetch(String(task.tracks?.[0]?.image_url))
    expect(image.headers.get("content-type")).toBe("image/png")
    await image.arrayBuffer()

    const missing = await fetch(`${callbacks.url}/files/gen_nothing/0.mp3`)
    expect(missing.status).toBe(404)
    await missing.arrayBuffer()
    const traversal = await fetch(`${callbacks.url}/files/..%2F..%2Fetc/passwd`)
    expect(traversal.status).toBe(404)
    await traversal.arrayBuffer()
  })

  it("a provider whose audio is gone fails the task with provider_error, refunded", async () => {
    const account = await createAccount(polling)
    const res = await create(polling, account, songBehaving({ callbacks: "none", files: "missing" }))
    const task = await settled(polling, account, String(res.body.id))
    expect(task.status).toBe("failed")
    expect(task.error?.code).toBe("provider_error")
    expect(task.credits_refunded).toBe(50)
  })
})

describe("callbacks are hints", () => {
  it("duplicates change nothing: one transition, one event", async () => {
    const account = await createAccount(callbacks)
    const res = await create(callbacks, account, songBehaving({ callbackCopies: 3 }))
    const id = String(res.body.id)
    expect((await settled(callbacks, account, id, beforeThePoll)).status).toBe("ready")
    await upstream.control.settled()
    const providerTaskId = String(await providerTaskOf(callbacks, id))
    const completes = upstream.control.callbacks.filter((c) => c.taskId === providerTaskId && c.stage === "complete")
    expect(completes.length).toBe(3)
    expect(completes.every((c) => c.statusCode === 200)).toBe(true)
    expect((await eventsOf(callbacks, id)).length).toBe(1)
  })

  it("late ones change nothing", async () => {
    const account = await createAccount(polling)
    const res = await create(polling, account, songBehaving({ callbackDelayMs: 1_500 }))
    const id = String(res.body.id)
    const first = await settled(polling, account, id)
    expect(first.status).toBe("ready")
    await upstream.control.settled()
    const after = (await get(polling, account, id)).body
    expect(after).toEqual(first)
    expect((await eventsOf(polling, id)).length).toBe(1)
  })

  it("forged ones are refused (wrong token, unknown task) and change nothing", async () => {
    const account = await createAccount(callbacks)
    // Done at the first poll, but polls are 30 s apart: only a callback accepted as a hint polls sooner.
    const res = await create(callbacks, account, songBehaving({ callbacks: "none" }))
    const id = String(res.body.id)
    const providerTaskId = String(await providerTaskOf(callbacks, id))
    const forged = await upstream.control.sendCallback(providerTaskId, "complete", {
      url: `${callbacks.url}/internal/provider/callback/${id}?token=guessed`
    })
    expect(forged.statusCode).toBe(404)
    const noToken = await upstream.control.sendCallback(providerTaskId, "complete", {
      url: `${callbacks.url}/internal/provider/callback/${id}`
    })
    expect(noToken.statusCode).toBe(404)
    const otherTask = await upstream.control.sendCallback(providerTaskId, "complete", {
      url: `${callbacks.url}/internal/provider/callback/gen_000000000000000000000000?token=x`
    })
    expect(otherTask.statusCode).toBe(404)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect((await get(callbacks, account, id)).body.status).toBe("pending")
    expect(upstream.control.polls.filter((p) => p.taskId === providerTaskId)).toHaveLength(0)
    // The task's own callback (right URL and token) is a hint the worker confirms: record-info says done.
    const genuine = await upstream.control.sendCallback(providerTaskId, "complete")
    expect(genuine.statusCode).toBe(200)
    expect((await settled(callbacks, account, id, beforeThePoll)).status).toBe("ready")
  })

  it("a callback announcing what record-info does not confirm changes nothing", async () => {
    const account = await createAccount(callbacks)
    const res = await create(callbacks, account, songBehaving({ callbacks: "none", pollsBeforeDone: Infinity }))
    const id = String(res.body.id)
    const providerTaskId = String(await providerTaskOf(callbacks, id))
    const task = upstream.control.task(providerTaskId)
    // A genuine URL, but the provider's record still says pending: an error callback alone fails nothing.
    const record = await upstream.control.sendCallback(providerTaskId, "error", { url: String(task?.callBackUrl) })
    expect(record.statusCode).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect((await get(callbacks, account, id)).body.status).toBe("pending")
    expect(await eventsOf(callbacks, id)).toHaveLength(0)
    expect(upstream.control.polls.some((p) => p.taskId === providerTaskId)).toBe(true)
  })
})

describe("failures", () => {
  it("rejection at submission: 500 api_error/provider_error, the task failed and refunded, job.failed written", async () => {
    const account = await createAccount(callbacks, { subscription: 30, onetime: 100 })
    const song = songBehaving({ submit: { code: 429, msg: "credits exhausted" } })
    const key = `reject-${serial}`
    const res = await create(callbacks, account, song, { "idempotency-key": key })
    expect(res.status).toBe(500)
    expect(res.body.error?.type).toBe("api_error")
    expect(res.body.error?.code).toBe("provider_error")
    // The upstream's own words (its code, its account's credits) stay with the operator.
    expect(JSON.stringify(res.body)).not.toContain("credits exhausted")
    expect(await balanceOf(callbacks, account)).toBe(130)
    const [task] = await callbacks.query<{ id: string; status: string; error_code: string; credits_refunded: number }>(
      "select id, status, error_code, credits_refunded from generation_tasks where account_id = $1",
      account.id
    )
    expect(task).toMatchObject({ status: "failed", error_code: "provider_error", credits_refunded: 50 })
    const [detail] = await callbacks.query<{ last_error: string }>(
      "select last_error from generation_tasks where id = $1",
      task?.id
    )
    expect(detail?.last_error).toContain("credits exhausted")
    const events = await eventsOf(callbacks, String(task?.id))
    expect(events.map((e) => e.type)).toEqual(["job.failed"])
    expect(events[0]?.payload).toMatchObject({
      task_id: task?.id,
      status: "failed",
      error: { code: "provider_error" },
      credits_refunded: 50
    })
    const ledger = await callbacks.query<{ kind: string; subscription_delta: number; onetime_delta: number }>(
      "select kind, subscription_delta, onetime_delta from credit_ledger where task_id = $1 order by seq",
      task?.id
    )
    expect(ledger).toEqual([
      { kind: "debit", subscription_delta: -30, onetime_delta: -20 },
      { kind: "refund", subscription_delta: 30, onetime_delta: 20 }
    ])
    // The same key and body answer the same 500 again, without a second task or submission.
    const replay = await create(callbacks, account, song, { "idempotency-key": key })
    expect(replay.status).toBe(500)
    expect(replay.body).toEqual(res.body)
    expect(upstream.control.submissionsFor(song.title)).toHaveLength(1)
    expect(await balanceOf(callbacks, account)).toBe(130)
  })

  it("failure later (record-info GENERATE_AUDIO_FAILED): failed, refunded once, job.failed", async () => {
    const account = await createAccount(polling)
    const res = await create(
      polling,
      account,
      songBehaving({ callbacks: "none", pollsBeforeDone: 1, outcome: "GENERATE_AUDIO_FAILED" })
    )
    const id = String(res.body.id)
    const task = await settled(polling, account, id)
    expect(task.status).toBe("failed")
    expect(task.error?.code).toBe("provider_error")
    expect(task.credits_refunded).toBe(50)
    expect(await balanceOf(polling, account)).toBe(1_000)
    expect((await refundsOf(polling, id))[0]?.n).toBe(1)
    expect((await eventsOf(polling, id)).map((e) => e.type)).toEqual(["job.failed"])
  })

  it("failure announced by an error callback, confirmed by record-info", async () => {
    const account = await createAccount(callbacks)
    const res = await create(
      callbacks,
      account,
      songBehaving({ pollsBeforeDone: Infinity, outcome: "CREATE_TASK_FAILED" })
    )
    const task = await settled(callbacks, account, String(res.body.id), beforeThePoll)
    expect(task.status).toBe("failed")
    expect(task.error?.code).toBe("provider_error")
    expect(task.credits_refunded).toBe(50)
  })

  it("content policy: SENSITIVE_WORD_ERROR fails with content_policy, refunded", async () => {
    const account = await createAccount(polling)
    const res = await create(polling, account, songBehaving({ callbacks: "none", outcome: "SENSITIVE_WORD_ERROR" }))
    const task = await settled(polling, account, String(res.body.id))
    expect(task.status).toBe("failed")
    expect(task.error?.code).toBe("content_policy")
    expect(task.credits_refunded).toBe(50)
  })

  it("hang then time-out: an unanswered submission stays pending, is never resubmitted, and fails with generation_timeout", async () => {
    const account = await createAccount(polling)
    const song = songBehaving({ submit: "hang" })
    const res = await create(polling, account, song)
    expect(res.status).toBe(202)
    expect(res.body.status).toBe("pending")
    const id = String(res.body.id)
    const task = await settled(polling, account, id, 8_000)
    expect(task.status).toBe("failed")
    expect(task.error?.code).toBe("generation_timeout")
    expect(task.credits_refunded).toBe(50)
    expect(await balanceOf(polling, account)).toBe(1_000)
    expect(upstream.control.submissionsFor(song.title)).toHaveLength(1)
    expect((await eventsOf(polling, id)).map((e) => e.type)).toEqual(["job.failed"])
  })

  it("a 5xx page or a dropped connection at submission is unknown: 202 pending, never resubmitted, timed out", async () => {
    const account = await createAccount(polling)
    const songs = [songBehaving({ submit: { httpStatus: 502 } }), songBehaving({ submit: "drop" })]
    const ids: Array<string> = []
    for (const song of songs) {
      const res = await create(polling, account, song)
      expect(res.status).toBe(202)
      ids.push(String(res.body.id))
    }
    const states = await polling.query<{ submission_state: string }>(
      "select submission_state from generation_tasks where account_id = $1 order by created_at",
      account.id
    )
    expect(states.map((row) => row.submission_state)).toEqual(["unknown", "unknown"])
    for (const id of ids) {
      const task = await settled(polling, account, id, 8_000)
      expect(task.error?.code).toBe("generation_timeout")
      expect(task.credits_refunded).toBe(50)
    }
    for (const song of songs) expect(upstream.control.submissionsFor(song.title)).toHaveLength(1)
  })

  it("accepted then record-info hangs: time-out, refunded", async () => {
    const account = await createAccount(polling)
    const res = await create(polling, account, songBehaving({ callbacks: "none", poll: "hang" }))
    const task = await settled(polling, account, String(res.body.id), 8_000)
    expect(task.status).toBe("failed")
    expect(task.error?.code).toBe("generation_timeout")
    expect(task.credits_refunded).toBe(50)
  })

  it("an ambiguous submission (accepted upstream, answer lost) is reconciled by its callback, not resubmitted", async () => {
    const account = await createAccount(callbacks)
    // The callback is sent once the state is read: on a loaded machine a timed one (it was 0.8 s
    // after acceptance, against a 0.5 s time-out) could land first and show `accepted` already.
    const song = songBehaving({ submit: "accept-then-hang", callbacks: "none" })
    const res = await create(callbacks, account, song)
    expect(res.status).toBe(202)
    const id = String(res.body.id)
    const [state] = await callbacks.query<{ submission_state: string }>(
      "select submission_state from generation_tasks where id = $1",
      id
    )
    expect(state?.submission_state).toBe("unknown")
    const [submission] = upstream.control.submissionsFor(song.title)
    await upstream.control.sendCallback(String(submission?.taskId), "complete")
    const task = await settled(callbacks, account, id, beforeThePoll)
    expect(task.status).toBe("ready")
    expect(upstream.control.submissionsFor(song.title)).toHaveLength(1)
  })
})

describe("model availability: the provider circuit", () => {
  it("5 provider failures in a minute open it: 503 model_unavailable without charging; other models unaffected; it closes", async () => {
    const account = await createAccount(callbacks, { subscription: 5_000 })
    for (let i = 0; i < 5; i++) {
      const res = await create(
        callbacks,
        account,
        songBehaving({ submit: { code: 455, msg: "maintenance" } }, { model: "nocturne" })
      )
      expect(res.status).toBe(500)
      expect(res.body.error?.code).toBe("provider_error")
    }
    expect(await balanceOf(callbacks, account)).toBe(5_000)
    const song = songBehaving({}, { model: "nocturne" })
    const refused = await create(callbacks, account, song)
    expect(refused.status).toBe(503)
    expect(refused.body.error).toMatchObject({
      type: "service_unavailable",
      code: "model_unavailable",
      model: "nocturne"
    })
    const retryAfter = Number(refused.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThan(55)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(refused.body.error?.retry_after_seconds).toBe(retryAfter)
    expect(await balanceOf(callbacks, account)).toBe(5_000)
    expect(upstream.control.submissionsFor(song.title)).toHaveLength(0)

    const other = await create(callbacks, account, songBehaving({}, { model: "echo" }))
    expect(other.status).toBe(202)

    // A minute later (moved in the database) the circuit is closed again.
    await callbacks.query("update model_circuits set open_until = now() - interval '1 second' where model = 'nocturne'")
    const again = await create(callbacks, account, songBehaving({}, { model: "nocturne" }))
    expect(again.status).toBe(202)
  })

  it("failures spread over more than a minute do not open it", async () => {
    const account = await createAccount(callbacks, { subscription: 5_000 })
    for (let i = 0; i < 4; i++) {
      await create(callbacks, account, songBehaving({ submit: { code: 430 } }, { model: "echo" }))
    }
    await callbacks.query(
      "update model_circuits set failures = array(select t - interval '61 seconds' from unnest(failures) t) where model = 'echo'"
    )
    await create(callbacks, account, songBehaving({ submit: { code: 430 } }, { model: "echo" }))
    const res = await create(callbacks, account, songBehaving({}, { model: "echo" }))
    expect(res.status).toBe(202)
  })
})

describe("concurrency slots", () => {
  const slotOf = async (server: TestServer, account: TestAccount) =>
    (
      await server.query<{ pending: number }>(
        "select pending from credential_inflight where subject = $1",
        account.keyId
      )
    )[0]?.pending

  it("a task that becomes ready frees its credential's slot", async () => {
    const account = await createAccount(callbacks, { concurrency_limit: 1 })
    // The callback that finishes the first task waits 3 s, so the second create meets the slot
    // still taken however slowly a loaded machine answers it (a CI run saw the callback win).
    const first = await create(callbacks, account, songBehaving({ pollsBeforeDone: Infinity, callbackDelayMs: 3_000 }))
    expect((await create(callbacks, account, songBehaving({}))).status).toBe(429)
    expect((await settled(callbacks, account, String(first.body.id), 20_000)).status).toBe("ready")
    expect(await slotOf(callbacks, account)).toBe(0)
    expect((await create(callbacks, account, songBehaving({}))).status).toBe(202)
  })

  it("a task that fails (rejected at submission, or later) frees its slot once", async () => {
    const account = await createAccount(polling, { concurrency_limit: 1 })
    expect((await create(polling, account, songBehaving({ submit: { code: 500, msg: "down" } }))).status).toBe(500)
    expect(await slotOf(polling, account)).toBe(0)
    const later = await create(
      polling,
      account,
      songBehaving({ callbacks: "none", pollsBeforeDone: 1, outcome: "GENERATE_AUDIO_FAILED" })
    )
    expect(later.status).toBe(202)
    expect((await settled(polling, account, String(later.body.id))).status).toBe("failed")
    expect(await slotOf(polling, account)).toBe(0)
    expect((await create(polling, account, songBehaving({ callbacks: "none", pollsBeforeDone: 1 }))).status).toBe(202)
  })
})
