/** Decoding a file into samples for the waveform and the mixer, with the browser's own decoders. */

/**
 * An offline context decodes without the user's gesture (a live AudioContext starts suspended
 * until one) and never plays; one is enough for every decode of the page.
 */
let decoder: OfflineAudioContext | undefined

export const decodeUrl = async (url: string, signal?: AbortSignal): Promise<AudioBuffer> => {
  const response = await fetch(url, signal === undefined ? {} : { signal })
  if (!response.ok) throw new Error(`${url} answered ${response.status}`)
  const bytes = await response.arrayBuffer()
  decoder ??= new OfflineAudioContext(2, 1, 44_100)
  return decoder.decodeAudioData(bytes)
}

/** The loudest sample of each of `count` equal slices, 0 to 1, over every channel. */
export const peaksOf = (buffer: AudioBuffer, count: number): ReadonlyArray<number> => {
  const channels = Array.from({ length: buffer.numberOfChannels }, (_, c) => buffer.getChannelData(c))
  const size = Math.max(1, Math.floor(buffer.length / count))
  return Array.from({ length: count }, (_, i) => {
    let peak = 0
    for (const data of channels) {
      const end = Math.min(data.length, (i + 1) * size)
      for (let j = i * size; j < end; j += 4) peak = Math.max(peak, Math.abs(data[j] ?? 0))
    }
    return Math.min(1, peak)
  })
}
