/**
 * Audio the upload tests make: the server's tests' one maker (a chord with a kick on every beat
 * at 120 bpm, as a 16-bit WAV), here as the client's and the CLI's tests call it.
 */
import { pulsedChordWav } from "../../../server/test/support/testAudio.ts"

export const songWav = (seconds = 8): Buffer => pulsedChordWav({ seconds })
