/**
 * `lyre` against a running service (the test harness with the fake upstream as provider and the
 * worker inline): settings, every command, exit codes and messages. The commands run in the
 * test's process through the CLI's `run` (test/support/lyre.ts); one smoke test starts the real
 * binary, for what `main.ts` adds: the process's argv, environment, streams and exit code.
 */
import { mkdirSync, statSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { createAccount, startTestServer, validSong } from "../../../server/test/support/harness.ts"
import type { TestAccount, TestServer } from "../../../server/test/support/harness.ts"
import { streamingSong } from "../../../server/test/support/previews.ts"
import { lyreHome } from "../support/lyre.ts"
import type { LyreHome } from "../support/lyre.ts"

// Each case starts the CLI several times; on a busy machine a start takes a second or two.
vi.setConfig({ testTimeout: 90_000 })

let server: TestServer
let account: TestAccount
let home: LyreHome
beforeAll(async () => {
  // Polls 30 s apart: a task ends when its callback comes, which a test may hold back.
  server = await startTestServer({ worker: "inline", providerPollSeconds: 30 })
  account = await createAccount(server, { subscription: 10_000 })
  home = lyreHome()
})
afterAll(async () => {
  home.remove()
  await server.close()
})

const withKey = (key: string = account.key) => ({ LYRE_API_KEY: key, LYRE_BASE_URL: server.url })
const credits = async (id: string): Promise<number> =>
  Number((await server.admin("GET", `/accounts/${id}`)).body["credits"]?.["total"])

describe("lyre as a process", () => {
  it("reads its argv, environment and standard input, prints to its streams and exits with the run's code", async () => {
    const created = await home.spawn(["generate", "--style", "x", "--title", "Spawned", "-", "-o", "json"], {
      env: withKey(),
      input: "[Verse]\nThrough a pipe"
    })
    expect(created.code).toBe(0)
    expect(JSON.parse(created.stdout)).toMatchObject({ status: "pending" })
    // The lyrics piped in reach the provider.
    await expect
      .poll(() => JSON.stringify(server.upstream.control.submissionsFor("Spawned")[0]?.body ?? null))
      .toContain("Through a pipe")
    const refused = await home.spawn(["me"], { env: withKey("lyr_live_nope") })
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe("")
    expect(refused.stderr).toMatch(/^lyre: .+ \(authentication_error\/invalid_credential; request .+\)\n$/)
  })
})

describe("lyre config", () => {
  it("stores the key in a 0600 file, masks it, and lets the environment and flags win, flags first", async () => {
    const own = lyreHome()
    try {
      expect((await own.run(["config", "set-key", account.key])).code).toBe(0)
      expect((await own.run(["config", "set-base-url", `${server.url}/api/`])).code).toBe(0)
      const file = join(own.configDir, "lyre", "config.json")
      expect(statSync(file).mode & 0o777).toBe(0o600)
      expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ api_key: account.key, base_url: `${server.url}/api` })

      const shown = await own.run(["config", "show"])
      expect(shown.code).toBe(0)
      expect(shown.stdout).not.toContain(account.key)
      expect(shown.stdout).toContain(`lyr_live_${account.key.slice(9, 13)}…${account.key.slice(-4)} (config file)`)
      expect(shown.stdout).toContain(`api root     ${server.url}/api`)

      const fromFile = await own.run(["me", "--output", "json"])
      expect(fromFile.code).toBe(0)
      expect(JSON.parse(fromFile.stdout).id).toBe(account.id)

      const other = await createAccount(server)
      const third = await createAccount(server)
      const env = await own.run(["config", "show", "-o", "json"], { env: { LYRE_API_KEY: other.key } })
      expect(JSON.parse(env.stdout)).toMatchObject({
        api_key_source: "environment",
        base_url_source: "config file",
        config_file: file
      })
      expect(JSON.parse((await own.run(["me", "-o", "json"], { env: { LYRE_API_KEY: other.key } })).stdout).id).toBe(
        other.id
      )
      const flag = await own.run(["me", "-o", "json", "--api-key", third.key], { env: { LYRE_API_KEY: other.key } })
      expect(JSON.parse(flag.stdout).id).toBe(third.id)
      const wrongBase = await own.run(["me", "--base-url", "http://127.0.0.1:9"], {
        env: { LYRE_BASE_URL: server.url }
      })
      expect(wrongBase.code).toBe(1)
      expect(wrongBase.stderr).toContain("Could not reach http://127.0.0.1:9")

      // A file left wider by hand is narrowed on the next write.
      writeFileSync(file, "{}", { mode: 0o644 })
      await own.run(["config", "set-key"], { input: `${account.key}\n` })
      expect(statSync(file).mode & 0o777).toBe(0o600)
      expect(JSON.parse(readFileSync(file, "utf8")).api_key).toBe(account.key)

      expect((await own.run(["config", "clear"])).code).toBe(0)
      const none = await own.run(["me"])
      expect(none.code).toBe(1)
      expect(none.stderr).toContain("No API key")
      expect((await own.run(["config", "set-base-url", "ftp://x"])).stderr).toContain("must be http or https")
    } finally {
      own.remove()
    }
  })
})

describe("lyre me, get, list", () => {
  it("me prints the account; a bad key exits 1 with the envelope's message", async () => {
    const table = await home.run(["me"], { env: withKey() })
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(/plan\s+pro/)
    const bad = await home.run(["me"], { env: withKey("lyr_live_nope") })
    expect(bad.code).toBe(1)
    expect(bad.stderr).toMatch(/^lyre: .+ \(authentication_error\/invalid_credential; request .+\)\n$/)
  })

  it("generate without --wait answers the pending task; get and list show it, as JSON that parses", async () => {
    const created = await home.run(
      ["generate", "--style", validSong.style, "--title", "Listed", "--lyrics", validSong.lyrics, "-o", "json"],
      { env: withKey() }
    )
    expect(created.code).toBe(0)
    const task = JSON.parse(created.stdout)
    expect(task).toMatchObject({ status: "pending", model: "aether", credits_used: 50 })
    const got = await home.run(["get", task.id, "--output", "json"], { env: withKey() })
    expect(JSON.parse(got.stdout).id).toBe(task.id)
    const list = await home.run(["list", "--limit", "1", "-o", "json"], { env: withKey() })
    expect(JSON.parse(list.stdout).data[0].id).toBe(task.id)
    const table = await home.run(["list"], { env: withKey() })
    expect(table.stdout).toMatch(/^ID\s+STATUS\s+MODEL/)
    expect(table.stdout).toContain(task.id)
    const missing = await home.run(["get", "gen_missing"], { env: withKey() })
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain("not_found/task_not_found")
    const badLimit = await home.run(["list", "--limit", "500"], { env: withKey() })
    expect(badLimit.code).toBe(1)
    expect(badLimit.stderr).toContain("(param: limit")
  })
})

describe("lyre generate", () => {
  it("refuses a bad flag before any request, with the server's own message and param", async () => {
    const before = server.upstream.control.submissions.length
    const spent = await credits(account.id)
    const cases: ReadonlyArray<[ReadonlyArray<string>, string, string]> = [
      [
        ["--model", "echo", "--vocal-gender", "m", "--lyrics", "x"],
        "vocal_gender is supported by the aether model only, not echo",
        "vocal_gender"
      ],
      [[], "Missing required parameter: lyrics.", "lyrics"],
      [["--lyrics", "   "], "lyrics must contain a non-whitespace character unless instrumental is true", "lyrics"],
      [["--instrumental", "--style-weight", "2"], "style_weight: Too big: expected number to be <=1", "style_weight"],
      [["--instrumental", "--model", "opus"], "model: Invalid option", "model"]
    ]
    for (const [flags, message, param] of cases) {
      const run = await home.run(["generate", "--style", "x", "--title", "y", ...flags], { env: withKey() })
      expect(run.code).toBe(1)
      expect(run.stderr).toContain(message)
      expect(run.stderr).toContain(`(param: ${param}`)
    }
    // The same body sent to the server is refused with the same message and param.
    const served = await fetch(`${server.url}/api/v1/music/generations`, {
      method: "POST",
      headers: { authorization: `Bearer ${account.key}`, "content-type": "application/json" },
      body: JSON.stringify({ style: "x", title: "y", lyrics: "x", model: "echo", vocal_gender: "m" })
    })
    expect(await served.json()).toMatchObject({ error: { message: cases[0]?.[1], param: "vocal_gender" } })
    expect(server.upstream.control.submissions.length).toBe(before)
    expect(await credits(account.id)).toBe(spent)
  })

  it("reads lyrics from a file or standard input", async () => {
    const file = join(home.home, "lyrics.txt")
    writeFileSync(file, "[Verse]\nFrom a file")
    const fromFile = await home.run(
      ["generate", "--style", "x", "--title", "File", "--lyrics-file", file, "-o", "json"],
      { env: withKey() }
    )
    expect(fromFile.code).toBe(0)
    const fromStdin = await home.run(["generate", "--style", "x", "--title", "Stdin", "-", "-o", "json"], {
      env: withKey(),
      input: "[Verse]\nFrom stdin"
    })
    expect(fromStdin.code).toBe(0)
    const missing = await home.run(
      ["generate", "--style", "x", "--title", "y", "--lyrics-file", join(home.home, "nope.txt")],
      { env: withKey() }
    )
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain("Cannot read")
    const twice = await home.run(["generate", "--style", "x", "--title", "y", "--lyrics", "a", "-"], { env: withKey() })
    expect(twice.stderr).toContain("Give the lyrics once")
  })

  it("a request the server refuses exits 1 with the envelope's message", async () => {
    const poor = await createAccount(server, { subscription: 0 })
    const run = await home.run(["generate", "--style", "x", "--title", "y", "--instrumental"], {
      env: withKey(poor.key)
    })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("The aether model costs 50 credits; the balance is 0.")
    expect(run.stderr).toContain("insufficient_credits/insufficient_credits")
  })

  it("--wait on a task that fails exits 2 with its error, and the credits come back", async () => {
    const title = `Doomed ${Date.now()}`
    server.upstream.control.onTitle(title, { outcome: "GENERATE_AUDIO_FAILED" })
    const own = await createAccount(server)
    const run = await home.run(
      ["generate", "--style", "x", "--title", title, "--instrumental", "--wait", "-o", "json"],
      { env: withKey(own.key) }
    )
    expect(run.code).toBe(2)
    const task = JSON.parse(run.stdout)
    expect(task).toMatchObject({ status: "failed", credits_refunded: 50 })
    expect(run.stderr).toContain(
      `Generation ${task.id} failed: ${task.error.message} (${task.error.code}); 50 credits refunded.`
    )
    expect(await credits(own.id)).toBe(1_000)
    const waited = await home.run(["wait", task.id], { env: withKey(own.key) })
    expect(waited.code).toBe(2)
    const download = await home.run(["download", task.id], { env: withKey(own.key) })
    expect(download.code).toBe(2)
  })

  it("waits out a 429 through Retry-After, then creates once", async () => {
    const own = await createAccount(server, { concurrency_limit: 1 })
    const title = `Holding ${Date.now()}`
    // The first task stays pending until its callback, sent once the CLI says it is waiting.
    server.upstream.control.onTitle(title, { callbacks: "none" })
    const first = await home.run(["generate", "--style", "x", "--title", title, "--instrumental", "-o", "json"], {
      env: withKey(own.key)
    })
    expect(first.code).toBe(0)
    let released = false
    const started = Date.now()
    const run = await home.run(["generate", "--style", "x", "--title", "Second", "--instrumental", "--wait"], {
      env: withKey(own.key),
      onStderr: (soFar) => {
        if (released || !soFar.includes("retrying in 5 s")) return
        released = true
        const taskId = server.upstream.control.submissionsFor(title)[0]?.taskId
        if (taskId) void server.upstream.control.sendCallback(taskId, "complete")
      }
    })
    expect(run.code).toBe(0)
    expect(run.stderr).toContain(
      "At most 1 generations may be in flight at once for this credential. (concurrent_limit_exceeded); retrying in 5 s"
    )
    expect(Date.now() - started).toBeGreaterThanOrEqual(5_000)
    expect(run.stdout).toMatch(/status\s+ready/)
    expect(await credits(own.id)).toBe(900)
  })
})

describe("hearing a song while it is made (issue 54)", () => {
  it("generate --wait prints each take's stream address as soon as it exists, before the task is ready", async () => {
    const own = await createAccount(server)
    const song = streamingSong(server, "cli wait")
    const run = await home.run(
      [
        "generate",
        "--style",
        song.request.style,
        "--title",
        song.request.title,
        "--lyrics",
        song.request.lyrics,
        "--wait",
        "-o",
        "json"
      ],
      { env: withKey(own.key), onStderr: (soFar) => soFar.includes("Listen while it is made") && song.finish() }
    )
    expect(run.code).toBe(0)
    const task = JSON.parse(run.stdout)
    expect(task).toMatchObject({ status: "ready", previews: [] })
    for (const index of [0, 1]) {
      expect(run.stderr).toContain(
        `Listen while it is made (take ${index + 1}): ${server.url}/files/streams/${task.id}/${index}.mp3?`
      )
    }
    expect(run.stderr.indexOf("Listen while it is made")).toBeLessThan(run.stderr.indexOf("ready in"))
  })

  it("--play hands the stream to the first player on PATH, and says so when there is none", async () => {
    const own = await createAccount(server)
    const song = streamingSong(server, "cli play")
    // A stand-in mpv that writes down what it was asked to play.
    const bin = join(home.home, "player-bin")
    mkdirSync(bin, { recursive: true })
    writeFileSync(join(bin, "mpv"), `#!/bin/sh\nprintf '%s\\n' "$@" > '${join(bin, "played.txt")}'\n`, { mode: 0o755 })
    const run = await home.run(
      [
        "generate",
        "--style",
        song.request.style,
        "--title",
        song.request.title,
        "--lyrics",
        song.request.lyrics,
        "--play",
        "-o",
        "json"
      ],
      { env: { ...withKey(own.key), PATH: bin }, onStderr: (soFar) => soFar.includes("Playing") && song.finish() }
    )
    expect(run.code).toBe(0)
    const task = JSON.parse(run.stdout)
    expect(task.status).toBe("ready")
    expect(run.stderr).toContain("Playing take 1 while it is made in mpv.")
    const played = readFileSync(join(bin, "played.txt"), "utf8").trim().split("\n")
    expect(played.slice(0, 2)).toEqual(["--no-video", "--really-quiet"])
    expect(played[2]?.startsWith(`${server.url}/files/streams/${task.id}/0.mp3?`)).toBe(true)

    // No player installed: the address to open, and the wait goes on to its end.
    const empty = join(home.home, "no-players")
    mkdirSync(empty, { recursive: true })
    const waited = await home.run(["wait", task.id, "--play"], { env: { ...withKey(own.key), PATH: empty } })
    expect(waited.code).toBe(0)
    expect(waited.stderr).toContain(
      `No player found on PATH (looked for mpv, ffplay, mpg123): open ${task.tracks[0].audio_url} in any audio player.`
    )
  })
})

describe("lyre export on the upstream", () => {
  it("--wait on an export that fails exits 2 with its error, and the credits come back", async () => {
    const title = `Unwaveable ${Date.now()}`
    const own = await createAccount(server)
    const generated = await home.run(
      ["generate", "--style", "x", "--title", title, "--instrumental", "--wait", "-o", "json"],
      { env: withKey(own.key) }
    )
    expect(generated.code).toBe(0)
    const trackId = JSON.parse(generated.stdout).tracks[0].id
    server.upstream.control.onTrackOf(title, "wav", { outcome: "GENERATE_AUDIO_FAILED" })
    const run = await home.run(["export", trackId, "--format", "wav", "--wait", "-o", "json"], {
      env: withKey(own.key)
    })
    expect(run.code).toBe(2)
    const found = JSON.parse(run.stdout)
    expect(found).toMatchObject({ status: "failed", format: "wav", credits_used: 5, credits_refunded: 5 })
    expect(run.stderr).toContain(
      `Export ${found.id} failed: ${found.error.message} (${found.error.code}); 5 credits refunded.`
    )
    expect(await credits(own.id)).toBe(950)
  })
})

describe("--help", () => {
  it("every command has help with examples", async () => {
    for (const command of [
      [],
      ["config"],
      ["config", "set-key"],
      ["config", "show"],
      ["me"],
      ["generate"],
      ["get"],
      ["wait"],
      ["list"],
      ["download"]
    ]) {
      const run = await home.run([...command, "--help"])
      expect(run.code).toBe(0)
      expect(run.stdout).toContain("Examples:")
    }
  })
})
