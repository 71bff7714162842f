// An upload as the root of a track: its audio as the engine's 16-bit stereo PCM at 44.1 kHz
// (what its WAV export is, and what an extension of it starts from, sample for sample), and its
// transcription as a Standard MIDI File. The audio is the upload's, never the engine's: it is
// combined with rendered takes only after mixTake (song.ts splices it).

import { readFile } from "node:fs/promises"
import { writeMidi } from "../midi.ts"
import type { UploadRoot } from "../types.ts"
import { quantize } from "../wav.ts"
import { decodeWhole, toEngineRate } from "./analyse.ts"

/** The upload's audio as interleaved 16-bit stereo at 44.1 kHz. */
export async function uploadPcm(root: UploadRoot): Promise<Int16Array> {
  const audio = await decodeWhole(new Uint8Array(await readFile(root.audioPath)), root.contentType)
  return quantize(toEngineRate(audio.left, audio.sampleRate), toEngineRate(audio.right, audio.sampleRate))
}

/** The transcription at the upload's tempo and key, one track of notes (what Basic Pitch heard). */
export function uploadMidi(root: UploadRoot, title: string): Uint8Array {
  const velocity = (v: number): number => Math.max(1, Math.min(127, Math.round(v * 127)))
  return writeMidi({
    bpm: root.analysis.bpm,
    key: root.analysis.key,
    title,
    tracks: [
      {
        name: "transcription",
        program: 0,
        channel: 0,
        notes: root.transcription.notes.map((n) => ({
          pitch: n.pitch,
          start: n.start,
          end: n.end,
          velocity: velocity(n.velocity)
        }))
      }
    ]
  })
}

/** The upload's bar grid starts at its first beat, not at 0. */
export const uploadGridStart = (root: UploadRoot): number => root.analysis.beats[0] ?? 0
