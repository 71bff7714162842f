// Scales and chords. Pitches are MIDI note numbers; pitch classes are 0..11 from C.

export const MAJOR_SCALE: ReadonlyArray<number> = [0, 2, 4, 5, 7, 9, 11]
export const MINOR_SCALE: ReadonlyArray<number> = [0, 2, 3, 5, 7, 8, 10]

export interface Chord {
  /** MIDI pitch of the root in octave 3 region (48..59). */
  readonly root: number
  /** Intervals above the root, including 0. */
  readonly intervals: ReadonlyArray<number>
}

export function scaleOf(minor: boolean): ReadonlyArray<number> {
  return minor ? MINOR_SCALE : MAJOR_SCALE
}

function at(list: ReadonlyArray<number>, i: number): number {
  const n = list.length
  return list[((i % n) + n) % n] ?? 0
}

/** Semitone offset of scale degree d (any integer, octaves wrap). */
export function degreeOffset(scale: ReadonlyArray<number>, d: number): number {
  const oct = Math.floor(d / scale.length)
  return at(scale, d) + 12 * oct
}

/**
 * Diatonic chord on scale degree `degree`. In minor the dominant is made major
 * (harmonic minor), which is what makes a minor key sound like one to the ear
 * and to key detectors.
 */
export function diatonicChord(tonic: number, minor: boolean, degree: number, seventh: boolean): Chord {
  const scale = scaleOf(minor)
  const base = degreeOffset(scale, degree)
  const ints: number[] = [0]
  for (const step of seventh ? [2, 4, 6] : [2, 4]) ints.push(degreeOffset(scale, degree + step) - base)
  if (minor && ((degree % 7) + 7) % 7 === 4) ints[1] = 4
  const root = 48 + ((((tonic + base) % 12) + 12) % 12)
  return { root, intervals: ints }
}

/** A chromatic colour chord (borrowed or substituted) used when weirdness is high. */
export function borrowedChord(tonic: number, minor: boolean, pick: number): Chord {
  // bVI, bVII, bII (Neapolitan), iv in major / IV in minor, III+ (augmented)
  const options: ReadonlyArray<readonly [number, ReadonlyArray<number>]> = [
    [8, [0, 4, 7]],
    [10, [0, 4, 7]],
    [1, [0, 4, 7]],
    [5, minor ? [0, 4, 7] : [0, 3, 7]],
    [3, [0, 4, 8]],
    [6, [0, 3, 6]]
  ]
  const [off, ints] = options[Math.abs(pick) % options.length] ?? [0, [0, 4, 7]]
  return { root: 48 + ((tonic + off) % 12), intervals: ints }
}

export function chordPitchClasses(c: Chord): number[] {
  return c.intervals.map((i) => (c.root + i) % 12)
}

/** Voices a chord close to a target centre pitch (smooth voice leading). */
export function voiceChord(c: Chord, centre: number, count: number): number[] {
  const pcs = chordPitchClasses(c)
  const out: number[] = []
  for (let k = 0; k < count; k++) {
    const pc = pcs[k % pcs.length] ?? 0
    // Place each tone in the octave nearest the centre, spreading upward for repeats.
    let p = centre - 6 + ((((pc - (centre - 6)) % 12) + 12) % 12)
    p += 12 * Math.floor(k / pcs.length)
    out.push(p)
  }
  return out.sort((a, b) => a - b)
}

/** Nearest pitch to `p` whose pitch class is in `pcs`. */
export function nearestIn(p: number, pcs: ReadonlyArray<number>): number {
  let best = p
  let bestD = 99
  for (let d = 0; d <= 6; d++) {
    for (const q of [p - d, p + d]) {
      if (pcs.includes(((q % 12) + 12) % 12) && d < bestD) {
        best = q
        bestD = d
      }
    }
    if (bestD < 99) break
  }
  return best
}

export function midiToHz(m: number): number {
  return 440 * Math.pow(2, (m - 69) / 12)
}
