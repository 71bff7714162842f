/**
 * Uploads (DESIGN.md section 11) through REST: a file as the raw body or a multipart form, kept
 * only once it decodes as what it says; the listening worker moves it to `ready` with its
 * analysis and a track; every bad body is a 400 (or 413) that stores and counts nothing. Audio
 * is made here with kept encoders (wavefile, LAME through wasm-media-encoders).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { request } from "node:http"
import { join } from "node:path"
import { createRequire } from "node:module"
import { createEncoder } from "wasm-media-encoders"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { api, createAccount, startTestServer } from "../support/harness.ts"
import type { Json, TestAccount, TestServer } from "../support/harness.ts"
import { writeOutsideSong } from "../support/outsideSong.ts"

const require = createRequire(import.meta.url)
const { WaveFile } = require("wavefile") as typeof import("wavefile")

const rate = 44_100

/** A chord of sines (A minor) with a pulse on every beat at 120 bpm. */
const tone = (seconds: number, amplitude = 0.25): Float32Array => {
  const out = new Float32Array(Math.round(seconds * rate))
  for (let i = 0; i < out.length; i++) {
    const t = i / rate
    const beat = t % 0.5
    const pulse = beat < 0.05 ? Math.sin(2 * Math.PI * 80 * t) * (1 - beat / 0.05) : 0
    out[i] =
      (amplitude *
        (Math.sin(2 * Math.PI * 220 * t) + Math.sin(2 * Math.PI * 261.63 * t) + Math.sin(2 * Math.PI * 329.63 * t))) /
        3 +
      0.3 * pulse
  }
  return out
}

const wavOf = (samples: Float32Array): Buffer => {
  const wav = new WaveFile()
  wav.fromScratch(
    1,
    rate,
    "16",
    Array.from(samples, (v) => Math.round(Math.max(-1, Math.min(1, v)) * 32767))
  )
  return Buffer.from(wav.toBuffer())
}

const mp3Of = async (samples: Float32Array): Promise<Buffer> => {
  const lame = readFileSync(require.resolve("wasm-media-encoders").replace(/dist[\\/].*$/, "wasm/mp3.wasm"))
  const encoder = await createEncoder("audio/mpeg", lame)
  encoder.configure({ sampleRate: rate, channels: 1, bitrate: 128 })
  const parts: Array<Uint8Array> = []
  for (let i = 0; i < samples.length; i += 11_520) parts.push(encoder.encode([samples.subarray(i, i + 11_520)]).slice())
  parts.push(encoder.finalize().slice())
  return Buffer.concat(parts)
}

let server: TestServer
let account: TestAccount
let other: TestAccount
let wav: Buffer
/** A FLAC and an Ogg Vorbis file, rendered by FluidSynth. */
let flac: Buffer
let ogg: Buffer
beforeAll(async () => {
  flac = writeOutsideSong("flac").wav
  ogg = writeOutsideSong("oga").wav
  server = await startTestServer({ worker: "inline", providerPollSeconds: 1 })
  account = await createAccount(server)
  other = await createAccount(server)
  wav = wavOf(tone(6))
}, 60_000)
afterAll(() => server.close())

const upload = (body: Buffer | string, type: string, key = account.key, query = "") =>
  fetch(`${server.url}/api/v1/music/uploads${query}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": type },
    body
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as Json }))

const form = (parts: Record<string, Blob | string>, key = account.key) => {
  const data = new FormData()
  for (const [name, value] of Object.entries(parts)) {
    if (typeof value === "string") data.append(name, value)
    else data.append(name, value, name === "file" ? ((value as Blob & { name?: string }).name ?? "audio") : undefined)
  }
  return fetch(`${server.url}/api/v1/music/uploads`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: data
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as Json }))
}

const settled = async (id: string, key = account.key): Promise<Json> => {
  const until = Date.now() + 90_000
  let body = (await api(server, "GET", `/api/v1/music/uploads/${id}`, { key })).body
  while (String(body.status) === "pending" && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    body = (await api(server, "GET", `/api/v1/music/uploads/${id}`, { key })).body
  }
  return body
}

/** Files kept in storage under DATA_DIR/files, by upload. */
const storedUploads = (): Array<string> => {
  const root = join(server.config.dataDir, "files")
  return existsSync(root) ? readdirSync(root).filter((name) => name.startsWith("upl_")) : []
}

const expectInvalidAudio = (res: { status: number; body: Json }) => {
  expect(res.status).toBe(400)
  expect(res.body.error).toMatchObject({ type: "invalid_request_error", code: "invalid_audio", param: "file" })
}

describe("POST /v1/music/uploads", () => {
  it("202: a WAV body is kept, listened to, and becomes ready with its analysis, a track and upload.ready", {
    timeout: 120_000
  }, async () => {
    const res = await upload(wav, "audio/wav", account.key, "?title=Sines")
    expect(res.status).toBe(202)
    expect(res.body.id).toMatch(/^upl_/)
    expect(res.body.status).toBe("pending")
    expect(res.body.title).toBe("Sines")
    expect(res.body.content_type).toBe("audio/wav")
    expect(res.body.bytes).toBe(wav.length)
    expect(Number(res.body.duration)).toBeCloseTo(6, 2)
    expect(res.body.track_id).toBeNull()
    const ready = await settled(String(res.body.id))
    expect(ready.status).toBe("ready")
    expect(String(ready.track_id)).toMatch(/^trk_/)
    const analysis = ready.analysis ?? {}
    expect(Number(analysis.bpm)).toBeGreaterThan(0)
    expect(typeof analysis.key).toBe("string")
    expect(analysis.time_signature).toBe("4/4")
    expect(Number(analysis.loudness_lufs)).toBeLessThan(0)
    expect((analysis.beats as unknown as Array<number>).length).toBeGreaterThan(4)
    expect(Array.isArray(analysis.chords)).toBe(true)
    const events = await server.query<{ type: string }>(
      `select type from outbox_events where payload ->> 'id' = $1`,
      String(res.body.id)
    )
    expect(events.map((e) => e.type)).toEqual(["upload.ready"])
    const tracks = await server.query<{ upload_id: string; task_id: string | null }>(
      `select upload_id, task_id from tracks where id = $1`,
      String(ready.track_id)
    )
    expect(tracks).toEqual([{ upload_id: res.body.id, task_id: null }])
  })

  it("202: an MP3 in a multipart form with a title", async () => {
    const mp3 = await mp3Of(tone(5.5))
    const res = await form({ title: "From a form", file: new File([mp3], "song.mp3", { type: "audio/mpeg" }) })
    expect(res.status).toBe(202)
    expect(res.body.title).toBe("From a form")
    expect(res.body.content_type).toBe("audio/mpeg")
    expect(Number(res.body.duration)).toBeGreaterThan(5.4)
  })

  it("202: FLAC and Ogg Vorbis bodies", async () => {
    for (const [body, type] of [
      [flac, "audio/flac"],
      [ogg, "audio/ogg"]
    ] as const) {
      const res = await upload(body, type)
      expect(res.status).toBe(202)
      expect(res.body.content_type).toBe(type)
      expect(Number(res.body.duration)).toBeGreaterThan(20)
    }
  })
})

describe("bad bodies: 400 (or 413), nothing stored, nothing counted", () => {
  const fuzz: Array<[string, () => Promise<{ status: number; body: Json }>]> = [
    ["0 bytes", () => upload(Buffer.alloc(0), "audio/wav")],
    [
      "text named .mp3",
      () => form({ file: new File(["this is not audio at all\n".repeat(400)], "song.mp3", { type: "audio/mpeg" }) })
    ],
    ["text as audio/mpeg", () => upload("just some words, not audio\n".repeat(500), "audio/mpeg")],
    [
      "a truncated MP3",
      async () => {
        const mp3 = await mp3Of(tone(12))
        return upload(mp3.subarray(0, Math.floor(mp3.length * 0.7) + 5), "audio/mpeg")
      }
    ],
    ["a truncated FLAC", () => upload(flac.subarray(0, Math.floor(flac.length * 0.6) + 3), "audio/flac")],
    ["a truncated Ogg Vorbis", () => upload(ogg.subarray(0, Math.floor(ogg.length * 0.6) + 3), "audio/ogg")],
    [
      "a WAV header that lies about its sizes",
      async () => {
        const lying = Buffer.from(wav)
        lying.writeUInt32LE(lying.length * 4, 4)
        lying.writeUInt32LE(lying.length * 4, 40)
        return upload(lying, "audio/wav")
      }
    ],
    ["a WAV cut short", async () => upload(wav.subarray(0, wav.length - 1001), "audio/wav")],
    ["a WAV sent as FLAC", () => upload(wav, "audio/flac")],
    ["a WAV sent as Ogg", () => upload(wav, "audio/ogg")],
    ["shorter than 5 s", () => upload(wavOf(tone(3)), "audio/wav")],
    ["silent", () => upload(wavOf(new Float32Array(rate * 6)), "audio/wav")],
    ["a type that is not audio", () => upload(wav, "text/plain")]
  ]
  for (const [name, send] of fuzz) {
    it(`400 invalid_audio: ${name}`, async () => {
      const before = storedUploads().length
      expectInvalidAudio(await send())
      expect(storedUploads().length).toBe(before)
    })
  }

  it("400 missing_parameter: a multipart form without `file`", async () => {
    const res = await form({ title: "nothing" })
    expect(res.status).toBe(400)
    expect(res.body.error?.code).toBe("missing_parameter")
    expect(res.body.error?.param).toBe("file")
  })

  it("400 invalid_parameter: a multipart form with two `file` parts", async () => {
    const before = storedUploads().length
    const rows = () =>
      server.query<{ n: number }>("select count(*)::int as n from uploads where account_id = $1", account.id)
    const counted = await rows()
    const data = new FormData()
    data.append("file", new File([wav], "first.wav", { type: "audio/wav" }))
    data.append("file", new File([wav], "second.wav", { type: "audio/wav" }))
    const res = await fetch(`${server.url}/api/v1/music/uploads`, {
      method: "POST",
      headers: { authorization: `Bearer ${account.key}` },
      body: data
    }).then(async (answer) => ({ status: answer.status, body: (await answer.json()) as Json }))
    expect(res.status).toBe(400)
    expect(res.body.error).toMatchObject({ type: "invalid_request_error", code: "invalid_parameter", param: "file" })
    expect(storedUploads().length).toBe(before)
    expect(await rows()).toEqual(counted)
  })

  it("413 request_too_large: a declared length over 50 MB is refused before the body is read", async () => {
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        `${server.url}/api/v1/music/uploads`,
        {
          method: "POST",
          headers: {
            authorization: `Bearer ${account.key}`,
            "content-type": "audio/wav",
            "content-length": String(50 * 1024 * 1024 + 1)
          }
        },
        (res) => {
          let text = ""
          res.on("data", (chunk: Buffer) => (text += chunk.toString()))
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }))
        }
      )
      req.on("error", reject)
      // Only the first bytes are sent: the answer must not wait for the rest.
      req.write(wav.subarray(0, 1024))
    })
    expect(answer.status).toBe(413)
    expect(JSON.parse(answer.body).error.code).toBe("request_too_large")
  })

  it("413 request_too_large: a chunked body is cut one byte past 50 MB", { timeout: 60_000 }, async () => {
    const before = storedUploads().length
    const limit = 50 * 1024 * 1024
    const answer = await new Promise<{ status: number; body: string; sent: number }>((resolve, reject) => {
      let sent = 0
      let answered = false
      const req = request(
        `${server.url}/api/v1/music/uploads`,
        {
          method: "POST",
          headers: {
            authorization: `Bearer ${account.key}`,
            "content-type": "audio/wav",
            "transfer-encoding": "chunked"
          }
        },
        (res) => {
          answered = true
          let text = ""
          res.on("data", (chunk: Buffer) => (text += chunk.toString()))
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text, sent }))
        }
      )
      // The server closes the connection once it has answered; writes after that may fail.
      req.on("error", (cause) => (answered ? undefined : reject(cause)))
      const block = Buffer.alloc(256 * 1024, 1)
      const pump = (): void => {
        while (!answered && sent <= limit + block.length * 8) {
          sent += block.length
          if (!req.write(sent === block.length ? Buffer.concat([wav, block]).subarray(0, block.length) : block)) {
            req.once("drain", pump)
            return
          }
        }
      }
      pump()
    })
    expect(answer.status).toBe(413)
    expect(JSON.parse(answer.body).error.code).toBe("request_too_large")
    expect(storedUploads().length).toBe(before)
  })
})

describe("the check order", () => {
  it("401 without a credential, 403 below Pro, 403 without the scope, 429 past the rate, before the body", async () => {
    const basic = await createAccount(server, { plan: "basic" })
    const unscoped = await createAccount(server, { scopes: ["profile"] })
    const slow = await createAccount(server, { requests_per_minute: 1 })
    const noKey = await fetch(`${server.url}/api/v1/music/uploads`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "x"
    })
    expect(noKey.status).toBe(401)
    const tier = await upload("x", "text/plain", basic.key)
    expect([tier.status, tier.body.error?.code]).toEqual([403, "tier_insufficient"])
    const scope = await upload("x", "text/plain", unscoped.key)
    expect([scope.status, scope.body.error?.code]).toEqual([403, "insufficient_scope"])
    await upload("x", "text/plain", slow.key)
    const limited = await upload("x", "text/plain", slow.key)
    expect([limited.status, limited.body.error?.code]).toEqual([429, "rpm_exceeded"])
  })

  it("403 upload_quota_exceeded past the plan's allowance, before the body is read", async () => {
    const full = await createAccount(server)
    for (let i = 0; i < 50; i++) {
      await server.query(
        `insert into uploads (id, account_id, credential_subject, status, content_type, bytes, duration, storage_key, created_at, updated_at)
         values ($1, $2, 'x', 'ready', 'audio/wav', 1, 6, $3, now(), now())`,
        `upl_${String(i).padStart(24, "q")}${full.id.slice(-4)}`.slice(0, 28),
        full.id,
        `upl_q${i}/source.wav`
      )
    }
    const res = await upload("not read", "audio/wav", full.key)
    expect(res.status).toBe(403)
    expect(res.body.error?.code).toBe("upload_quota_exceeded")
  })
})

describe("Idempotency-Key (decision 0008, as on creates)", () => {
  const keyed = (body: Buffer, key: string, credential: string, path = "/api/v1/music/uploads") =>
    fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${credential}`, "content-type": "audio/wav", "idempotency-key": key },
      body
    }).then(async (res) => ({
      status: res.status,
      replayed: res.headers.get("idempotent-replayed"),
      body: (await res.json()) as Json
    }))
  const uploadsOf = (accountId: string) =>
    server.query<{ id: string }>("select id from uploads where account_id = $1 order by created_at", accountId)

  it("the same key and file twice: one upload, the first answer replayed, counted once; another file is refused", async () => {
    const owner = await createAccount(server)
    const before = storedUploads().length
    const first = await keyed(wav, "take-1", owner.key)
    expect(first.status).toBe(202)
    expect(first.replayed).toBeNull()
    const again = await keyed(wav, "take-1", owner.key)
    expect(again.status).toBe(202)
    expect(again.replayed).toBe("true")
    expect(again.body).toEqual(first.body)
    expect(await uploadsOf(owner.id)).toEqual([{ id: first.body.id }])
    expect(storedUploads().length).toBe(before + 1)

    const other = await keyed(wavOf(tone(7)), "take-1", owner.key)
    expect(other.status).toBe(400)
    expect(other.body.error).toMatchObject({ type: "invalid_request_error", code: "idempotency_key_reused" })
    expect(await uploadsOf(owner.id)).toEqual([{ id: first.body.id }])
    expect(storedUploads().length).toBe(before + 1)

    const fresh = await keyed(wav, "take-2", owner.key)
    expect(fresh.status).toBe(202)
    expect(fresh.body.id).not.toBe(first.body.id)
  })

  it("a held key answers its upload though the account has since reached its allowance", async () => {
    const full = await createAccount(server)
    for (let i = 0; i < 49; i++) {
      await server.query(
        `insert into uploads (id, account_id, credential_subject, status, content_type, bytes, duration, storage_key, created_at, updated_at)
         values ($1, $2, 'x', 'ready', 'audio/wav', 1, 6, $3, now(), now())`,
        `upl_${String(i).padStart(20, "k")}${full.id.slice(-4)}`,
        full.id,
        `upl_k${i}/source.wav`
      )
    }
    const last = await keyed(wav, "the-fiftieth", full.key)
    expect(last.status).toBe(202)
    const again = await keyed(wav, "the-fiftieth", full.key)
    expect([again.status, again.replayed, again.body.id]).toEqual([202, "true", last.body.id])
    const refused = await keyed(wav, "one-more", full.key)
    expect([refused.status, refused.body.error?.code]).toEqual([403, "upload_quota_exceeded"])
    expect((await uploadsOf(full.id)).length).toBe(50)
  })

  it("tRPC's upload call takes the header too", async () => {
    const owner = await createAccount(server)
    const first = await keyed(wav, "dash-1", owner.key, "/trpc/uploads.create")
    expect(first.status).toBe(200)
    const again = await keyed(wav, "dash-1", owner.key, "/trpc/uploads.create")
    expect(again.replayed).toBe("true")
    expect(again.body).toEqual(first.body)
    expect((await uploadsOf(owner.id)).length).toBe(1)
  })
})

describe("an upload whose own header counts more than is there", () => {
  it("400 invalid_audio, truncated: an MP3 whose Info tag says twice the frames that follow", async () => {
    const audio = await mp3Of(tone(8))
    let frames = 0
    for (let at = 0; at + 4 <= audio.length; frames++) at += 417 + (((audio[at + 2] ?? 0) >> 1) & 1)
    // MPEG-1 Layer III, 128 kb/s, 44.1 kHz, mono: LAME's Info frame, its frame count present.
    const info = Buffer.alloc(417)
    info.set([0xff, 0xfb, 0x90, 0xc0], 0)
    info.write("Info", 21, "latin1")
    info.writeUInt32BE(1, 25)
    info.writeUInt32BE(frames * 2, 29)
    const before = storedUploads().length
    const whole = Buffer.concat([Buffer.from(info), audio])
    whole.writeUInt32BE(frames, 29)
    expect((await upload(whole, "audio/mpeg")).status).toBe(202)
    const res = await upload(Buffer.concat([info, audio]), "audio/mpeg")
    expectInvalidAudio(res)
    expect(String(res.body.error?.message)).toContain("truncated")
    expect(storedUploads().length).toBe(before + 1)
  })

  it("400 invalid_audio, truncated: a WAV whose data chunk is larger than the bytes present", async () => {
    const res = await upload(wav.subarray(0, wav.length - 1001), "audio/wav")
    expectInvalidAudio(res)
    expect(String(res.body.error?.message)).toContain("truncated")
  })
})

describe("the log of a refused MP3", () => {
  let logged: TestServer
  beforeAll(async () => {
    logged = await startTestServer({ worker: "inline", logLevel: "info" })
  }, 60_000)
  afterAll(() => logged.close())

  it("one structured line with its request id, and nothing from the decoder", async () => {
    const owner = await createAccount(logged)
    const written: Array<string> = []
    const stdout = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
      written.push(String(chunk))
      return true
    })
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      written.push(String(chunk))
      return true
    })
    const printed = vi.spyOn(console, "error").mockImplementation((...parts) => void written.push(parts.join(" ")))
    // Random bytes are full of false frame syncs, each of which mpg123 reported on the console.
    const noise = Buffer.alloc(300_000)
    let seed = 7
    for (let i = 0; i < noise.length; i++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
      noise[i] = (seed >> 16) & 0xff
    }
    const answers: Array<{ status: number; id: string | null }> = []
    try {
      for (const body of [Buffer.from("not audio at all\n".repeat(3000)), Buffer.concat([noise, noise])]) {
        const res = await fetch(`${logged.url}/api/v1/music/uploads`, {
          method: "POST",
          headers: { authorization: `Bearer ${owner.key}`, "content-type": "audio/mpeg" },
          body
        })
        await res.text()
        answers.push({ status: res.status, id: res.headers.get("x-request-id") })
      }
    } finally {
      stdout.mockRestore()
      stderr.mockRestore()
      printed.mockRestore()
    }
    expect(written.filter((line) => line.includes("mpg123"))).toEqual([])
    for (const answer of answers) {
      expect(answer.status).toBe(400)
      const lines = written.filter((line) => answer.id !== null && line.includes(answer.id))
      expect(lines).toHaveLength(1)
      expect(JSON.parse(lines[0] ?? "{}")).toMatchObject({ level: "info", request_id: answer.id, status: 400 })
    }
  })
})

describe("GET, list and DELETE", () => {
  let first: Json
  let second: Json
  beforeAll(async () => {
    first = (await upload(wav, "audio/wav")).body
    second = (await upload(wav, "audio/wav")).body
  })

  it("GET one; another account's is 404", async () => {
    const mine = await api(server, "GET", `/api/v1/music/uploads/${String(first.id)}`, { key: account.key })
    expect(mine.status).toBe(200)
    expect(mine.body.id).toBe(first.id)
    const theirs = await api(server, "GET", `/api/v1/music/uploads/${String(first.id)}`, { key: other.key })
    expect([theirs.status, theirs.body.error?.code]).toEqual([404, "upload_not_found"])
    const malformed = await api(server, "GET", "/api/v1/music/uploads/nope", { key: account.key })
    expect(malformed.status).toBe(404)
  })

  it("list: newest first, paged with starting_after", async () => {
    const page = await api(server, "GET", "/api/v1/music/uploads?limit=1", { key: account.key })
    expect(page.status).toBe(200)
    expect((page.body.data as unknown as Array<Json>).map((u) => u.id)).toEqual([second.id])
    expect(page.body.has_more).toBe(true)
    const next = await api(server, "GET", `/api/v1/music/uploads?limit=1&starting_after=${String(second.id)}`, {
      key: account.key
    })
    expect((next.body.data as unknown as Array<Json>).map((u) => u.id)).toEqual([first.id])
    const none = await api(server, "GET", "/api/v1/music/uploads", { key: other.key })
    expect(none.body.data).toEqual([])
  })

  it("the admin API lists an account's kept uploads, newest first", async () => {
    const listed = await server.admin("GET", `/accounts/${account.id}/uploads`)
    expect(listed.status).toBe(200)
    const ids = (listed.body.data as unknown as Array<Json>).map((u) => u.id)
    expect(ids.slice(0, 2)).toEqual([second.id, first.id])
    expect((await server.admin("GET", "/accounts/acct_000000000000000000000000/uploads")).status).toBe(404)
  })

  it("DELETE: another account's is 404; the owner's file leaves storage and the upload is then 404", async () => {
    const theirs = await api(server, "DELETE", `/api/v1/music/uploads/${String(first.id)}`, { key: other.key })
    expect(theirs.status).toBe(404)
    const file = join(server.config.dataDir, "files", String(first.id), "source.wav")
    expect(existsSync(file)).toBe(true)
    const deleted = await api(server, "DELETE", `/api/v1/music/uploads/${String(first.id)}`, { key: account.key })
    expect(deleted.status).toBe(200)
    expect(deleted.body).toEqual({ id: first.id, deleted: true })
    expect(existsSync(file)).toBe(false)
    expect(existsSync(join(server.config.dataDir, "files", String(first.id)))).toBe(false)
    expect((await api(server, "GET", `/api/v1/music/uploads/${String(first.id)}`, { key: account.key })).status).toBe(
      404
    )
    expect(
      (await api(server, "DELETE", `/api/v1/music/uploads/${String(first.id)}`, { key: account.key })).status
    ).toBe(404)
  })
})
