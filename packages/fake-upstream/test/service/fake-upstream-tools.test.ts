/** The song tools' endpoints of the fake upstream, checked over real HTTP as a client sees them. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { startCallbackReceiver, startFakeUpstream } from "../../src/index.ts"
import type { CallbackReceiver, FakeUpstream } from "../../src/index.ts"

const apiKey = "tools-key"
let upstream: FakeUpstream
let receiver: CallbackReceiver
let callbackUrl: string
const received: Array<unknown> = []

beforeAll(async () => {
  upstream = await startFakeUpstream({ apiKey, audioBytes: 4_096 })
  receiver = await startCallbackReceiver((_path, body) => received.push(body))
  callbackUrl = `${receiver.origin}/callback/exp_1?token=t`
})

afterEach(() => {
  upstream.control.reset()
  received.length = 0
})

afterAll(async () => {
  await upstream.close()
  await receiver.close()
})

/** A parsed JSON answer, indexable to any depth; a test casts the leaf it computes with. */
interface Json {
  readonly [key: string]: Json
}

interface Answer {
  readonly code: number
  readonly msg: string
  readonly data: Json | null
}

const post = async (path: string, body: unknown, key = apiKey): Promise<Answer> => {
  const response = await fetch(`${upstream.url}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify(body)
  })
  return (await response.json()) as Answer
}

const get = async (path: string, taskId: string): Promise<Answer> =>
  (await (
    await fetch(`${upstream.url}${path}?taskId=${taskId}`, { headers: { Authorization: `Bearer ${apiKey}` } })
  ).json()) as Answer

let serial = 0

/** A finished song on the fake: its task id, its first track's audio id and that track's length. */
const song = async (extra: Record<string, unknown> = {}) => {
  const title = `Tools ${++serial}`
  upstream.control.onTitle(title, { callbacks: "none" })
  const answer = await post("/api/v1/generate", {
    customMode: true,
    instrumental: false,
    model: "V4_5",
    style: "synthwave",
    title,
    prompt: "[Verse]\nneon rain\n[Chorus]\nrun home",
    ...extra
  })
  const taskId = String(answer.data?.taskId)
  const info = await get("/api/v1/generate/record-info", taskId)
  const track = info.data?.response?.sunoData?.[0]
  return { title, taskId, audioId: String(track?.id), duration: Number(track?.duration) }
}

describe("POST /api/v1/generate/extend", () => {
  it("takes a finished track's audio id and makes a generation task with longer tracks", async () => {
    const source = await song()
    const answer = await post("/api/v1/generate/extend", {
      defaultParamFlag: true,
      audioId: source.audioId,
      model: "V4_5",
      prompt: "more",
      style: "synthwave",
      title: "More",
      continueAt: 30
    })
    expect(answer).toMatchObject({ code: 200, data: { taskId: expect.any(String) } })
    const info = await get("/api/v1/generate/record-info", String(answer.data?.taskId))
    expect(info.data?.status).toBe("SUCCESS")
    expect(info.data?.response?.sunoData?.[0]).toMatchObject({ duration: 90, title: "More", prompt: "more" })
    expect(upstream.control.submissions.at(-1)).toMatchObject({ endpoint: "extend", answer: "accepted" })
  })

  it("with defaultParamFlag false inherits the source's title, style and lyrics", async () => {
    const source = await song()
    const answer = await post("/api/v1/generate/extend", {
      defaultParamFlag: false,
      audioId: source.audioId,
      model: "V4_5"
    })
    const info = await get("/api/v1/generate/record-info", String(answer.data?.taskId))
    expect(info.data?.response?.sunoData?.[0]).toMatchObject({ title: source.title, tags: "synthwave" })
  })

  it.each([
    ["an unknown audioId", { audioId: "no-such-audio" }],
    ["continueAt 0", { continueAt: 0 }],
    ["continueAt at the track's end", { continueAt: 120 }],
    ["another model than the source's", { model: "V4" }],
    ["no prompt with custom parameters", { prompt: undefined }],
    ["a title over 80 characters", { title: "x".repeat(81) }],
    ["an unknown field", { instrumental: true }]
  ])("refuses %s with body code 400", async (_, extra) => {
    const source = await song()
    const answer = await post("/api/v1/generate/extend", {
      defaultParamFlag: true,
      audioId: source.audioId,
      model: "V4_5",
      prompt: "more",
      style: "s",
      title: "t",
      continueAt: 30,
      ...extra
    })
    expect(answer).toMatchObject({ code: 400, data: null })
  })

  it("refuses a track whose task is not done yet", async () => {
    upstream.control.onTitle("Unfinished", { pollsBeforeDone: Infinity, callbacks: "none" })
    const answer = await post("/api/v1/generate", {
      customMode: true,
      instrumental: true,
      model: "V4_5",
      style: "s",
      title: "Unfinished"
    })
    const audioId = upstream.control.task(String(answer.data?.taskId))?.trackIds[0]
    const extend = await post("/api/v1/generate/extend", { defaultParamFlag: false, audioId, model: "V4_5" })
    expect(extend).toMatchObject({ code: 400, msg: "the audio is not generated yet" })
  })
})

describe("WAV conversion", () => {
  it("converts a track once: PENDING, then SUCCESS with a served RIFF file; a second request is a conflict", async () => {
    const source = await song()
    upstream.control.onTrackOf(source.title, "wav", { pollsBeforeDone: 1, callbacks: "none" })
    const answer = await post("/api/v1/wav/generate", {
      taskId: source.taskId,
      audioId: source.audioId,
      callBackUrl: callbackUrl
    })
    const taskId = String(answer.data?.taskId)
    expect((await get("/api/v1/wav/record-info", taskId)).data).toMatchObject({
      successFlag: "PENDING",
      response: null
    })
    const done = await get("/api/v1/wav/record-info", taskId)
    expect(done.data).toMatchObject({ taskId, musicId: source.audioId, successFlag: "SUCCESS", errorCode: null })
    const file = await fetch(String(done.data?.response?.audioWavUrl))
    expect(file.headers.get("content-type")).toBe("audio/wav")
    expect(
      Buffer.from(await file.arrayBuffer())
        .subarray(0, 4)
        .toString("latin1")
    ).toBe("RIFF")
    expect(await post("/api/v1/wav/generate", { taskId: source.taskId, audioId: source.audioId })).toMatchObject({
      code: 409
    })
  })

  it("serves no file before the conversion is done, and a failed one may be asked again", async () => {
    const source = await song()
    upstream.control.nextTool(
      "wav",
      { outcome: "GENERATE_AUDIO_FAILED", callbacks: "none" },
      { callbacks: "none", pollsBeforeDone: 5 }
    )
    const failed = String(
      (await post("/api/v1/wav/generate", { taskId: source.taskId, audioId: source.audioId })).data?.taskId
    )
    expect((await get("/api/v1/wav/record-info", failed)).data).toMatchObject({
      successFlag: "GENERATE_WAV_FAILED",
      errorCode: 500
    })
    const again = String(
      (await post("/api/v1/wav/generate", { taskId: source.taskId, audioId: source.audioId })).data?.taskId
    )
    expect((await fetch(`${upstream.url}/files/${again}.wav`)).status).toBe(404)
  })

  it.each([
    [
      "an audioId of another task",
      async (source: Awaited<ReturnType<typeof song>>) => ({ taskId: (await song()).taskId, audioId: source.audioId })
    ],
    [
      "an unknown audioId",
      async (source: Awaited<ReturnType<typeof song>>) => ({ taskId: source.taskId, audioId: "nope" })
    ],
    ["no taskId", async (source: Awaited<ReturnType<typeof song>>) => ({ audioId: source.audioId })]
  ])("refuses %s with body code 400", async (_, body) => {
    const source = await song()
    expect(await post("/api/v1/wav/generate", await body(source))).toMatchObject({ code: 400 })
  })

  it("answers 401 to a wrong key, and 404 to an unknown task's record-info", async () => {
    const source = await song()
    expect(
      await post("/api/v1/wav/generate", { taskId: source.taskId, audioId: source.audioId }, "nope")
    ).toMatchObject({ code: 401 })
    expect(await get("/api/v1/wav/record-info", "nope")).toMatchObject({ code: 404 })
  })
})

describe("vocal separation and MIDI", () => {
  it("separate_vocal gives vocals and instrumental; split_stem the twelve parts, instrumental null", async () => {
    const source = await song()
    const two = String(
      (await post("/api/v1/vocal-removal/generate", { taskId: source.taskId, audioId: source.audioId })).data?.taskId
    )
    const twoInfo = (await get("/api/v1/vocal-removal/record-info", two)).data
    expect(twoInfo?.response).toMatchObject({
      vocalUrl: expect.stringMatching(/_Vocals\.mp3$/),
      instrumentalUrl: expect.stringMatching(/_Instrumental\.mp3$/),
      drumsUrl: null
    })
    expect((await fetch(String(twoInfo?.response?.vocalUrl))).status).toBe(200)
    const twelve = String(
      (
        await post("/api/v1/vocal-removal/generate", {
          taskId: source.taskId,
          audioId: source.audioId,
          type: "split_stem"
        })
      ).data?.taskId
    )
    const twelveInfo = (await get("/api/v1/vocal-removal/record-info", twelve)).data
    expect(twelveInfo?.response?.originData).toHaveLength(12)
    expect(twelveInfo?.response).toMatchObject({
      instrumentalUrl: null,
      drumsUrl: expect.any(String),
      woodwindsUrl: expect.any(String)
    })
  })

  it("transcribes only a finished separation, its parts by id, with successFlag 0 then 1", async () => {
    const source = await song()
    upstream.control.onTrackOf(source.title, "vocal-removal", { pollsBeforeDone: 1, callbacks: "none" })
    upstream.control.onTrackOf(source.title, "midi", { pollsBeforeDone: 1, callbacks: "none" })
    const separation = String(
      (await post("/api/v1/vocal-removal/generate", { taskId: source.taskId, audioId: source.audioId })).data?.taskId
    )
    expect(await post("/api/v1/midi/generate", { taskId: separation })).toMatchObject({
      code: 400,
      msg: "the vocal separation is not finished"
    })
    await get("/api/v1/vocal-removal/record-info", separation)
    expect(await post("/api/v1/midi/generate", { taskId: separation, audioId: "nope" })).toMatchObject({ code: 400 })
    expect(await post("/api/v1/midi/generate", { taskId: source.taskId })).toMatchObject({ code: 400 })
    const partId = upstream.control.job(separation)?.partIds[0]
    const midi = String(
      (await post("/api/v1/midi/generate", { taskId: separation, audioId: partId, callBackUrl: callbackUrl })).data
        ?.taskId
    )
    expect((await get("/api/v1/midi/record-info", midi)).data).toMatchObject({ successFlag: 0, midiData: null })
    const done = (await get("/api/v1/midi/record-info", midi)).data
    expect(done).toMatchObject({ successFlag: 1, recordTaskId: -1, audioId: source.audioId })
    const instruments = done?.midiData?.instruments as unknown as ReadonlyArray<{ readonly name: string }>
    expect(instruments.map((instrument) => instrument.name)).toEqual(["Drums", "Electric Bass (finger)"])
  })

  it.each([
    ["CREATE_TASK_FAILED", 2],
    ["GENERATE_AUDIO_FAILED", 3]
  ] as const)("a transcription ending %s shows successFlag %i", async (outcome, flag) => {
    const source = await song()
    upstream.control.onTrackOf(source.title, "midi", { outcome, callbacks: "none" })
    const separation = String(
      (await post("/api/v1/vocal-removal/generate", { taskId: source.taskId, audioId: source.audioId })).data?.taskId
    )
    const midi = String((await post("/api/v1/midi/generate", { taskId: separation })).data?.taskId)
    expect((await get("/api/v1/midi/record-info", midi)).data).toMatchObject({ successFlag: flag, midiData: null })
  })
})

describe("callbacks of the tools", () => {
  it("one callback when done, in each tool's shape, repeated when told; record-info agrees", async () => {
    const source = await song()
    upstream.control.onTrackOf(source.title, "wav", { pollsBeforeDone: Infinity, callbackCopies: 2 })
    upstream.control.onTrackOf(source.title, "vocal-removal", {
      pollsBeforeDone: Infinity,
      outcome: "GENERATE_AUDIO_FAILED"
    })
    upstream.control.onTrackOf(source.title, "midi", { pollsBeforeDone: Infinity, callbacks: "none" })
    const wav = String(
      (await post("/api/v1/wav/generate", { taskId: source.taskId, audioId: source.audioId, callBackUrl: callbackUrl }))
        .data?.taskId
    )
    const separation = String(
      (
        await post("/api/v1/vocal-removal/generate", {
          taskId: source.taskId,
          audioId: source.audioId,
          callBackUrl: callbackUrl
        })
      ).data?.taskId
    )
    await upstream.control.settled()
    // The two tasks call back concurrently: their order is not fixed.
    const wavCallback = {
      code: 200,
      msg: "success",
      data: { audioWavUrl: expect.stringMatching(/\.wav$/), task_id: wav }
    }
    const separationCallback = {
      code: 500,
      msg: "Vocal separation failed",
      data: { task_id: separation, vocal_removal_info: null }
    }
    expect(received).toHaveLength(3)
    expect(received).toEqual(expect.arrayContaining([wavCallback, separationCallback]))
    expect(received.filter((body) => (body as { data: { task_id: string } }).data.task_id === wav)).toHaveLength(2)
    expect((await get("/api/v1/wav/record-info", wav)).data?.successFlag).toBe("SUCCESS")
    expect(upstream.control.callbacks.map((callback) => callback.stage).sort()).toEqual([
      "complete",
      "complete",
      "error"
    ])
  })

  it("the MIDI callback carries the notes with times as strings, the task id beside data", async () => {
    const source = await song()
    upstream.control.onTrackOf(source.title, "vocal-removal", { callbacks: "none" })
    const separation = String(
      (await post("/api/v1/vocal-removal/generate", { taskId: source.taskId, audioId: source.audioId })).data?.taskId
    )
    const midi = String(
      (await post("/api/v1/midi/generate", { taskId: separation, callBackUrl: callbackUrl })).data?.taskId
    )
    await upstream.control.settled()
    expect(received).toEqual([
      { task_id: midi, code: 200, msg: "success", data: { state: "complete", instruments: expect.any(Array) } }
    ])
    const body = received[0] as { data: { instruments: Array<{ notes: Array<{ start: unknown }> }> } }
    expect(typeof body.data.instruments[0]?.notes[0]?.start).toBe("string")
  })
})

describe("POST /api/v1/generate/get-timestamped-lyrics", () => {
  it("answers at once with the lyrics' words spread over the track, section tags on their first words", async () => {
    const source = await song()
    const answer = await post("/api/v1/generate/get-timestamped-lyrics", {
      taskId: source.taskId,
      audioId: source.audioId
    })
    const words = answer.data?.alignedWords as unknown as ReadonlyArray<{ word: string; startS: number; endS: number }>
    expect(words.map((word) => word.word)).toEqual(["[Verse]\nneon", "rain", "[Chorus]\nrun", "home"])
    expect(words.at(-1)?.endS).toBeLessThan(source.duration)
    expect(answer.data).toMatchObject({ waveformData: expect.any(Array), isStreamed: false })
  })

  it("has no words for an instrumental, and refuses an unknown audio or a field it does not take", async () => {
    const source = await song({ instrumental: true, prompt: undefined })
    expect(
      (await post("/api/v1/generate/get-timestamped-lyrics", { taskId: source.taskId, audioId: source.audioId })).data
        ?.alignedWords
    ).toEqual([])
    expect(
      await post("/api/v1/generate/get-timestamped-lyrics", { taskId: source.taskId, audioId: "nope" })
    ).toMatchObject({ code: 400 })
    expect(
      await post("/api/v1/generate/get-timestamped-lyrics", {
        taskId: source.taskId,
        audioId: source.audioId,
        callBackUrl: callbackUrl
      })
    ).toMatchObject({ code: 400 })
  })
})
