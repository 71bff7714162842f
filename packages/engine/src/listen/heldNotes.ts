// A held note is one note (decision 0132). Basic Pitch starts a new note where it infers an
// onset from its pitch frames, and a sung note's vibrato (or a glide into it) swings those frames
// across the bins around it: one long sung note comes out as a run of the same pitch cut every few
// tenths of a second, each piece starting where the last ended. A note struck or sung again has
// an attack the audio shows; a held one does not. So pieces of the same pitch that meet are
// joined unless the level rises where they meet.

import type { TranscribedNote } from "./types.ts"

/** Pieces this close (seconds) meet: Basic Pitch's frames are 11.6 ms. */
const meet = 0.03
/** The level is compared over this long (seconds) either side of the join. */
const around = 0.04
/** A rise of this many dB at the join is an attack: the note was sung or struck again. */
const attackDb = 4

/** Mean square of `mono` over [from, to) seconds. */
function power(mono: Float32Array, rate: number, from: number, to: number): number {
  const a = Math.max(0, Math.round(from * rate))
  const b = Math.min(mono.length, Math.round(to * rate))
  let sum = 0
  for (let i = a; i < b; i++) sum += (mono[i] ?? 0) ** 2
  return b > a ? sum / (b - a) : 0
}

/** The notes with each held note's pieces joined, in their order (`mono` at `rate`: the audio they were heard in). */
export function joinHeldNotes(
  notes: ReadonlyArray<TranscribedNote>,
  mono: Float32Array,
  rate: number
): Array<TranscribedNote> {
  const byPitch = new Map<number, Array<number>>()
  for (const [i, n] of notes.entries()) byPitch.set(n.pitch, [...(byPitch.get(n.pitch) ?? []), i])
  const joined = new Map<number, TranscribedNote>()
  const absorbed = new Set<number>()
  for (const indices of byPitch.values()) {
    indices.sort((a, b) => (notes[a]?.start ?? 0) - (notes[b]?.start ?? 0))
    let head = -1
    for (const i of indices) {
      const n = notes[i] as TranscribedNote
      const held = joined.get(head)
      if (held !== undefined && n.start - held.end <= meet && n.start >= held.start && !attackAt(mono, rate, n.start)) {
        const length = held.end - held.start + (n.end - n.start)
        joined.set(head, {
          ...held,
          end: Math.max(held.end, n.end),
          // As loud as its pieces, each for as long as it lasted.
          velocity:
            Math.round(
              ((held.velocity * (held.end - held.start) + n.velocity * (n.end - n.start)) / Math.max(length, 1e-9)) *
                1000
            ) / 1000
        })
        absorbed.add(i)
        continue
      }
      head = i
      joined.set(i, n)
    }
  }
  return notes.flatMap((n, i) => (absorbed.has(i) ? [] : [joined.get(i) ?? n]))
}

/** True when the level rises by an attack's at `t` seconds. */
function attackAt(mono: Float32Array, rate: number, t: number): boolean {
  const before = power(mono, rate, t - around, t)
  const after = power(mono, rate, t, t + around)
  return 10 * Math.log10((after + 1e-12) / (before + 1e-12)) >= attackDb
}
