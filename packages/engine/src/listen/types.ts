// What listening to an upload gives (ENGINE-SEAMS.md rule 5): the public analysis and, kept
// beside it but not public, the note transcription later tasks compose from.

export interface ChordSpan {
  readonly start: number
  readonly end: number
  readonly chord: string
}

export interface Analysis {
  readonly bpm: number
  /** Tonic and mode: `A minor`. */
  readonly key: string
  readonly time_signature: string
  readonly loudness_lufs: number
  /** Seconds. */
  readonly beats: ReadonlyArray<number>
  readonly chords: ReadonlyArray<ChordSpan>
}

export interface TranscribedNote {
  /** MIDI note number. */
  readonly pitch: number
  readonly start: number
  readonly end: number
  /** 0..1. */
  readonly velocity: number
}

export interface Transcription {
  readonly notes: ReadonlyArray<TranscribedNote>
  /**
   * The voice heard along the notes' top line (voiceProfile.ts), which a persona made from the
   * upload's track sings with; null when there is no tune to measure, absent for uploads
   * listened to before it was measured.
   */
  readonly voice?: VoiceProfile | null | undefined
  /**
   * The level of each bar from the first beat (four beats at the tempo heard), dB (analyse.ts
   * `barLevels`): the quiet and full parts a cover's sections follow; absent for uploads listened
   * to before it was measured.
   */
  readonly levels?: ReadonlyArray<number> | undefined
}

/** The voice heard in an upload. */
export interface VoiceProfile {
  readonly register: "m" | "f"
  /** Median sung pitch, MIDI note number. */
  readonly centre: number
  /** 0 (dull) .. 1 (bright); 0.5 is the engine's own voice unchanged. */
  readonly brightness: number
  /** Rate in Hz and depth as the peak deviation from the note's pitch, a fraction of it (0.012 = 21 cents). */
  readonly vibrato: { readonly rate: number; readonly depth: number }
}

export interface Listening {
  readonly analysis: Analysis
  readonly transcription: Transcription
  /** Seconds. */
  readonly duration: number
  /** CPU milliseconds spent on each part, for the benchmark. */
  readonly timings: {
    readonly decode: number
    readonly beats: number
    readonly key: number
    readonly chords: number
    readonly loudness: number
    readonly transcription: number
    readonly voice: number
  }
}
