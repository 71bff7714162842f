/** The CLI's pure rules: settings precedence, key masking, file names, which player plays. */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import { describe, expect, it } from "vitest"
import { maskKey, resolveSettings } from "../../src/config.ts"
import { fileBase } from "../../src/download.ts"
import { findPlayer } from "../../src/player.ts"

describe("resolveSettings", () => {
  const file = { api_key: "lyr_live_file", base_url: "http://file" }
  it("flags win over the environment, which wins over the file; empty values do not count", () => {
    expect(resolveSettings({}, {}, file)).toEqual({
      apiKey: { value: "lyr_live_file", source: "config file" },
      baseUrl: { value: "http://file", source: "config file" }
    })
    expect(resolveSettings({}, { LYRE_API_KEY: "lyr_live_env", LYRE_BASE_URL: "" }, file).apiKey).toEqual({
      value: "lyr_live_env",
      source: "environment"
    })
    expect(
      resolveSettings(
        { apiKey: "lyr_live_flag", baseUrl: "http://flag" },
        { LYRE_API_KEY: "lyr_live_env", LYRE_BASE_URL: "http://env" },
        file
      )
    ).toEqual({
      apiKey: { value: "lyr_live_flag", source: "flag" },
      baseUrl: { value: "http://flag", source: "flag" }
    })
    expect(resolveSettings({}, {}, {})).toEqual({
      apiKey: undefined,
      baseUrl: { value: "http://127.0.0.1:8080", source: "default" }
    })
  })
})

describe("maskKey", () => {
  it("keeps the prefix and a few characters at each end, never the whole secret", () => {
    expect(maskKey("lyr_live_AbCdEfGhIjKlMnOpQrStUvWxYz012345")).toBe("lyr_live_AbCd…2345")
    expect(maskKey("lyr_live_short")).toBe("lyr_live_*****")
    expect(maskKey("eyJhbGciOiJFUzI1NiJ9.payload.sig")).toBe("eyJh….sig")
  })
})

describe("fileBase", () => {
  it("keeps letters and digits of any script, one dash for every other run, the index from 1", () => {
    expect(fileBase("Rain: on/Glass?", 0, "gen_x")).toBe("Rain-on-Glass-1")
    expect(fileBase("Ünïcode — 日本の歌", 1, "gen_x")).toBe("Ünïcode-日本の歌-2")
    expect(fileBase("../../etc/passwd", 0, "gen_x")).toBe("etc-passwd-1")
    expect(fileBase("...", 0, "gen_x")).toBe("gen_x-1")
    expect(fileBase(null, 2, "gen_x")).toBe("gen_x-3")
    expect(fileBase("a".repeat(300), 0, "gen_x")).toBe(`${"a".repeat(80)}-1`)
  })
})

describe("requestFields", () => {
  it("names the flags given as the API names them, numbers as numbers, and nothing else", async () => {
    const { requestFields } = await import("../../src/requestFlags.ts")
    expect(
      requestFields(
        { style: "jazz", persona: "per_1", audioWeight: "0.7", styleWeight: "lots", instrumental: true, wait: true },
        "la"
      )
    ).toEqual({
      style: "jazz",
      lyrics: "la",
      instrumental: true,
      audio_weight: 0.7,
      style_weight: "lots",
      persona_id: "per_1"
    })
    expect(requestFields({ instrumental: false }, undefined)).toEqual({})
  })
})

describe("pageOf", () => {
  it("passes a page through and refuses a limit outside 1 to 100 as the server would", async () => {
    const { pageOf } = await import("../../src/paging.ts")
    expect(pageOf({ limit: "5", startingAfter: "upl_x" })).toEqual({ limit: 5, startingAfter: "upl_x" })
    expect(pageOf({})).toEqual({})
    expect(() => pageOf({ limit: "0" })).toThrow("limit: must be an integer from 1 to 100")
  })
})

describe("findPlayer", () => {
  it("takes mpv, then ffplay, then mpg123, from the PATH's folders; a file that cannot run is no player", () => {
    const root = mkdtempSync(join(tmpdir(), "lyre-players-"))
    try {
      const folder = (name: string, programs: Record<string, number>) => {
        const path = join(root, name)
        mkdirSync(path)
        for (const [program, mode] of Object.entries(programs)) {
          writeFileSync(join(path, program), "#!/bin/sh\n")
          chmodSync(join(path, program), mode)
        }
        return path
      }
      const first = folder("first", { mpg123: 0o755, mpv: 0o644 })
      const second = folder("second", { ffplay: 0o755 })
      const found = findPlayer({ PATH: [first, second].join(delimiter) })
      expect([found?.name, found?.path]).toEqual(["ffplay", join(second, "ffplay")])
      expect(found?.args("http://x/s.mp3")).toEqual(["-nodisp", "-autoexit", "-loglevel", "quiet", "http://x/s.mp3"])
      expect(findPlayer({ PATH: first })?.name).toBe("mpg123")
      expect(findPlayer({ PATH: folder("empty", {}) })).toBeUndefined()
      expect(findPlayer({})).toBeUndefined()
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
})
