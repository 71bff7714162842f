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
  readonly weightsManifest: ReadonlyArray<{ readonly paths: ReadonlyArray<string>; readonly weights: Array<tf.io.WeightsManifestEntry> }>
}

/** The model as the package ships it, from its folder: model.json and its weight shards. */
function loadModel(): Promise<tf.GraphModel> {
  const folder = join(dirname(require.resolve("@spotify/basic-pitch/package.json")), "model")
  const json = JSON.parse(readFileSync(join(folder, "model.json"), "utf8")) as ModelJson
  const shards = json.weightsManifest.flatMap((group) => group.paths.map((path) => readFileSync(join(folder, path))))
  const weights = Buffer.concat(shards)
  return tf.loadGraphModel(tf.io.fromMemory({
    modelTopology: json.modelTopology,
    weightSpecs: json.weightsManifest.flatMap((group) => group.weights),
    weightData: weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.byteLength),
    ...(json.format === undefined ? {} : { format: json.format }),
    ...(json.generatedBy === undefined ? {} : { generatedBy: json.generatedBy }),
    ...(json.convertedBy === undefined || json.convertedBy === null ? {} : { convertedBy: json.convertedBy })
  }))
}

let model: Promise<BasicPitch> | null = null

async function basicPitch(): Promise<BasicPitch> {
  model ??= (async () => {
    // The backend's .wasm files are read from its own folder (Node reads them from disk).
    setWasmPaths(`${dirname(require.resolve("@tensorflow/tfjs-backend-wasm"))}/`)
    await tf.setBackend("wasm")
    await tf.ready()
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
    const [windows, length] = await pitch.prepareData(mono)
    const wanted = Math.floor(length * framesPerSecond / modelRate)
    const count = windows.shape[0]
    for (let start = 0; start < count && frames.length < wanted; start += windowsPerBatch) {
      const batch = tf.slice(windows, start, Math.min(windowsPerBatch, count - start))
      const results = model.execute(batch, [...outputs]) as Array<tf.Tensor3D>
      const [f, o, c] = await Promise.all(results.map((r) => pitch.unwrapOutput(r).array()))
      frames.push(...(f ?? []))
      onsets.push(...(o ?? []))
      contours.push(...(c ?? []))
      tf.dispose([batch, ...results])
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
  const events = noteFramesToTime(addPitchBendsToNoteEvents(contours, outputToNotesPoly(frames, onsets, 0.5, 0.3, 5, true, null, null, false)))
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
