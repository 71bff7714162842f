// The copies src/listen/fastKernels.ts puts in place of the WebAssembly backend's Concat, Pack,
// StridedSlice and PadV2 give the backend's own results, value for value, on the shapes Basic
// Pitch's graph feeds them and on others (inner sizes of 1 and over 64, masks, negative axes);
// what they do not cover (int32, strides other than 1) still goes to the backend's kernels.
// And the transcription's own framing gives Basic Pitch's `prepareData` windows.

import { dirname } from "node:path"
import { createRequire } from "node:module"
import * as tf from "@tensorflow/tfjs"
import { setWasmPaths } from "@tensorflow/tfjs-backend-wasm"
import { beforeAll, describe, expect, it } from "vitest"
import { BasicPitch } from "@spotify/basic-pitch"
import { installFastKernels } from "../../src/listen/fastKernels.ts"
import { windowsOf } from "../../src/listen/transcribe.ts"

const require = createRequire(import.meta.url)

/** Every case as the backend's kernels compute it, then as the fast ones do. */
const casesOf = (): ReadonlyArray<readonly [string, () => tf.Tensor]> => {
  let seed = 7
  const random = (shape: number[]): tf.Tensor =>
    tf.tensor(
      Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => {
        seed = (seed * 16807) % 2147483647
        return seed / 2147483647 - 0.5
      }),
      shape
    )
  const a = random([2, 17, 31, 1])
  const b = random([2, 17, 31, 1])
  const c = random([2, 17, 31, 1])
  const wide = random([3, 5, 70])
  const wider = random([3, 5, 90])
  const cube = random([2, 17, 40, 8])
  const ints = tf.tensor([1, 2, 3, 4, 5, 6], [2, 3], "int32")
  return [
    ["concat on the last axis, inner size 1 (harmonic stacking)", () => tf.concat([a, b, c], -1)],
    ["concat on axis 2", () => tf.concat([a, b], 2)],
    ["concat of long runs", () => tf.concat([wide, wider], 2)],
    ["concat on axis 0", () => tf.concat([wide, wide], 0)],
    ["concat of int32", () => tf.concat([ints, ints], 1)],
    ["stack on the last axis", () => tf.stack([a, b, c], -1)],
    ["stack on axis 1", () => tf.stack([wide, wide], 1)],
    ["slice of an inner axis", () => tf.stridedSlice(cube, [0, 0, 4, 0], [2, 17, 36, 8], [1, 1, 1, 1])],
    ["slice of several axes", () => tf.stridedSlice(cube, [1, 3, 0, 2], [2, 12, 40, 7], [1, 1, 1, 1])],
    ["slice with masks", () => tf.stridedSlice(cube, [0, 2, 0, 0], [0, 9, 0, 0], [1, 1, 1, 1], 0b1101, 0b1101)],
    [
      "slice with a shrunk axis",
      () => tf.stridedSlice(cube, [1, 0, 0, 0], [2, 17, 40, 8], [1, 1, 1, 1], 0, 0, 0, 0, 1)
    ],
    [
      "slice with a stride of 2 (the backend's)",
      () => tf.stridedSlice(cube, [0, 0, 0, 0], [2, 17, 40, 8], [1, 2, 3, 1])
    ],
    [
      "constant pad of an inner axis",
      () =>
        tf.pad(a, [
          [0, 0],
          [0, 0],
          [18, 18],
          [0, 0]
        ])
    ],
    [
      "constant pad of every axis, with a value",
      () =>
        tf.pad(
          wide,
          [
            [1, 2],
            [0, 3],
            [4, 0]
          ],
          0.25
        )
    ]
  ]
}

beforeAll(async () => {
  setWasmPaths(`${dirname(require.resolve("@tensorflow/tfjs-backend-wasm"))}/`)
  await tf.setBackend("wasm")
  await tf.ready()
})

describe("the WebAssembly backend's copies, made faster", () => {
  it("give the backend's values, shapes and types", () => {
    const cases = casesOf()
    const before = cases.map(([, make]) => make())
    const backends = ["Concat", "Pack", "StridedSlice", "PadV2"].map((name) => tf.getKernel(name, "wasm")?.kernelFunc)
    installFastKernels()
    // In place: the kernels now run are not the backend's.
    for (const [i, name] of ["Concat", "Pack", "StridedSlice", "PadV2"].entries()) {
      expect(tf.getKernel(name, "wasm")?.kernelFunc, name).not.toBe(backends[i])
    }
    const after = cases.map(([, make]) => make())
    cases.forEach(([name], i) => {
      const [x, y] = [before[i] as tf.Tensor, after[i] as tf.Tensor]
      expect(y.shape, name).toEqual(x.shape)
      expect(y.dtype, name).toBe(x.dtype)
      expect(Array.from(y.dataSync()), name).toEqual(Array.from(x.dataSync()))
    })
  })
})

describe("the transcription's windows", () => {
  it("are Basic Pitch's prepareData, value for value, at any length", async () => {
    const pitch = new BasicPitch(new Promise<tf.GraphModel>(() => undefined))
    for (const length of [1, 100, 36_164 - 3840, 36_164 - 3839, 43_844, 50_000, 120_001]) {
      const mono = Float32Array.from({ length }, (_, i) => Math.sin(i / 7) * 0.5)
      const [theirs, counted] = await pitch.prepareData(mono)
      const ours = windowsOf(mono)
      expect(counted).toBe(length)
      expect(ours.count, `${length}`).toBe(theirs.shape[0])
      expect(theirs.shape.slice(1)).toEqual([43_844, 1])
      expect(
        Buffer.from(ours.data.buffer).equals(Buffer.from((theirs.dataSync() as Float32Array).buffer)),
        `${length}`
      ).toBe(true)
      theirs.dispose()
    }
  })
})
