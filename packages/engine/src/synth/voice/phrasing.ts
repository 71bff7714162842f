// How both voices (singer.ts, formant.ts) phrase a sung line: where a syllable's onset may sound,
// the breath between words and the vibrato of a held note. One place, so the voice Flite lends
// words and the formant voice that sings the rest phrase alike.

/** The longest the onset consonants sound before their beat (seconds); the vowel lands on it. */
export const ONSET_LEAD = 0.16

/**
 * A word's last note falls silent this long before the next word (seconds), where its sustain
 * leaves room, and the next word's onset consonants may sound in that breath rather than inside
 * their note. Sounding from word to word, the voice let the recogniser run words together
 * ("folded paper boats" heard as one "op"). Over three takes of every held-out prompt, gaps of
 * 0.1-0.22 s scored better than none and 0.06 s did not; 0.15 s left a persona's vibrato too
 * little of the note to be heard (decision 0100). The Flite singer measured no gap 23.8 % of
 * words, 0.2 s 28.3 %, 0.12 s 29.6 % (decision 0102).
 */
export const WORD_GAP = 0.12

/** The vibrato depth (a fraction of the pitch) once bloomed: enough to sing, little enough to keep vowels in tune. */
export const VIBRATO = 0.012
/** Its rate (Hz). */
export const VIBRATO_RATE = 5.6

/**
 * How much of the vibrato sounds `seconds` into a held vowel: none for its first 0.22 s (a short
 * note stays straight), then all of it 0.4 s later.
 */
export const vibratoBloom = (seconds: number): number => Math.min(1, Math.max(0, (seconds - 0.22) * 2.5))
