/**
 * `lyre generate --wait --download` against the embedded default's provider, the built-in
 * engine: two real songs land on disk, and mpg123 decodes each to minutes of audio.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { MPEGDecoder } from "mpg123-decoder"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createAccount, startTestServer } from "../../../server/test/support/harness.ts"
import type { TestServer } from "../../../server/test/support/harness.ts"
import { lyreHome } from "../support/lyre.ts"
import type { LyreHome } from "../support/lyre.ts"

let server: TestServer
let home: LyreHome
beforeAll(async () => {
  server = await startTestServer({
    provider: "embedded",
    // Half a minute: the voice comes in, and the tests read lengths and sung words past 8 s.
    engineMaxSeconds: 30,
    providerUrl: null,
    providerApiKey: null,
    worker: "inline",
    providerPollSeconds: 2
  })
  home = lyreHome()
})
afterAll(async () => {
  home.remove()
  await server.close()
})

const decode = async (mp3: Uint8Array) => {
  const decoder = new MPEGDecoder()
  await decoder.ready
  try {
    const out = decoder.decode(mp3)
    return { seconds: out.samplesDecoded / out.sampleRate, errors: out.errors.length, channels: out.channelData.length }
  } finally {
    decoder.free()
  }
}

describe("lyre generate --wait --download with the built-in engine", () => {
  it("saves two playable MP3s and their covers, named from the title and index; lyre download saves them again", async () => {
    const account = await createAccount(server)
    const env = { LYRE_API_KEY: account.key, LYRE_BASE_URL: server.url }
    const dir = join(home.home, "songs")
    const run = await home.run(
      [
        "generate",
        "--style",
        "lofi hip hop, 80 bpm, piano",
        "--title",
        "Rain: on/Glass?",
        "--lyrics",
        "[Verse]\nRain on the glass",
        "--download",
        dir,
        "--output",
        "json"
      ],
      { env }
    )
    expect(run.stderr).not.toContain("lyre:")
    expect(run.code).toBe(0)
    const task = JSON.parse(run.stdout)
    expect(task).toMatchObject({ status: "ready", credits_used: 50 })
    // Not a terminal: plain progress lines, the download's included.
    expect(run.stderr).toContain(`${task.id}  ready in `)
    expect(run.stderr).toMatch(/Downloading Rain-on-Glass-1\.mp3 /)
    expect(readdirSync(dir).sort()).toEqual([
      "Rain-on-Glass-1.mp3",
      "Rain-on-Glass-1.png",
      "Rain-on-Glass-2.mp3",
      "Rain-on-Glass-2.png"
    ])
    for (const index of [1, 2]) {
      const mp3 = new Uint8Array(readFileSync(join(dir, `Rain-on-Glass-${index}.mp3`)))
      const decoded = await decode(mp3)
      expect(decoded.errors).toBe(0)
      expect(decoded.channels).toBe(2)
      expect(decoded.seconds).toBeGreaterThan(20)
      expect(
        readFileSync(join(dir, `Rain-on-Glass-${index}.png`))
          .subarray(1, 4)
          .toString("latin1")
      ).toBe("PNG")
    }

    const again = await home.run(["download", task.id, join(home.home, "again"), "-o", "json"], { env })
    expect(again.code).toBe(0)
    expect(JSON.parse(again.stdout).files.map((f: { path: string }) => f.path.split("/").at(-1))).toEqual([
      "Rain-on-Glass-1.mp3",
      "Rain-on-Glass-1.png",
      "Rain-on-Glass-2.mp3",
      "Rain-on-Glass-2.png"
    ])
    expect(
      readFileSync(join(home.home, "again", "Rain-on-Glass-2.mp3")).equals(
        readFileSync(join(dir, "Rain-on-Glass-2.mp3"))
      )
    ).toBe(true)
  }, 180_000)
})
