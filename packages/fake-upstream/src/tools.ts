/**
 * The song tools' tasks on the fake upstream: WAV conversion, vocal separation and MIDI
 * transcription, each with its own record-info and callback shapes as the upstream documents them.
 */
import type { Outcome, ResolvedBehaviour } from "./behaviour.ts"

/** The song tools' endpoints, by the name tests select behaviours with. */
export type ToolKind = "wav" | "vocal-removal" | "midi" | "timestamped-lyrics" | "lyrics"

/** A tool that runs as a task of its own (the timestamped lyrics answer at once; lyrics are `lyrics.ts`). */
export type JobKind = Exclude<ToolKind, "timestamped-lyrics" | "lyrics">

export interface SeparatedPart {
  readonly id: string
  /** `Vocals`, `Instrumental`, `Backing_Vocals`, `Drums`... as the upstream names its files. */
  readonly group: string
  /** The record-info field that carries its URL. */
  readonly field: string
}

/** What the fake keeps about one accepted song-tool task. */
export interface FakeJob {
  readonly kind: JobKind
  readonly taskId: string
  /** The track it works on (for MIDI: the separation's source track). */
  readonly audioId: string
  readonly duration: number
  readonly callBackUrl: string | null
  readonly behaviour: ResolvedBehaviour
  readonly createTime: number
  /** A separation's parts; empty for the others. */
  readonly parts: ReadonlyArray<SeparatedPart>
  /** MIDI: the separation it transcribes. */
  readonly separationTaskId: string | null
  polls: number
  /** Set once its final callback has gone out. */
  called: boolean
}

/** Done: polled enough, or its final callback sent. */
export const jobDone = (job: FakeJob): boolean => job.called || job.polls >= job.behaviour.pollsBeforeDone

const succeeded = (outcome: Outcome): boolean => outcome === "SUCCESS" || outcome === "CALLBACK_EXCEPTION"

/** The `successFlag` record-info shows now, in each tool's own vocabulary. */
export const jobFlag = (job: FakeJob): string | number => {
  const outcome = job.behaviour.outcome
  if (job.kind === "midi") {
    if (!jobDone(job)) return 0
    return succeeded(outcome) ? 1 : outcome === "CREATE_TASK_FAILED" ? 2 : 3
  }
  if (!jobDone(job)) return "PENDING"
  if (succeeded(outcome) || outcome === "CREATE_TASK_FAILED") return outcome
  return job.kind === "wav" ? "GENERATE_WAV_FAILED" : "GENERATE_AUDIO_FAILED"
}

export const jobSucceeded = (job: FakeJob): boolean => jobDone(job) && succeeded(job.behaviour.outcome)

const SEPARATE_VOCAL: ReadonlyArray<readonly [group: string, field: string]> = [
  ["Vocals", "vocalUrl"],
  ["Instrumental", "instrumentalUrl"]
]
const SPLIT_STEM: ReadonlyArray<readonly [group: string, field: string]> = [
  ["Vocals", "vocalUrl"],
  ["Backing_Vocals", "backingVocalsUrl"],
  ["Drums", "drumsUrl"],
  ["Bass", "bassUrl"],
  ["Guitar", "guitarUrl"],
  ["Keyboard", "keyboardUrl"],
  ["Percussion", "percussionUrl"],
  ["Strings", "stringsUrl"],
  ["Synth", "synthUrl"],
  ["FX", "fxUrl"],
  ["Brass", "brassUrl"],
  ["Woodwinds", "woodwindsUrl"]
]

/** The parts a separation of `type` gives, each with an id of its own. */
export const partsFor = (type: "separate_vocal" | "split_stem", newId: () => string): ReadonlyArray<SeparatedPart> =>
  (type === "separate_vocal" ? SEPARATE_VOCAL : SPLIT_STEM).map(([group, field]) => ({ id: newId(), group, field }))

export const partFile = (part: SeparatedPart): string => `${part.id}_${part.group}.mp3`

const ALL_STEM_FIELDS = [
  "instrumentalUrl",
  "vocalUrl",
  "backingVocalsUrl",
  "drumsUrl",
  "bassUrl",
  "guitarUrl",
  "pianoUrl",
  "keyboardUrl",
  "percussionUrl",
  "stringsUrl",
  "synthUrl",
  "fxUrl",
  "brassUrl",
  "woodwindsUrl"
]

const failureOf = (job: FakeJob): { readonly code: number; readonly message: string } | null => {
  if (!jobDone(job) || succeeded(job.behaviour.outcome)) return null
  return job.behaviour.outcome === "CREATE_TASK_FAILED"
    ? { code: 500, message: "Create task failed" }
    : {
        code: 500,
        message:
          job.kind === "wav"
            ? "Generate WAV failed"
            : job.kind === "midi"
              ? "Generate MIDI failed"
              : "Vocal separation failed"
      }
}

/** A plausible transcription across the track: a beat of drums and a bass line under it. */
export const midiNotes = (duration: number, asStrings: boolean) => {
  const time = (seconds: number) => (asStrings ? String(seconds) : seconds)
  const drums = []
  const bass = []
  for (let beat = 0; beat * 0.5 < duration - 0.5; beat++) {
    const start = beat * 0.5
    drums.push({ pitch: beat % 2 === 0 ? 36 : 38, start: time(start), end: time(start + 0.1), velocity: 0.9 })
    if (beat % 2 === 0)
      bass.push({
        pitch: [45, 41, 48, 43][Math.floor(beat / 8) % 4] ?? 45,
        start: time(start),
        end: time(start + 0.9),
        velocity: 0.7
      })
  }
  return [
    { name: "Drums", notes: drums },
    { name: "Electric Bass (finger)", notes: bass }
  ]
}

/** `GET /api/v1/<tool>/record-info` of a known job. */
export const jobRecordBody = (job: FakeJob, baseUrl: string) => {
  const failure = failureOf(job)
  const common = {
    taskId: job.taskId,
    callbackUrl: job.callBackUrl,
    createTime: job.createTime,
    completeTime: jobDone(job) ? job.createTime + 1000 : null,
    successFlag: jobFlag(job),
    errorCode: failure?.code ?? null,
    errorMessage: failure?.message ?? null
  }
  const done = jobSucceeded(job)
  switch (job.kind) {
    case "wav":
      return {
        code: 200,
        msg: "success",
        data: {
          ...common,
          musicId: job.audioId,
          response: done ? { audioWavUrl: `${baseUrl}/files/${job.taskId}.wav` } : null
        }
      }
    case "vocal-removal": {
      const response: Record<string, unknown> = Object.fromEntries(ALL_STEM_FIELDS.map((field) => [field, null]))
      for (const part of job.parts) response[part.field] = `${baseUrl}/files/${partFile(part)}`
      return {
        code: 200,
        msg: "success",
        data: {
          ...common,
          musicId: job.audioId,
          audioId: job.audioId,
          response: done
            ? {
                ...response,
                originUrl: null,
                originData: job.parts.map((part) => ({
                  id: part.id,
                  audio_url: `${baseUrl}/files/${partFile(part)}`,
                  stem_type_group_name: part.group,
                  duration: job.duration
                }))
              }
            : null
        }
      }
    }
    case "midi":
      return {
        code: 200,
        msg: "success",
        data: {
          ...common,
          recordTaskId: -1,
          audioId: job.audioId,
          midiData: done ? { state: "complete", instruments: midiNotes(job.duration, false) } : null
        }
      }
  }
}

/** The body each tool POSTs to `callBackUrl` once its job is done (success or failure). */
export const jobCallbackBody = (job: FakeJob, baseUrl: string) => {
  const failure = failureOf({ ...job, called: true })
  switch (job.kind) {
    case "wav":
      return {
        code: failure?.code ?? 200,
        msg: failure?.message ?? "success",
        data: { audioWavUrl: failure === null ? `${baseUrl}/files/${job.taskId}.wav` : null, task_id: job.taskId }
      }
    case "vocal-removal": {
      const url = (group: string) => {
        const part = job.parts.find((candidate) => candidate.group === group)
        return part === undefined ? null : `${baseUrl}/files/${partFile(part)}`
      }
      return {
        code: failure?.code ?? 200,
        msg: failure?.message ?? "vocal Removal generated successfully.",
        data: {
          task_id: job.taskId,
          vocal_removal_info:
            failure === null
              ? { instrumental_url: url("Instrumental"), origin_url: "", vocal_url: url("Vocals") }
              : null
        }
      }
    }
    case "midi":
      return {
        task_id: job.taskId,
        code: failure?.code ?? 200,
        msg: failure?.message ?? "success",
        data: failure === null ? { state: "complete", instruments: midiNotes(job.duration, true) } : null
      }
  }
}

/**
 * `POST /api/v1/generate/get-timestamped-lyrics` for a known track: each word of its lyrics with
 * a time, spread over the track, the first word of a section carrying the section's tag as the
 * upstream does. An instrumental has none.
 */
export const timestampedLyricsBody = (lyrics: string, duration: number) => {
  const words: Array<{
    readonly word: string
    readonly success: boolean
    readonly startS: number
    readonly endS: number
    readonly palign: number
  }> = []
  const tokens: Array<string> = []
  let tag = ""
  for (const line of lyrics.split("\n")) {
    const trimmed = line.trim()
    if (/^\[[^\]]*\]$/.test(trimmed)) {
      tag = `${trimmed}\n`
      continue
    }
    for (const token of trimmed.split(/\s+/).filter((part) => part !== "")) {
      tokens.push(`${tag}${token}`)
      tag = ""
    }
  }
  const step = tokens.length === 0 ? 0 : (duration - 2) / tokens.length
  tokens.forEach((word, index) => {
    const startS = Math.round((1 + index * step) * 100) / 100
    words.push({ word, success: true, startS, endS: Math.round((startS + step * 0.8) * 100) / 100, palign: 0 })
  })
  return {
    code: 200,
    msg: "success",
    data: { alignedWords: words, waveformData: [0, 1, 0.5, 0.75], hootCer: 0.38, isStreamed: false }
  }
}

/** A WAV file's bytes: a RIFF header for 16-bit stereo PCM at 44.1 kHz, then silence. */
export const makeWav = (bytes: number): Buffer => {
  const dataBytes = Math.max(4, bytes - 44) & ~3
  const wav = Buffer.alloc(44 + dataBytes)
  wav.write("RIFF", 0, "latin1")
  wav.writeUInt32LE(36 + dataBytes, 4)
  wav.write("WAVE", 8, "latin1")
  wav.write("fmt ", 12, "latin1")
  wav.writeUInt32LE(16, 16)
  wav.writeUInt16LE(1, 20)
  wav.writeUInt16LE(2, 22)
  wav.writeUInt32LE(44_100, 24)
  wav.writeUInt32LE(44_100 * 4, 28)
  wav.writeUInt16LE(4, 32)
  wav.writeUInt16LE(16, 34)
  wav.write("data", 36, "latin1")
  wav.writeUInt32LE(dataBytes, 40)
  return wav
}
