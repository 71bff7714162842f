/**
 * The account's own audio in the dashboard, in a real browser (Debian's Chromium driven by
 * playwright-core) against a server whose provider is the built-in engine (worker inline): a WAV
 * the test made is picked and sent with a progress bar (the upload throttled, so the bar is
 * seen moving), listened to, and its tempo, key and chords shown; a file that is not audio gets
 * the server's message and nothing is kept; the upload is covered and the task followed to
 * ready, then heard A/B against its source, the switch landing at the same moment (read on the
 * Web Audio graph); a section is picked with the keyboard and on the waveform and made again; a
 * persona is made from a track and a song generated with it. Another account reaches none of it.
 * Screenshots go to `test-output/screenshots/dashboard-uploads/`; axe-core checks each view.
 */
import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { api } from "../support/harness.ts"
import type { Json, TestServer } from "../support/harness.ts"
import { createHolder, envelopeOf, startDashboardServer, trpc } from "../support/dashboard.ts"
import type { Holder, Session } from "../support/dashboard.ts"
import { axeSource, dashboardTabs, desktop, connectBrowser, phone, screenshotPath } from "../support/browser.ts"
import type { Tabs } from "../support/browser.ts"
import { aMajor, pulsedChordWav } from "../support/testAudio.ts"

/** Ten seconds of an A major chord with a kick on every beat at 120 bpm, in stereo. */
const song = pulsedChordWav({ seconds: 10, channels: 2, chord: aMajor })

let server: TestServer
let signIn: (holder: Holder) => Promise<Session>
let browser: Browser
let tabs: Tabs
let holder: Holder
let holderKey: string
let uploaded: Json | undefined

beforeAll(async () => {
  const dashboard = await startDashboardServer({
    provider: "embedded",
    providerUrl: null,
    providerApiKey: null,
    worker: "inline",
    providerPollSeconds: 1
  })
  ;({ server, signIn } = dashboard)
  browser = await connectBrowser()
  tabs = dashboardTabs(browser, dashboard)
  holder = await createHolder(server, { plan: "pro", subscription: 2_000 })
  const key = await server.admin("POST", `/accounts/${holder.id}/keys`, { name: "compare", scopes: ["music:generate"] })
  holderKey = String(key.body["key"])
}, 60_000)

afterAll(async () => {
  await tabs?.close()
  await browser?.close()
  await server?.close()
})

const balance = async (id: string = holder.id): Promise<number> =>
  Number((await server.admin("GET", `/accounts/${id}`)).body["credits"]?.["total"])

/** Files kept in storage under DATA_DIR/files, by upload. */
const storedUploads = (): Array<string> => {
  const root = join(server.config.dataDir, "files")
  return existsSync(root) ? readdirSync(root).filter((name) => name.startsWith("upl_")) : []
}

const uploadRows = async (accountId: string): Promise<number> =>
  Number(
    (await server.query<{ n: string }>("select count(*) as n from uploads where account_id = $1", accountId))[0]?.n
  )

const settledUpload = async (id: string, withinMs = 200_000): Promise<Json> => {
  const until = Date.now() + withinMs
  for (;;) {
    const found = (await api(server, "GET", `/api/v1/music/uploads/${id}`, { key: holderKey })).body
    if (String(found["status"]) !== "pending" || Date.now() > until) return found
    await new Promise((resolve) => setTimeout(resolve, 300))
  }
}

/**
 * The ready upload the first case made through the page; run alone, a case makes one through the
 * dashboard's own upload call (the session's cookie and CSRF token, the file as the body).
 */
const readyUpload = async (): Promise<Json> => {
  uploaded ??= await uploadThroughSession("Chord study")
  return uploaded
}

/** A ready upload sent as the page sends one: the session's cookie and CSRF token, the file as the body. */
const uploadThroughSession = async (title: string): Promise<Json> => {
  const session = await signIn(holder)
  const sent = await fetch(`${server.url}/trpc/uploads.create?input=${encodeURIComponent(JSON.stringify({ title }))}`, {
    method: "POST",
    headers: { cookie: session.cookie, "x-csrf-token": session.csrf, "content-type": "audio/wav" },
    body: song
  })
  const body = (await sent.json()) as Json
  expect(sent.status).toBe(200)
  return settledUpload(String(body["result"]?.["data"]?.["id"]))
}

const uploadEntry = (page: Page, id: string) => page.locator(`[data-upload-id="${id}"]`)

/** An upload's tool, opened. */
const tool = async (page: Page, id: string, label: string) => {
  const entry = uploadEntry(page, id)
  await entry.locator("summary", { hasText: new RegExp(`^${label} `) }).click()
  return entry.locator("details[open]", { has: page.locator("summary", { hasText: new RegExp(`^${label} `) }) })
}

/** The A/B player's measured level of one side. */
const level = (page: Page, side: "A" | "B") =>
  page.locator(`[data-testid=ab-player] [data-side=${side}]`).getAttribute("data-level").then(Number)

describe("uploads in the dashboard", () => {
  it("a WAV picked is sent with a moving progress bar, listened to, and its tempo, key and chords shown over the waveform", async () => {
    const page = await tabs.open(holder, "/dashboard/uploads")
    expect(await page.locator("nav a[aria-current=page]").textContent()).toBe("Uploads")
    // The upload throttled to 256 KB/s: 1.7 MB takes seconds, and the bar is seen on its way.
    const cdp = await page.context().newCDPSession(page)
    await cdp.send("Network.enable")
    await cdp.send("Network.emulateNetworkConditions", {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: 256 * 1024
    })
    await page.evaluate(`
      window.progressSeen = []
      new MutationObserver(() => {
        const bar = document.querySelector("[data-testid=upload-progress]")
        if (bar !== null) window.progressSeen.push(Number(bar.getAttribute("value")))
      }).observe(document.body, { subtree: true, childList: true, attributes: true })`)
    const before = await uploadRows(holder.id)
    await page.getByLabel("Title (optional)").fill("Chord study")
    await page
      .getByLabel("Drop an audio file here, or choose one")
      .setInputFiles({ name: "chord-study.wav", mimeType: "audio/wav", buffer: song })
    await page.getByTestId("upload-progress").waitFor()
    expect(await page.getByText(/^Sending chord-study\.wav: \d+%$/).count()).toBe(1)
    await page.getByTestId("upload-progress").waitFor({ state: "detached", timeout: 60_000 })
    await cdp.send("Network.emulateNetworkConditions", {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: -1
    })
    const seen = await page.evaluate<Array<number>>("window.progressSeen")
    expect(seen.some((value) => value > 0 && value < 100)).toBe(true)
    expect(await uploadRows(holder.id)).toBe(before + 1)

    const [row] = await server.query<{ id: string }>(
      "select id from uploads where account_id = $1 order by created_at desc limit 1",
      holder.id
    )
    const entry = uploadEntry(page, String(row?.id))
    await entry.waitFor()
    expect(await entry.locator("strong").first().textContent()).toBe("Chord study")
    await page.locator(`[data-upload-id="${String(row?.id)}"][data-status=ready]`).waitFor({ timeout: 200_000 })
    uploaded = await settledUpload(String(row?.id))
    const analysis = uploaded["analysis"] ?? {}
    expect(Math.abs(Number(analysis["bpm"]) - 120) / 120).toBeLessThanOrEqual(0.03)
    expect(await entry.getByTestId("tempo").textContent()).toBe(`${Math.round(Number(analysis["bpm"]))} bpm`)
    expect(await entry.getByTestId("key").textContent()).toBe(String(analysis["key"]))
    // The chords heard, over the waveform (drawn) and listed with their times (read).
    const chords = (analysis["chords"] as unknown as Array<{ chord: string }>).filter((span) => span.chord !== "N")
    expect(chords.length).toBeGreaterThan(0)
    await entry.getByText("Chords, with their times").click()
    expect(await entry.getByTestId("chords").locator("strong").allTextContents()).toEqual(
      chords.map((span) => span.chord)
    )
    const waveform = entry.locator("canvas.waveform.chords")
    await expect.poll(() => waveform.getAttribute("data-loaded"), { timeout: 20_000 }).toBe("true")
    expect(await waveform.getAttribute("aria-label")).toContain(chords[0]?.chord)
    await page.screenshot({ path: screenshotPath("dashboard-uploads/upload-ready-desktop"), fullPage: true })
  }, 300_000)

  it("a file that is not audio shows the server's message, and nothing is kept or counted", async () => {
    const page = await tabs.open(holder, "/dashboard/uploads")
    const words = "these are words, not audio\n".repeat(200)
    const expected = await fetch(`${server.url}/api/v1/music/uploads`, {
      method: "POST",
      headers: { authorization: `Bearer ${holderKey}`, "content-type": "text/plain" },
      body: words
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as Json }))
    expect([expected.status, expected.body["error"]?.["code"]]).toEqual([400, "invalid_audio"])
    const rows = await uploadRows(holder.id)
    const files = storedUploads().length
    // Dropped on the drop zone, as a file manager would.
    const dropped = await page.evaluateHandle(`(() => {
      const transfer = new DataTransfer()
      transfer.items.add(new File([${JSON.stringify(words)}], "notes.txt", { type: "text/plain" }))
      return transfer
    })()`)
    await page.getByTestId("dropzone").dispatchEvent("drop", { dataTransfer: dropped })
    const alert = page.locator("section", { has: page.locator("#upload-title") }).getByRole("alert")
    await expect
      .poll(() => alert.textContent(), { timeout: 20_000 })
      .toBe(`${String(expected.body["error"]?.["message"])} invalid_audio`)
    // Named .wav but not one: the same rule, whatever the file's name says.
    await page.getByLabel("Drop an audio file here, or choose one").setInputFiles({
      name: "fake.wav",
      mimeType: "audio/wav",
      buffer: Buffer.from(words)
    })
    await expect.poll(() => alert.textContent(), { timeout: 20_000 }).toMatch(/invalid_audio$/)
    expect(await uploadRows(holder.id)).toBe(rows)
    expect(storedUploads().length).toBe(files)
    await page.screenshot({ path: screenshotPath("dashboard-uploads/not-audio-desktop"), fullPage: true })
  }, 60_000)

  it("Cover on an upload: the price on the button, followed to ready, then A/B against the source, switched at the same moment", async () => {
    const upload = await readyUpload()
    const page = await tabs.open(holder, "/dashboard/uploads")
    const cover = await tool(page, String(upload["id"]), "Cover")
    const button = cover.getByRole("button", { name: /^Cover for/ })
    expect(await button.textContent()).toBe("Cover for 50 credits")
    await cover.getByLabel("Model").selectOption("echo")
    expect(await button.textContent()).toBe("Cover for 100 credits")
    await cover.getByLabel("Model").selectOption("")
    // Refused by core's rule (a cover needs its style), in the API's words, and nothing charged.
    const before = await balance()
    await button.click()
    await expect
      .poll(() => cover.getByRole("alert").textContent())
      .toMatch(/style.*(missing_parameter|invalid_parameter)$/)
    expect(await cover.getByLabel("New style").getAttribute("aria-invalid")).toBe("true")
    expect(await balance()).toBe(before)

    await cover.getByLabel("New style").fill("bossa nova, nylon guitar, brushes")
    await button.click()
    const following = page.locator("section.following")
    await following.locator("[data-status=pending]").waitFor()
    expect(await balance()).toBe(before - 50)
    await following.locator("[data-status=ready]").waitFor({ timeout: 200_000 })
    const [task] = await server.query<{ derivation: string; source_track_id: string }>(
      "select derivation, source_track_id from generation_tasks where account_id = $1 and derivation = 'cover'",
      holder.id
    )
    expect(task).toEqual({ derivation: "cover", source_track_id: upload["track_id"] })

    const ab = following.getByTestId("ab-player")
    await ab.waitFor({ timeout: 30_000 })
    expect(await ab.getByRole("button", { name: /^A: source/ }).textContent()).toBe("A: source (Chord study)")
    await ab.getByRole("button", { name: /^Play/ }).click()
    // B (the cover) sounds, A is silent; then A sounds and B falls silent, both running on.
    await expect.poll(() => level(page, "B"), { timeout: 10_000 }).toBeGreaterThan(0.001)
    expect(await level(page, "A")).toBeLessThan(0.0005)
    const position = async () => Number(await ab.getAttribute("data-position"))
    await expect.poll(position, { timeout: 5_000 }).toBeGreaterThan(0.5)
    const atSwitch = await position()
    await ab.getByRole("button", { name: /^A: source/ }).click()
    expect(await ab.getByRole("button", { name: /^A: source/ }).getAttribute("aria-pressed")).toBe("true")
    expect(await ab.getAttribute("data-heard")).toBe("A")
    await expect.poll(() => level(page, "A"), { timeout: 5_000 }).toBeGreaterThan(0.001)
    await expect.poll(() => level(page, "B"), { timeout: 5_000 }).toBeLessThan(0.0005)
    // The same moment: the song went on from where it was, it did not start again.
    const afterSwitch = await position()
    expect(afterSwitch).toBeGreaterThanOrEqual(atSwitch)
    expect(afterSwitch - atSwitch).toBeLessThan(2)
    await ab.getByRole("button", { name: /^Pause/ }).click()
    await page.screenshot({ path: screenshotPath("dashboard-uploads/cover-ab-desktop"), fullPage: true })
  }, 300_000)

  it("Edit a section: the span picked with the keyboard and on the waveform, refused like the API, then made again with new words", async () => {
    const upload = await readyUpload()
    const page = await tabs.open(holder, "/dashboard/uploads")
    const edit = await tool(page, String(upload["id"]), "Edit a section")
    const start = edit.getByLabel("Start", { exact: true })
    const end = edit.getByLabel("End", { exact: true })
    expect([await start.inputValue(), await end.inputValue()]).toEqual(["2.5", "5"])
    // The keyboard: two steps of the End slider.
    await edit.getByLabel("End (seconds)").focus()
    await page.keyboard.press("ArrowRight")
    await page.keyboard.press("ArrowRight")
    await expect.poll(() => end.inputValue()).toBe("6")
    const waveform = edit.getByTestId("waveform")
    expect(await waveform.getAttribute("aria-label")).toContain("from 2.5 s to 6.0 s")
    // The pointer: a click at 80% moves the nearer edge (the end) there.
    await expect.poll(() => waveform.getAttribute("data-loaded"), { timeout: 20_000 }).toBe("true")
    const box = await waveform.boundingBox()
    await waveform.click({ position: { x: (box?.width ?? 0) * 0.8, y: 10 } })
    await expect.poll(() => end.inputValue()).toBe("8")
    expect(await edit.getByRole("button", { name: /^Edit the section for/ }).textContent()).toBe(
      "Edit the section for 50 credits"
    )

    // A span shorter than core allows: the API's message, the box marked, nothing charged.
    const before = await balance()
    await end.fill("3")
    await edit.getByRole("button", { name: /^Edit the section for/ }).click()
    await expect
      .poll(() => edit.getByRole("alert").textContent())
      .toBe("end must be 2 to 60 seconds after start. invalid_parameter")
    expect(await end.getAttribute("aria-invalid")).toBe("true")
    expect(await balance()).toBe(before)

    await end.fill("8")
    await edit.getByLabel("New words for the section (empty: the track's)").fill("Here the river turns")
    await edit.getByRole("button", { name: "Edit the section for 50 credits" }).click()
    const following = page.locator("section.following")
    await following.locator("[data-status=pending]").waitFor()
    expect(await balance()).toBe(before - 50)
    const [row] = await server.query<{ span_start: number; span_end: number; lyrics: string }>(
      "select span_start, span_end, request ->> 'lyrics' as lyrics from generation_tasks where account_id = $1 and derivation = 'edit'",
      holder.id
    )
    expect(row).toEqual({ span_start: 2.5, span_end: 8, lyrics: "Here the river turns" })
    await following.locator("[data-status=ready]").waitFor({ timeout: 200_000 })
    await following.getByTestId("ab-player").waitFor({ timeout: 30_000 })
    expect(await following.getByRole("button", { name: /^B: edit/ }).count()).toBe(1)
    await page.screenshot({ path: screenshotPath("dashboard-uploads/edit-desktop"), fullPage: true })
  }, 300_000)
})

describe("deleting an upload", () => {
  it("asks first (Escape keeps it), then the file goes and the list no longer shows it", async () => {
    const doomed = await uploadThroughSession("To delete")
    const id = String(doomed["id"])
    const file = join(server.config.dataDir, "files", id, "source.wav")
    expect(existsSync(file)).toBe(true)
    const page = await tabs.open(holder, "/dashboard/uploads")
    const entry = uploadEntry(page, id)
    await entry.getByRole("button", { name: "Delete To delete" }).click()
    const dialog = page.getByRole("dialog", { name: "Delete To delete?" })
    await dialog.waitFor()
    await page.keyboard.press("Escape")
    await dialog.waitFor({ state: "hidden" })
    expect(await entry.count()).toBe(1)
    await entry.getByRole("button", { name: "Delete To delete" }).click()
    await dialog.getByRole("button", { name: "Delete" }).click()
    await entry.waitFor({ state: "detached" })
    expect(existsSync(file)).toBe(false)
    const [row] = await server.query<{ deleted: boolean }>(
      "select deleted_at is not null as deleted from uploads where id = $1",
      id
    )
    expect(row?.deleted).toBe(true)
  }, 240_000)
})

describe("add vocals and accompaniment", () => {
  it("Add vocals on an upload and Add accompaniment on a sung song, each followed to ready", async () => {
    const upload = await readyUpload()
    const page = await tabs.open(holder, "/dashboard/uploads")
    const before = await balance()

    const vocals = await tool(page, String(upload["id"]), "Add vocals")
    await vocals.getByLabel("Lyrics to sing").fill("[Verse]\nHumming by the water")
    await vocals.getByRole("button", { name: "Add vocals for 50 credits" }).click()
    const following = page.locator("section.following")
    await following.locator("[data-status=pending]").waitFor()
    expect(await balance()).toBe(before - 50)
    await following.locator("[data-status=ready]").waitFor({ timeout: 200_000 })
    const [made] = await server.query<{ derivation: string }>(
      "select derivation from generation_tasks where account_id = $1 and derivation = 'vocals'",
      holder.id
    )
    expect(made?.derivation).toBe("vocals")

    const created = await api(server, "POST", "/api/v1/music/generations", {
      key: holderKey,
      body: { style: "pop, 100 bpm, piano", title: "Sung Line", lyrics: "[Verse]\nA line to sing" }
    })
    const until = Date.now() + 200_000
    let song = created.body
    while (String(song["status"]) === "pending" && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 300))
      song = (await api(server, "GET", `/api/v1/music/generations/${String(created.body["id"])}`, { key: holderKey }))
        .body
    }
    const trackId = String((song["tracks"] as unknown as Array<Json>)[0]?.["id"])
    const songs = await tabs.open(holder, "/dashboard/songs")
    const track = songs.locator(`#history-title ~ ul [data-track-id="${trackId}"]`)
    await track.locator("summary", { hasText: /^Add accompaniment / }).click()
    const form = track.getByRole("form", { name: "Add accompaniment Sung Line 1" })
    await form.getByLabel("Style of the accompaniment").fill("string quartet, pizzicato")
    await form.getByRole("button", { name: "Add accompaniment for 50 credits" }).click()
    const followed = songs.locator("section.following")
    await followed.locator("[data-status=pending]").waitFor()
    await followed.locator("[data-status=ready]").waitFor({ timeout: 200_000 })
    const [row] = await server.query<{ source_track_id: string }>(
      "select source_track_id from generation_tasks where account_id = $1 and derivation = 'instrumental'",
      holder.id
    )
    expect(row?.source_track_id).toBe(trackId)
    await songs.screenshot({ path: screenshotPath("dashboard-uploads/accompaniment-desktop"), fullPage: true })
  }, 400_000)

  it("Add accompaniment on an upload: what was heard in it (a voice alone, often) is accompanied, at the price on the button", async () => {
    const upload = await readyUpload()
    const page = await tabs.open(holder, "/dashboard/uploads")
    const before = await balance()
    const accompany = await tool(page, String(upload["id"]), "Add accompaniment")
    await accompany.getByLabel("Style of the accompaniment").fill("string quartet")
    await accompany.getByRole("button", { name: "Add accompaniment for 50 credits" }).click()
    await page.locator("section.following [data-status=pending]").waitFor()
    expect(await balance()).toBe(before - 50)
    const [row] = await server.query<{ source_track_id: string }>(
      "select source_track_id from generation_tasks where account_id = $1 and derivation = 'instrumental' and source_track_id = $2",
      holder.id,
      String(upload["track_id"])
    )
    expect(row?.source_track_id).toBe(String(upload["track_id"]))
  }, 240_000)
})

describe("personas in the dashboard", () => {
  it("made from a track, named and described, then chosen in the generate form, which generates with it", async () => {
    const upload = await readyUpload()
    const page = await tabs.open(holder, "/dashboard/personas")
    // Refused by core's rules in its words: no track chosen.
    await page.getByLabel("Name").fill("Porch voice")
    await page.getByLabel("Description").fill("Warm, close, a little breathy")
    await page.getByRole("button", { name: "Make the persona" }).click()
    await expect
      .poll(() => page.getByRole("alert").textContent())
      .toMatch(/track_not_found|invalid_parameter|missing_parameter/)

    await page.getByLabel("From the track").selectOption({ label: "Chord study (upload)" })
    await page.getByRole("button", { name: "Make the persona" }).click()
    const persona = page.locator(".persona", { hasText: "Porch voice" })
    await persona.waitFor()
    const [made] = await server.query<{ id: string; track_id: string; description: string }>(
      "select id, track_id, description from personas where account_id = $1",
      holder.id
    )
    expect(made).toEqual({
      id: await persona.getAttribute("data-persona-id"),
      track_id: upload["track_id"],
      description: "Warm, close, a little breathy"
    })
    await page.screenshot({ path: screenshotPath("dashboard-uploads/personas-desktop"), fullPage: true })

    await persona.getByRole("link", { name: "Generate with Porch voice" }).click()
    await page.getByRole("heading", { level: 1, name: "Songs" }).waitFor()
    const personaSelect = page.getByLabel("Persona (aether only)")
    await expect.poll(() => personaSelect.inputValue()).toBe(made?.id)
    await expect.poll(() => personaSelect.locator("option:checked").textContent()).toBe("Porch voice")
    await page.getByLabel("Style").fill("folk, 90 bpm, acoustic guitar")
    await page.getByLabel("Title").fill("Porch Song")
    await page.getByLabel("Lyrics", { exact: true }).fill("[Verse]\nEvening on the porch")
    const before = await balance()
    await page.getByRole("button", { name: "Generate for 50 credits" }).click()
    const following = page.locator("section.following")
    await following.locator("[data-status=pending]").waitFor()
    expect(await balance()).toBe(before - 50)
    const [task] = await server.query<{ persona_id: string }>(
      "select request ->> 'persona_id' as persona_id from generation_tasks where account_id = $1 and request ->> 'title' = 'Porch Song'",
      holder.id
    )
    expect(task?.persona_id).toBe(made?.id)
    await following.locator("[data-status=ready]").waitFor({ timeout: 200_000 })
  }, 300_000)
})

describe("another account", () => {
  it("reaches none of the holder's uploads: not listed, and not found to get, cover, edit or a persona", async () => {
    const upload = await readyUpload()
    const other = await createHolder(server)
    const page = await tabs.open(other, "/dashboard/uploads")
    await page.getByText("No uploads yet.").waitFor()
    expect(await page.locator(`[data-upload-id="${String(upload["id"])}"]`).count()).toBe(0)
    const session = await signIn(other)
    const auth = { cookie: session.cookie, csrf: session.csrf }
    const got = await trpc(server, "query", "uploads.get", { id: upload["id"] }, auth)
    expect([got.status, envelopeOf(got.body)["type"]]).toEqual([404, "not_found"])
    for (const [path, input] of [
      ["tracks.cover", { track_id: upload["track_id"], style: "punk" }],
      ["tracks.edit", { track_id: upload["track_id"], start: 1, end: 4 }],
      ["personas.create", { track_id: upload["track_id"], name: "Theirs", description: "Not mine" }]
    ] as const) {
      const answer = await trpc(server, "mutation", path, input, auth)
      expect([path, answer.status, envelopeOf(answer.body)["code"]]).toEqual([path, 404, "track_not_found"])
    }
    const removed = await trpc(server, "mutation", "uploads.delete", { id: upload["id"] }, auth)
    expect(removed.status).toBe(404)
    expect(await balance(other.id)).toBe(1_000)
  })

  it("the dashboard's upload call needs the session's CSRF token and fields that parse, and keeps nothing otherwise", async () => {
    const session = await signIn(holder)
    const rows = await uploadRows(holder.id)
    // Refused before the body is read: a small one, so the early answer cannot cut it off mid-send.
    const body = song.subarray(0, 4096)
    for (const headers of [{ cookie: session.cookie }, { cookie: session.cookie, "x-csrf-token": "x" }]) {
      const sent = await fetch(`${server.url}/trpc/uploads.create`, {
        method: "POST",
        headers: { ...headers, "content-type": "audio/wav" },
        body
      })
      const answer = (await sent.json()) as Json
      expect([sent.status, envelopeOf(answer)["code"]]).toEqual([403, "csrf_token_invalid"])
    }
    const anonymous = await fetch(`${server.url}/trpc/uploads.create`, {
      method: "POST",
      headers: { "content-type": "audio/wav" },
      body
    })
    expect(anonymous.status).toBe(401)
    await anonymous.arrayBuffer()
    // Its fields, in tRPC's `input` parameter, are judged like any body's: after the session, before the file is read.
    for (const [input, code, param] of [
      ["{not json", "invalid_json", undefined],
      [JSON.stringify({ title: "t".repeat(201) }), "invalid_parameter", "title"],
      [JSON.stringify({ titel: "typo" }), "unknown_parameter", "titel"]
    ] as const) {
      const sent = await fetch(`${server.url}/trpc/uploads.create?input=${encodeURIComponent(input)}`, {
        method: "POST",
        headers: { cookie: session.cookie, "x-csrf-token": session.csrf, "content-type": "audio/wav" },
        body
      })
      const answer = envelopeOf((await sent.json()) as Json)
      expect([sent.status, answer["code"], answer["param"]]).toEqual([400, code, param])
    }
    expect(await uploadRows(holder.id)).toBe(rows)
  })
})

describe("the uploads and personas views", () => {
  it("have no serious or critical axe violations and fit the screen, at desktop and phone widths", async () => {
    const upload = await readyUpload()
    for (const [width, viewport] of [
      ["desktop", desktop],
      ["phone", phone]
    ] as const) {
      const page = await tabs.open(holder, "/dashboard/uploads", viewport)
      for (const label of ["Cover", "Add vocals", "Add accompaniment", "Edit a section"])
        await tool(page, String(upload["id"]), label)
      await uploadEntry(page, String(upload["id"]))
        .locator("[data-testid=waveform][data-loaded=true]")
        .first()
        .waitFor({ timeout: 20_000 })
      await page.screenshot({ path: screenshotPath(`dashboard-uploads/uploads-${width}`), fullPage: true })
      const personas = await tabs.open(holder, "/dashboard/personas", viewport)
      await personas.getByLabel("From the track").waitFor()
      await personas.screenshot({ path: screenshotPath(`dashboard-uploads/personas-${width}`), fullPage: true })
      for (const [name, view] of [
        ["uploads", page],
        ["personas", personas]
      ] as const) {
        await view.evaluate(axeSource)
        const violations = await view.evaluate<
          Array<{ id: string; impact: string | null; nodes: Array<{ target: Array<string> }> }>
        >(`
          axe.run(document).then((result) => result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => ({ target: n.target })) })))`)
        expect([name, width, violations.filter((v) => v.impact === "serious" || v.impact === "critical")]).toEqual([
          name,
          width,
          []
        ])
        const fits = await view.evaluate<boolean>("document.documentElement.scrollWidth <= window.innerWidth")
        expect([name, width, fits]).toEqual([name, width, true])
      }
    }
  }, 120_000)
})
