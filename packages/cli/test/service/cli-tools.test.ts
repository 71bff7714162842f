/**
 * `lyre extend`, `lyre export` and `lyre lyrics` as processes against a service whose provider
 * is the built-in engine (the worker inline): real extensions, WAV, stems, MIDI and timed lyrics.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { toLrc } from "@lyre/core/domain/exports"
import { LyreClient } from "@lyre/client"
import type { GenerationTask } from "@lyre/client"
import { createAccount, startTestServer } from "../../../server/test/support/harness.ts"
import type { TestAccount, TestServer } from "../../../server/test/support/harness.ts"
import { lyreHome } from "../support/lyre.ts"
import type { LyreHome } from "../support/lyre.ts"

vi.setConfig({ testTimeout: 150_000 })

let server: TestServer
let account: TestAccount
let home: LyreHome
let song: GenerationTask
beforeAll(async () => {
  server = await startTestServer({
    provider: "embedded",
    // Half a minute: the voice comes in, and the tests read lengths and sung words past 8 s.
    engineMaxSeconds: 30,
    providerUrl: null,
    providerApiKey: null,
    worker: "inline",
    providerPollSeconds: 1
  })
  account = await createAccount(server, { subscription: 1_000 })
  home = lyreHome()
  const client = new LyreClient({ apiKey: account.key, baseUrl: server.url })
  const created = await client.generations.create({
    style: "folk, 96 bpm, guitar",
    title: "Home Road",
    lyrics: "[Verse]\nThe road runs home\n[Chorus]\nHome again"
  })
  song = await client.waitForGeneration(created.id, { intervalMs: 300 })
}, 180_000)
afterAll(async () => {
  home.remove()
  await server.close()
})

const env = (key: string = account.key) => ({ LYRE_API_KEY: key, LYRE_BASE_URL: server.url })
const credits = async (id: string = account.id): Promise<number> =>
  Number((await server.admin("GET", `/accounts/${id}`)).body["credits"]?.["total"])
const trackOf = (index: number): string => song.tracks[index]?.id ?? ""

describe("lyre export", () => {
  it("--format wav --download saves the WAV named from the title; the same format again is free", async () => {
    expect(song.status).toBe("ready")
    const dir = join(home.home, "wav")
    const before = await credits()
    const run = await home.run(["export", trackOf(0), "--format", "wav", "--download", dir, "-o", "json"], {
      env: env()
    })
    expect(run.stderr).not.toContain("lyre:")
    expect(run.code).toBe(0)
    const found = JSON.parse(run.stdout)
    expect(found).toMatchObject({ status: "ready", format: "wav", credits_used: 5, track_id: trackOf(0) })
    expect(run.stderr).toContain(`${found.id}  ready in `)
    expect(readdirSync(dir)).toEqual(["Home-Road-1-track.wav"])
    const wav = readFileSync(join(dir, "Home-Road-1-track.wav"))
    expect(wav.length).toBe(found.files[0].bytes)
    expect([wav.subarray(0, 4).toString("latin1"), wav.subarray(8, 12).toString("latin1")]).toEqual(["RIFF", "WAVE"])
    expect(await credits()).toBe(before - 5)

    const again = await home.run(["export", trackOf(0), "--format", "wav"], { env: env() })
    expect(again.code).toBe(0)
    expect(again.stdout).toContain(`id       ${found.id}`)
    expect(again.stdout).toMatch(/status\s+ready/)
    expect(again.stdout).toMatch(/^FILE\s+STEM\s+SIZE\s+URL$/m)
    expect(await credits()).toBe(before - 5)
  })

  it("stems come as one file per part; MIDI is a Standard MIDI File; without --wait the export is pending", async () => {
    const dir = join(home.home, "stems")
    const stems = await home.run(["export", trackOf(1), "--format", "stems", "--download", dir, "-o", "json"], {
      env: env()
    })
    expect(stems.code).toBe(0)
    const found = JSON.parse(stems.stdout)
    expect(found.credits_used).toBe(20)
    const parts = found.files.map((f: { stem: string }) => f.stem)
    expect(parts).toContain("vocals")
    expect(parts.length).toBeGreaterThanOrEqual(3)
    expect(readdirSync(dir).sort()).toEqual(parts.map((p: string) => `Home-Road-2-${p}.wav`).sort())

    const pending = await home.run(["export", trackOf(1), "--format", "midi", "-o", "json"], { env: env() })
    expect(pending.code).toBe(0)
    expect(JSON.parse(pending.stdout)).toMatchObject({ status: "pending", format: "midi", credits_used: 5 })
    const midiDir = join(home.home, "midi")
    const midi = await home.run(["export", trackOf(1), "--format", "midi", "--download", midiDir], { env: env() })
    expect(midi.code).toBe(0)
    // The engine's tests parse it with a kept MIDI parser; here: the file the CLI saved is one.
    expect(readFileSync(join(midiDir, "Home-Road-2-track.mid")).subarray(0, 4).toString("latin1")).toBe("MThd")
  })

  it("refuses an unknown format before any request", async () => {
    const before = await credits()
    const run = await home.run(["export", trackOf(0), "--format", "flac"], { env: env() })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("Allowed choices are wav, midi, stems, timed-lyrics")
    expect(await credits()).toBe(before)
  })
})

describe("lyre lyrics", () => {
  it("prints the phrases with their times, and LRC with --lrc, making the export once", async () => {
    const before = await credits()
    const table = await home.run(["lyrics", trackOf(0)], { env: env() })
    expect(table.stderr).not.toContain("lyre:")
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(/^\s+0:\d\d\.\d\d {2}The road runs home/m)
    expect(await credits()).toBe(before - 5)

    const json = await home.run(["lyrics", trackOf(0), "-o", "json"], { env: env() })
    const found = JSON.parse(json.stdout)
    expect(found).toMatchObject({ format: "timed_lyrics", status: "ready" })
    const lrc = await home.run(["lyrics", trackOf(0), "--lrc"], { env: env() })
    expect(lrc.code).toBe(0)
    expect(lrc.stdout).toBe(toLrc(found.timed_lyrics))
    // The service's own .lrc file says the same.
    const file = found.files.find((f: { name: string }) => f.name.endsWith(".lrc"))
    expect(await (await fetch(file.url)).text()).toBe(lrc.stdout)
    expect(await credits()).toBe(before - 5)
  })
})

describe("lyre extend", () => {
  it("continues a track with new lyrics from a file and waits for the new songs", async () => {
    const file = join(home.home, "bridge.txt")
    writeFileSync(file, "[Bridge]\nOne more mile")
    const before = await credits()
    const run = await home.run(
      [
        "extend",
        trackOf(0),
        "--continue-at",
        "12.5",
        "--lyrics-file",
        file,
        "--title",
        "Home Road, Longer",
        "--wait",
        "-o",
        "json"
      ],
      {
        env: env()
      }
    )
    expect(run.stderr).not.toContain("lyre:")
    expect(run.code).toBe(0)
    const task = JSON.parse(run.stdout)
    expect(task).toMatchObject({ status: "ready", model: "aether", credits_used: 50 })
    expect(task.tracks[0].title).toBe("Home Road, Longer")
    expect(task.tracks[0].lyrics).toContain("One more mile")
    expect(task.tracks[0].duration).toBeGreaterThan(12.5 + 20)
    expect(await credits()).toBe(before - 50)
  })

  it("refuses a bad --continue-at before any request, in the server's words", async () => {
    const before = await credits()
    const run = await home.run(["extend", trackOf(0), "--continue-at", "-3"], { env: env() })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("(param: continue_at; invalid_parameter)")
    const served = await fetch(`${server.url}/api/v1/music/tracks/${trackOf(0)}/extensions`, {
      method: "POST",
      headers: { authorization: `Bearer ${account.key}`, "content-type": "application/json" },
      body: JSON.stringify({ continue_at: -3 })
    })
    const envelope = (await served.json()) as { error: { message: string; param: string } }
    expect(envelope.error.param).toBe("continue_at")
    expect(run.stderr).toContain(envelope.error.message)
    const words = await home.run(["extend", trackOf(0), "--continue-at", "soon"], { env: env() })
    expect(words.code).toBe(1)
    expect(words.stderr).toContain("(param: continue_at;")
    expect(await credits()).toBe(before)
  })
})

describe("lyre lyrics: writing (the built-in lyricist)", () => {
  it("writes two variations, fits a track with --fit and revises a file with --revise; 2 credits each", async () => {
    // A key of the song's account with the lyrics agent's scope: --fit names that account's track.
    const made = await server.admin("POST", `/accounts/${account.id}/keys`, {
      name: "lyrics",
      scopes: ["profile", "lyrics:agent"]
    })
    const writer = { key: String(made.body["key"]) }
    const before = await credits()
    const written = await home.run(["lyrics", "lanterns on the river", "--sections", "Verse,Chorus", "-o", "json"], {
      env: env(writer.key)
    })
    expect(written.stderr).not.toContain("lyre:")
    expect(written.code).toBe(0)
    const task = JSON.parse(written.stdout)
    expect(task).toMatchObject({ status: "ready", credits_used: 2 })
    expect(task.variations).toHaveLength(2)
    expect(task.variations[0].text).toContain("[Chorus]")

    const table = await home.run(["lyrics", "a road that leads home", "--fit", trackOf(0)], { env: env(writer.key) })
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(/^# 1\. .+\n\n\[/m)

    const file = join(home.home, "words.txt")
    writeFileSync(file, "[Verse]\nThe river runs so slow\n[Chorus]\nCarry me home")
    const revised = await home.run(["lyrics", "make the chorus longer", "--revise", file, "-o", "json"], {
      env: env(writer.key)
    })
    expect(revised.code).toBe(0)
    expect(JSON.parse(revised.stdout).status).toBe("ready")
    expect(await credits()).toBe(before - 3 * 2)

    const refused = await home.run(["lyrics", "no scope here"], { env: env() })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("permission_error/insufficient_scope")
  })
})

describe("another account's track", () => {
  it("is not found for extend, export and lyrics, and nothing is charged", async () => {
    const other = await createAccount(server)
    for (const args of [
      ["extend", trackOf(0)],
      ["export", trackOf(0), "--format", "midi"],
      ["lyrics", trackOf(0)]
    ]) {
      const run = await home.run(args, { env: env(other.key) })
      expect([args[0], run.code]).toEqual([args[0], 1])
      expect(run.stderr).toContain(
        `No ready track ${trackOf(0)}. (param: track_id; not_found/track_not_found; request `
      )
    }
    expect(await credits(other.id)).toBe(1_000)
  })
})

describe("--help", () => {
  it("the song tools have help with examples", async () => {
    for (const command of ["extend", "export", "lyrics"]) {
      const run = await home.run([command, "--help"])
      expect(run.code).toBe(0)
      expect(run.stdout).toContain("Examples:")
    }
  })
})
