import { assert, describe, layer } from "@effect/vitest"
import type { ExportFormat, ExportPollOutcome, ProviderSubmission, SourceTrack } from "@lyre/core/provider/outcomes"
import { startCallbackReceiver, startFakeUpstream } from "@lyre/fake-upstream"
import type { Behaviour, FakeUpstream, ToolKind } from "@lyre/fake-upstream"
import { Midi } from "@tonejs/midi"
import { Context, Effect, Layer } from "effect"
import { SunoHttpProvider } from "../../src/provider/SunoHttpProvider.ts"
import { decodeExportId } from "../../src/provider/sunoRequest.ts"

const apiKey = "provider-tools-key"

class Upstream extends Context.Service<Upstream, FakeUpstream>()("lyre/worker/test/ToolsUpstream") {
  static readonly layer = Layer.effect(
    Upstream,
    Effect.acquireRelease(
      Effect.promise(() => startFakeUpstream({ apiKey })),
      (upstream) => Effect.promise(() => upstream.close())
    )
  )
}

const TestLayer = Layer.unwrap(
  Effect.map(Effect.service(Upstream), (upstream) =>
    SunoHttpProvider.layer({ baseUrl: upstream.url, apiKey, timeoutMs: 400 })
  )
).pipe(Layer.provideMerge(Upstream.layer))

let serial = 0
const callbackUrl = "http://127.0.0.1:9/internal/provider/callback/exp_1?token=s3cret"

const request = (overrides: Partial<ProviderSubmission> = {}): ProviderSubmission => ({
  taskId: `gen_${++serial}`,
  model: "aether",
  style: "dream pop",
  title: `Tool song ${serial}`,
  lyrics: "[Verse]\nhello blue sky\n[Chorus]\nsing along",
  instrumental: false,
  callbackUrl: null,
  ...overrides
})

/** A finished song on the fake, as core describes its first track to the provider. */
const makeSource = Effect.fnUntraced(function* (overrides: Partial<ProviderSubmission> = {}) {
  const upstream = yield* Upstream
  const provider = yield* SunoHttpProvider
  const submission = request(overrides)
  upstream.control.onTitle(submission.title, { callbacks: "none" })
  const submitted = yield* provider.submit(submission)
  assert.strictEqual(submitted._tag, "Accepted")
  const providerTaskId = submitted._tag === "Accepted" ? submitted.providerTaskId : ""
  const polled = yield* provider.poll(providerTaskId)
  assert.strictEqual(polled._tag, "Succeeded")
  const track = polled._tag === "Succeeded" ? polled.tracks[0] : undefined
  const { taskId: _taskId, callbackUrl: _callbackUrl, ...rest } = submission
  const source: SourceTrack = {
    trackId: `trk_${serial}`,
    providerTrackId: track?.providerTrackId ?? "",
    providerTaskId,
    taskId: submission.taskId,
    index: 0,
    duration: track?.duration ?? null,
    audioUrl: null,
    request: rest,
    extends: null,
    derives: null
  }
  return source
})

/** Submits an export of a fresh source with the fake told to behave so for `kind`. */
const exportWith = Effect.fnUntraced(function* (
  format: ExportFormat,
  behaviours: Partial<Record<ToolKind, Behaviour>> = {},
  sourceOverrides: Partial<ProviderSubmission> = {}
) {
  const upstream = yield* Upstream
  const provider = yield* SunoHttpProvider
  const source = yield* makeSource(sourceOverrides)
  for (const [kind, behaviour] of Object.entries(behaviours)) {
    upstream.control.onTrackOf(source.request.title, kind as ToolKind, { callbacks: "none", ...behaviour })
  }
  if (Object.keys(behaviours).length === 0) {
    for (const kind of ["wav", "vocal-removal", "midi", "timestamped-lyrics"] as const) {
      upstream.control.onTrackOf(source.request.title, kind, { callbacks: "none" })
    }
  }
  const outcome = yield* provider.submitExport({ exportId: `exp_${serial}`, format, source, callbackUrl })
  return { source, outcome }
})

/** Polls an export until it is no longer Pending (at most `limit` times), following moved ids. */
const pollUntilSettled = Effect.fnUntraced(function* (providerExportId: string, format: ExportFormat, limit = 10) {
  const provider = yield* SunoHttpProvider
  let id = providerExportId
  const seen: Array<ExportPollOutcome> = []
  for (let i = 0; i < limit; i++) {
    const outcome = yield* provider.pollExport(id, format)
    seen.push(outcome)
    if (outcome._tag !== "Pending") break
    if (outcome.providerExportId !== undefined) id = outcome.providerExportId
  }
  return seen
})

const acceptedId = (outcome: { readonly _tag: string; readonly providerTaskId?: string }): string => {
  assert.strictEqual(outcome._tag, "Accepted")
  return outcome.providerTaskId ?? ""
}

layer(TestLayer, { excludeTestServices: true })("SunoHttpProvider song tools", (it) => {
  describe("extend", () => {
    it.effect("sends exactly the documented body, and is polled through the generation record-info", () =>
      Effect.gen(function* () {
        const upstream = yield* Upstream
        const provider = yield* SunoHttpProvider
        const source = yield* makeSource()
        const extension = request({
          title: "An extension with a title far too long for the upstream to take, sung by every voice at once",
          negative_tags: "metal",
          vocal_gender: "m",
          style_weight: 0.5,
          callbackUrl,
          extend: { source, continueAt: 42.5 }
        })
        const outcome = yield* provider.submit(extension)
        const providerTaskId = acceptedId(outcome)
        const sent = upstream.control.submissions.at(-1)
        assert.strictEqual(sent?.endpoint, "extend")
        assert.deepStrictEqual(sent?.body, {
          defaultParamFlag: true,
          audioId: source.providerTrackId,
          model: "V4_5",
          prompt: extension.lyrics,
          style: "dream pop",
          title: "An extension with a title far too long for the upstream to take, sung by every",
          continueAt: 42.5,
          negativeTags: "metal",
          vocalGender: "m",
          styleWeight: 0.5,
          callBackUrl: callbackUrl
        })
        const polled = yield* provider.poll(providerTaskId)
        assert.strictEqual(polled._tag, "Succeeded")
        const tracks = polled._tag === "Succeeded" ? polled.tracks : []
        assert.strictEqual(tracks.length, 2)
        assert.isAbove(tracks[0]?.duration ?? 0, 42.5 + 20)
      })
    )

    it.effect("an instrumental extension sends the upstream's instrumental tag as its prompt", () =>
      Effect.gen(function* () {
        const upstream = yield* Upstream
        const provider = yield* SunoHttpProvider
        const source = yield* makeSource({ instrumental: true, lyrics: null })
        const outcome = yield* provider.submit(
          request({ instrumental: true, lyrics: null, extend: { source, continueAt: 30 } })
        )
        acceptedId(outcome)
        assert.strictEqual(
          (upstream.control.submissions.at(-1)?.body as { prompt: string } | undefined)?.prompt,
          "[Instrumental]"
        )
      })
    )

    it.effect(
      "an extension from the source's end (Lyre's default) asks for the last moment inside it, and is accepted",
      () =>
        Effect.gen(function* () {
          const upstream = yield* Upstream
          const provider = yield* SunoHttpProvider
          const source = yield* makeSource()
          const duration = source.duration ?? 0
          assert.isAbove(duration, 1)
          const outcome = yield* provider.submit(request({ extend: { source, continueAt: duration } }))
          acceptedId(outcome)
          const sent = upstream.control.submissions.at(-1)?.body as { continueAt: number } | undefined
          assert.isDefined(sent)
          assert.isBelow(sent.continueAt, duration)
          assert.isAtLeast(sent.continueAt, duration - 0.02)
        })
    )

    for (const [name, change] of [
      [
        "an unknown audioId",
        (source: SourceTrack) => ({ source: { ...source, providerTrackId: "no-such-audio" }, continueAt: 30 })
      ],
      ["continueAt past the source's end", (source: SourceTrack) => ({ source, continueAt: 10_000 })]
    ] as const) {
      it.effect(`the upstream refuses ${name}: Rejected provider_error`, () =>
        Effect.gen(function* () {
          const provider = yield* SunoHttpProvider
          const source = yield* makeSource()
          const outcome = yield* provider.submit(request({ extend: change(source) }))
          assert.deepInclude(outcome, { _tag: "Rejected", code: "provider_error", countsTowardCircuit: false })
        })
      )
    }

    it.effect("another model than the source's is refused by the upstream", () =>
      Effect.gen(function* () {
        const provider = yield* SunoHttpProvider
        const source = yield* makeSource({ model: "aether" })
        const outcome = yield* provider.submit(request({ model: "echo", extend: { source, continueAt: 30 } }))
        assert.deepInclude(outcome, { _tag: "Rejected", code: "provider_error" })
      })
    )

    for (const [name, submit, expected] of [
      ["body code 430", { code: 430 }, { _tag: "Rejected", countsTowardCircuit: true }],
      ["body code 455", { code: 455 }, { _tag: "Rejected", countsTowardCircuit: true }],
      ["body code 429 (the upstream's own credits)", { code: 429 }, { _tag: "Rejected", countsTowardCircuit: false }],
      ["a hang (time-out)", "hang", { _tag: "Unknown" }],
      ["an HTTP 200 that is not JSON", { httpStatus: 200, body: "<html>ok</html>" }, { _tag: "Unknown" }]
    ] as const) {
      it.effect(`${name} at the extension's submission is ${expected._tag}`, () =>
        Effect.gen(function* () {
          const upstream = yield* Upstream
          const provider = yield* SunoHttpProvider
          const source = yield* makeSource()
          const extension = request({ extend: { source, continueAt: 30 } })
          upstream.control.onTitle(extension.title, { submit })
          assert.deepInclude(yield* provider.submit(extension), expected)
        })
      )
    }

    it.effect("an extension the upstream flags as sensitive is Failed content_policy", () =>
      Effect.gen(function* () {
        const upstream = yield* Upstream
        const provider = yield* SunoHttpProvider
        const source = yield* makeSource()
        const extension = request({ extend: { source, continueAt: 30 } })
        upstream.control.onTitle(extension.title, { outcome: "SENSITIVE_WORD_ERROR", callbacks: "none" })
        const polled = yield* provider.poll(acceptedId(yield* provider.submit(extension)))
        assert.deepInclude(polled, { _tag: "Failed", code: "content_policy" })
      })
    )
  })

  describe("wav", () => {
    it.effect("sends taskId, audioId and callBackUrl; PENDING then SUCCESS with the WAV's URL", () =>
      Effect.gen(function* () {
        const upstream = yield* Upstream
        const { source, outcome } = yield* exportWith("wav", { wav: { pollsBeforeDone: 1 } })
        const id = acceptedId(outcome)
        assert.deepStrictEqual(upstream.control.toolRequestsFor("wav").at(-1)?.body, {
          taskId: source.providerTaskId,
          audioId: source.providerTrackId,
          callBackUrl: callbackUrl
        })
        const [pending, done] = yield* pollUntilSettled(id, "wav")
        assert.deepStrictEqual(pending, { _tag: "Pending" })
        assert.strictEqual(done?._tag, "Succeeded")
        if (done?._tag === "Succeeded") {
          assert.strictEqual(done.timedLyrics, null)
          assert.strictEqual(done.files.length, 1)
          assert.deepInclude(done.files[0], { name: "track.wav", contentType: "audio/wav", stem: null })
          const content = done.files[0]?.content
          assert.match(content?._tag === "Url" ? content.url : "", /\/files\/.+\.wav$/)
        }
      })
    )

    for (const code of [400, 401, 404, 405, 409, 413, 429, 500]) {
      it.effect(`body code ${code} at submission is Rejected, not counted toward the circuit`, () =>
        Effect.gen(function* () {
          const { outcome } = yield* exportWith("wav", { wav: { submit: { code } } })
          assert.deepInclude(outcome, { _tag: "Rejected", code: "provider_error", countsTowardCircuit: false })
        })
      )
    }

    for (const code of [430, 455]) {
      it.effect(`body code ${code} at submission is Rejected and counts toward the circuit`, () =>
        Effect.gen(function* () {
          const { outcome } = yield* exportWith("wav", { wav: { submit: { code } } })
          assert.deepInclude(outcome, { _tag: "Rejected", countsTowardCircuit: true })
        })
      )
    }

    it.effect("a second WAV of the same track is the upstream's 409 conflict: Rejected", () =>
      Effect.gen(function* () {
        const provider = yield* SunoHttpProvider
        const { source, outcome } = yield* exportWith("wav")
        acceptedId(outcome)
        const again = yield* provider.submitExport({ exportId: "exp_again", format: "wav", source, callbackUrl: null })
        assert.deepInclude(again, { _tag: "Rejected", code: "provider_error" })
        assert.include(again._tag === "Rejected" ? again.message : "", "409")
      })
    )

    for (const [name, submit] of [
      ["a hang (time-out)", "hang"],
      ["a dropped connection", "drop"],
      ["an HTTP 502 page", { httpStatus: 502 }],
      ["a task taken without an answer", "accept-then-hang"]
    ] as const) {
      it.effect(`${name} at submission is Unknown`, () =>
        Effect.gen(function* () {
          const { outcome } = yield* exportWith("wav", { wav: { submit } })
          assert.strictEqual(outcome._tag, "Unknown")
        })
      )
    }

    for (const [outcome, expected] of [
      ["CREATE_TASK_FAILED", "Failed"],
      ["GENERATE_AUDIO_FAILED", "Failed"],
      ["CALLBACK_EXCEPTION", "Succeeded"]
    ] as const) {
      it.effect(`${outcome} (the WAV record's own flag) is ${expected}`, () =>
        Effect.gen(function* () {
          const upstream = yield* Upstream
          const { outcome: submitted } = yield* exportWith("wav", { wav: { outcome } })
          const id = acceptedId(submitted)
          const [done] = yield* pollUntilSettled(id, "wav")
          assert.strictEqual(done?._tag, expected)
          if (expected === "Failed") assert.deepInclude(done, { code: "provider_error" })
          const decoded = decodeExportId(id)
          const flag = upstream.control.job(decoded?.stage === "wav" ? decoded.upstreamTaskId : "")?.flag
          assert.strictEqual(flag, outcome === "GENERATE_AUDIO_FAILED" ? "GENERATE_WAV_FAILED" : outcome)
        })
      )
    }

    for (const [name, poll] of [
      ["a body code other than 200", { code: 500 }],
      ["an HTTP 502 page", { httpStatus: 502 }],
      ["a malformed answer", { httpStatus: 200, body: '{"code": "two hundred"}' }],
      ["a hang (time-out)", "hang"]
    ] as const) {
      it.effect(`${name} at record-info is Unknown`, () =>
        Effect.gen(function* () {
          const { outcome } = yield* exportWith("wav", { wav: { poll } })
          const [polled] = yield* pollUntilSettled(acceptedId(outcome), "wav", 1)
          assert.strictEqual(polled?._tag, "Unknown")
        })
      )
    }
  })

  describe("stems", () => {
    it.effect("asks for separate_vocal and answers the vocals and the instrumental as MP3 stems", () =>
      Effect.gen(function* () {
        const upstream = yield* Upstream
        const { source, outcome } = yield* exportWith("stems")
        assert.deepStrictEqual(upstream.control.toolRequestsFor("vocal-removal").at(-1)?.body, {
          taskId: source.providerTaskId,
          audioId: source.providerTrackId,
          type: "separate_vocal",
          callBackUrl: callbackUrl
        })
        const [done] = yield* pollUntilSettled(acceptedId(outcome), "stems")
        assert.strictEqual(done?._tag, "Succeeded")
        const files = done?._tag === "Succeeded" ? done.files : []
        assert.deepStrictEqual(
          files.map((file) => [file.name, file.stem, file.contentType]),
          [
            ["vocals.mp3", "vocals", "audio/mpeg"],
            ["instrumental.mp3", "instrumental", "audio/mpeg"]
          ]
        )
        for (const file of files)
          assert.match(file.content._tag === "Url" ? file.content.url : "", /_(Vocals|Instrumental)\.mp3$/)
      })
    )

    it.effect("GENERATE_AUDIO_FAILED is Failed; a refused submission Rejected", () =>
      Effect.gen(function* () {
        const failed = yield* exportWith("stems", { "vocal-removal": { outcome: "GENERATE_AUDIO_FAILED" } })
        const [done] = yield* pollUntilSettled(acceptedId(failed.outcome), "stems")
        assert.deepInclude(done, { _tag: "Failed", code: "provider_error" })
        const refused = yield* exportWith("stems", { "vocal-removal": { submit: { code: 455 } } })
        assert.deepInclude(refused.outcome, { _tag: "Rejected", countsTowardCircuit: true })
      })
    )
  })

  describe("midi", () => {
    it.effect(
      "separates, then transcribes the finished separation once, and writes the notes as a Standard MIDI File",
      () =>
        Effect.gen(function* () {
          const upstream = yield* Upstream
          const { outcome } = yield* exportWith("midi", {
            "vocal-removal": { pollsBeforeDone: 1 },
            midi: { pollsBeforeDone: 1 }
          })
          const id = acceptedId(outcome)
          assert.strictEqual(decodeExportId(id)?.stage, "midi-separation")
          const seen = yield* pollUntilSettled(id, "midi")
          // Separation pending; separation done (transcription submitted, id moved); transcription pending; done.
          assert.deepStrictEqual(
            seen.map((polled) => polled._tag),
            ["Pending", "Pending", "Pending", "Succeeded"]
          )
          assert.isUndefined(seen[0]?._tag === "Pending" ? seen[0].providerExportId : "not pending")
          const moved = seen[1]?._tag === "Pending" ? seen[1].providerExportId : undefined
          assert.strictEqual(decodeExportId(moved ?? "")?.stage, "midi")
          const transcriptions = upstream.control.toolRequestsFor("midi")
          assert.strictEqual(transcriptions.length, 1)
          const separationTaskId = upstream.control.toolRequestsFor("vocal-removal").at(-1)?.taskId
          assert.deepStrictEqual(transcriptions[0]?.body, { taskId: separationTaskId, callBackUrl: callbackUrl })
          const done = seen[3]
          const file = done?._tag === "Succeeded" ? done.files[0] : undefined
          assert.deepInclude(file, { name: "track.mid", contentType: "audio/midi", stem: null })
          const bytes = file?.content._tag === "Bytes" ? file.content.bytes : new Uint8Array()
          const midi = new Midi(bytes)
          assert.strictEqual(midi.header.tempos[0]?.bpm, 120)
          assert.strictEqual(midi.header.keySignatures.length, 1)
          const parts = midi.tracks.filter((track) => track.notes.length > 0)
          assert.deepStrictEqual(
            parts.map((track) => [track.name, track.channel, track.instrument.number]),
            [
              ["Drums", 9, 0],
              ["Electric Bass (finger)", 0, 33]
            ]
          )
          // The upstream's seconds survive: its first bass note starts at 0 and lasts 0.9 s.
          assert.closeTo(parts[1]?.notes[0]?.duration ?? 0, 0.9, 0.01)
          // The fake's first track is 120 s long, and its drums play to the end.
          assert.isAbove(parts[0]?.notes.at(-1)?.time ?? 0, 118)
        })
    )

    it.effect("a failed separation fails the export, and no transcription is asked for", () =>
      Effect.gen(function* () {
        const upstream = yield* Upstream
        const before = upstream.control.toolRequestsFor("midi").length
        const { outcome } = yield* exportWith("midi", { "vocal-removal": { outcome: "CREATE_TASK_FAILED" } })
        const [done] = yield* pollUntilSettled(acceptedId(outcome), "midi")
        assert.deepInclude(done, { _tag: "Failed", code: "provider_error" })
        assert.strictEqual(upstream.control.toolRequestsFor("midi").length, before)
      })
    )

    it.effect("a refused transcription fails the export; too frequent or maintenance is Unknown and asked again", () =>
      Effect.gen(function* () {
        const refused = yield* exportWith("midi", { midi: { submit: { code: 400 } } })
        const [done] = yield* pollUntilSettled(acceptedId(refused.outcome), "midi")
        assert.deepInclude(done, { _tag: "Failed", code: "provider_error" })
        const busy = yield* exportWith("midi", { midi: { submit: { code: 430 } } })
        const [later] = yield* pollUntilSettled(acceptedId(busy.outcome), "midi", 1)
        assert.strictEqual(later?._tag, "Unknown")
      })
    )

    for (const outcome of ["CREATE_TASK_FAILED", "GENERATE_AUDIO_FAILED"] as const) {
      it.effect(
        `a transcription that ends ${outcome} (successFlag ${outcome === "CREATE_TASK_FAILED" ? 2 : 3}) is Failed`,
        () =>
          Effect.gen(function* () {
            const { outcome: submitted } = yield* exportWith("midi", { "vocal-removal": {}, midi: { outcome } })
            const seen = yield* pollUntilSettled(acceptedId(submitted), "midi")
            assert.deepInclude(seen.at(-1), { _tag: "Failed", code: "provider_error" })
          })
      )
    }
  })

  describe("timed lyrics", () => {
    it.effect("asks nothing at submission, then reads the aligned words in order without their section tags", () =>
      Effect.gen(function* () {
        const upstream = yield* Upstream
        const before = upstream.control.toolRequests.length
        const { source, outcome } = yield* exportWith("timed_lyrics")
        const id = acceptedId(outcome)
        assert.strictEqual(upstream.control.toolRequests.length, before)
        const [done] = yield* pollUntilSettled(id, "timed_lyrics")
        assert.deepStrictEqual(upstream.control.toolRequestsFor("timestamped-lyrics").at(-1)?.body, {
          taskId: source.providerTaskId,
          audioId: source.providerTrackId
        })
        assert.strictEqual(done?._tag, "Succeeded")
        if (done?._tag === "Succeeded") {
          assert.deepStrictEqual(done.files, [])
          const words = done.timedLyrics ?? []
          assert.deepStrictEqual(
            words.map((word) => word.text),
            ["hello", "blue", "sky", "sing", "along"]
          )
          for (const [index, word] of words.entries()) {
            assert.isAtMost(word.start, word.end)
            if (index > 0) assert.isAtLeast(word.start, words[index - 1]?.start ?? 0)
            assert.isAtMost(word.end, source.duration ?? 0)
          }
        }
      })
    )

    for (const code of [400, 401, 404, 405, 413, 429]) {
      it.effect(`body code ${code} is Failed provider_error`, () =>
        Effect.gen(function* () {
          const { outcome } = yield* exportWith("timed_lyrics", { "timestamped-lyrics": { submit: { code } } })
          const [done] = yield* pollUntilSettled(acceptedId(outcome), "timed_lyrics")
          assert.deepInclude(done, { _tag: "Failed", code: "provider_error" })
        })
      )
    }

    for (const [name, submit] of [
      ["body code 430", { code: 430 }],
      ["body code 455", { code: 455 }],
      ["body code 500", { code: 500 }],
      ["a hang (time-out)", "hang"],
      ["an HTML page", { httpStatus: 502 }]
    ] as const) {
      it.effect(`${name} is Unknown: the next poll asks again`, () =>
        Effect.gen(function* () {
          const { outcome } = yield* exportWith("timed_lyrics", { "timestamped-lyrics": { submit } })
          const [done] = yield* pollUntilSettled(acceptedId(outcome), "timed_lyrics", 1)
          assert.strictEqual(done?._tag, "Unknown")
        })
      )
    }

    it.effect("an instrumental has no words: Failed", () =>
      Effect.gen(function* () {
        const { outcome } = yield* exportWith("timed_lyrics", {}, { instrumental: true, lyrics: null })
        const [done] = yield* pollUntilSettled(acceptedId(outcome), "timed_lyrics")
        assert.deepInclude(done, { _tag: "Failed", code: "provider_error" })
      })
    )
  })

  describe("export ids", () => {
    it.effect("an id this adapter did not write, or one of another format, is Failed without asking the upstream", () =>
      Effect.gen(function* () {
        const provider = yield* SunoHttpProvider
        for (const [id, format] of [
          ["garbage", "wav"],
          ["wav:abc", "stems"],
          ["lyrics:only-one", "timed_lyrics"],
          ["wav:%E0%A4%A", "wav"]
        ] as const) {
          assert.deepInclude(yield* provider.pollExport(id, format), { _tag: "Failed", code: "provider_error" })
        }
      })
    )
  })

  describe("callbacks", () => {
    it.effect("each tool's callback is read as a hint naming its upstream task, complete or error", () =>
      Effect.gen(function* () {
        const upstream = yield* Upstream
        const provider = yield* SunoHttpProvider
        const received: Array<unknown> = []
        const receiver = yield* Effect.acquireRelease(
          Effect.promise(() => startCallbackReceiver((_path, body) => received.push(body))),
          (server) => Effect.promise(() => server.close())
        )
        const wav = yield* exportWith("wav")
        const stems = yield* exportWith("stems", { "vocal-removal": { outcome: "GENERATE_AUDIO_FAILED" } })
        const midi = yield* exportWith("midi", { "vocal-removal": {}, midi: {} })
        const seen = yield* pollUntilSettled(acceptedId(midi.outcome), "midi")
        assert.strictEqual(seen.at(-1)?._tag, "Succeeded")
        const upstreamIds = [
          decodeExportId(acceptedId(wav.outcome)),
          decodeExportId(acceptedId(stems.outcome)),
          decodeExportId(
            seen.flatMap((polled) =>
              polled._tag === "Pending" && polled.providerExportId !== undefined ? [polled.providerExportId] : []
            )[0] ?? ""
          )
        ].map((decoded) => (decoded !== null && "upstreamTaskId" in decoded ? decoded.upstreamTaskId : ""))
        for (const upstreamTaskId of upstreamIds) {
          yield* Effect.promise(() =>
            upstream.control.sendCallback(upstreamTaskId, "complete", { url: `${receiver.origin}/callback` })
          )
        }
        assert.deepStrictEqual(
          received.map((body) => provider.parseCallback(body)),
          upstreamIds.map((providerTaskId, index) => ({
            providerTaskId,
            stage: index === 1 ? ("error" as const) : ("complete" as const)
          }))
        )
      })
    )
  })
})
