import { assert, describe, it } from "@effect/vitest"
import { gmProgramOf } from "../src/provider/gmPrograms.ts"
import {
  interpretMidiRecordInfo,
  interpretSeparationRecordInfo,
  interpretSubmit,
  interpretTimestampedLyrics
} from "../src/provider/sunoAnswers.ts"
import { estimateKey, tracksOf } from "../src/provider/sunoMidi.ts"
import { decodeExportId, encodeExportId, MAX_UPSTREAM_TITLE, shortenTitle } from "../src/provider/sunoRequest.ts"

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
  const noCode = (status: number) => ({ _tag: "Unknown", message: `Upstream answered HTTP ${status} without a body code` } as const)

  it("is accepted with the upstream's task id, in either spelling", () => {
    assert.deepStrictEqual(read({ code: 200, msg: "success", data: { taskId: "t1" } }), { _tag: "Accepted", providerTaskId: "t1" })
    assert.deepStrictEqual(read({ code: 200, data: { task_id: "t2", extra: 1 } }), { _tag: "Accepted", providerTaskId: "t2" })
    assert.deepStrictEqual(read({ code: 200, data: { taskId: null, task_id: "t3" } }), { _tag: "Accepted", providerTaskId: "t3" })
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

describe("export ids", () => {
  it("round-trip every stage, a callback URL's colons and query included", () => {
    const stages = [
      { stage: "wav", upstreamTaskId: "abc123" },
      { stage: "stems", upstreamTaskId: "abc123" },
      { stage: "midi", upstreamTaskId: "m:1" },
      { stage: "midi-separation", upstreamTaskId: "sep1", callbackUrl: "http://127.0.0.1:8080/cb/exp_1?token=a:b&x=%20" },
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
      ...Array.from({ length: 10 }, (_, index) => ({ name: index === 0 ? "electric bass finger" : "Mystery Horn", notes: [note] }))
    ])
    assert.deepStrictEqual(tracks.map((track) => track.channel), [9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 10])
    assert.deepStrictEqual(tracks.slice(0, 3).map((track) => track.program), [0, 33, 0])
    assert.strictEqual(tracks[1]?.notes[0]?.velocity, 64)
    assert.strictEqual(gmProgramOf("Acoustic Grand Piano").program, 0)
    assert.strictEqual(gmProgramOf("Gunshot").program, 127)
  })

  it("estimates the key the pitched notes suggest, ignoring the drums", () => {
    const scale = (tonic: number, steps: ReadonlyArray<number>) =>
      steps.map((step, index) => ({ pitch: tonic + step, start: index, end: index + (step === 0 || step === 7 ? 2 : 1), velocity: 90 }))
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
    const outcome = interpretMidiRecordInfo(answer({
      code: 200,
      data: { successFlag: 1, midiData: { instruments: [{ name: "Drums", notes: [{ pitch: 36, start: "0.25", end: "0.5", velocity: 1 }] }] } }
    }))
    assert.deepStrictEqual(outcome, { _tag: "Transcribed", instruments: [{ name: "Drums", notes: [{ pitch: 36, start: 0.25, end: 0.5, velocity: 1 }] }] })
  })

  it("a finished transcription without notes is Failed; an unknown flag Unknown", () => {
    assert.deepInclude(interpretMidiRecordInfo(answer({ code: 200, data: { successFlag: 1, midiData: { instruments: [] } } })), { _tag: "Failed" })
    assert.strictEqual(interpretMidiRecordInfo(answer({ code: 200, data: { successFlag: 7 } }))._tag, "Unknown")
  })

  it("split_stem parts are read by their fields, the mix itself is not a stem", () => {
    const outcome = interpretSeparationRecordInfo(answer({
      code: 200,
      data: { successFlag: "SUCCESS", response: { originUrl: "http://u/mix.mp3", vocalUrl: "http://u/v.mp3", drumsUrl: "http://u/d.mp3", bass_url: "http://u/b.mp3", guitarUrl: null } }
    }))
    assert.deepStrictEqual(outcome._tag === "Succeeded" ? outcome.files.map((file) => file.stem) : [], ["vocals", "drums", "bass"])
  })

  it("section tags glued to words are dropped, and times never run backwards", () => {
    const outcome = interpretTimestampedLyrics(answer({
      code: 200,
      data: {
        alignedWords: [
          { word: "[Verse]\nWaggin'", startS: 1.36, endS: 1.79 },
          { word: "[Chorus]", startS: 2, endS: 2.1 },
          { word: "tail ", startS: 1.2, endS: 1.1 },
          { word: "no time" }
        ]
      }
    }))
    assert.deepStrictEqual(outcome, {
      _tag: "Succeeded",
      files: [],
      timedLyrics: [{ text: "Waggin'", start: 1.36, end: 1.79 }, { text: "tail", start: 1.36, end: 1.36 }]
    })
  })
})
