import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { startCallbackReceiver, startFakeUpstream } from "../../src/index.ts"
import type { CallbackReceiver, FakeUpstream } from "../../src/index.ts"

const apiKey = "test-key"
let upstream: FakeUpstream
let receiver: CallbackReceiver
let callbackUrl: string
const received: Array<{ readonly path: string; readonly body: unknown }> = []

beforeAll(async () => {
  upstream = await startFakeUpstream({ apiKey, audioBytes: 100_000 })
  receiver = await startCallbackReceiver((path, body) => received.push({ path, body }))
  callbackUrl = `${receiver.origin}/callback/gen_1?token=t`
})

afterEach(() => {
  upstream.control.reset()
  received.length = 0
})

afterAll(async () => {
  await upstream.close()
  await receiver.close()
})

const request = (title: string, extra: Record<string, unknown> = {}) => ({
  customMode: true,
  instrumental: false,
  model: "V4_5",
  style: "lo-fi house",
  title,
  prompt: "la la la",
  callBackUrl: callbackUrl,
  ...extra
})

/** The answers as the contract describes them; the tests check the shapes they read. */
interface GenerateAnswer {
  readonly code: number
  readonly msg: string
  readonly data: { readonly taskId: string } | null
}

interface RecordInfo {
  readonly code: number
  readonly data: {
    readonly taskId: string
    readonly status: string
    readonly errorCode: number | null
    readonly errorMessage: string | null
    readonly response: {
      readonly sunoData: ReadonlyArray<
        Record<string, unknown> & { readonly audioUrl: string; readonly imageUrl: string }
      >
    } | null
  }
}

const submit = async (body: unknown, key = apiKey, signal?: AbortSignal) => {
  const response = await fetch(`${upstream.url}/api/v1/generate`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
    ...(signal === undefined ? {} : { signal })
  })
  const text = await response.text()
  const json = response.headers.get("content-type")?.includes("json") === true
  return { status: response.status, text, body: json ? (JSON.parse(text) as GenerateAnswer) : null }
}

const taskIdOf = async (title: string, extra: Record<string, unknown> = {}): Promise<string> => {
  const answer = await submit(request(title, extra))
  const taskId = answer.body?.data?.taskId
  if (taskId === undefined) throw new Error(`not accepted: ${answer.text}`)
  return taskId
}

const poll = async (taskId: string) => {
  const response = await fetch(`${upstream.url}/api/v1/generate/record-info?taskId=${taskId}`, {
    headers: { Authorization: `Bearer ${apiKey}` }
  })
  return (await response.json()) as RecordInfo
}

const tracksOf = (info: RecordInfo) => info.data.response?.sunoData ?? []

describe("POST /api/v1/generate", () => {
  it("accepts a valid custom-mode request and records it", async () => {
    const answer = await submit(request("Accepted"))
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({ code: 200, msg: "success", data: { taskId: expect.any(String) } })
    expect(upstream.control.submissionsFor("Accepted")).toEqual([
      expect.objectContaining({ authorized: true, answer: "accepted", taskId: answer.body?.data?.taskId, code: 200 })
    ])
  })

  it("answers body code 401 for a wrong key", async () => {
    const answer = await submit(request("Wrong key"), "nope")
    expect(answer.body).toMatchObject({ code: 401 })
    expect(upstream.control.submissions[0]).toMatchObject({ authorized: false, answer: "rejected", code: 401 })
  })

  it.each([
    ["customMode false", { customMode: false }],
    ["a title over 80 characters", { title: "x".repeat(81) }],
    ["no lyrics for a vocal song", { prompt: undefined }],
    ["an unknown model", { model: "aether" }],
    ["an unknown field", { lyrics: "la" }],
    ["a weight above 1", { styleWeight: 1.5 }]
  ])("answers body code 400 for %s", async (_, extra) => {
    expect((await submit(request("Invalid", extra))).body).toMatchObject({ code: 400 })
  })

  it.each([400, 401, 404, 405, 413, 429, 430, 455, 500])("rejects with body code %i when told to", async (code) => {
    upstream.control.next({ submit: { code } })
    const answer = await submit(request("Rejected"))
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({ code, data: null })
  })

  it("answers an HTTP 5xx without a body code when told to", async () => {
    upstream.control.next({ submit: { httpStatus: 503 } })
    const answer = await submit(request("Gateway"))
    expect(answer.status).toBe(503)
    expect(answer.text).toContain("<html>")
  })

  it("hangs when told to, creating nothing", async () => {
    upstream.control.next({ submit: "hang" })
    await expect(submit(request("Hang"), apiKey, AbortSignal.timeout(300))).rejects.toThrow()
    expect(upstream.control.submissionsFor("Hang")).toEqual([expect.objectContaining({ answer: "hang", taskId: null })])
  })

  it("can take the task and then hang, so its callbacks still come", async () => {
    upstream.control.next({ submit: "accept-then-hang" })
    await expect(submit(request("Took it"), apiKey, AbortSignal.timeout(300))).rejects.toThrow()
    const taskId = upstream.control.submissionsFor("Took it")[0]?.taskId
    expect(taskId).toEqual(expect.any(String))
    await upstream.control.settled()
    expect(received.map((callback) => callback.body)).toContainEqual(
      expect.objectContaining({
        data: expect.objectContaining({ callbackType: "complete", task_id: taskId })
      })
    )
  })

  it("can take the task at once and hold its answer until told", async () => {
    let answer = (): void => undefined
    upstream.control.next({ submit: { answerWhen: new Promise<void>((resolve) => (answer = resolve)) } })
    let answered = false
    const submitted = submit(request("Held")).then((result) => {
      answered = true
      return result
    })
    while (upstream.control.submissionsFor("Held").length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
    const taskId = upstream.control.submissionsFor("Held")[0]?.taskId
    expect(upstream.control.task(taskId ?? "")?.title).toBe("Held")
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(answered).toBe(false)
    answer()
    expect((await submitted).body).toMatchObject({ code: 200, data: { taskId } })
  })

  it("can hold a refusal the same way", async () => {
    let answer = (): void => undefined
    upstream.control.next({ submit: { answerWhen: new Promise<void>((resolve) => (answer = resolve)), code: 455 } })
    const submitted = submit(request("Held refusal"))
    while (upstream.control.submissionsFor("Held refusal").length === 0)
      await new Promise((resolve) => setTimeout(resolve, 10))
    expect(upstream.control.submissionsFor("Held refusal")[0]).toMatchObject({
      answer: "rejected",
      taskId: null,
      code: 455
    })
    answer()
    expect((await submitted).body).toMatchObject({ code: 455, data: null })
  })

  it("drops the connection when told to", async () => {
    upstream.control.next({ submit: "drop" })
    await expect(submit(request("Drop"))).rejects.toThrow()
  })

  it("applies title rules before the queue, the queue in order, then the default", async () => {
    upstream.control.setDefault({ submit: { code: 455 } })
    upstream.control.onTitle("Special", { submit: { code: 430 } })
    upstream.control.next({ submit: { code: 413 } }, { submit: "accept" })
    expect((await submit(request("Special"))).body?.code).toBe(430)
    expect((await submit(request("First"))).body?.code).toBe(413)
    expect((await submit(request("Second"))).body?.code).toBe(200)
    expect((await submit(request("Third"))).body?.code).toBe(455)
    expect((await submit(request("Special"))).body?.code).toBe(430)
  })
})

describe("GET /api/v1/generate/record-info", () => {
  it("shows the outcome with two camelCase tracks on the first poll by default", async () => {
    upstream.control.setDefault({ callbacks: "none" })
    const taskId = await taskIdOf("Quick")
    const body = await poll(taskId)
    expect(body).toMatchObject({ code: 200, data: { taskId, status: "SUCCESS", errorCode: null } })
    const tracks = tracksOf(body)
    expect(tracks).toHaveLength(2)
    expect(tracks[0]).toMatchObject({
      id: expect.any(String),
      audioUrl: expect.stringMatching(/\.mp3$/),
      streamAudioUrl: expect.any(String),
      imageUrl: expect.stringMatching(/\.png$/),
      prompt: "la la la",
      modelName: "V4_5",
      title: "Quick",
      tags: "lo-fi house",
      createTime: expect.any(Number),
      duration: expect.any(Number)
    })
  })

  it("walks PENDING, TEXT_SUCCESS, FIRST_SUCCESS to SUCCESS over the polls it is told", async () => {
    upstream.control.next({ pollsBeforeDone: 3, callbacks: "none" })
    const taskId = await taskIdOf("Slow")
    const statuses = []
    for (let i = 0; i < 5; i++) statuses.push((await poll(taskId)).data.status)
    expect(statuses).toEqual(["PENDING", "TEXT_SUCCESS", "FIRST_SUCCESS", "SUCCESS", "SUCCESS"])
    expect(upstream.control.task(taskId)?.polls).toBe(5)
    expect(upstream.control.polls.map((entry) => entry.status)).toEqual(statuses)
  })

  it.each([
    ["GENERATE_AUDIO_FAILED", 500],
    ["SENSITIVE_WORD_ERROR", 400],
    ["CREATE_TASK_FAILED", 500]
  ] as const)("fails later with %s", async (outcome, errorCode) => {
    upstream.control.next({ outcome, pollsBeforeDone: 1, callbacks: "none" })
    const taskId = await taskIdOf("Fails")
    expect((await poll(taskId)).data.status).toBe("PENDING")
    expect((await poll(taskId)).data).toMatchObject({
      status: outcome,
      errorCode,
      errorMessage: expect.any(String),
      response: null
    })
  })

  it("reports CALLBACK_EXCEPTION with its tracks, or without any", async () => {
    upstream.control.next(
      { outcome: "CALLBACK_EXCEPTION", callbacks: "none" },
      { outcome: "CALLBACK_EXCEPTION", trackCount: 0, callbacks: "none" }
    )
    const withTracks = await poll(await taskIdOf("Exception"))
    expect(withTracks.data.status).toBe("CALLBACK_EXCEPTION")
    expect(tracksOf(withTracks)).toHaveLength(2)
    const without = await poll(await taskIdOf("Exception, no tracks"))
    expect(without.data).toMatchObject({ status: "CALLBACK_EXCEPTION", response: null })
  })

  it("answers snake_case track fields when told to", async () => {
    upstream.control.next({ recordInfoCasing: "snake", callbacks: "none" })
    const track = tracksOf(await poll(await taskIdOf("Snake")))[0]
    expect(track).toMatchObject({ audio_url: expect.any(String), image_url: expect.any(String), model_name: "V4_5" })
    expect(track?.audioUrl).toBeUndefined()
  })

  it("can hang, answer a body code or an HTTP 5xx", async () => {
    upstream.control.next(
      { poll: "hang", callbacks: "none" },
      { poll: { code: 500 }, callbacks: "none" },
      { poll: { httpStatus: 502 }, callbacks: "none" }
    )
    const hanging = await taskIdOf("Poll hangs")
    await expect(
      fetch(`${upstream.url}/api/v1/generate/record-info?taskId=${hanging}`, {
        headers: { Authorization: `Bearer ${apiKey}` },
        signal: AbortSignal.timeout(300)
      })
    ).rejects.toThrow()
    expect((await poll(await taskIdOf("Poll code"))).code).toBe(500)
    const gateway = await taskIdOf("Poll 502")
    const response = await fetch(`${upstream.url}/api/v1/generate/record-info?taskId=${gateway}`, {
      headers: { Authorization: `Bearer ${apiKey}` }
    })
    expect(response.status).toBe(502)
  })

  it("answers code 404 for an unknown task and 401 for a wrong key", async () => {
    expect((await poll("nope")).code).toBe(404)
    const response = await fetch(`${upstream.url}/api/v1/generate/record-info?taskId=x`, {
      headers: { Authorization: "Bearer bad" }
    })
    expect(((await response.json()) as RecordInfo).code).toBe(401)
  })
})

describe("callbacks", () => {
  it("sends text, first and complete in snake_case to callBackUrl", async () => {
    const taskId = await taskIdOf("Callbacks")
    await upstream.control.settled()
    expect(received.map((callback) => callback.path)).toEqual(Array(3).fill("/callback/gen_1?token=t"))
    expect(received.map((callback) => (callback.body as { data: { callbackType: string } }).data.callbackType)).toEqual(
      ["text", "first", "complete"]
    )
    const complete = received[2]?.body
    expect(complete).toMatchObject({
      code: 200,
      data: {
        callbackType: "complete",
        task_id: taskId,
        data: [
          expect.objectContaining({
            audio_url: expect.stringMatching(/\.mp3$/),
            stream_audio_url: expect.any(String),
            image_url: expect.any(String),
            prompt: "la la la",
            model_name: "V4_5",
            title: "Callbacks",
            tags: "lo-fi house",
            createTime: expect.any(Number),
            duration: expect.any(Number)
          }),
          expect.objectContaining({ audio_url: expect.stringMatching(/\.mp3$/) })
        ]
      }
    })
    expect(upstream.control.callbacks.map((callback) => callback.statusCode)).toEqual([200, 200, 200])
  })

  it("sends an error callback for a failing task", async () => {
    upstream.control.next({ outcome: "SENSITIVE_WORD_ERROR" })
    const taskId = await taskIdOf("Error callback")
    await upstream.control.settled()
    expect(received.map((callback) => callback.body)).toEqual([
      { code: 400, msg: expect.any(String), data: { callbackType: "error", task_id: taskId, data: [] } }
    ])
  })

  it("a task that only callbacks can finish is done once its complete callback was sent", async () => {
    upstream.control.next({ pollsBeforeDone: Infinity })
    const taskId = await taskIdOf("Callback finishes")
    await upstream.control.settled()
    expect((await poll(taskId)).data.status).toBe("SUCCESS")
  })

  it("sends duplicates", async () => {
    upstream.control.next({ callbacks: ["complete"], callbackCopies: 3 })
    await taskIdOf("Duplicates")
    await upstream.control.settled()
    expect(received).toHaveLength(3)
  })

  it("sends late callbacks after their delay", async () => {
    upstream.control.next({ callbacks: ["complete"], callbackDelayMs: 300, pollsBeforeDone: 0 })
    const taskId = await taskIdOf("Late")
    expect((await poll(taskId)).data.status).toBe("SUCCESS")
    expect(received).toHaveLength(0)
    await upstream.control.settled()
    expect(received).toHaveLength(1)
  })

  it("sends none when told to", async () => {
    upstream.control.next({ callbacks: "none" })
    await taskIdOf("Quiet")
    await upstream.control.settled()
    expect(received).toHaveLength(0)
  })

  it("sends a callback on demand, to any URL", async () => {
    upstream.control.next({ callbacks: "none", pollsBeforeDone: Infinity })
    const taskId = await taskIdOf("On demand")
    const record = await upstream.control.sendCallback(taskId, "complete", {
      url: callbackUrl.replace("token=t", "token=forged")
    })
    expect(record).toMatchObject({ taskId, stage: "complete", statusCode: 200, error: null })
    expect(received[0]?.path).toContain("token=forged")
  })
})

describe("GET /files", () => {
  it("serves each track's audio and image with Content-Length", async () => {
    upstream.control.next({ callbacks: "none" })
    const [track] = tracksOf(await poll(await taskIdOf("Files")))
    if (track === undefined) throw new Error("no track")
    const audio = await fetch(track.audioUrl)
    expect(audio.headers.get("content-type")).toBe("audio/mpeg")
    expect(audio.headers.get("content-length")).toBe("100000")
    expect((await audio.arrayBuffer()).byteLength).toBe(100_000)
    const image = await fetch(track.imageUrl)
    expect(image.headers.get("content-type")).toBe("image/png")
    expect(Number(image.headers.get("content-length"))).toBeGreaterThan(0)
    await image.arrayBuffer()
    expect(upstream.control.downloads).toHaveLength(2)
  })

  it("answers 404 for unknown files and for a task told its files are missing", async () => {
    upstream.control.next({ callbacks: "none", files: "missing" })
    const [track] = tracksOf(await poll(await taskIdOf("Missing files")))
    if (track === undefined) throw new Error("no track")
    expect((await fetch(track.audioUrl)).status).toBe(404)
    expect((await fetch(`${upstream.url}/files/unknown.mp3`)).status).toBe(404)
  })
})
