// The note transcription of an upload. Until a model runs here, listening records no notes:
// later tasks that need them fall back to the analysis (key, chords, beats).

import type { DecodedUpload } from "./analyse.ts"
import type { Transcription } from "./types.ts"

export async function transcribe(_audio: DecodedUpload): Promise<Transcription> {
  return { notes: [] }
}
