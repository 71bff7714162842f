// The voice heard in an upload, for a persona made from its track (DESIGN.md section 11: "the
// voice (timbre, range, vibrato) ... of that track"): its register and centre from the
// transcription's tune (tune.ts), and, measured on the audio during that line's long notes, its
// brightness and its vibrato. Computed once while listening and kept with the transcription.
//
// The estimator is deliberately simple: for each long top-line note, the pitch is tracked by
// autocorrelation only within 150 cents of the note Basic Pitch heard (so the band under the
// voice rarely captures it), every 10 ms; the deviation in cents, its slope taken out, gives the
// vibrato's rate (zero crossings) and extent (its RMS times the square root of two). Brightness
// is the sound's RMS frequency over those notes (the RMS of its first difference against its
// own), mapped by octaves from 250 Hz (0, dull) to 4 kHz (1, bright).

import { type Note, tuneOf } from "./tune.ts"
import type { VoiceProfile } from "./types.ts"

export type { VoiceProfile } from "./types.ts"

/** A note long enough to hold a vibrato cycle or two. */
const longNote = 0.35
/** At most this many notes are tracked (the longest), to bound the work on a long upload. */
const mostNotes = 40
const hop = 0.01
/** Between the register's centres (G3 and G4). */
const femaleFrom = 61
/** Vibrato rates a singer uses; slower or faster swings are not vibrato. */
const vibratoRates = [3.5, 9] as const
/** The RMS frequency of brightness 0; four octaves up (4 kHz) is 1, and 1 kHz is 0.5. */
const dullest = 250

const midiHz = (p: number): number => 440 * 2 ** ((p - 69) / 12)
const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0
    ? 0
    : s.length % 2 === 1
      ? (s[(s.length - 1) / 2] as number)
      : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2
}

/** The pitch in Hz at `centre` samples, searched within 150 cents of `hz`; null where nothing periodic is there. */
function pitchAt(mono: Float32Array, rate: number, centre: number, hz: number): number | null {
  const period = rate / hz
  const minLag = Math.floor(period / 2 ** (1.5 / 12))
  const maxLag = Math.ceil(period * 2 ** (1.5 / 12))
  const w = Math.round(3 * period)
  const from = centre - (w >> 1)
  if (from < 0 || from + w + maxLag + 1 >= mono.length) return null
  let bestLag = -1
  let best = -Infinity
  const scores = new Float64Array(maxLag + 2)
  for (let lag = minLag - 1; lag <= maxLag + 1; lag++) {
    let dot = 0
    let e0 = 0
    let e1 = 0
    for (let i = from; i < from + w; i++) {
      const a = mono[i] as number
      const b = mono[i + lag] as number
      dot += a * b
      e0 += a * a
      e1 += b * b
    }
    const score = e0 > 0 && e1 > 0 ? dot / Math.sqrt(e0 * e1) : 0
    scores[lag] = score
    if (lag >= minLag && lag <= maxLag && score > best) {
      best = score
      bestLag = lag
    }
  }
  if (bestLag < 0 || best < 0.5) return null
  // A parabola through the best lag and its neighbours places the peak between samples.
  const y0 = scores[bestLag - 1] as number
  const y1 = scores[bestLag] as number
  const y2 = scores[bestLag + 1] as number
  const denominator = y0 - 2 * y1 + y2
  const shift = denominator < 0 ? Math.max(-0.5, Math.min(0.5, (0.5 * (y0 - y2)) / denominator)) : 0
  return rate / (bestLag + shift)
}

/** Rate (Hz) and extent (cents, peak) of one note's pitch swing; extent 0 when it is no vibrato. */
function noteVibrato(cents: ReadonlyArray<number>): { readonly rate: number; readonly extent: number } {
  const n = cents.length
  const meanT = (n - 1) / 2
  const meanC = cents.reduce((s, c) => s + c, 0) / n
  let sxy = 0
  let sxx = 0
  cents.forEach((c, i) => {
    sxy += (i - meanT) * (c - meanC)
    sxx += (i - meanT) ** 2
  })
  const slope = sxx > 0 ? sxy / sxx : 0
  const flat = cents.map((c, i) => c - meanC - slope * (i - meanT))
  let crossings = 0
  for (let i = 1; i < n; i++) if ((flat[i - 1] as number) < 0 !== (flat[i] as number) < 0) crossings++
  const rate = crossings / 2 / (n * hop)
  const rms = Math.sqrt(flat.reduce((s, c) => s + c * c, 0) / n)
  return { rate, extent: rate >= vibratoRates[0] && rate <= vibratoRates[1] ? rms * Math.SQRT2 : 0 }
}

/**
 * The voice of a mono signal at `rate` Hz whose transcription is `notes`; null when the
 * transcription has no tune to measure (nothing above the bass, or no note long enough).
 */
export function voiceProfile(mono: Float32Array, rate: number, notes: ReadonlyArray<Note>): VoiceProfile | null {
  const line = tuneOf(notes)
  if (line.length === 0) return null
  const weighted = line.flatMap((n) =>
    Array.from({ length: Math.max(1, Math.round((n.end - n.start) / hop)) }, () => n.pitch)
  )
  const centre = median(weighted)
  const long = line
    .filter((n) => n.end - n.start >= longNote)
    .sort((a, b) => b.end - b.start - (a.end - a.start) || a.start - b.start)
    .slice(0, mostNotes)
  const rates: number[] = []
  const extents: number[] = []
  let energy = 0
  let slopeEnergy = 0
  for (const note of long) {
    const hz = midiHz(note.pitch)
    const cents: number[] = []
    // The note's onset and release glide; its middle holds the vibrato.
    for (let t = note.start + 0.06; t < note.end - 0.04; t += hop) {
      const heard = pitchAt(mono, rate, Math.round(t * rate), hz)
      if (heard !== null) cents.push(1200 * Math.log2(heard / hz))
    }
    const from = Math.round(note.start * rate)
    const to = Math.min(mono.length, Math.round(note.end * rate))
    for (let i = Math.max(1, from); i < to; i++) {
      const x = mono[i] as number
      energy += x * x
      slopeEnergy += (x - (mono[i - 1] as number)) ** 2
    }
    if (cents.length < 20) continue
    const v = noteVibrato(cents)
    extents.push(v.extent)
    if (v.extent > 10) rates.push(v.rate)
  }
  const rmsHz = energy > 0 ? (rate / (2 * Math.PI)) * Math.sqrt(slopeEnergy / energy) : 2500
  const extent = median(extents)
  return {
    register: centre >= femaleFrom ? "f" : "m",
    centre: Math.round(centre),
    brightness: Math.round(Math.max(0, Math.min(1, Math.log2(rmsHz / dullest) / 4)) * 1000) / 1000,
    vibrato: {
      rate: Math.round((rates.length > 0 ? median(rates) : 5.5) * 100) / 100,
      depth: Math.round((2 ** (extent / 1200) - 1) * 10_000) / 10_000
    }
  }
}
