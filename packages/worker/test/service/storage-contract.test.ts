/**
 * The storage port's contract, the same cases against both implementations: files under a
 * directory, and objects in a real S3-protocol server (s3rver, checking every signature). An
 * object lands whole under its key or not at all, a replacement overwrites, ranges read what was
 * written, and keys outside the shape are refused.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Readable } from "node:stream"
import { buffer, text } from "node:stream/consumers"
import { Effect, Exit, ManagedRuntime } from "effect"
import type { Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Storage } from "../../src/storage/Storage.ts"
import type { StorageError } from "../../src/storage/Storage.ts"
import { startS3 } from "../support/s3.ts"
import type { TestS3 } from "../support/s3.ts"

let directory: string
let s3: TestS3
beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), "lyre-contract-"))
  s3 = await startS3()
})
afterAll(async () => {
  await s3?.close()
  rmSync(directory, { recursive: true, force: true })
})

/** Bytes whose every position is recognisable, so a misplaced slice shows. */
const patterned = (size: number) =>
  Buffer.from(Uint8Array.from({ length: size }, (_, i) => (i * 31 + (i >> 16)) & 0xff))

const chunksOf = (bytes: Buffer, size: number) =>
  Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size))

/** A body that sends some bytes and then fails, as a download cut by the network does. */
const failingBody = () =>
  new Readable({
    read() {
      this.push(Buffer.alloc(10_000, 1))
      this.destroy(new Error("connection reset"))
    }
  })

/** A body destroyed without an error before its end, as an aborted download is. */
const closedBody = () => {
  let sent = false
  const body: Readable = new Readable({
    read() {
      if (sent) return
      sent = true
      this.push(Buffer.alloc(10_000, 2))
      setImmediate(() => body.destroy())
    }
  })
  return body
}

const implementations: ReadonlyArray<readonly [string, () => Layer.Layer<Storage, StorageError>]> = [
  ["files", () => Storage.layerFiles(join(directory, "files"))],
  ["s3", () => Storage.layerS3(s3.options({ prefix: "contract/" }))]
]

describe.each(implementations)("the storage port on %s", (name, layer) => {
  let runtime: ManagedRuntime.ManagedRuntime<Storage, StorageError>
  beforeAll(async () => {
    runtime = ManagedRuntime.make(layer())
    await runtime.context()
  })
  afterAll(() => runtime?.dispose())

  const put = (key: string, body: Readable | Uint8Array) =>
    runtime.runPromiseExit(Storage.use((storage) => storage.put(key, body)))
  const stat = (key: string) => runtime.runPromise(Storage.use((storage) => storage.stat(key)))
  const read = (key: string, start: number, end: number) =>
    runtime.runPromise(Storage.use((storage) => Effect.sync(() => storage.read(key, { start, end }))))

  it("stores bytes larger than one write slice whole, with the extension's content type", async () => {
    const bytes = patterned(2 * 1024 * 1024 + 12_345)
    const stored = await put("gen_bytes/0.mp3", bytes)
    expect(Exit.isSuccess(stored) && stored.value).toEqual({ size: bytes.length, contentType: "audio/mpeg" })
    expect(await stat("gen_bytes/0.mp3")).toEqual({ size: bytes.length, contentType: "audio/mpeg" })
    expect((await buffer(await read("gen_bytes/0.mp3", 0, bytes.length - 1))).equals(bytes)).toBe(true)
  })

  it("stores a stream whole, chunk by chunk, also one larger than an upload part (5 MiB)", async () => {
    const bytes = patterned(12 * 1024 * 1024 + 777)
    const stored = await put("gen_stream/0.wav", Readable.from(chunksOf(bytes, 60_000)))
    expect(Exit.isSuccess(stored) && stored.value).toEqual({ size: bytes.length, contentType: "audio/wav" })
    expect(await stat("gen_stream/0.wav")).toEqual({ size: bytes.length, contentType: "audio/wav" })
    expect((await buffer(await read("gen_stream/0.wav", 0, bytes.length - 1))).equals(bytes)).toBe(true)
    const middle = await buffer(await read("gen_stream/0.wav", 5 * 1024 * 1024 - 10, 5 * 1024 * 1024 + 9))
    expect(middle.equals(bytes.subarray(5 * 1024 * 1024 - 10, 5 * 1024 * 1024 + 10))).toBe(true)
  })

  it("replaces what was stored under the key, and reads ranges of it", async () => {
    await put("gen_again/0-cover.png", Buffer.from("first version"))
    await put("gen_again/0-cover.png", Readable.from([Buffer.from("sec"), Buffer.from("ond")]))
    expect(await stat("gen_again/0-cover.png")).toEqual({ size: 6, contentType: "image/png" })
    expect(await text(await read("gen_again/0-cover.png", 1, 3))).toBe("eco")
    expect(await text(await read("gen_again/0-cover.png", 5, 5))).toBe("d")
  })

  it("a body that fails midway leaves no object", async () => {
    const exit = await put("gen_cut/0.mp3", failingBody())
    expect(Exit.isFailure(exit)).toBe(true)
    expect(await stat("gen_cut/0.mp3")).toBeNull()
  })

  it("a body closed before its end leaves no object", async () => {
    const exit = await put("gen_closed/0.mp3", closedBody())
    expect(Exit.isFailure(exit)).toBe(true)
    expect(await stat("gen_closed/0.mp3")).toBeNull()
  })

  it("a failed replacement leaves the earlier object as it was", async () => {
    await put("gen_keep/0.mp3", Buffer.from("the good one"))
    expect(Exit.isFailure(await put("gen_keep/0.mp3", failingBody()))).toBe(true)
    expect(await text(await read("gen_keep/0.mp3", 0, 11))).toBe("the good one")
  })

  it("answers null for a key never stored, and an unknown extension's type is octet-stream", async () => {
    expect(await stat("gen_never/0.mp3")).toBeNull()
    await put("gen_other/0.bin", Buffer.from([1, 2, 3]))
    expect(await stat("gen_other/0.bin")).toEqual({ size: 3, contentType: "application/octet-stream" })
  })

  it("removes an object (a deleted upload's file); removing one never stored is no error", async () => {
    await put("upl_gone/source.wav", Buffer.from("an upload"))
    expect(await stat("upl_gone/source.wav")).toEqual({ size: 9, contentType: "audio/wav" })
    await runtime.runPromise(Storage.use((storage) => storage.remove("upl_gone/source.wav")))
    expect(await stat("upl_gone/source.wav")).toBeNull()
    await runtime.runPromise(Storage.use((storage) => storage.remove("upl_never/source.wav")))
    await runtime.runPromise(Storage.use((storage) => storage.remove("../escape.wav")))
  })

  it("a file store gives a key's path to read in place and takes the key's folder with its last file; a bucket gives none", async () => {
    await put("upl_folder/source.wav", Buffer.from("an upload"))
    await put("upl_folder/extra.wav", Buffer.from("another"))
    const path = await runtime.runPromise(
      Storage.use((storage) => Effect.sync(() => storage.localPath("upl_folder/source.wav")))
    )
    if (name === "s3") {
      expect(path).toBeNull()
      return
    }
    expect(path).toBe(join(directory, "files", "upl_folder", "source.wav"))
    expect(readFileSync(path ?? "", "utf8")).toBe("an upload")
    await runtime.runPromise(Storage.use((storage) => storage.remove("upl_folder/source.wav")))
    expect(existsSync(join(directory, "files", "upl_folder"))).toBe(true)
    await runtime.runPromise(Storage.use((storage) => storage.remove("upl_folder/extra.wav")))
    expect(existsSync(join(directory, "files", "upl_folder"))).toBe(false)
    await put("upl_folder/source.wav", Buffer.from("again"))
    expect(await stat("upl_folder/source.wav")).toEqual({ size: 5, contentType: "audio/wav" })
  })

  it("refuses keys outside the storage shape: nothing stored, nothing found, nothing read", async () => {
    for (const key of ["../escape.mp3", "gen_x/../../escape.mp3", "gen_x/0.MP3", "noslash.mp3", "a/b/c.mp3"]) {
      const exit = await put(key, Buffer.from("x"))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(await stat(key)).toBeNull()
      expect(await text(await read(key, 0, 0))).toBe("")
    }
  })
})
