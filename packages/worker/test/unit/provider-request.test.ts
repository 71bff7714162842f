import { assert, describe, it } from "@effect/vitest"
import { Option, Schema } from "effect"
import { gmProgramOf } from "../../src/provider/gmPrograms.ts"
import {
  interpretMidiRecordInfo,
  interpretRecordInfo,
  interpretSeparationRecordInfo,
  interpretSubmit,
  interpretTimestampedLyrics
} from "../../src/provider/sunoAnswers.ts"
import type { PollOutcome } from "@lyre/core/provider/outcomes"
import { parseCallback } from "../../src/provider/sunoCallback.ts"
import { estimateKey, tracksOf } from "../../src/provider/sunoMidi.ts"
import { decodeExportId, encodeExportId, MAX_UPSTREAM_TITLE, shortenTitle } from "../../src/provider/sunoRequest.ts"

describe("shortenTitle", () => {
  it("keeps a title that fits", () => {
    assert.strictEqual(shortenTitle("Short"), "Short")
    assert.strictEqual(shortenTitle("x".repeat(80)), "x".repeat(80))
  })

  it("cuts at the last word boundary and drops trailing punctuation", () => {
    const title = "Songs of the sea, the sky, the hills and the long road home, sung by everyone we know"
    const short = shortenTitle(title)
    assert.isAtMost(short.length, MAX_UPSTREAM_TITLE)
    assert.isTrue(title.startsWith(short))
    assert.strictEqual(short, "Songs of the sea, the sky, the hills and the long road home, sung by everyone we")
  })

  it("keeps a whole last word that ends exactly at the limit", () => {
    assert.strictEqual(shortenTitle(`${"a".repeat(80)} tail`), "a".repeat(80))
  })

  it("cuts a title without spaces hard at the limit", () => {
    assert.strictEqual(shortenTitle("x".repeat(120)), "x".repeat(80))
  })

  it("never splits an emoji", () => {
    const short = shortenTitle(`${"a".repeat(79)}😀 more`)
    assert.strictEqual(short, "a".repeat(79))
  })
})

describe("a generate answer", () => {
  const read = (body: unknown, status = 200) =>
    interpretSubmit({ status, text: typeof body === "string" ? body : JSON.stringify(body) })
  const noCode = (status: number) =>
    ({ _tag: "Unknown", message: `Upstream answered HTTP ${status} without a body code` }) as const

  it("is accepted with the upstream's task id, in either spelling", () => {
    assert.deepStrictEqual(read({ code: 200, msg: "success", data: { taskId: "t1" } }), {
      _tag: "Accepted",
      providerTaskId: "t1"
    })
    assert.deepStrictEqual(read({ code: 200, data: { task_id: "t2", extra: 1 } }), {
      _tag: "Accepted",
      providerTaskId: "t2"
    })
    assert.deepStrictEqual(read({ code: 200, data: { taskId: null, task_id: "t3" } }), {
      _tag: "Accepted",
      providerTaskId: "t3"
    })
  })

  it("is unknown when accepted without a task id", () => {
    const noId = { _tag: "Unknown", message: "Upstream accepted the task without a task id" } as const
    assert.deepStrictEqual(read({ code: 200 }), noId)
    assert.deepStrictEqual(read({ code: 200, data: null }), noId)
    assert.deepStrictEqual(read({ code: 200, data: {} }), noId)
    assert.deepStrictEqual(read({ code: 200, data: { taskId: "" } }), noId)
  })

  it("is a refusal for any other body code, which the circuit hears of for 430 and 455 alone", () => {
    assert.deepStrictEqual(read({ code: 430, msg: "busy" }, 200), {
      _tag: "Rejected",
      code: "provider_error",
      message: "Upstream refused the task (code 430: busy)",
      countsTowardCircuit: true
    })
    assert.deepStrictEqual(read({ code: 400, msg: null, data: null }, 400), {
      _tag: "Rejected",
      code: "provider_error",
      message: "Upstream refused the task (code 400)",
      countsTowardCircuit: false
    })
  })

  it("is unknown when it breaks the lenient rules: no numeric code, a field of the wrong type", () => {
    for (const body of [
      "<html>502</html>",
      "",
      [1],
      { code: "200", data: { taskId: "t" } },
      { msg: "no code" },
      { code: 200, msg: 5, data: { taskId: "t" } },
      { code: 200, data: { taskId: 5 } },
      { code: 200, data: { task_id: {} } },
      { code: 200, data: [] },
      { code: 200, data: "t" }
    ]) {
      assert.deepStrictEqual(read(body, 502), noCode(502), JSON.stringify(body))
    }
  })
})

describe("a generation's record-info answer", () => {
  const read = (body: unknown, status = 200) =>
    interpretRecordInfo({ status, text: typeof body === "string" ? body : JSON.stringify(body) })
  const unreadable = (status: number) =>
    ({ _tag: "Unknown", message: `Upstream answered HTTP ${status} without a readable record` }) as const
  const track = {
    id: "u1",
    audioUrl: "https://cdn.example/u1.mp3",
    streamAudioUrl: "https://cdn.example/u1-stream",
    imageUrl: "https://cdn.example/u1.png",
    prompt: "[Verse] la la",
    modelName: "chirp-v4",
    title: "Song",
    tags: "synthwave",
    createTime: 1700000000000,
    duration: 123.4
  }
  const done = (tracks: ReadonlyArray<unknown>) => ({
    code: 200,
    msg: "success",
    data: {
      taskId: "t1",
      status: "SUCCESS",
      response: { taskId: "t1", sunoData: tracks },
      errorCode: null,
      errorMessage: null
    }
  })
  const succeeded: PollOutcome = {
    _tag: "Succeeded",
    tracks: [
      {
        providerTrackId: "u1",
        audioUrl: "https://cdn.example/u1.mp3",
        imageUrl: "https://cdn.example/u1.png",
        lyrics: "[Verse] la la",
        title: "Song",
        tags: "synthwave",
        duration: 123.4
      }
    ]
  }

  it("gives the finished tracks, in either spelling, a track without an id or audio left out", () => {
    assert.deepStrictEqual(read(done([track])), succeeded)
    assert.deepStrictEqual(read(done([track, { ...track, id: null }, { ...track, audioUrl: "" }])), succeeded)
    const snake = {
      id: "u1",
      audio_url: track.audioUrl,
      image_url: track.imageUrl,
      prompt: track.prompt,
      title: "Song",
      tags: "synthwave",
      duration: 123.4
    }
    const body = done([])
    assert.deepStrictEqual(
      read({ ...body, data: { ...body.data, response: { sunoData: null, suno_data: [snake] } } }),
      succeeded
    )
  })

  it("is pending, failed or unknown by the status table", () => {
    assert.deepStrictEqual(read({ code: 200, data: { status: "FIRST_SUCCESS", response: null } }), { _tag: "Pending" })
    // The `first` stage: each track's stream (http(s) only), indexed as the tracks will be.
    const first = {
      code: 200,
      data: {
        status: "FIRST_SUCCESS",
        response: {
          sunoData: [
            { ...track, audioUrl: "" },
            { ...track, id: "u2", audioUrl: "", streamAudioUrl: "file:///etc/passwd" },
            { ...track, id: "u3", audioUrl: "", streamAudioUrl: "https://cdn.example/u3-stream" }
          ]
        }
      }
    }
    assert.deepStrictEqual(read(first), {
      _tag: "Pending",
      previews: [
        { index: 0, url: "https://cdn.example/u1-stream" },
        { index: 2, url: "https://cdn.example/u3-stream" }
      ]
    })
    assert.deepStrictEqual(read({ code: 200, data: { status: "SUCCESS", response: { sunoData: [] } } }), {
      _tag: "Failed",
      code: "provider_error",
      message: "Upstream reported success without any audio"
    })
    assert.deepStrictEqual(read({ code: 200, data: { status: "GENERATE_AUDIO_FAILED", error_message: "boom" } }), {
      _tag: "Failed",
      code: "provider_error",
      message: "Upstream failed: boom"
    })
    assert.deepStrictEqual(read({ code: 200, data: { status: "SENSITIVE_WORD_ERROR" } }), {
      _tag: "Failed",
      code: "content_policy",
      message: "The request was refused by the content policy"
    })
    assert.deepStrictEqual(read({ code: 200, data: { status: "LATER" } }), {
      _tag: "Unknown",
      message: "Upstream reported an unknown status LATER"
    })
    assert.deepStrictEqual(read({ code: 404, msg: "no such task", data: null }), {
      _tag: "Unknown",
      message: "Upstream record-info answered code 404: no such task"
    })
    assert.deepStrictEqual(read({ code: 200, data: {} }), {
      _tag: "Unknown",
      message: "Upstream record-info answered code 200"
    })
  })

  it("is unreadable when it breaks the lenient rules anywhere, one track included", () => {
    for (const body of [
      "<html>502</html>",
      "",
      [done([track])],
      { ...done([track]), code: "200" },
      { ...done([track]), msg: 1 },
      { code: 200, data: [] },
      { code: 200, data: { status: 5 } },
      { code: 200, data: { status: "SUCCESS", response: [] } },
      { code: 200, data: { status: "SUCCESS", response: { sunoData: {} } } },
      done([track, { ...track, title: 7 }]),
      done([track, { ...track, duration: "123" }]),
      done([track, "u2"]),
      done([[track]])
    ]) {
      assert.deepStrictEqual(read(body, 502), unreadable(502), JSON.stringify(body))
    }
  })

  // The rules the answer was read by while it was decoded with a schema (decision 0119): the
  // hand-written reader is held to them at every field, with every kind of JSON value there.
  const maybe = <S extends Schema.Constraint>(schema: S) => Schema.optional(Schema.NullOr(schema))
  const SchemaTrack = Schema.Struct({
    id: maybe(Schema.String),
    audioUrl: maybe(Schema.String),
    audio_url: maybe(Schema.String),
    imageUrl: maybe(Schema.String),
    image_url: maybe(Schema.String),
    prompt: maybe(Schema.String),
    title: maybe(Schema.String),
    tags: maybe(Schema.String),
    duration: maybe(Schema.Number)
  })
  const readableBySchema = Schema.decodeUnknownOption(
    Schema.Struct({
      code: Schema.Number,
      msg: maybe(Schema.String),
      data: maybe(
        Schema.Struct({
          status: maybe(Schema.String),
          response: maybe(
            Schema.Struct({ sunoData: maybe(Schema.Array(SchemaTrack)), suno_data: maybe(Schema.Array(SchemaTrack)) })
          ),
          errorMessage: maybe(Schema.String),
          error_message: maybe(Schema.String)
        })
      )
    })
  )

  it("is readable exactly when the schema it replaced read it", () => {
    const values: ReadonlyArray<unknown> = [undefined, null, "text", "", 0, 200, 1.5, true, {}, [], [{}], ["x"]]
    const paths: ReadonlyArray<ReadonlyArray<string | number>> = [
      [],
      ["code"],
      ["msg"],
      ["data"],
      ["data", "status"],
      ["data", "errorMessage"],
      ["data", "error_message"],
      ["data", "response"],
      ["data", "response", "sunoData"],
      ["data", "response", "suno_data"],
      ["data", "response", "sunoData", 0],
      ["data", "response", "sunoData", 1],
      ...[...Object.keys(track), "audio_url", "image_url"].map((field) => ["data", "response", "sunoData", 1, field])
    ]
    const withValue = (body: unknown, path: ReadonlyArray<string | number>, value: unknown): unknown => {
      if (path.length === 0) return value
      const [head = "", ...rest] = path
      if (Array.isArray(body)) {
        // An element set to undefined is written as null, as JSON writes an array's holes.
        const copy: Array<unknown> = [...body]
        copy[Number(head)] = withValue(copy[Number(head)] ?? {}, rest, value)
        return copy
      }
      const copy: Record<string, unknown> = { ...(body as object) }
      const next = withValue(copy[head] ?? {}, rest, value)
      if (next === undefined) delete copy[head]
      else copy[head] = next
      return copy
    }
    let compared = 0
    for (const path of paths) {
      for (const value of values) {
        const body = withValue(done([track, { ...track, id: "u2" }]), path, value)
        const text = JSON.stringify(body) ?? ""
        const bySchema = Option.isSome(readableBySchema(text === "" ? undefined : JSON.parse(text)))
        const outcome = read(text)
        const byHand = !("message" in outcome && outcome.message === unreadable(200).message)
        assert.strictEqual(byHand, bySchema, `${path.join(".")} = ${JSON.stringify(value)}`)
        compared++
      }
    }
    assert.isAbove(compared, 250)
  })
})

describe("an upstream callback", () => {
  // The schemas callbacks were decoded with until decision 0119: the hand-written reader is held
  // to what they gave, at every field, with every kind of JSON value there.
  const taskIds = { task_id: Schema.optional(Schema.String), taskId: Schema.optional(Schema.String) }
  const generation = Schema.decodeUnknownOption(
    Schema.Struct({
      data: Schema.Struct({ callbackType: Schema.Literals(["text", "first", "complete", "error"]), ...taskIds })
    })
  )
  const tool = Schema.decodeUnknownOption(
    Schema.Struct({
      code: Schema.Number,
      ...taskIds,
      data: Schema.optional(Schema.NullOr(Schema.Struct(taskIds)))
    })
  )
  const bySchemas = (body: unknown) => {
    const read = generation(body)
    if (Option.isSome(read)) {
      const providerTaskId = read.value.data.task_id || read.value.data.taskId
      return providerTaskId ? { providerTaskId, stage: read.value.data.callbackType } : null
    }
    const readTool = tool(body)
    if (Option.isNone(readTool)) return null
    const { code, data } = readTool.value
    const providerTaskId = data?.task_id || data?.taskId || readTool.value.task_id || readTool.value.taskId
    return providerTaskId ? { providerTaskId, stage: code === 200 ? "complete" : "error" } : null
  }
  const bodies: ReadonlyArray<unknown> = [
    {
      code: 200,
      msg: "All generated successfully.",
      data: { callbackType: "complete", task_id: "t1", data: [{ id: "u1" }] }
    },
    { code: 200, msg: "ok", data: { callbackType: "text", taskId: "t2", data: null } },
    { code: 200, msg: "ok", data: { audioWavUrl: "https://cdn.example/a.wav", task_id: "w1" } },
    { code: 500, msg: "failed", data: { task_id: "s1", vocal_removal_info: null } },
    { task_id: "m1", code: 200, msg: "ok", data: { state: "complete", instruments: [] } },
    { code: 200, taskId: "m2", data: null }
  ]
  const values: ReadonlyArray<unknown> = [
    undefined,
    null,
    "",
    "t9",
    0,
    200,
    430,
    true,
    {},
    [],
    "text",
    "first",
    "complete",
    "error",
    "done"
  ]
  const fields = ["code", "msg", "task_id", "taskId", "data"]
  const dataFields = ["callbackType", "task_id", "taskId", "data", "audioWavUrl"]

  it("is read exactly as the schemas it replaced read it, every field given every kind of value", () => {
    let compared = 0
    const compare = (body: unknown) => {
      const text = JSON.stringify(body)
      const parsed: unknown = text === undefined ? undefined : JSON.parse(text)
      assert.deepStrictEqual(parseCallback(parsed), bySchemas(parsed), text)
      compared++
    }
    for (const body of bodies) {
      compare(body)
      for (const value of values) {
        compare(value)
        for (const field of fields) compare({ ...(body as object), [field]: value })
        const data = (body as { readonly data?: unknown }).data
        for (const field of dataFields) compare({ ...(body as object), data: { ...(data as object), [field]: value } })
      }
    }
    assert.isAbove(compared, 800)
  })

  it("gives the task id and stage of each kind, and null for what is not one", () => {
    assert.deepStrictEqual(parseCallback(bodies[0]), { providerTaskId: "t1", stage: "complete" })
    assert.deepStrictEqual(parseCallback(bodies[1]), { providerTaskId: "t2", stage: "text" })
    assert.deepStrictEqual(parseCallback(bodies[3]), { providerTaskId: "s1", stage: "error" })
    assert.deepStrictEqual(parseCallback(bodies[4]), { providerTaskId: "m1", stage: "complete" })
    assert.isNull(parseCallback({ code: 200, data: { callbackType: "complete", task_id: null } }))
    assert.isNull(parseCallback([{ code: 200, task_id: "t" }]))
  })
})

describe("export ids", () => {
  it("round-trip every stage, a callback URL's colons and query included", () => {
    const stages = [
      { stage: "wav", upstreamTaskId: "abc123" },
      { stage: "stems", upstreamTaskId: "abc123" },
      { stage: "midi", upstreamTaskId: "m:1" },
      {
        stage: "midi-separation",
        upstreamTaskId: "sep1",
        callbackUrl: "http://127.0.0.1:8080/cb/exp_1?token=a:b&x=%20"
      },
      { stage: "midi-separation", upstreamTaskId: "sep1", callbackUrl: null },
      { stage: "lyrics", taskId: "task1", audioId: "e231-8cad" }
    ] as const
    for (const stage of stages) assert.deepStrictEqual(decodeExportId(encodeExportId(stage)), stage)
  })

  it("reads nothing it did not write", () => {
    for (const id of ["", "wav", "wav:", "wav:a:b", "lyrics:a", "song:a", "stems:%E0%A4%A", "midi:a:b:c"]) {
      assert.isNull(decodeExportId(id))
    }
  })
})

describe("the upstream's transcription as MIDI tracks", () => {
  it("names General MIDI programs, puts drums on channel 10 and the other parts around it", () => {
    const note = { pitch: 60, start: 0, end: 0.5, velocity: 0.5 }
    const tracks = tracksOf([
      { name: "Drums", notes: [note] },
      ...Array.from({ length: 10 }, (_, index) => ({
        name: index === 0 ? "electric bass finger" : "Mystery Horn",
        notes: [note]
      }))
    ])
    assert.deepStrictEqual(
      tracks.map((track) => track.channel),
      [9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 10]
    )
    assert.deepStrictEqual(
      tracks.slice(0, 3).map((track) => track.program),
      [0, 33, 0]
    )
    assert.strictEqual(tracks[1]?.notes[0]?.velocity, 64)
    assert.strictEqual(gmProgramOf("Acoustic Grand Piano").program, 0)
    assert.strictEqual(gmProgramOf("Gunshot").program, 127)
  })

  it("estimates the key the pitched notes suggest, ignoring the drums", () => {
    const scale = (tonic: number, steps: ReadonlyArray<number>) =>
      steps.map((step, index) => ({
        pitch: tonic + step,
        start: index,
        end: index + (step === 0 || step === 7 ? 2 : 1),
        velocity: 90
      }))
    const major = [0, 2, 4, 5, 7, 9, 11, 0, 7, 4, 0]
    const minor = [0, 2, 3, 5, 7, 8, 10, 0, 7, 3, 0]
    assert.strictEqual(estimateKey([{ name: "p", program: 0, channel: 0, notes: scale(60, major) }]), "C major")
    assert.strictEqual(estimateKey([{ name: "p", program: 0, channel: 0, notes: scale(57, minor) }]), "A minor")
    assert.isNull(estimateKey([{ name: "Drums", program: 0, channel: 9, notes: scale(36, major) }]))
  })
})

describe("record-info answers of the song tools", () => {
  const answer = (body: unknown) => ({ status: 200, text: JSON.stringify(body) })

  it("MIDI notes with times as strings (as the callbacks write them) are read as numbers", () => {
    const outcome = interpretMidiRecordInfo(
      answer({
        code: 200,
        data: {
          successFlag: 1,
          midiData: { instruments: [{ name: "Drums", notes: [{ pitch: 36, start: "0.25", end: "0.5", velocity: 1 }] }] }
        }
      })
    )
    assert.deepStrictEqual(outcome, {
      _tag: "Transcribed",
      instruments: [{ name: "Drums", notes: [{ pitch: 36, start: 0.25, end: 0.5, velocity: 1 }] }]
    })
  })

  it("a finished transcription without notes is Failed; an unknown flag Unknown", () => {
    assert.deepInclude(
      interpretMidiRecordInfo(answer({ code: 200, data: { successFlag: 1, midiData: { instruments: [] } } })),
      { _tag: "Failed" }
    )
    assert.strictEqual(interpretMidiRecordInfo(answer({ code: 200, data: { successFlag: 7 } }))._tag, "Unknown")
  })

  it("split_stem parts are read by their fields, the mix itself is not a stem", () => {
    const outcome = interpretSeparationRecordInfo(
      answer({
        code: 200,
        data: {
          successFlag: "SUCCESS",
          response: {
            originUrl: "http://u/mix.mp3",
            vocalUrl: "http://u/v.mp3",
            drumsUrl: "http://u/d.mp3",
            bass_url: "http://u/b.mp3",
            guitarUrl: null
          }
        }
      })
    )
    assert.deepStrictEqual(outcome._tag === "Succeeded" ? outcome.files.map((file) => file.stem) : [], [
      "vocals",
      "drums",
      "bass"
    ])
  })

  it("section tags glued to words are dropped, and times never run backwards", () => {
    const outcome = interpretTimestampedLyrics(
      answer({
        code: 200,
        data: {
          alignedWords: [
            { word: "[Verse]\nWaggin'", startS: 1.36, endS: 1.79 },
            { word: "[Chorus]", startS: 2, endS: 2.1 },
            { word: "tail ", startS: 1.2, endS: 1.1 },
            { word: "no time" }
          ]
        }
      })
    )
    assert.deepStrictEqual(outcome, {
      _tag: "Succeeded",
      files: [],
      timedLyrics: [
        { text: "Waggin'", start: 1.36, end: 1.79 },
        { text: "tail", start: 1.36, end: 1.36 }
      ]
    })
  })
})
