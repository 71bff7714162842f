/**
 * Core's UploadFiles port on this package's storage and the engine's kept decoders. A received
 * file is streamed to a staging file (counted, and cut one byte past the limit), decoded from
 * there slice by slice without keeping its PCM, checked, and only then copied into storage under
 * its key; the staging file goes in every case, so a refused upload leaves nothing behind.
 */
import { createReadStream, createWriteStream, mkdirSync, rmSync } from "node:fs"
import { join } from "node:path"
import type { Readable } from "node:stream"
import { createHash, randomBytes } from "node:crypto"
import { Effect, Layer } from "effect"
import {
  InvalidAudio,
  maxUploadBytes,
  maxUploadSeconds,
  minUploadSeconds,
  UploadFiles,
  UploadTooLarge
} from "@lyre/core"
import type { AudioFile, UploadContentType } from "@lyre/core"
import { decodeAudio, UndecodableAudio } from "@lyre/engine"
import { Storage } from "../storage/Storage.ts"

export interface UploadFilesOptions {
  /** Where a file waits while it is checked (the composition root passes `DATA_DIR/upload-staging`). */
  readonly stagingDir: string
}

/** Below this peak (-80 dBFS) an upload is silence: nothing to listen to. */
const silentPeak = 1e-4

type Staged =
  | { readonly ok: true; readonly bytes: number; readonly sha256: string }
  | { readonly ok: false; readonly tooLarge: boolean; readonly message: string }

/**
 * Writes the stream to `path`, counting. One byte past the limit it stops writing and lets the
 * rest of the body run to nowhere rather than destroying it: destroying a request resets its
 * connection, and the client would never see the 413.
 */
const stage = (stream: Readable, path: string): Promise<Staged> =>
  new Promise((resolve) => {
    const out = createWriteStream(path)
    const hash = createHash("sha256")
    let bytes = 0
    let ended = false
    let settled = false
    const settle = (result: Staged): void => {
      if (settled) return
      settled = true
      resolve(result)
    }
    const stop = (result: Staged): void => {
      stream.off("data", onData)
      stream.resume()
      out.destroy()
      settle(result)
    }
    const onData = (chunk: Buffer): void => {
      bytes += chunk.length
      if (bytes > maxUploadBytes) {
        stop({ ok: false, tooLarge: true, message: `An upload is at most ${maxUploadBytes} bytes.` })
        return
      }
      hash.update(chunk)
      if (!out.write(chunk)) {
        stream.pause()
        out.once("drain", () => stream.resume())
      }
    }
    const broken = (cause: unknown): void =>
      stop({
        ok: false,
        tooLarge: false,
        message: `The body could not be read: ${cause instanceof Error ? cause.message : String(cause)}`
      })
    stream.on("data", onData)
    stream.once("end", () => {
      ended = true
      out.end(() => settle({ ok: true, bytes, sha256: hash.digest("hex") }))
    })
    stream.once("error", broken)
    stream.once("close", () => {
      if (!ended) broken(new Error("the client went away before the end of the body"))
    })
    out.once("error", broken)
  })

interface Probe {
  readonly seconds: number
  readonly peak: number
}

/** Decodes the staged file, keeping only its length and peak. */
const probe = async (path: string, type: UploadContentType): Promise<Probe> => {
  let frames = 0
  let rate = 0
  let peak = 0
  await decodeAudio(createReadStream(path, { highWaterMark: 256 * 1024 }), type, (channels, sampleRate) => {
    rate = sampleRate
    frames += channels[0]?.length ?? 0
    for (const channel of channels) {
      for (let i = 0; i < channel.length; i++) {
        const v = Math.abs(channel[i] ?? 0)
        if (v > peak) peak = v
      }
    }
  })
  return { seconds: rate === 0 ? 0 : frames / rate, peak }
}

const invalid = (message: string) => new InvalidAudio({ message, param: "file" })

export const makeUploadFiles = Effect.fnUntraced(function* (options: UploadFilesOptions) {
  const storage = yield* Storage
  mkdirSync(options.stagingDir, { recursive: true })

  const receive = (key: string, file: AudioFile, type: UploadContentType) =>
    Effect.acquireUseRelease(
      Effect.sync(() => join(options.stagingDir, `${randomBytes(12).toString("hex")}.part`)),
      (path) =>
        Effect.gen(function* () {
          const staged = yield* Effect.promise(() => stage(file.stream, path))
          if (!staged.ok) {
            return yield* staged.tooLarge ? new UploadTooLarge({ message: staged.message }) : invalid(staged.message)
          }
          if (staged.bytes === 0) return yield* invalid("The file is empty.")
          const probed = yield* Effect.tryPromise({
            try: () => probe(path, type),
            catch: (cause) =>
              invalid(
                cause instanceof UndecodableAudio
                  ? `The file is not ${type} audio: ${cause.message}.`
                  : `The file is not ${type} audio.`
              )
          })
          if (probed.seconds === 0) return yield* invalid(`The file is not ${type} audio: nothing in it decodes.`)
          if (probed.seconds < minUploadSeconds) {
            return yield* invalid(
              `The audio lasts ${probed.seconds.toFixed(2)} s: an upload lasts at least ${minUploadSeconds} s.`
            )
          }
          if (probed.seconds > maxUploadSeconds) {
            return yield* invalid(
              `The audio lasts ${probed.seconds.toFixed(0)} s: an upload lasts at most ${maxUploadSeconds} s.`
            )
          }
          if (probed.peak < silentPeak) return yield* invalid("The audio is silent.")
          yield* storage.put(key, createReadStream(path)).pipe(Effect.orDie)
          return { bytes: staged.bytes, sha256: staged.sha256, duration: Math.round(probed.seconds * 1000) / 1000 }
        }),
      (path) => Effect.sync(() => rmSync(path, { force: true }))
    )

  return UploadFiles.of({
    receive,
    remove: (key) => storage.remove(key).pipe(Effect.orDie)
  })
})

export const uploadFilesLayer = (options: UploadFilesOptions) => Layer.effect(UploadFiles, makeUploadFiles(options))
