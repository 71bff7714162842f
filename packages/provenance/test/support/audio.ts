/** Small audio files to sign in tests and benchmarks: MP3 frames and 16-bit PCM WAV. */

/** Silent MPEG-1 Layer III frames (128 kbit/s, 44.1 kHz: 417 bytes each). */
export const silentMp3 = (frames: number): Uint8Array => {
  const out = new Uint8Array(frames * 417)
  for (let i = 0; i < frames; i++) out.set([0xff, 0xfb, 0x90, 0x64], i * 417)
  return out
}

/** A 16-bit PCM WAV of `frames` sample frames, each sample `sample(i)` (silence by default). */
export const pcmWav = (
  frames: number,
  {
    channels = 1,
    rate = 8_000,
    sample = () => 0
  }: {
    readonly channels?: number
    readonly rate?: number
    readonly sample?: (index: number) => number
  } = {}
): Uint8Array => {
  const bytes = frames * channels * 2
  const out = Buffer.alloc(44 + bytes)
  out.write("RIFF", 0)
  out.writeUInt32LE(36 + bytes, 4)
  out.write("WAVEfmt ", 8)
  out.writeUInt32LE(16, 16)
  out.writeUInt16LE(1, 20)
  out.writeUInt16LE(channels, 22)
  out.writeUInt32LE(rate, 24)
  out.writeUInt32LE(rate * channels * 2, 28)
  out.writeUInt16LE(channels * 2, 32)
  out.writeUInt16LE(16, 34)
  out.write("data", 36)
  out.writeUInt32LE(bytes, 40)
  for (let i = 0; i < frames * channels; i++) out.writeInt16LE(sample(i), 44 + i * 2)
  return out
}
