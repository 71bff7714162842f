// The note transcription of an upload with Spotify's Basic Pitch (@spotify/basic-pitch), a model
// made for it: TensorFlow.js 4.22 on its WebAssembly backend (no native binding, nothing
// downloaded), the model's graph and weights read from the package's own folder by file path.
// Loaded once per listener thread, on first use.

import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { addPitchBendsToNoteEvents, BasicPitch, noteFramesToTime, outputToNotesPoly } from "@spotify/basic-pitch"
import * as tf from "@tensorflow/tfjs"
import { setWasmPaths } from "@tensorflow/tfjs-backend-wasm"
import type { DecodedUpload } from "./analyse.ts"
import { installFastKernels } from "./fastKernels.ts"
import type { TranscribedNote, Transcription } from "./types.ts"

const require = createRequire(import.meta.url)

/** The rate Basic Pitch was trained at. */
const modelRate = 22_050

interface ModelJson {
  readonly modelTopology: tf.io.ModelJSON["modelTopology"]
  readonly format?: string
  readonly generatedBy?: string
  readonly convertedBy?: string | null
  readonly signature?: object
  readonly userDefinedMetadata?: Record<string, object>
  readonly weightsManifest: ReadonlyArray<{
    readonly paths: ReadonlyArray<string>
    readonly weights: Array<tf.io.WeightsManifestEntry>
  }>
}

/** The model as the package ships it, from its folder: model.json and its weight shards. */
function loadModel(): Promise<tf.GraphModel> {
  const folder = join(dirname(require.resolve("@spotify/basic-pitch/package.json")), "model")
  const json = JSON.parse(readFileSync(join(folder, "model.json"), "utf8")) as ModelJson
  const shards = json.weightsManifest.flatMap((group) => group.paths.map((path) => readFileSync(join(folder, path))))
  const weights = Buffer.concat(shards)
  return tf.loadGraphModel(
    tf.io.fromMemory({
      modelTopology: json.modelTopology,
      weightSpecs: json.weightsManifest.flatMap((group) => group.weights),
      weightData: weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.byteLength),
      ...(json.format === undefined ? {} : { format: json.format }),
      ...(json.generatedBy === undefined ? {} : { generatedBy: json.generatedBy }),
      ...(json.convertedBy === undefined || json.convertedBy === null ? {} : { convertedBy: json.convertedBy })
    })
  )
}

let model: Promise<BasicPitch> | null = null

async function basicPitch(): Promise<BasicPitch> {
  model ??= (async () => {
    // The backend's .wasm files are read from its own folder (Node reads them from disk).
    setWasmPaths(`${dirname(require.resolve("@tensorflow/tfjs-backend-wasm"))}/`)
    await tf.setBackend("wasm")
    await tf.ready()
    // The backend's copies dominate the model's time; the same values, copied faster (fastKernels.ts).
    installFastKernels()
    return new BasicPitch(loadModel())
  })()
  return model
}

/** Mono at 22.05 kHz: the two channels averaged, then resampled linearly (most uploads halve exactly). */
export function monoAtModelRate(audio: DecodedUpload): Float32Array {
  const ratio = audio.sampleRate / modelRate
  const out = new Float32Array(Math.floor(audio.left.length / ratio))
  for (let i = 0; i < out.length; i++) {
    // Averaging the samples a model sample spans is the low-pass that keeps decimation clean.
    const from = Math.floor(i * ratio)
    const to = Math.max(from + 1, Math.floor((i + 1) * ratio))
    let sum = 0
    for (let j = from; j < to; j++) sum += ((audio.left[j] ?? 0) + (audio.right[j] ?? 0)) * 0.5
    out[i] = sum / (to - from)
  }
  return out
}

/** Windows of audio the model evaluates at once: one per call spends most of its time on per-call overhead. */
const windowsPerBatch = 8
/** The model's output rate (frames per second) and its output names, as Basic Pitch defines them. */
const framesPerSecond = Math.floor(22_050 / 256)
const outputs = ["Identity_1", "Identity_2", "Identity"] as const

/** Basic Pitch's windows (its inference.ts): 2 s less one hop, overlapping by 30 output frames. */
const windowSamples = 22_050 * 2 - 256
const overlapFrames = 30
const hopSamples = windowSamples - overlapFrames * 256

/**
 * Basic Pitch's `prepareData` in plain copies (it framed the audio with tf.signal.frame, a
 * slice per window then one concatenation): half an overlap of zeros, then the audio, a window
 * at every hop from 0 while it starts inside, the last ones padded with zeros.
 */
export function windowsOf(mono: Float32Array): { readonly data: Float32Array; readonly count: number } {
  const lead = Math.floor((overlapFrames * 256) / 2)
  const size = lead + mono.length
  const count = Math.ceil(size / hopSamples)
  const data = new Float32Array(count * windowSamples)
  for (let w = 0; w < count; w++) {
    const start = w * hopSamples
    const from = Math.max(0, start - lead)
    const to = Math.min(mono.length, start + windowSamples - lead)
    if (to > from) data.set(mono.subarray(from, to), w * windowSamples + Math.max(0, lead - start))
  }
  return { data, count }
}

/**
 * Basic Pitch's `unwrapOutput` and `.array()` in plain copies: each window's rows but for half
 * the overlap at either end, as arrays of numbers.
 */
function unwrapped(result: tf.Tensor3D, into: Array<Array<number>>): void {
  const [windows, frames, width] = result.shape
  const values = result.dataSync()
  const trim = Math.floor(overlapFrames / 2)
  for (let w = 0; w < windows; w++) {
    for (let t = trim; t < frames - trim; t++) {
      const at = (w * frames + t) * width
      into.push(Array.from(values.subarray(at, at + width)))
    }
  }
}

/**
 * Basic Pitch's own steps (prepareData, the model, unwrapOutput) with the windows in batches;
 * every tensor made is freed at the end of the scope (the package's own loop keeps them all).
 */
async function modelOutputs(pitch: BasicPitch, mono: Float32Array) {
  const model = await pitch.model
  const frames: Array<Array<number>> = []
  const onsets: Array<Array<number>> = []
  const contours: Array<Array<number>> = []
  tf.engine().startScope()
  try {
    const windows = windowsOf(mono)
    const wanted = Math.floor((mono.length * framesPerSecond) / modelRate)
    for (let start = 0; start < windows.count && frames.length < wanted; start += windowsPerBatch) {
      const n = Math.min(windowsPerBatch, windows.count - start)
      const batch = tf.tensor3d(windows.data.subarray(start * windowSamples, (start + n) * windowSamples), [
        n,
        windowSamples,
        1
      ])
      const [f, o, c] = model.execute(batch, [...outputs]) as Array<tf.Tensor3D>
      unwrapped(f as tf.Tensor3D, frames)
      unwrapped(o as tf.Tensor3D, onsets)
      unwrapped(c as tf.Tensor3D, contours)
      tf.dispose([batch, f as tf.Tensor3D, o as tf.Tensor3D, c as tf.Tensor3D])
    }
    return { frames: frames.slice(0, wanted), onsets: onsets.slice(0, wanted), contours: contours.slice(0, wanted) }
  } finally {
    tf.engine().endScope()
  }
}

/** Basic Pitch's frames, onsets and contours, then its own note extraction with its default thresholds. */
export async function transcribe(audio: DecodedUpload): Promise<Transcription> {
  const pitch = await basicPitch()
  const { frames, onsets, contours } = await modelOutputs(pitch, monoAtModelRate(audio))
  const events = noteFramesToTime(
    addPitchBendsToNoteEvents(contours, outputToNotesPoly(frames, onsets, 0.5, 0.3, 5, true, null, null, false))
  )
  const notes: Array<TranscribedNote> = events
    .map((e) => ({
      pitch: e.pitchMidi,
      start: Math.round(e.startTimeSeconds * 1000) / 1000,
      end: Math.round((e.startTimeSeconds + e.durationSeconds) * 1000) / 1000,
      velocity: Math.round(Math.max(0, Math.min(1, e.amplitude)) * 1000) / 1000
    }))
    .sort((a, b) => a.start - b.start || a.pitch - b.pitch)
  return { notes }
}
