/**
 * What a track's `/files/...` URL serves, wherever the file is kept (this machine's DATA_DIR or
 * a bucket): the whole file with its type, length and Accept-Ranges; 206 for a range, a suffix
 * and an open range; 416 beyond the end; and HEAD with the length.
 */
import { readAsset } from "@lyre/provenance"
import { expect } from "vitest"

/**
 * Checks all of that on `url`, an MP3 re-hosted from `audioSize` bytes of the provider's audio
 * with its content credentials signed in (record 0123), and answers its bytes. The manifest's
 * hard binding covers every byte, so it reads Valid only on the whole file as stored.
 */
export const expectServedWithRanges = async (url: string, audioSize: number): Promise<Uint8Array> => {
  const whole = await fetch(url)
  expect(whole.status).toBe(200)
  expect(whole.headers.get("content-type")).toBe("audio/mpeg")
  expect(whole.headers.get("accept-ranges")).toBe("bytes")
  const bytes = new Uint8Array(await whole.arrayBuffer())
  expect(bytes.length).toBeGreaterThan(audioSize)
  expect((await readAsset(bytes, "audio/mpeg")).state).toBe("Valid")
  expect(whole.headers.get("content-length")).toBe(String(bytes.length))

  const part = await fetch(url, { headers: { range: "bytes=100-199" } })
  expect(part.status).toBe(206)
  expect(part.headers.get("content-range")).toBe(`bytes 100-199/${bytes.length}`)
  expect(part.headers.get("content-length")).toBe("100")
  expect(new Uint8Array(await part.arrayBuffer())).toEqual(bytes.slice(100, 200))

  const tail = await fetch(url, { headers: { range: "bytes=-10" } })
  expect(tail.status).toBe(206)
  expect(new Uint8Array(await tail.arrayBuffer())).toEqual(bytes.slice(-10))

  const open = await fetch(url, { headers: { range: `bytes=${bytes.length - 5}-` } })
  expect(open.status).toBe(206)
  expect(open.headers.get("content-range")).toBe(`bytes ${bytes.length - 5}-${bytes.length - 1}/${bytes.length}`)
  await open.arrayBuffer()

  const beyond = await fetch(url, { headers: { range: `bytes=${bytes.length}-` } })
  expect(beyond.status).toBe(416)
  expect(beyond.headers.get("content-range")).toBe(`bytes */${bytes.length}`)
  await beyond.arrayBuffer()

  const head = await fetch(url, { method: "HEAD" })
  expect(head.status).toBe(200)
  expect(head.headers.get("content-length")).toBe(String(bytes.length))
  return bytes
}

/**
 * An MP3's frames: the file without its leading ID3v2 tags, where a stored file carries its content
 * credentials (record 0123) and a preview or the upstream's bytes carry none (record 0126).
 */
export const mp3FramesOf = (mp3: Uint8Array): Uint8Array => {
  if (mp3.length < 10 || mp3[0] !== 0x49 || mp3[1] !== 0x44 || mp3[2] !== 0x33) return mp3
  const size = [6, 7, 8, 9].reduce((sum, i) => sum * 128 + ((mp3[i] ?? 0) & 0x7f), 0)
  const footer = ((mp3[5] ?? 0) & 0x10) !== 0 ? 10 : 0
  return mp3FramesOf(mp3.subarray(10 + size + footer))
}
