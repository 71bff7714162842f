// Vocals or an accompaniment of an upload (DESIGN.md section 11: "the source with a sung melody
// over it", "an accompaniment composed for the source's sung melody, mixed with it"): the
// upload's own audio, untouched but for one gain, with the new layer on its bar grid. The layer
// (the voice alone, or the band without a lead) is rendered and mastered as any take is, set to
// sit just under the upload's loudness, and the sum is scaled down as a whole if it would clip,
// so the upload is never distorted.
//
// The stems of such a track are the layer's own stems and the upload itself (stem `upload`),
// each through the very gains the mix applied (the layer's gain and offset, the sum's scale):
// every step is linear, so they add up to the mix.

import { SR } from "../synth/dsp.ts"
import { integratedLoudness } from "../synth/loudness.ts"
import type { Stereo } from "../splice.ts"
import type { UploadRoot } from "../types.ts"
import { uploadGridStart } from "./uploadRoot.ts"

/** How far under the upload's loudness the layer sits. */
const layerUnderBedDb = 2
/** The sum's highest sample. */
const ceiling = 0.97

/** The name of the upload's own audio among the stems of a track laid on it. */
export const UPLOAD_STEM = "upload"

/** How the layer is laid on the upload: its gain, where its time 0 falls, and the scale of the whole. */
interface Laying {
  readonly gain: number
  /** Samples. */
  readonly offset: number
  readonly scale: number
}

/** `layer` times `gain` added into `into` from sample `offset`, within `into`'s length. */
function addInto(into: Stereo, layer: Stereo, gain: number, offset: number): void {
  for (let i = 0; i + offset < into.left.length && i < layer.left.length; i++) {
    into.left[i + offset] = (into.left[i + offset] ?? 0) + gain * (layer.left[i] ?? 0)
    into.right[i + offset] = (into.right[i + offset] ?? 0) + gain * (layer.right[i] ?? 0)
  }
}

function scaled(audio: Stereo, scale: number): Stereo {
  return { left: audio.left.map((x) => x * scale), right: audio.right.map((x) => x * scale) }
}

function layingOf(root: UploadRoot, bed: Stereo, layer: Stereo): { readonly laying: Laying; readonly sum: Stereo } {
  const bedLufs = integratedLoudness(bed.left, bed.right)
  const layerLufs = integratedLoudness(layer.left, layer.right)
  const gain =
    Number.isFinite(bedLufs) && Number.isFinite(layerLufs) ? 10 ** ((bedLufs - layerUnderBedDb - layerLufs) / 20) : 1
  // The layer's bar 0 is the upload's first beat.
  const offset = Math.round(uploadGridStart(root) * SR)
  const sum = { left: Float32Array.from(bed.left), right: Float32Array.from(bed.right) }
  addInto(sum, layer, gain, offset)
  let peak = 0
  for (let i = 0; i < sum.left.length; i++)
    peak = Math.max(peak, Math.abs(sum.left[i] ?? 0), Math.abs(sum.right[i] ?? 0))
  return { laying: { gain, offset, scale: peak > ceiling ? ceiling / peak : 1 }, sum }
}

export function layOnUpload(root: UploadRoot, bed: Stereo, layer: Stereo): Stereo {
  const { laying, sum } = layingOf(root, bed, layer)
  return laying.scale === 1 ? sum : scaled(sum, laying.scale)
}

/**
 * The stems of `layOnUpload(root, bed, layer)`: each of the layer's (which add up to `layer`)
 * laid as the layer is, then the upload as it is heard in the mix.
 */
export function layStemsOnUpload(
  root: UploadRoot,
  bed: Stereo,
  layer: Stereo,
  stems: ReadonlyArray<Stereo & { readonly name: string }>
): ReadonlyArray<Stereo & { readonly name: string }> {
  const { laying } = layingOf(root, bed, layer)
  const laid = stems.map((s) => {
    const out = { left: new Float32Array(bed.left.length), right: new Float32Array(bed.right.length) }
    addInto(out, s, laying.gain * laying.scale, laying.offset)
    return { name: s.name, ...out }
  })
  return [...laid, { name: UPLOAD_STEM, ...scaled(bed, laying.scale) }]
}
