// Faster copies for four data-moving kernels of TensorFlow.js's WebAssembly backend, which
// Basic Pitch's graph spends most of its time in (issue 24's listening budget). Its harmonic
// stacking pads (PadV2), slices and concatenates the constant-Q spectrum along the last axis, whose
// inner size is 1: the backend's Concat (and Pack, which is Concat) copies one `subarray` per
// row there (3.4 million tiny copies a batch), and its StridedSlice walks every element with
// generic strides. Measured with tf.profile on a batch of eight windows: Concat, Pack and
// StridedSlice were 1.7 s of the model's 2.7 s. These kernels copy the same values in plain
// loops (runs of the last axes at once); anything they do not cover falls through to the
// backend's own kernel. Same values, bit for bit: they only move floats.

import * as tf from "@tensorflow/tfjs"
import type { BackendWasm } from "@tensorflow/tfjs-backend-wasm"

type Kernel = tf.KernelConfig["kernelFunc"]

/** Copies `count` values from `from` at `at` to `to` at `into`: a loop for short runs, `set` for long ones. */
function copy(from: Float32Array, at: number, to: Float32Array, into: number, count: number): void {
  if (count >= 64) to.set(from.subarray(at, at + count), into)
  else for (let k = 0; k < count; k++) to[into + k] = from[at + k] as number
}

const size = (shape: ReadonlyArray<number>): number => shape.reduce((a, b) => a * b, 1)

/** Concatenation along `axis` of float32 tensors whose shapes agree elsewhere. */
function concatInto(
  backend: BackendWasm,
  inputs: ReadonlyArray<tf.TensorInfo>,
  shapes: ReadonlyArray<ReadonlyArray<number>>,
  axis: number,
  outShape: number[]
): tf.TensorInfo {
  const out = backend.makeOutput(outShape, "float32")
  const outer = size((shapes[0] ?? []).slice(0, axis))
  const inner = shapes.map((s) => size(s.slice(axis)))
  const total = inner.reduce((a, b) => a + b, 0)
  // Views of the heap are taken after the output is made: making it may grow the memory.
  const values = inputs.map((t) => backend.typedArrayFromHeap(t) as Float32Array)
  const target = backend.typedArrayFromHeap(out) as Float32Array
  // Input by input, so that the loop over rows is tight (an inner size of 1 is an interleave).
  let offset = 0
  for (let i = 0; i < values.length; i++) {
    const n = inner[i] as number
    const from = values[i] as Float32Array
    if (n === 1) for (let b = 0; b < outer; b++) target[b * total + offset] = from[b] as number
    else for (let b = 0; b < outer; b++) copy(from, b * n, target, b * total + offset, n)
    offset += n
  }
  return out
}

function fastConcat(original: Kernel): Kernel {
  return (args) => {
    const inputs = Object.values(args.inputs) as tf.TensorInfo[]
    const backend = args.backend as BackendWasm
    const nonEmpty = inputs.filter((t) => size(t.shape) > 0)
    if (nonEmpty.length < 2 || nonEmpty.some((t) => t.dtype !== "float32")) return original(args)
    const first = nonEmpty[0] as tf.TensorInfo
    const axis = tf.util.parseAxisParam((args.attrs as { axis: number }).axis, first.shape)[0] ?? 0
    const outShape = tf.backend_util.computeOutShape(
      nonEmpty.map((t) => t.shape),
      axis
    )
    return concatInto(
      backend,
      nonEmpty,
      nonEmpty.map((t) => t.shape),
      axis,
      outShape
    )
  }
}

function fastPack(original: Kernel): Kernel {
  return (args) => {
    const inputs = Object.values(args.inputs) as tf.TensorInfo[]
    const backend = args.backend as BackendWasm
    if (inputs.length < 2 || inputs.some((t) => t.dtype !== "float32")) return original(args)
    const shape = (inputs[0] as tf.TensorInfo).shape
    const raw = (args.attrs as { axis: number }).axis
    const axis = raw < 0 ? raw + shape.length + 1 : raw
    // Stacking is concatenation of the inputs with a new axis of 1 at `axis`.
    const expanded = [...shape.slice(0, axis), 1, ...shape.slice(axis)]
    const outShape = [...shape.slice(0, axis), inputs.length, ...shape.slice(axis)]
    return concatInto(
      backend,
      inputs,
      inputs.map(() => expanded),
      axis,
      outShape
    )
  }
}

function fastStridedSlice(original: Kernel): Kernel {
  return (args) => {
    const x = (args.inputs as { x: tf.TensorInfo }).x
    const backend = args.backend as BackendWasm
    const a = args.attrs as {
      begin: number[]
      end: number[]
      strides: number[]
      beginMask: number
      endMask: number
      ellipsisMask: number
      newAxisMask: number
      shrinkAxisMask: number
    }
    if (x.dtype !== "float32") return original(args)
    const info = tf.slice_util.sliceInfo(
      x.shape,
      a.begin,
      a.end,
      a.strides,
      a.beginMask,
      a.endMask,
      a.ellipsisMask,
      a.newAxisMask,
      a.shrinkAxisMask
    )
    const rank = x.shape.length
    // Only plain slices (every stride 1) in the input's own rank; the rest is the backend's.
    if (
      info.isIdentity ||
      info.strides.length !== rank ||
      info.strides.some((s) => s !== 1) ||
      info.finalShapeSparse.length !== rank
    )
      return original(args)
    const begin = info.begin
    const extent = info.finalShapeSparse
    if (extent.some((e) => e <= 0)) return original(args)
    const out = backend.makeOutput(info.finalShape, "float32")
    const from = backend.typedArrayFromHeap(x) as Float32Array
    const to = backend.typedArrayFromHeap(out) as Float32Array
    const strides = tf.util.computeStrides(x.shape)
    // The last axes that are taken whole form one contiguous run with the axis before them.
    let run = extent[rank - 1] as number
    let axes = rank - 1
    while (axes > 0 && extent[axes] === x.shape[axes] && (begin[axes] ?? 0) === 0) {
      axes--
      run = size(extent.slice(axes))
    }
    const index = new Array<number>(axes).fill(0)
    const rows = size(extent.slice(0, axes))
    let into = 0
    for (let r = 0; r < rows; r++) {
      let at = 0
      for (let d = 0; d < axes; d++) at += ((begin[d] ?? 0) + (index[d] ?? 0)) * (strides[d] ?? 0)
      for (let d = axes; d < rank; d++) at += (begin[d] ?? 0) * (d === rank - 1 ? 1 : (strides[d] ?? 0))
      copy(from, at, to, into, run)
      into += run
      for (let d = axes - 1; d >= 0; d--) {
        index[d] = (index[d] ?? 0) + 1
        if ((index[d] as number) < (extent[d] as number)) break
        index[d] = 0
      }
    }
    return out
  }
}

/** A constant pad: the output filled with the constant, each run of the input copied into place. */
function fastPad(original: Kernel): Kernel {
  return (args) => {
    const x = (args.inputs as { x: tf.TensorInfo }).x
    const backend = args.backend as BackendWasm
    const { paddings, constantValue } = args.attrs as { paddings: Array<[number, number]>; constantValue: number }
    const rank = x.shape.length
    if (x.dtype !== "float32" || rank === 0 || size(x.shape) === 0 || paddings.length !== rank) return original(args)
    const outShape = x.shape.map((n, d) => n + (paddings[d]?.[0] ?? 0) + (paddings[d]?.[1] ?? 0))
    const out = backend.makeOutput(outShape, "float32")
    const from = backend.typedArrayFromHeap(x) as Float32Array
    const to = backend.typedArrayFromHeap(out) as Float32Array
    to.fill(constantValue)
    const outStrides = tf.util.computeStrides(outShape)
    // The trailing axes without padding are one contiguous run in both.
    let axes = rank - 1
    while (axes > 0 && (paddings[axes]?.[0] ?? 0) === 0 && (paddings[axes]?.[1] ?? 0) === 0) axes--
    const run = size(x.shape.slice(axes))
    const rows = size(x.shape.slice(0, axes))
    const index = new Array<number>(axes).fill(0)
    const lead = (d: number): number => (paddings[d]?.[0] ?? 0) * (d === rank - 1 ? 1 : (outStrides[d] ?? 0))
    let fixed = 0
    for (let d = axes; d < rank; d++) fixed += lead(d)
    for (let r = 0; r < rows; r++) {
      let into = fixed
      for (let d = 0; d < axes; d++) into += ((paddings[d]?.[0] ?? 0) + (index[d] ?? 0)) * (outStrides[d] ?? 0)
      copy(from, r * run, to, into, run)
      for (let d = axes - 1; d >= 0; d--) {
        index[d] = (index[d] ?? 0) + 1
        if ((index[d] as number) < (x.shape[d] as number)) break
        index[d] = 0
      }
    }
    return out
  }
}

let installed = false

/** Replaces the backend's Concat, Pack, StridedSlice and PadV2 with the copies above, once per thread. */
export function installFastKernels(): void {
  if (installed) return
  installed = true
  for (const [name, make] of [
    ["Concat", fastConcat],
    ["Pack", fastPack],
    ["StridedSlice", fastStridedSlice],
    ["PadV2", fastPad]
  ] as const) {
    const config = tf.getKernel(name, "wasm")
    if (config === undefined) continue
    tf.unregisterKernel(name, "wasm")
    tf.registerKernel({ ...config, kernelFunc: make(config.kernelFunc) })
  }
}
