/**
 * What listening to an upload heard: the public analysis (the Upload's `analysis`, one zod
 * schema) and, kept beside it but not public, the transcription later tasks compose from. Here,
 * on the ground floor, so that the Upload, the provider port and the rows all name these shapes
 * rather than write them again; the engine's and @lyre/webhooks' copies are held to them by tests.
 */
import { z } from "zod"

export const ChordSpan = z.object({
  start: z.number().describe("Seconds."),
  end: z.number().describe("Seconds."),
  chord: z.string().describe("`C`, `Am`, `G7`, ... or `N` where no chord is heard.")
})

export const UploadAnalysis = z.object({
  bpm: z.number(),
  key: z.string().describe("Tonic and mode, e.g. `A minor`."),
  time_signature: z.string().describe("E.g. `4/4`."),
  loudness_lufs: z.number().describe("Integrated loudness (ITU-R BS.1770)."),
  beats: z.array(z.number()).describe("Beat times in seconds."),
  chords: z.array(ChordSpan).describe("Chords on the beat grid.")
})
export type UploadAnalysis = z.infer<typeof UploadAnalysis>

/** The note transcription kept with an upload (not public): what later tasks compose from. */
export interface Transcription {
  readonly notes: ReadonlyArray<{
    readonly pitch: number
    readonly start: number
    readonly end: number
    readonly velocity: number
  }>
  /** The voice heard along its top line (register, centre, brightness, vibrato): what a persona of the upload's track sings with. */
  readonly voice?: HeardVoice | null | undefined
  /** The level of each bar from the first beat, dB: the quiet and full parts a cover's sections follow. */
  readonly levels?: ReadonlyArray<number> | undefined
}

/** The voice heard in an upload (the engine's measure of it), kept with its transcription. */
export interface HeardVoice {
  readonly register: "m" | "f"
  readonly centre: number
  readonly brightness: number
  readonly vibrato: { readonly rate: number; readonly depth: number }
}
