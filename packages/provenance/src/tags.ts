/**
 * The disclosure in a file's own tags, for players and tools that read no C2PA: an ID3v2.4 tag
 * for MP3 (a comment and two user text frames) and a LIST INFO chunk for WAV (comment and
 * software). Written before signing, so the manifest's hash covers them.
 */

export interface Disclosure {
  /** One sentence a person reads: made with AI, by what. */
  readonly text: string
  /** The software that made it, with its version. */
  readonly software: string
  /** The IPTC digital source type's URL. */
  readonly digitalSourceType: string
}

const utf8 = (value: string): Uint8Array => new TextEncoder().encode(value)

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}

/** A 28-bit synchsafe integer (ID3v2). */
const synchsafe = (value: number): Uint8Array =>
  Uint8Array.of((value >> 21) & 0x7f, (value >> 14) & 0x7f, (value >> 7) & 0x7f, value & 0x7f)
const unsynchsafe = (bytes: Uint8Array, at: number): number =>
  ((bytes[at] ?? 0) << 21) | ((bytes[at + 1] ?? 0) << 14) | ((bytes[at + 2] ?? 0) << 7) | (bytes[at + 3] ?? 0)

/** An ID3v2.4 frame (UTF-8 text, encoding byte 3). */
const frame = (id: string, body: Uint8Array): Uint8Array =>
  concat([utf8(id), synchsafe(body.length), Uint8Array.of(0, 0), body])
const userText = (description: string, value: string): Uint8Array =>
  frame("TXXX", concat([Uint8Array.of(3), utf8(description), Uint8Array.of(0), utf8(value)]))
const comment = (value: string): Uint8Array =>
  frame("COMM", concat([Uint8Array.of(3), utf8("eng"), Uint8Array.of(0), utf8(value)]))

const id3Frames = (disclosure: Disclosure): Uint8Array =>
  concat([
    comment(disclosure.text),
    userText("AI_GENERATED", disclosure.text),
    userText("DIGITAL_SOURCE_TYPE", disclosure.digitalSourceType),
    frame("TSSE", concat([Uint8Array.of(3), utf8(disclosure.software)]))
  ])

/**
 * The MP3 with the disclosure's frames: added at the front of its ID3v2.3/2.4 tag when it has a
 * plain one (no extended header, no unsynchronisation), else in a tag of their own before it.
 */
export const discloseInMp3 = (bytes: Uint8Array, disclosure: Disclosure): Uint8Array => {
  const frames = id3Frames(disclosure)
  const hasTag = bytes.length >= 10 && bytes[0] === 0x49 && bytes[1] === 0x44 && bytes[2] === 0x33
  const version = bytes[3] ?? 0
  const flags = bytes[5] ?? 0
  if (hasTag && version === 4 && (flags & 0xc0) === 0) {
    const size = unsynchsafe(bytes, 6)
    const header = concat([bytes.subarray(0, 6), synchsafe(size + frames.length)])
    return concat([header, frames, bytes.subarray(10)])
  }
  return concat([utf8("ID3"), Uint8Array.of(4, 0, 0), synchsafe(frames.length), frames, bytes])
}

const riffChunk = (id: string, body: Uint8Array): Uint8Array => {
  const header = new Uint8Array(8)
  header.set(utf8(id), 0)
  new DataView(header.buffer).setUint32(4, body.length, true)
  return concat([header, body, body.length % 2 === 1 ? Uint8Array.of(0) : new Uint8Array(0)])
}
const zeroTerminated = (value: string): Uint8Array => concat([utf8(value), Uint8Array.of(0)])

/** The WAV with a LIST INFO chunk (ICMT comment, ISFT software) appended inside its RIFF. */
export const discloseInWav = (bytes: Uint8Array, disclosure: Disclosure): Uint8Array => {
  const isRiff = bytes.length >= 12 && new TextDecoder().decode(bytes.subarray(0, 4)) === "RIFF"
  if (!isRiff) throw new Error("not a RIFF WAVE file")
  const info = riffChunk(
    "LIST",
    concat([
      utf8("INFO"),
      riffChunk("ICMT", zeroTerminated(`${disclosure.text} (${disclosure.digitalSourceType})`)),
      riffChunk("ISFT", zeroTerminated(disclosure.software))
    ])
  )
  const riffSize = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(4, true)
  // What the RIFF holds (a trailing odd byte or junk after it is left out, then kept after).
  const end = Math.min(bytes.length, 8 + riffSize)
  const out = concat([bytes.subarray(0, end), info, bytes.subarray(end)])
  new DataView(out.buffer).setUint32(4, riffSize + info.length, true)
  return out
}
