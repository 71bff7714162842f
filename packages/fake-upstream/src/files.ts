/** Bytes served for every track's audio: an ID3 tag header, then filler of the configured size. */
export const makeAudio = (bytes: number): Buffer => {
  const audio = Buffer.alloc(Math.max(bytes, 10), 0x55)
  audio.write("ID3", 0, "latin1")
  return audio
}

/** A valid 1x1 transparent PNG, so that a re-hosted image is a real image. */
export const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=",
  "base64"
)
