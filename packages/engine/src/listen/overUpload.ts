// Vocals or an accompaniment of an upload (DESIGN.md section 11: "the source with a sung melody
// over it", "an accompaniment composed for the source's sung melody, mixed with it"): the
// upload's own audio, untouched but for one gain, with the new layer on its bar grid. The layer
// (the voice alone, or the band without a lead) is rendered and mastered as any take is, set to
// sit just under the upload's loudness, and the sum is scaled down as a whole if it would clip,
// so the upload is never distorted.

import { SR } from "../synth/dsp.ts"
import { integratedLoudness } from "../synth/loudness.ts"
import type { Stereo } from "../splice.ts"
import type { UploadRoot } from "../types.ts"
import { uploadGridStart } from "./uploadRoot.ts"

/** How far under the upload's loudness the layer sits. */
const layerUnderBedDb = 2
/** The sum's highest sample. */
const ceiling = 0.97

export function layOnUpload(root: UploadRoot, bed: Stereo, layer: Stereo): Stereo {
  const bedLufs = integratedLoudness(bed.left, bed.right)
  const layerLufs = integratedLoudness(layer.left, layer.right)
  const gain = Number.isFinite(bedLufs) && Number.isFinite(layerLufs) ? 10 ** ((bedLufs - layerUnderBedDb - layerLufs) / 20) : 1
  // The layer's bar 0 is the upload's first beat.
  const offset = Math.round(uploadGridStart(root) * SR)
  const left = Float32Array.from(bed.left)
  const right = Float32Array.from(bed.right)
  for (let i = 0; i + offset < left.length && i < layer.left.length; i++) {
    left[i + offset] = (left[i + offset] ?? 0) + gain * (layer.left[i] ?? 0)
    right[i + offset] = (right[i + offset] ?? 0) + gain * (layer.right[i] ?? 0)
  }
  let peak = 0
  for (let i = 0; i < left.length; i++) peak = Math.max(peak, Math.abs(left[i] ?? 0), Math.abs(right[i] ?? 0))
  if (peak > ceiling) {
    const scale = ceiling / peak
    for (let i = 0; i < left.length; i++) {
      left[i] = (left[i] ?? 0) * scale
      right[i] = (right[i] ?? 0) * scale
    }
  }
  return { left, right }
}
