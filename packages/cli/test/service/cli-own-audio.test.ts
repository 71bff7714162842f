/**
 * `lyre upload`, `uploads`, `cover`, `vocals`, `accompany`, `edit`, `personas` and
 * `generate --persona` as processes against a service whose provider is the built-in engine (the
 * worker inline): a WAV the test made is uploaded, listened to, covered and sung over; the sung
 * track is accompanied, edited and kept as a persona that sings a new song. Another account's
 * upload and a file that is not audio are refused with the server's messages, exit 1.
 */
import { readdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { createAccount, startTestServer } from "../../../server/test/support/harness.ts"
import type { TestAccount, TestServer } from "../../../server/test/support/harness.ts"
import { songWav } from "../../../client/test/support/audio.ts"
import { lyreHome } from "../support/lyre.ts"
import type { LyreHome } from "../support/lyre.ts"

// The engine renders each task; a loaded machine takes its time.
vi.setConfig({ testTimeout: 240_000 })

let server: TestServer
let account: TestAccount
let home: LyreHome
let wavPath: string
beforeAll(async () => {
  server = await startTestServer({
    provider: "embedded",
    providerUrl: null,
    providerApiKey: null,
    worker: "inline",
    providerPollSeconds: 1
  })
  account = await createAccount(server, { subscription: 2_000 })
  home = lyreHome()
  wavPath = join(home.home, "Demo Take.wav")
  writeFileSync(wavPath, songWav(10))
}, 60_000)
afterAll(async () => {
  home.remove()
  await server.close()
})

const env = (key: string = account.key) => ({ LYRE_API_KEY: key, LYRE_BASE_URL: server.url })
const credits = async (id: string = account.id): Promise<number> =>
  Number((await server.admin("GET", `/accounts/${id}`)).body["credits"]?.["total"])
const uploadRows = async (accountId: string): Promise<number> =>
  Number(
    (await server.query<{ n: string }>("select count(*) as n from uploads where account_id = $1", accountId))[0]?.n
  )

/** Runs a command that should succeed with `-o json`, and answers its result. */
const ok = async (
  args: ReadonlyArray<string>
): Promise<{ json: Record<string, unknown> & { tracks?: Array<Record<string, unknown>> }; stderr: string }> => {
  const run = await home.run([...args, "-o", "json"], { env: env() })
  expect(run.stderr).not.toContain("lyre:")
  expect(run.code).toBe(0)
  return { json: JSON.parse(run.stdout), stderr: run.stderr }
}

let upload: { id: string; track_id: string }
let sung: string

describe("lyre upload", () => {
  it("sends a WAV with progress, --wait follows it to ready; uploads get shows what was heard", async () => {
    const { json, stderr } = await ok(["upload", wavPath, "--title", "Demo", "--wait"])
    expect(json).toMatchObject({
      status: "ready",
      title: "Demo",
      content_type: "audio/wav",
      track_id: expect.stringMatching(/^trk_/)
    })
    upload = { id: String(json["id"]), track_id: String(json["track_id"]) }
    // Not a terminal: plain progress lines on standard error, the last at 100%.
    expect(stderr).toMatch(/Uploading Demo Take\.wav {2}\d+ KB of \d+ KB \(100%\)/)
    expect(stderr).toContain(`Uploaded Demo Take.wav (`)
    expect(stderr).toContain(`${upload.id}  ready in `)

    const table = await home.run(["uploads", "get", upload.id], { env: env() })
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(/^status\s+ready$/m)
    expect(table.stdout).toMatch(/^tempo\s+\d+ bpm, 4\/4$/m)
    expect(table.stdout).toMatch(/^key\s+[A-G]/m)
    expect(table.stdout).toContain(`track     ${upload.track_id}`)
    const list = await home.run(["uploads", "list"], { env: env() })
    expect(list.stdout).toMatch(/^ID\s+STATUS\s+TRACK\s+LENGTH\s+KEY\s+BPM\s+TITLE$/m)
    expect(list.stdout).toContain(upload.id)
  })

  it("--idempotency-key: the same key and file again answer the first upload, kept once", async () => {
    const keyed = await createAccount(server)
    const send = () =>
      home.run(["upload", wavPath, "--idempotency-key", "cli-take-1", "-o", "json"], { env: env(keyed.key) })
    const first = await send()
    const again = await send()
    expect([first.code, again.code]).toEqual([0, 0])
    expect(JSON.parse(again.stdout)).toEqual(JSON.parse(first.stdout))
    expect(await uploadRows(keyed.id)).toBe(1)
  })

  it("- reads the file from standard input, typed by --content-type; untyped, the server refuses it", async () => {
    const wav = songWav(6)
    const piped = await home.run(["upload", "-", "--content-type", "audio/wav", "--title", "Piped", "-o", "json"], {
      env: env(),
      input: wav
    })
    expect(piped.stderr).not.toContain("lyre:")
    expect(piped.code).toBe(0)
    expect(JSON.parse(piped.stdout)).toMatchObject({
      status: "pending",
      title: "Piped",
      content_type: "audio/wav",
      bytes: wav.length
    })
    expect(piped.stderr).toContain("Uploading standard input  ")
    const untyped = await home.run(["upload", "-"], { env: env(), input: wav })
    expect(untyped.code).toBe(1)
    expect(untyped.stderr).toContain(
      "(this one is application/octet-stream). (param: file; invalid_request_error/invalid_audio;"
    )
  })

  it("a file that is not audio, or past 50 MB, is refused with the server's message, exit 1, and nothing is kept", async () => {
    const fresh = await createAccount(server)
    const notes = join(home.home, "notes.txt")
    writeFileSync(notes, "these are words, not audio\n".repeat(400))
    const untyped = await home.run(["upload", notes], { env: env(fresh.key) })
    expect(untyped.code).toBe(1)
    expect(untyped.stderr).toContain(
      "lyre: An upload is audio: audio/mpeg, audio/wav, audio/flac, audio/ogg (this one is application/octet-stream). (param: file; invalid_request_error/invalid_audio; request "
    )
    const named = join(home.home, "notes.wav")
    writeFileSync(named, "these are words, not audio\n".repeat(400))
    const lying = await home.run(["upload", named, "--wait"], { env: env(fresh.key) })
    expect(lying.code).toBe(1)
    expect(lying.stderr).toContain("(param: file; invalid_request_error/invalid_audio; request ")
    const big = join(home.home, "big.wav")
    writeFileSync(big, new Uint8Array(50 * 1024 * 1024 + 1))
    const tooLarge = await home.run(["upload", big], { env: env(fresh.key) })
    rmSync(big)
    expect(tooLarge.code).toBe(1)
    expect(tooLarge.stderr).toContain(
      "lyre: An upload is at most 52428800 bytes. (invalid_request_error/request_too_large; request "
    )
    const missing = await home.run(["upload", join(home.home, "absent.wav")], { env: env(fresh.key) })
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain("lyre: Cannot read ")
    expect(await uploadRows(fresh.id)).toBe(0)
    expect((await home.run(["uploads", "list"], { env: env(fresh.key) })).stdout).toBe("No uploads yet.\n")
  })

  it("another account's upload is not found (404 message, exit 1), nor its track, and nothing is charged", async () => {
    const other = await createAccount(server)
    const get = await home.run(["uploads", "get", upload.id], { env: env(other.key) })
    expect(get.code).toBe(1)
    expect(get.stderr).toContain(`lyre: No upload ${upload.id}. (param: id; not_found/upload_not_found; request `)
    const removed = await home.run(["uploads", "delete", upload.id], { env: env(other.key) })
    expect(removed.code).toBe(1)
    expect(removed.stderr).toContain(`No upload ${upload.id}.`)
    const cover = await home.run(["cover", upload.track_id, "--style", "jazz"], { env: env(other.key) })
    expect(cover.code).toBe(1)
    expect(cover.stderr).toContain(
      `No ready track ${upload.track_id}. (param: track_id; not_found/track_not_found; request `
    )
    expect(await credits(other.id)).toBe(1_000)
  })
})

describe("tasks on a track", () => {
  it("cover --wait --download saves the cover of the upload in a new style", async () => {
    const before = await credits()
    const dir = join(home.home, "covers")
    const { json } = await ok([
      "cover",
      upload.track_id,
      "--style",
      "bossa nova, acoustic guitar, 100 bpm",
      "--title",
      "Demo Bossa",
      "--download",
      dir
    ])
    expect(json).toMatchObject({ status: "ready", model: "aether", credits_used: 50 })
    expect(readdirSync(dir)).toContain("Demo-Bossa-1.mp3")
    expect(await credits()).toBe(before - 50)
  })

  it("vocals sings words from a file over the upload; accompany and edit work on the sung track", async () => {
    const words = join(home.home, "words.txt")
    writeFileSync(words, "[Verse]\nMorning comes in silver light\nCarry me home")
    const vocals = await ok(["vocals", upload.track_id, "--lyrics-file", words, "--vocal-gender", "f", "--wait"])
    expect(vocals.json).toMatchObject({ status: "ready", credits_used: 50 })
    const track = vocals.json.tracks?.[0] ?? {}
    expect(String(track["lyrics"])).toContain("Morning comes in silver light")
    sung = String(track["id"])

    const accompanied = await ok(["accompany", sung, "--style", "jazz trio, upright bass", "--wait"])
    expect(accompanied.json).toMatchObject({ status: "ready", credits_used: 50 })

    const chorus = join(home.home, "chorus.txt")
    writeFileSync(chorus, "Hold on to the light")
    const edited = await ok(["edit", sung, "--start", "2", "--end", "6", "--lyrics-file", chorus, "--wait"])
    expect(edited.json).toMatchObject({ status: "ready", credits_used: 50 })
    expect(String(edited.json.tracks?.[0]?.["lyrics"])).toContain("Hold on to the light")
  })

  it("bad requests are refused in the server's words, exit 1, nothing charged", async () => {
    const before = await credits()
    const span = await home.run(["edit", sung, "--start", "2", "--end", "3"], { env: env() })
    expect(span.code).toBe(1)
    expect(span.stderr).toContain("(param: end;")
    const negative = await home.run(["edit", sung, "--start", "-1", "--end", "3"], { env: env() })
    expect(negative.code).toBe(1)
    expect(negative.stderr).toContain("(param: start; invalid_parameter)")
    const noWords = await home.run(["vocals", upload.track_id], { env: env() })
    expect(noWords.code).toBe(1)
    expect(noWords.stderr).toContain("(param: lyrics;")
    const noStyleToAccompany = await home.run(["accompany", upload.track_id], { env: env() })
    expect(noStyleToAccompany.code).toBe(1)
    expect(noStyleToAccompany.stderr).toContain("required option '--style <text>' not specified")
    const noStyle = await home.run(["cover", upload.track_id], { env: env() })
    expect(noStyle.code).toBe(1)
    expect(noStyle.stderr).toContain("required option '--style <text>' not specified")
    expect(await credits()).toBe(before)
  })
})

describe("lyre personas", () => {
  it("create, list, generate --persona, delete; a deleted persona is not found", async () => {
    const { json: persona } = await ok([
      "personas",
      "create",
      sung,
      "--name",
      "Silver",
      "--description",
      "A bright voice"
    ])
    expect(persona).toMatchObject({
      id: expect.stringMatching(/^per_/),
      name: "Silver",
      track_id: sung,
      vocal_gender: "f"
    })
    const id = String(persona["id"])
    const list = await home.run(["personas", "list"], { env: env() })
    expect(list.code).toBe(0)
    expect(list.stdout).toMatch(new RegExp(`^${id}\\s+Silver\\s+${sung}\\s+f\\s`, "m"))

    const before = await credits()
    const { json: song } = await ok([
      "generate",
      "--style",
      "synthpop, 118 bpm",
      "--title",
      "Later",
      "--lyrics",
      "[Verse]\nSilver on the water",
      "--persona",
      id,
      "--wait"
    ])
    expect(song).toMatchObject({ status: "ready", credits_used: 50 })
    expect(await credits()).toBe(before - 50)

    expect((await home.run(["personas", "delete", id], { env: env() })).stdout).toBe(`Deleted ${id}\n`)
    const gone = await home.run(["personas", "get", id], { env: env() })
    expect(gone.code).toBe(1)
    expect(gone.stderr).toContain(`(param: id; not_found/persona_not_found; request `)
    const named = await home.run(["generate", "--style", "pop", "--title", "X", "--instrumental", "--persona", id], {
      env: env()
    })
    expect(named.code).toBe(1)
    expect(named.stderr).toContain("(param: persona_id; not_found/persona_not_found;")
  })
})

describe("--help", () => {
  it("the new commands have help with examples", async () => {
    for (const command of [
      ["upload"],
      ["uploads"],
      ["uploads", "list"],
      ["cover"],
      ["vocals"],
      ["accompany"],
      ["edit"],
      ["personas"],
      ["personas", "create"]
    ]) {
      const run = await home.run([...command, "--help"])
      expect([command, run.code]).toEqual([command, 0])
      expect(run.stdout).toContain("Examples:")
    }
    expect((await home.run(["generate", "--help"])).stdout).toContain("--persona <id>")
  })
})
