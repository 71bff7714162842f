/**
 * File storage: an object lands whole under its key (streamed chunk by chunk, or written a slice
 * per turn), a replacement overwrites, no temporary file stays behind, and ranges read what was
 * written.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Readable } from "node:stream"
import { text } from "node:stream/consumers"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Storage } from "../../src/storage/Storage.ts"

let directory: string
beforeAll(() => {
  directory = mkdtempSync(join(tmpdir(), "lyre-storage-"))
})
afterAll(() => {
  rmSync(directory, { recursive: true, force: true })
})

const run = <A, E>(effect: Effect.Effect<A, E, Storage>) =>
  Effect.runPromise(effect.pipe(Effect.provide(Storage.layerFiles(directory))))

/** Bytes whose every position is recognisable, so a misplaced slice shows. */
const patterned = (size: number) =>
  Buffer.from(Uint8Array.from({ length: size }, (_, i) => (i * 31 + (i >> 16)) & 0xff))

describe("FileStorage.put", () => {
  it("writes an object larger than one slice whole, from bytes or from a stream", async () => {
    const bytes = patterned(2 * 1024 * 1024 + 12_345)
    expect(await run(Storage.use((storage) => storage.put("gen_big/0.mp3", bytes)))).toEqual({
      size: bytes.length,
      contentType: "audio/mpeg"
    })
    expect(readFileSync(join(directory, "gen_big/0.mp3")).equals(bytes)).toBe(true)
    const chunks = Array.from({ length: 40 }, (_, i) => bytes.subarray(i * 60_000, (i + 1) * 60_000))
    await run(Storage.use((storage) => storage.put("gen_big/1.mp3", Readable.from(chunks))))
    expect(readFileSync(join(directory, "gen_big/1.mp3")).equals(bytes.subarray(0, 40 * 60_000))).toBe(true)
    expect(readdirSync(join(directory, "gen_big")).sort()).toEqual(["0.mp3", "1.mp3"])
  })

  it("replaces what was stored under the key, and reads ranges of it", async () => {
    await run(Storage.use((storage) => storage.put("gen_again/0-cover.png", Buffer.from("first version"))))
    await run(Storage.use((storage) => storage.put("gen_again/0-cover.png", Buffer.from("second"))))
    expect(readdirSync(join(directory, "gen_again"))).toEqual(["0-cover.png"])
    const stored = await run(Storage.use((storage) => storage.stat("gen_again/0-cover.png")))
    expect(stored).toEqual({ size: 6, contentType: "image/png" })
    expect(
      await text(
        await run(
          Storage.use((storage) => Effect.sync(() => storage.read("gen_again/0-cover.png", { start: 1, end: 3 })))
        )
      )
    ).toBe("eco")
  })

  it("a body that fails midway leaves neither the object nor a temporary file", async () => {
    const failing = new Readable({
      read() {
        this.push(Buffer.alloc(10_000, 1))
        this.destroy(new Error("connection reset"))
      }
    })
    const exit = await Effect.runPromiseExit(
      Storage.use((storage) => storage.put("gen_cut/0.mp3", failing)).pipe(
        Effect.provide(Storage.layerFiles(directory))
      )
    )
    expect(exit._tag).toBe("Failure")
    expect(readdirSync(join(directory, "gen_cut"))).toEqual([])
  })

  it("a body destroyed without an error (an aborted download) fails the put and leaves nothing", async () => {
    const aborted = new Readable({
      read() {
        this.push(Buffer.alloc(10_000, 2))
        this.destroy()
      }
    })
    const exit = await Effect.runPromiseExit(
      Storage.use((storage) => storage.put("gen_aborted/0.mp3", aborted)).pipe(
        Effect.provide(Storage.layerFiles(directory))
      )
    )
    expect(exit._tag).toBe("Failure")
    expect(String(exit)).toContain("the body closed before its end")
    expect(readdirSync(join(directory, "gen_aborted"))).toEqual([])
  })

  it("refuses keys outside the storage shape", async () => {
    const refused = await Effect.runPromiseExit(
      Storage.use((storage) => storage.put("../escape.mp3", Buffer.from("x"))).pipe(
        Effect.provide(Storage.layerFiles(directory))
      )
    )
    expect(refused._tag).toBe("Failure")
  })
})
