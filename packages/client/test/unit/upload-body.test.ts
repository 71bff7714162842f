/** An upload's body before it is sent: its type, its declared length, whether it can be sent again. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { uploadBodyOf } from "../../src/upload.ts"

const dir = mkdtempSync(join(tmpdir(), "lyre-body-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const file = (name: string, bytes = 10): string => {
  const path = join(dir, name)
  writeFileSync(path, new Uint8Array(bytes))
  return path
}

describe("uploadBodyOf", () => {
  it("a path: typed by its extension, whatever its case; an unknown one is octet-stream for the server to refuse", async () => {
    const cases: Array<[string, string]> = [
      ["a.mp3", "audio/mpeg"],
      ["b.WAV", "audio/wav"],
      ["c.wave", "audio/wav"],
      ["d.flac", "audio/flac"],
      ["e.ogg", "audio/ogg"],
      ["f.oga", "audio/ogg"],
      ["g.txt", "application/octet-stream"],
      ["no-extension", "application/octet-stream"]
    ]
    for (const [name, type] of cases) {
      const body = await uploadBodyOf(file(name, 12))
      expect([name, body.contentType, body.size, body.replayable, body.streamed]).toEqual([name, type, 12, true, false])
    }
    expect((await uploadBodyOf(file("h.txt"), { contentType: "audio/flac" })).contentType).toBe("audio/flac")
  })

  it("a Blob or File: its own type first, then its name; as it is without progress, streamed and counted with it", async () => {
    expect((await uploadBodyOf(new Blob([new Uint8Array(3)]))).streamed).toBe(false)
    expect((await uploadBodyOf(new Blob([new Uint8Array(3)], { type: "audio/ogg" }))).contentType).toBe("audio/ogg")
    expect((await uploadBodyOf(new File([new Uint8Array(3)], "x.flac"))).contentType).toBe("audio/flac")
    expect((await uploadBodyOf(new File([new Uint8Array(3)], "x.flac", { type: "audio/wav" }))).contentType).toBe(
      "audio/wav"
    )
    expect((await uploadBodyOf(new Blob([new Uint8Array(3)]))).contentType).toBe("application/octet-stream")

    const seen: Array<[number, number | null]> = []
    const body = await uploadBodyOf(new Blob([new Uint8Array(5), new Uint8Array(7)]), {
      onProgress: (sent, total) => seen.push([sent, total])
    })
    expect([body.streamed, body.replayable, body.size]).toEqual([true, true, 12])
    // Made twice (a retry): each time the whole body, counted afresh.
    for (let attempt = 0; attempt < 2; attempt++) {
      expect((await new Response(body.make()).arrayBuffer()).byteLength).toBe(12)
      expect(seen.at(-1)).toEqual([12, 12])
    }
  })

  it("a stream: not replayable, its size only when given", async () => {
    async function* chunks() {
      yield new Uint8Array(4)
      yield new Uint8Array(6)
    }
    const sized = await uploadBodyOf(chunks(), { contentType: "audio/wav", size: 10 })
    expect([sized.contentType, sized.size, sized.replayable, sized.streamed]).toEqual(["audio/wav", 10, false, true])
    expect((await new Response(sized.make()).arrayBuffer()).byteLength).toBe(10)
    const unsized = await uploadBodyOf(new ReadableStream<Uint8Array>())
    expect([unsized.contentType, unsized.size]).toEqual(["application/octet-stream", null])
  })
})
