import { assert, describe, layer } from "@effect/vitest"
import type { ProviderSubmission } from "@lyre/core/provider/outcomes"
import { startCallbackReceiver, startFakeUpstream } from "@lyre/fake-upstream"
import type { Behaviour, FakeUpstream } from "@lyre/fake-upstream"
import { Context, Effect, Layer } from "effect"
import { SunoHttpProvider } from "../../src/provider/SunoHttpProvider.ts"

const apiKey = "provider-test-key"

/** The fake upstream, started once for the file and closed with the layer. */
class Upstream extends Context.Service<Upstream, FakeUpstream>()("lyre/worker/test/Upstream") {
  static readonly layer = Layer.effect(
    Upstream,
    Effect.acquireRelease(
      Effect.promise(() => startFakeUpstream({ apiKey })),
      (upstream) => Effect.promise(() => upstream.close())
    )
  )
}

const providerFor = (key: string) =>
  Layer.unwrap(
    Effect.map(Effect.service(Upstream), (upstream) =>
      SunoHttpProvider.layer({ baseUrl: `${upstream.url}/`, apiKey: key, timeoutMs: 400 })
    )
  )

const TestLayer = providerFor(apiKey).pipe(Layer.provideMerge(Upstream.layer))

let serial = 0
/** A submission with a title unique to the test, so that title rules never leak between tests. */
const submission = (overrides: Partial<ProviderSubmission> = {}): ProviderSubmission => ({
  taskId: `gen_${++serial}`,
  model: "aether",
  style: "dream pop",
  title: `Song ${serial}`,
  lyrics: "[Verse]\nhello",
  instrumental: false,
  callbackUrl: null,
  ...overrides
})

/** Submits with the fake told to behave so, and answers the outcome and what the fake received. */
const submitWith = Effect.fnUntraced(function* (behaviour: Behaviour, overrides: Partial<ProviderSubmission> = {}) {
  const upstream = yield* Upstream
  const provider = yield* SunoHttpProvider
  const task = submission(overrides)
  upstream.control.onTitle(task.title, behaviour)
  const outcome = yield* provider.submit(task)
  return { outcome, received: upstream.control.submissionsFor(task.title) }
})

/** Submits a task the fake accepts with `behaviour`, then polls it `times` times. */
const pollAfter = Effect.fnUntraced(function* (behaviour: Behaviour, times = 1) {
  const provider = yield* SunoHttpProvider
  const { outcome } = yield* submitWith({ callbacks: "none", ...behaviour })
  assert.strictEqual(outcome._tag, "Accepted")
  const providerTaskId = outcome._tag === "Accepted" ? outcome.providerTaskId : ""
  const outcomes = []
  for (let i = 0; i < times; i++) outcomes.push(yield* provider.poll(providerTaskId))
  return outcomes
})

// Real clock: the time-outs under test are real network time-outs.
layer(TestLayer, { excludeTestServices: true })("SunoHttpProvider", (it) => {
  describe("submit: the request", () => {
    it.effect("sends exactly section 6's body with the mapped model and the callback URL", () =>
      Effect.gen(function* () {
        const { received } = yield* submitWith(
          {},
          {
            model: "aether",
            vocal_gender: "f",
            negative_tags: "metal",
            style_weight: 0.5,
            weirdness_constraint: 0,
            audio_weight: 1,
            callbackUrl: "http://127.0.0.1:9/internal/provider/callback/gen_1?token=s3cret"
          }
        )
        assert.strictEqual(received.length, 1)
        assert.deepStrictEqual(received[0]?.body, {
          customMode: true,
          instrumental: false,
          model: "V4_5",
          style: "dream pop",
          title: `Song ${serial}`,
          prompt: "[Verse]\nhello",
          negativeTags: "metal",
          vocalGender: "f",
          styleWeight: 0.5,
          weirdnessConstraint: 0,
          audioWeight: 1,
          callBackUrl: "http://127.0.0.1:9/internal/provider/callback/gen_1?token=s3cret"
        })
        assert.isTrue(received[0]?.authorized)
      })
    )

    it.effect("leaves absent fields out and maps echo and nocturne", () =>
      Effect.gen(function* () {
        const echo = yield* submitWith({}, { model: "echo", instrumental: true, lyrics: null })
        assert.deepStrictEqual(echo.received[0]?.body, {
          customMode: true,
          instrumental: true,
          model: "V4",
          style: "dream pop",
          title: `Song ${serial}`
        })
        const nocturne = yield* submitWith({}, { model: "nocturne" })
        assert.strictEqual((nocturne.received[0]?.body as { model: string } | undefined)?.model, "V3_5")
      })
    )

    it.effect("shortens a long title at a word boundary to 80 characters at most", () =>
      Effect.gen(function* () {
        const upstream = yield* Upstream
        const provider = yield* SunoHttpProvider
        const title = "An unreasonably long title for a song about the sea, the sky and everything in between them all"
        const outcome = yield* provider.submit(submission({ title }))
        assert.strictEqual(outcome._tag, "Accepted")
        const sent = upstream.control.submissions.at(-1)?.title ?? ""
        assert.strictEqual(sent, "An unreasonably long title for a song about the sea, the sky and everything in")
        assert.isAtMost(sent.length, 80)
      })
    )
  })

  describe("submit: the outcome", () => {
    it.effect("code 200 is Accepted with the upstream's task id", () =>
      Effect.gen(function* () {
        const { outcome, received } = yield* submitWith({ submit: "accept" })
        assert.deepStrictEqual(outcome, { _tag: "Accepted", providerTaskId: received[0]?.taskId ?? "" })
      })
    )

    for (const code of [400, 401, 404, 405, 413, 429, 500]) {
      it.effect(`body code ${code} is Rejected provider_error, not counted toward the circuit`, () =>
        Effect.gen(function* () {
          const { outcome } = yield* submitWith({ submit: { code, msg: "nope" } })
          assert.deepInclude(outcome, { _tag: "Rejected", code: "provider_error", countsTowardCircuit: false })
        })
      )
    }

    for (const code of [430, 455]) {
      it.effect(`body code ${code} is Rejected and counts toward the circuit`, () =>
        Effect.gen(function* () {
          const { outcome } = yield* submitWith({ submit: { code } })
          assert.deepInclude(outcome, { _tag: "Rejected", code: "provider_error", countsTowardCircuit: true })
        })
      )
    }

    it.effect("the body code wins over the HTTP status", () =>
      Effect.gen(function* () {
        const { outcome } = yield* submitWith({
          submit: { httpStatus: 503, body: JSON.stringify({ code: 455, msg: "maintenance" }) }
        })
        assert.deepInclude(outcome, { _tag: "Rejected", countsTowardCircuit: true })
      })
    )

    it.effect("a wrong API key is the upstream's 401: Rejected", () =>
      Effect.gen(function* () {
        const upstream = yield* Upstream
        const provider = yield* Effect.provide(
          Effect.service(SunoHttpProvider),
          providerFor("wrong").pipe(Layer.provide(Layer.succeed(Upstream, upstream)))
        )
        const outcome = yield* provider.submit(submission())
        assert.deepInclude(outcome, { _tag: "Rejected", code: "provider_error", countsTowardCircuit: false })
        assert.isFalse(upstream.control.submissions.at(-1)?.authorized)
      })
    )

    for (const [name, behaviour] of [
      ["an HTTP 502 page without a body code", { submit: { httpStatus: 502 } }],
      ["an HTTP 200 that is not JSON", { submit: { httpStatus: 200, body: "<html>ok</html>" } }],
      ["a hang (time-out)", { submit: "hang" }],
      ["a dropped connection", { submit: "drop" }],
      ["a task taken without an answer", { submit: "accept-then-hang" }]
    ] as const) {
      it.effect(`${name} is Unknown`, () =>
        Effect.gen(function* () {
          const { outcome, received } = yield* submitWith(behaviour)
          assert.strictEqual(outcome._tag, "Unknown")
          assert.strictEqual(received.length, 1)
        })
      )
    }

    it.effect("the time-out holds: a hanging upstream answers Unknown in about timeoutMs", () =>
      Effect.gen(function* () {
        const started = Date.now()
        const { outcome } = yield* submitWith({ submit: "hang" })
        const elapsed = Date.now() - started
        assert.strictEqual(outcome._tag, "Unknown")
        assert.include(outcome._tag === "Unknown" ? outcome.message : "", "400 ms")
        assert.isAtLeast(elapsed, 390)
        assert.isBelow(elapsed, 2000)
      })
    )

    it.effect("a refused connection is Rejected (nothing reached the upstream) and counts toward the circuit", () =>
      Effect.gen(function* () {
        const provider = yield* Effect.provide(
          Effect.service(SunoHttpProvider),
          SunoHttpProvider.layer({ baseUrl: "http://127.0.0.1:1", apiKey, timeoutMs: 400 })
        )
        const outcome = yield* provider.submit(submission())
        assert.strictEqual(outcome._tag, "Rejected")
        if (outcome._tag === "Rejected") {
          assert.strictEqual(outcome.code, "provider_error")
          assert.isTrue(outcome.countsTowardCircuit)
          assert.notInclude(outcome.message, apiKey)
        }
        const polled = yield* provider.poll("any")
        assert.strictEqual(polled._tag, "Unknown")
      })
    )
  })

  describe("poll: record-info statuses", () => {
    it.effect("PENDING, TEXT_SUCCESS and FIRST_SUCCESS are Pending; SUCCESS is Succeeded with two tracks", () =>
      Effect.gen(function* () {
        const outcomes = yield* pollAfter({ pollsBeforeDone: 3 }, 4)
        assert.deepStrictEqual(
          outcomes.slice(0, 3).map((outcome) => outcome._tag),
          ["Pending", "Pending", "Pending"]
        )
        const done = outcomes[3]
        assert.strictEqual(done?._tag, "Succeeded")
        const tracks = done?._tag === "Succeeded" ? done.tracks : []
        assert.strictEqual(tracks.length, 2)
        assert.deepInclude(tracks[0], { lyrics: "[Verse]\nhello", tags: "dream pop", title: `Song ${serial}` })
        assert.match(tracks[0]?.audioUrl ?? "", /\/files\/.+\.mp3$/)
        assert.match(tracks[0]?.imageUrl ?? "", /\/files\/.+\.png$/)
        assert.isNumber(tracks[0]?.duration)
        assert.notStrictEqual(tracks[0]?.providerTrackId, tracks[1]?.providerTrackId)
      })
    )

    it.effect("snake_case track fields are read the same", () =>
      Effect.gen(function* () {
        const [done] = yield* pollAfter({ recordInfoCasing: "snake" })
        assert.strictEqual(done?._tag, "Succeeded")
        const track = done?._tag === "Succeeded" ? done.tracks[0] : undefined
        assert.match(track?.audioUrl ?? "", /\.mp3$/)
        assert.match(track?.imageUrl ?? "", /\.png$/)
        assert.strictEqual(track?.lyrics, "[Verse]\nhello")
      })
    )

    for (const outcome of ["CREATE_TASK_FAILED", "GENERATE_AUDIO_FAILED"] as const) {
      it.effect(`${outcome} is Failed provider_error`, () =>
        Effect.gen(function* () {
          const [first, second] = yield* pollAfter({ outcome, pollsBeforeDone: 1 }, 2)
          assert.strictEqual(first?._tag, "Pending")
          assert.deepInclude(second, { _tag: "Failed", code: "provider_error" })
        })
      )
    }

    it.effect("SENSITIVE_WORD_ERROR is Failed content_policy", () =>
      Effect.gen(function* () {
        const [done] = yield* pollAfter({ outcome: "SENSITIVE_WORD_ERROR" })
        assert.deepInclude(done, { _tag: "Failed", code: "content_policy" })
      })
    )

    it.effect("CALLBACK_EXCEPTION with tracks is Succeeded, without tracks Failed", () =>
      Effect.gen(function* () {
        const [withTracks] = yield* pollAfter({ outcome: "CALLBACK_EXCEPTION" })
        assert.strictEqual(withTracks?._tag, "Succeeded")
        assert.strictEqual(withTracks?._tag === "Succeeded" ? withTracks.tracks.length : 0, 2)
        const [without] = yield* pollAfter({ outcome: "CALLBACK_EXCEPTION", trackCount: 0 })
        assert.deepInclude(without, { _tag: "Failed", code: "provider_error" })
      })
    )

    for (const [name, poll] of [
      ["a body code other than 200", { code: 500 }],
      ["an HTTP 502 page", { httpStatus: 502 }],
      ["a hang (time-out)", "hang"]
    ] as const) {
      it.effect(`${name} is Unknown`, () =>
        Effect.gen(function* () {
          const [outcome] = yield* pollAfter({ poll })
          assert.strictEqual(outcome?._tag, "Unknown")
        })
      )
    }

    it.effect("an unknown task is Unknown", () =>
      Effect.gen(function* () {
        const provider = yield* SunoHttpProvider
        assert.strictEqual((yield* provider.poll("no-such-task"))._tag, "Unknown")
      })
    )
  })

  describe("parseCallback", () => {
    it.effect("reads the task id and stage of every callback the upstream sends", () =>
      Effect.gen(function* () {
        const upstream = yield* Upstream
        const provider = yield* SunoHttpProvider
        const received: Array<unknown> = []
        const { outcome } = yield* submitWith({ callbacks: "none", pollsBeforeDone: Infinity })
        const providerTaskId = outcome._tag === "Accepted" ? outcome.providerTaskId : ""
        const receiver = yield* Effect.acquireRelease(
          Effect.promise(() => startCallbackReceiver((_path, body) => received.push(body))),
          (server) => Effect.promise(() => server.close())
        )
        for (const stage of ["text", "first", "complete", "error"] as const) {
          yield* Effect.promise(() =>
            upstream.control.sendCallback(providerTaskId, stage, { url: `${receiver.origin}/callback` })
          )
        }
        assert.deepStrictEqual(
          received.map((body) => provider.parseCallback(body)),
          [
            { providerTaskId, stage: "text" },
            { providerTaskId, stage: "first" },
            { providerTaskId, stage: "complete" },
            { providerTaskId, stage: "error" }
          ]
        )
      })
    )

    it.effect("answers null for anything else", () =>
      Effect.gen(function* () {
        const provider = yield* SunoHttpProvider
        for (const body of [
          null,
          "x",
          {},
          { data: {} },
          { data: { callbackType: "done", task_id: "t" } },
          { data: { callbackType: "complete" } },
          { data: { callbackType: "complete", task_id: "" } }
        ]) {
          assert.isNull(provider.parseCallback(body))
        }
        assert.deepStrictEqual(provider.parseCallback({ data: { callbackType: "complete", taskId: "t" } }), {
          providerTaskId: "t",
          stage: "complete"
        })
      })
    )
  })
})

/**
 * An upstream that answers the first request of each connection (kept alive) and closes the
 * connection on the second without a word: what a request meets when the upstream drops an
 * idle connection just as we reuse it.
 */
const startClosingUpstream = async () => {
  const { createServer } = await import("node:net")
  let requests = 0
  const record = JSON.stringify({ code: 200, msg: "success", data: { taskId: "t", status: "PENDING", response: null } })
  const server = createServer((socket) => {
    let seen = 0
    let buffered = ""
    socket.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("latin1")
      while (buffered.includes("\r\n\r\n")) {
        const head = buffered.slice(0, buffered.indexOf("\r\n\r\n"))
        const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? "0")
        buffered = buffered.slice(head.length + 4 + length)
        requests++
        if (++seen > 1) return socket.destroy()
        socket.write(
          `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${record.length}\r\n` +
            `Connection: keep-alive\r\nKeep-Alive: timeout=60\r\n\r\n${record}`
        )
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

describe("SunoHttpProvider over kept-alive connections", () => {
  layer(Layer.empty, { excludeTestServices: true })((it) => {
    it.effect(
      "a poll that meets a connection the upstream closed is sent again on a fresh one; a submission is not",
      () =>
        Effect.gen(function* () {
          const upstream = yield* Effect.acquireRelease(
            Effect.promise(() => startClosingUpstream()),
            (server) => Effect.promise(() => server.close())
          )
          const provider = yield* Effect.provide(
            Effect.service(SunoHttpProvider),
            SunoHttpProvider.layer({ baseUrl: upstream.url, apiKey, timeoutMs: 2_000 })
          )
          assert.strictEqual((yield* provider.poll("t"))._tag, "Pending")
          // Same connection, closed by the upstream on this request: sent again, answered.
          assert.strictEqual((yield* provider.poll("t"))._tag, "Pending")
          assert.strictEqual(upstream.requests(), 3)
          // The retry's connection is reused and closed now: a submission is not sent twice.
          const outcome = yield* provider.submit(submission())
          assert.strictEqual(outcome._tag, "Unknown")
          assert.strictEqual(upstream.requests(), 4)
        })
    )
  })
})
