/**
 * What the players share: a level meter's reading of an analyser, and stopping the sources that
 * play (without their `onended`, which would say the end was reached).
 */

/** RMS of the analyser's latest samples, times four (a stem sits well under full scale), at most 1. */
export function meterLevel(analyser: AnalyserNode, samples: Float32Array<ArrayBuffer>): number {
  analyser.getFloatTimeDomainData(samples)
  let energy = 0
  for (const sample of samples) energy += sample * sample
  return Math.min(1, Math.sqrt(energy / samples.length) * 4)
}

export function stopSources(sources: Array<AudioBufferSourceNode>): void {
  for (const source of sources) {
    source.onended = null
    source.stop()
  }
  sources.length = 0
}
